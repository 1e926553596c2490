"""The section relaxation of bench_lower_bound: a relaxation (whatever packs the whole packs it),
so a capacity it cannot pack is a lower bound for the whole; and its filled instance, which packs
exactly where the records do."""

from __future__ import annotations

import random

from benchmarks import bench_lower_bound, perfect_packing
from packager.plan.offsets import exact_search
from packager.plan.offsets._tiling import TilingRounds, full_at
from packager.plan.records import UsageRecord, offset_lower_bound
from tests.plan.test_exact_search import brute_force


def _random_records(seed: int, n: int = 40) -> list[UsageRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        first = rng.randrange(30)
        out.append(UsageRecord(i, first, first + rng.randrange(8), rng.randrange(1, 9) * 64))
    return out


def _conflicts(records) -> set[tuple[int, int]]:
    return {(a.tensor, b.tensor) for a in records for b in records if a.tensor < b.tensor and a.conflicts(b)}


def test_all_sections_keep_every_conflict_and_fewer_keep_a_subset():
    for seed in range(5):
        records = _random_records(seed)
        inst = exact_search._Instance(records, 1)
        whole = bench_lower_bound.section_relaxation(inst, records, range(inst.sections))
        assert len(whole) == len(records) and _conflicts(whole) == _conflicts(records)
        kept = sorted(random.Random(seed).sample(range(inst.sections), inst.sections // 3))
        part = bench_lower_bound.section_relaxation(inst, records, kept)
        assert _conflicts(part) <= _conflicts(records)
        assert offset_lower_bound(part) <= offset_lower_bound(records)
        # the kept sections' loads are the relaxation's (runs of equal sections merged, empty ones
        # left out): every record alive in a kept section is kept
        rinst = exact_search._Instance(part, 1)
        assert set(rinst.total0.tolist()) | {0} == set(inst.total0[kept].tolist()) | {0}


def test_sections_and_triples_tables_on_a_perfect_packing(tmp_path, capsys):
    path = perfect_packing.write(tmp_path / "p.csv", 60, 1)  # packs at its bound: so does each relaxation
    assert bench_lower_bound.main([str(path), "--nodes", "5000", "--slacks", "0,1000", "--triples", "0"]) == 0
    _, sections, triples = capsys.readouterr().out.split("\n\n")
    assert sections.count("packs") == 2 and "open" not in sections
    assert "| 60 of 60 |" in sections  # a slack of 1,000 granules keeps every section, every record
    row = [c.strip() for c in triples.strip().splitlines()[-1].strip("|").split("|")]
    assert int(row[4].replace(",", "")) > 0 and row[5:7] == ["0", "0"]  # every triple packs


def test_the_filled_instance_is_full_and_packs_exactly_where_the_records_do():
    # with_fillers asks "do the records fit under C?" of an instance full at C, where the tiling
    # probe's backjumping holds: the answer must be the records' own, at the optimum and below it
    rng = random.Random(7)
    for _ in range(40):
        records = [UsageRecord(i, f, f + rng.randrange(3), rng.randrange(1, 4) * 64)
                   for i, f in enumerate(rng.randrange(6) for _ in range(rng.randrange(1, 6)))]
        best = brute_force(records, 1)
        for capacity in (best - 64, best, best + 128):
            if capacity < offset_lower_bound(records):
                continue
            padded = bench_lower_bound.with_fillers(records, capacity, 64)
            inst = exact_search._Instance(padded, 1)
            assert full_at(inst, capacity)
            rounds = TilingRounds(inst, capacity)
            rounds.run(1_000_000, 1 << 60, exact_search.PLAIN_STEPS)
            assert rounds.complete and (rounds.found is not None) == (capacity >= best), (records, capacity)
