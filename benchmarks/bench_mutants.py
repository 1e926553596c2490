"""Every command on damaged models: how each run ended, the CPU it took, the slowest run and the
peak memory, for `--count` mutants of the fixture and shared models (fixtures/mutants.py: the same
mutants from the same seeds). The test suite runs a cheaper share of this
(tests/cli/test_mutants.py); this runs the whole: every mutant through every command.

    python -m benchmarks.bench_mutants [--count 1000] [--commands inspect,plan,package]

`package` runs without verification (--no-verify) and without the report page: what is under test
is whether a damaged file gets a verdict, not TFLite Micro. Each command runs in a child process
of its own (python -m fixtures.mutants), so the peak memory is that command's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks.text_table import render

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--commands", default="inspect,plan,package")
    args = parser.parse_args(argv)
    rows = []
    for command in args.commands.split(","):
        done = subprocess.run([sys.executable, "-m", "fixtures.mutants", "--count", str(args.count),
                               "--commands", command], cwd=REPO, capture_output=True, text=True, check=True)
        s = json.loads(done.stdout)
        ends = {k.split()[1]: v for k, v in s["exits"].items()}
        rows.append((command, f"{s['runs']:,}", *(f"{ends.get(c, 0):,}" for c in ("0", "2", "3")),
                     str(len(s["failures"])), f"{s['cpu_s'][command]:.1f}",
                     f"{s['slowest']['seconds']:.2f} (seed {s['slowest']['seed']})", str(s["max_rss_mb"])))
        for f in s["failures"]:
            print(f"FAILED {command} seed {f['seed']} ({f['source']}): exit {f['exit']}: {f['what']}",
                  file=sys.stderr)
    print(f"{args.count:,} mutants of {s['sources']} models")
    print(render(("command", "runs", "exit 0", "exit 2", "exit 3", "traceback/hang/other", "CPU s",
                  "slowest run s", "peak MB"), rows))


if __name__ == "__main__":
    main(sys.argv[1:])
