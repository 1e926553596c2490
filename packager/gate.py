"""`tflpack gate`: fail a CI job when a new package needs more memory than its baseline.

The figure gated is what the device must reserve: TFLite Micro's whole arena when both plans state
it (tflm), else the planned arenas end to end; and, when both were packaged with --regions, each
of the two buffers. Both plans must be of the same semantics and target,
or the two numbers measure different things.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packager.errors import PackagerError
from packager.package.load import PlanFileError, parse_plan
from packager.package.sidecar import PackagePlan


@dataclass(frozen=True)
class Figure:
    what: str
    baseline: int
    new: int
    gated: bool  # False: shown beside the gated figure only

    @property
    def grew(self) -> bool:
        return self.new > self.baseline


@dataclass(frozen=True)
class Verdict:
    new_source: str
    baseline_source: str
    figures: tuple[Figure, ...]

    @property
    def grew(self) -> bool:
        return any(f.gated and f.grew for f in self.figures)


def read_plan(path: Path) -> PackagePlan:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise PlanFileError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        return parse_plan(data)
    except PackagerError as e:
        raise PlanFileError(f"{path}: {e}") from None
    except (ValueError, KeyError, TypeError) as e:  # JSON that is not a plan of ours
        raise PlanFileError(f"{path}: not a tflpack plan ({type(e).__name__}: {e})") from None


def gate(new_path: Path, baseline_path: Path) -> Verdict:
    new, old = read_plan(new_path), read_plan(baseline_path)
    if new.semantics != old.semantics:
        raise PackagerError(f"{new_path} is a {new.semantics} plan and {baseline_path} a {old.semantics} "
                            "plan: their arenas are not comparable")
    whole = new.runtime_arena is not None and old.runtime_arena is not None
    if whole and new.runtime_arena.target != old.runtime_arena.target:
        raise PackagerError(f"{new_path} states the arena for {new.runtime_arena.target} and {baseline_path} "
                            f"for {old.runtime_arena.target}: package both with the same --target")
    figures = []
    if whole:
        figures.append(Figure("TFLite Micro arena", old.runtime_arena.arena_bytes, new.runtime_arena.arena_bytes, True))
    figures.append(Figure("planned arena" + ("s" if len(new.arenas) > 1 else ""), old.arena_bytes, new.arena_bytes,
                          not whole))
    figures += region_figures(new, old)
    return Verdict(new.source.file, old.source.file, tuple(figures))


def region_figures(new: PackagePlan, old: PackagePlan) -> list[Figure]:
    """Each buffer of `package --regions`, gated when both plans split the memory in two: a
    region can grow while the whole arena does not (the set-up room moving to the head)."""
    if not new.regions or not old.regions:
        return []
    return [Figure(f"{n.part} buffer ({n.section})", o.bytes, n.bytes, True)
            for n, o in zip(new.regions, old.regions)]


def verdict_lines(v: Verdict) -> list[str]:
    lines = []
    for f in v.figures:
        change = f.new - f.baseline
        pct = f" ({change / f.baseline:+.1%})" if f.baseline else ""
        mark = ("GREW" if f.grew else "ok") if f.gated else "(not gated)"
        lines.append(f"{f.what}: {f.new:,} B (new, {v.new_source}) vs {f.baseline:,} B (baseline, "
                     f"{v.baseline_source}): {change:+,} B{pct} {mark}")
    return lines
