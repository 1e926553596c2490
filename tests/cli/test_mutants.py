"""1,000 damaged models (fixtures/mutants.py: cut short, bytes and bits changed, words set to
0, 1, -1, 2^31 - 1 or random values), deterministic from their seeds: every command ends each in a
verdict (exit 0, 2 or 3), never a traceback, never a hang, in bounded memory. The mutants come from
the fixture models, and from the real models too when ../shared is beside the checkout.
`inspect` and `plan` run on all of them; `package` (unverified) on every tenth, to keep the CPU
reasonable (about a minute); benchmarks/bench_mutants.py runs every command on every mutant."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

PEAK_MB = 1500  # the largest run here takes a few hundred MB; a length taken at its word takes GBs


def test_a_thousand_mutants_each_get_a_verdict():
    done = subprocess.run([sys.executable, "-m", "fixtures.mutants", "--count", "1000",
                           "--commands", "inspect,plan,package", "--package-every", "10"],
                          cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["runs"] == 2100
    assert summary["failures"] == [], summary["failures"][:5]
    assert summary["max_rss_mb"] < PEAK_MB, summary
    # Most mutants are refused, some still read: both verdicts are exercised.
    exits = summary["exits"]
    assert exits.get("inspect 2", 0) > 300 and exits.get("plan 0", 0) > 100, exits


def test_mutants_are_the_same_from_the_same_seed():
    from fixtures.mutants import mutant, sources
    data = sources()[0].read_bytes()
    assert [mutant(data, s) for s in range(20)] == [mutant(data, s) for s in range(20)]
    assert len({mutant(data, s) for s in range(20)}) == 20
