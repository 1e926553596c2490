"""The fixed inputs whose plans are pinned (tests/pins/plan_pins.json), and the digest of a plan.

The pins hold what every strategy produced before its code was made faster: a faster version must
give the very same plan, byte for byte, on these inputs. Regenerate only on purpose:
    python -m tests.pins.pin_cases > tests/pins/plan_pins.json
    python -m tests.pins.pin_cases searches > tests/pins/search_pins.json
"""

from __future__ import annotations

import hashlib
import json
import random

from benchmarks.synthetic import SHAPES, usage_records
from packager.plan.problem import Problem
from packager.plan.records import ObjectPlan, OffsetPlan, UsageRecord
from packager.plan.registry import OBJECT_STRATEGIES, OFFSET_STRATEGIES

# Above this many records the integer program (exact, LP-based) is left out: it refuses or is slow.
INTEGER_PROGRAM_RECORDS = 60


def random_records(seed: int, n: int, n_ops: int, max_life: int, max_size: int) -> list[UsageRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        first = rng.randrange(n_ops)
        last = min(n_ops - 1, first + rng.randrange(max_life))
        size = rng.choice((0, rng.randrange(1, max_size), 64 * rng.randrange(1, 40)))
        out.append(UsageRecord(i, first, last, size))
    return out


def disjoint_offsets(records, positions, alignment: int) -> dict[int, int]:
    """Offline offsets for `positions`, stacked so that none overlaps another."""
    out, top = {}, 0
    for i in positions:
        out[i] = top
        top += -(-max(records[i].size, 1) // alignment) * alignment
    return out


def cases() -> dict[str, Problem]:
    """Named problems: random records (dense and sparse times, ties), and the benchmark's shapes."""
    out: dict[str, Problem] = {}
    for seed, (n, n_ops, life, size) in enumerate([(40, 12, 6, 500), (300, 60, 20, 5000),
                                                   (1500, 400, 30, 100_000), (500, 100_000, 9000, 4096)]):
        records = tuple(random_records(seed, n, n_ops, life, size))
        out[f"random{seed}-{n}"] = Problem(records=records)
        out[f"random{seed}-{n}-align64"] = Problem(
            records=records, alignment=64, whole_run=frozenset(range(0, n, 17)),
            fixed=disjoint_offsets(records, range(0, n, 23), 64))
    for shape in sorted(SHAPES):
        out[f"{shape}-1200"] = Problem(records=tuple(usage_records(SHAPES[shape](1200))))
    return out


def digest(plan: OffsetPlan | ObjectPlan) -> str:
    if isinstance(plan, OffsetPlan):
        body = [plan.offsets, plan.arena, plan.alignment]
    else:
        body = [plan.assignment, plan.object_sizes, plan.object_extents]
    return hashlib.sha256(json.dumps(body).encode()).hexdigest()[:20]


def pins() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for name, problem in cases().items():
        row = {"bound:offsets": str(problem.offset_lower_bound),
               "bound:objects": str(problem.object_lower_bound)}
        for s in (*OFFSET_STRATEGIES, *OBJECT_STRATEGIES):
            if s.name == "integer_program" and len(problem.records) > INTEGER_PROGRAM_RECORDS:
                continue
            row[f"{s.kind}:{s.name}"] = digest(s.run(problem))
        table[name] = row
    return table




# The searches are pinned on the same cases, each from greedy_by_size's plan with a work budget
# only (no time limit, so the pins cannot depend on the machine), small enough for a test.
SEARCH_WORK = {"local_search": 300, "best_fit_search": 2000}
# The strategies whose speed matters most at scale, pinned on larger inputs too: their indexes
# (buckets, trees, heaps) take other paths there.
SCALE_STRATEGIES = ("offsets:nnc", "offsets:strip_packing", "objects:greedy_by_size_improved",
                    "objects:greedy_by_breadth", "search:best_fit_search", "search0:best_fit_search",
                    "search:local_search")
SCALE_SEARCH_WORK = 100


def scale_cases() -> dict[str, Problem]:
    out = {f"{shape}-10000": Problem(records=tuple(usage_records(SHAPES[shape](10_000))))
           for shape in ("branching", "chain")}
    out["random4-6000"] = Problem(records=tuple(random_records(4, 6000, 3000, 40, 100_000)))
    return out


def search_pins() -> dict[str, dict[str, str]]:
    from packager.plan.registry import SEARCH_STRATEGIES

    table: dict[str, dict[str, str]] = {}
    for name, problem in cases().items():
        row = {}
        for s in SEARCH_STRATEGIES:
            if s.name in SEARCH_WORK:  # from greedy_by_size's plan, and from nothing
                for key in (f"search:{s.name}", f"search0:{s.name}"):
                    row[key] = digest(run_pinned(key, problem, SEARCH_WORK[s.name]))
        table[name] = row
    for name, problem in scale_cases().items():
        table[name] = {key: digest(run_pinned(key, problem, SCALE_SEARCH_WORK))
                       for key in SCALE_STRATEGIES}
    return table


def run_pinned(key: str, problem: Problem, work: int) -> OffsetPlan | ObjectPlan:
    """The plan a pin names: `kind:name`; a search (`search:`) from greedy_by_size's plan or
    (`search0:`) from nothing, with `work`."""
    from packager.plan.registry import SEARCH_STRATEGIES, Budget, offset_strategy

    kind, name = key.split(":")
    if kind in ("search", "search0"):
        search = next(s for s in SEARCH_STRATEGIES if s.name == name)
        start = offset_strategy("greedy_by_size").run(problem) if kind == "search" else None
        return search.improve(problem, start, Budget(work))
    table = OFFSET_STRATEGIES if kind == "offsets" else OBJECT_STRATEGIES
    return next(s for s in table if s.name == name).run(problem)


if __name__ == "__main__":
    import sys
    table = search_pins() if sys.argv[1:] == ["searches"] else pins()
    print(json.dumps(table, indent=1, sort_keys=True))
