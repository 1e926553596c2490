"""The inputs on which the TFLite GPU delegate's memory strategies are compared with ours (tests and
benchmarks/bench_gpu_delegate.py): every arena of the shared real models under the three semantics,
the paper's six networks, and random records with ties (few distinct sizes) and without, 50 to
5,000 records. Records come as the delegate's callers pass them to its in-order strategies: by
first task (stable).
"""

from __future__ import annotations

import random
from pathlib import Path

from packager.plan.records import UsageRecord

REPO = Path(__file__).resolve().parent.parent
SHARED_MODELS = REPO.parent / "shared" / "models"
SEMANTICS = ("tflite", "tflm", "paper")
RANDOM_SIZES = (50, 200, 1000, 5000)


def by_first_task(records) -> tuple[UsageRecord, ...]:
    return tuple(sorted(records, key=lambda r: r.first_op))


def model_inputs() -> list[tuple[str, tuple[UsageRecord, ...]]]:
    """(name, records) of every arena of the shared models (none when ../shared is absent)."""
    from packager.arenas import arenas_to_plan
    from packager.reader import read_model

    out = []
    for path in sorted(SHARED_MODELS.glob("**/*.tflite")):
        model = read_model(str(path))
        for semantics in SEMANTICS:
            try:
                arenas = arenas_to_plan(model, semantics)
            except Exception:  # a model a semantics refuses: the others cover it
                continue
            out += [(f"{path.stem}/{semantics}/{a.lifetimes.subgraph}", by_first_task(a.lifetimes.records))
                    for a in arenas if a.lifetimes.records]
    return out


def network_inputs() -> list[tuple[str, tuple[UsageRecord, ...]]]:
    """The paper's six networks in its setting (benchmarks/paper_setting.py)."""
    from benchmarks.paper_setting import paper_problems
    from fixtures.network_cache import network_path
    from fixtures.networks import NETWORKS
    from packager.reader import read_model

    return [(name, by_first_task(paper_problems(read_model(network_path(name)))[0].records))
            for name in NETWORKS]


def random_records(n: int, seed: int, ties: bool) -> tuple[UsageRecord, ...]:
    """n records of short random lifetimes; with ties, sizes from four values."""
    rng = random.Random(seed * 7919 + n * 2 + ties)
    records = []
    for k in range(n):
        first = rng.randrange(n // 2 + 1)
        size = rng.choice((64, 128, 256, 512)) if ties else rng.randrange(1, 10_000)
        records.append(UsageRecord(k, first, first + rng.randrange(0, 12), size))
    return by_first_task(records)


def random_inputs(sizes=RANDOM_SIZES, seeds=(0, 1, 2)) -> list[tuple[str, tuple[UsageRecord, ...]]]:
    return [(f"random-{n}-{'ties' if ties else 'sizes'}-{seed}", random_records(n, seed, ties))
            for n in sizes for ties in (True, False) for seed in seeds]


def random_extents(records, dims: int, seed: int) -> list[tuple[int, ...]]:
    """Texture extents for records: each dimension from a few values, so equal extents occur."""
    rng = random.Random(seed)
    return [tuple(rng.choice((1, 2, 3, 4, 8)) for _ in range(dims)) for _ in records]
