"""Perfect packings: buffers cut from a W x T strip (memory x time), so that the strip is covered
exactly. At every step the buffers alive add up to W, so the lower bound (the largest breadth) is
W, and the cut itself is a plan at W: the optimum is the bound, known in advance.

The cuts are guillotine cuts, made deterministically from a seed: a piece drawn at random with a
chance in proportion to its area (its share of the strip's memory times its share of time) is cut
across time or across memory, whichever side is longer in those shares, at a random place. Sizes are multiples of GRANULE bytes and
lifetimes whole steps, as in MiniMalloc's instances (KiB, capacity 2^20).

Written as MiniMalloc's CSV (`id,lower,upper,size`, half-open [lower, upper)), the format
`tflpack plan --records` reads:

    python -m benchmarks.perfect_packing N SEED OUT.csv [--merge M]

`--merge M` (`merged`) joins M pairs of buffers end to end: every step still holds W bytes (the
instance stays full at its bound), but the cut is no longer a plan of it, and it may not pack at
W at all: what a full instance that does not pack costs the search.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

WIDTH = 1 << 20  # bytes: the strip's memory, the optimum
GRANULE = 1024  # bytes: every size is a multiple
STEPS_PER_BUFFER = 4  # the strip's length in time: this many steps per buffer


def cut(n: int, seed: int, width: int = WIDTH, granule: int = GRANULE) -> list[tuple[int, int, int, int]]:
    """n buffers (lower, upper, size, offset) covering [0, T) x [0, width) exactly."""
    steps = STEPS_PER_BUFFER * n
    rng = random.Random(seed)
    units = width // granule
    pieces = [(0, steps, 0, units)]  # (lower, upper, bottom, top): time in steps, memory in granules
    while len(pieces) < n:
        # a piece that can still be cut, drawn by area
        shares = [_share(p, steps, units) if p[1] - p[0] > 1 or p[3] - p[2] > 1 else 0.0
                  for p in pieces]
        if not any(shares):
            raise ValueError(f"a {units} x {steps} strip cannot be cut into {n} pieces")
        i = rng.choices(range(len(pieces)), weights=shares)[0]
        lower, upper, bottom, top = pieces[i]
        across_time = (upper - lower) * units >= (top - bottom) * steps
        if upper - lower < 2:
            across_time = False
        elif top - bottom < 2:
            across_time = True
        if across_time:
            at = rng.randrange(lower + 1, upper)
            pieces[i:i + 1] = [(lower, at, bottom, top), (at, upper, bottom, top)]
        else:
            at = rng.randrange(bottom + 1, top)
            pieces[i:i + 1] = [(lower, upper, bottom, at), (lower, upper, at, top)]
    return [(lower, upper, (top - bottom) * granule, bottom * granule)
            for lower, upper, bottom, top in pieces]


def merged(buffers: list[tuple[int, int, int, int]], pairs: int) -> list[tuple[int, int, int, int]]:
    """The buffers with `pairs` pairs joined: two of one size, one ending where the other begins,
    at different offsets, become one buffer over both spans (taken in order, each buffer in one
    pair at most; offset -1: none known). The bytes alive at every step stay the same."""
    joined, used = [], set()
    for i, (lower, upper, size, offset) in enumerate(buffers):
        for j, (lower2, upper2, size2, offset2) in enumerate(buffers):
            if len(joined) < pairs and i not in used and j not in used and (
                    upper == lower2 and size == size2 and offset != offset2):
                used |= {i, j}
                joined.append((lower, upper2, size, -1))
    if len(joined) < pairs:
        raise ValueError(f"only {len(joined)} pairs can be joined, not {pairs}")
    return [b for k, b in enumerate(buffers) if k not in used] + joined


def _share(piece: tuple[int, int, int, int], steps: int, units: int) -> float:
    lower, upper, bottom, top = piece
    return (upper - lower) / steps * (top - bottom) / units


def csv_text(buffers: list[tuple[int, int, int, int]]) -> str:
    lines = ["id,lower,upper,size"]
    lines += [f"{i},{lower},{upper},{size}" for i, (lower, upper, size, _) in enumerate(buffers)]
    return "\n".join(lines) + "\n"


def write(path: Path, n: int, seed: int) -> Path:
    path.write_text(csv_text(cut(n, seed)), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a perfect packing as MiniMalloc's CSV.")
    parser.add_argument("buffers", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--merge", type=int, default=0, help="join this many pairs (`merged`)")
    args = parser.parse_args(argv)
    buffers = cut(args.buffers, args.seed)
    if args.merge:
        buffers = merged(buffers, args.merge)
    args.out.write_text(csv_text(buffers), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
