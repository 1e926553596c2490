"""The tiling probe alone at the bound of perfect packings: nodes and steps to a packing.

    python -m benchmarks.bench_tiling [--nodes-per-record 200] [--sizes 100,250,500,1000] [--seeds 1,2,3,4,5]

Each perfect packing (`benchmarks.perfect_packing`, the optimum its bound 2^20) is given to the
tiling probe's rounds (`offsets/_tiling.TilingRounds`: its orders round robin under a doubling node
limit, each backjumping, and in every round a turn of fresh random orders and one of learning restarts, as the exact search
runs it: uncompiled for its first PLAIN_STEPS steps, the same nodes either way) at the bound, with at most --nodes-per-record nodes per record (the search gives it
FULL_TILING_NODES_PER_RECORD on these, TILING_NODES_PER_RECORD where not every section is full). Nodes and steps are counted work, the same on any machine; "open": no
packing within the nodes.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks import perfect_packing
from benchmarks.text_table import render
from packager.plan.csv_records import parse_records_csv
from packager.plan.offsets import exact_search
from packager.plan.offsets._tiling import TilingRounds

UNLIMITED = 1 << 62


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes-per-record", type=int, default=200)
    parser.add_argument("--sizes", default="100,250,500,1000")
    parser.add_argument("--seeds", default="1,2,3,4,5")
    args = parser.parse_args(argv)
    rows = []
    for n in [int(s) for s in args.sizes.split(",") if s]:
        for seed in [int(s) for s in args.seeds.split(",") if s]:
            records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(n, seed)))
            inst = exact_search._Instance(records, 1)
            rounds = TilingRounds(inst, perfect_packing.WIDTH)
            nodes, steps, _ = rounds.run(args.nodes_per_record * n, UNLIMITED, exact_search.PLAIN_STEPS)
            answer = "packed" if rounds.found is not None else "infeasible" if rounds.complete else "open"
            rows.append([f"perfect {n}, seed {seed}", f"{n:,}", answer, f"{nodes:,}", f"{steps:,}",
                         f"{nodes / n:.1f}"])
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    print(render(["instance", "buffers", "at the bound", "nodes", "steps", "nodes per record"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
