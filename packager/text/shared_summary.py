"""What `package A B ...` prints: the one figure for the models sharing an arena first, each model's
part, then each model's own summary as `package` prints it for one, and the shared files."""

from __future__ import annotations

from packager.package.standing import SIDE_WORDS, declare_words
from packager.text.package_summary import summary_json, summary_lines


def shared_lines(result) -> list[str]:
    """`result` is a packager.package.shared_arena.SharedResult."""
    f, s = result.figure, result.standing
    lines = [f"{declare_words(s.bound, f.arena)} of TFLite Micro arena for {len(result.sources)} models sharing it "
             f"({f.target}; {SIDE_WORDS[s.bound]}: {s.reason})",
             f"  largest plan {f.head:,} B + every model's tail {f.tail:,} B"
             + (f"; the {f.binding} decides" if f.binding != "head + tail" else ""),
             "  set up in this order on one MicroAllocator, run one at a time:"]
    for k, (source, part, tail) in enumerate(zip(result.sources, f.models, f.tails)):
        lines.append(f"    {k + 1}. {source}: plan {part.head:,} B, tail {tail:,} B, set-up needs {part.setup:,} B")
    for package in result.packages:
        lines += ["", *summary_lines(package)]
    lines += ["", "shared files:"]
    width = max(len(p.path.name) for p in result.files)
    lines += [f"  {p.path.name:<{width}}  {p.size:>11,} B  {p.what}" for p in result.files]
    if result.removed:
        lines.append("removed (an earlier run's files of ours that this run does not write):")
        lines += [f"  {name}" for name in result.removed]
    lines += [f"note: {n}" for n in result.notes]
    return lines


def shared_json(result) -> dict:
    return {"shared_arena": result.record, "out_dir": str(result.out_dir),
            "files": [{"name": p.path.name, "bytes": p.size, "what": p.what} for p in result.files],
            "notes": list(result.notes), "models": [summary_json(p) for p in result.packages]}
