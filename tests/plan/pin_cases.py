"""The fixed inputs whose plans are pinned (tests/plan/plan_pins.json), and the digest of a plan.

The pins hold what every strategy produced before its code was made faster: a faster version must
give the very same plan, byte for byte, on these inputs. Regenerate only on purpose:
    python -m tests.plan.pin_cases > tests/plan/plan_pins.json
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


if __name__ == "__main__":
    print(json.dumps(pins(), indent=1, sort_keys=True))
