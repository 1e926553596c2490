"""The exact offset search: optimal against brute force, the optimum on MiniMalloc's instances
(pinned as data: arena and nodes, never seconds), the same plan on every run, and its place in the
registry and the portfolio."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from pathlib import Path

import pytest

from packager.plan import kernels
from packager.plan.csv_records import read_records_csv
from packager.plan.offsets import exact_search
from packager.plan.offsets.local_search import OrderDecoder
from packager.plan.portfolio import run_portfolio
from packager.plan.problem import Problem
from benchmarks.bench_exact import random_steps
from packager.plan.records import OffsetPlan, UsageRecord, offset_lower_bound
from packager.plan.registry import SEARCH_STRATEGIES, SEARCHES, Budget, strategy_names
from packager.plan.validate import check_offset_plan

REPO = Path(__file__).resolve().parents[2]
MINIMALLOC = REPO.parent / "shared" / "benchmarks" / "minimalloc"
CAPACITY = 1 << 20


def brute_force(records, alignment):
    """The smallest arena over every placement order, each placed first fit: every packing can be
    pushed down into the first-fit decoding of its records by offset, so this is the optimum."""
    decoder = OrderDecoder(records, alignment)
    best = 0 if not decoder.ids else None
    for order in itertools.permutations(decoder.ids):
        offsets = [-1] * len(records)
        top = decoder.decode(order, offsets)
        best = top if best is None else min(best, top)
    return best


def random_records(rng: random.Random) -> list[UsageRecord]:
    out = []
    for i in range(rng.randint(0, 7)):
        first = rng.randint(0, 6)
        out.append(UsageRecord(i, first, first + rng.randint(0, 4), rng.randint(0, 9)))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_proves_the_optimum_brute_force_finds(seed):
    rng = random.Random(seed)
    for _ in range(60):
        records, alignment = random_records(rng), rng.choice([1, 1, 4, 16])
        result = exact_search.search(records, alignment, node_budget=1_000_000)
        check_offset_plan(records, exact_search.plan(records, alignment, node_budget=1_000_000))
        assert result.proven_optimal, records
        assert result.arena == brute_force(records, alignment), (records, alignment)


@pytest.mark.parametrize("seed", range(4))
def test_capacities_in_steps_of_the_granule_keep_the_optimum(seed):
    # Sizes sharing a factor, with alignments that divide it, do not, or share part of it: the
    # search probes capacities in steps of the granule only, and still proves what brute force finds.
    rng = random.Random(100 + seed)
    for _ in range(40):
        factor = rng.choice([2, 3, 6, 12])
        records = [UsageRecord(r.tensor, r.first_op, r.last_op, r.size * factor)
                   for r in random_records(rng)]
        alignment = rng.choice([1, 4, 8, 9])
        result = exact_search.search(records, alignment, node_budget=1_000_000)
        assert result.proven_optimal, (records, alignment)
        assert result.arena == brute_force(records, alignment), (records, alignment)


def identity_cases() -> list[tuple[list[UsageRecord], int, int]]:
    """Small random instances (with zero sizes, alignments, splits in time) and budgets that
    leave some searches unfinished."""
    rng = random.Random(17)
    cases = []
    for _ in range(30):  # small: mostly proven at once
        records = [UsageRecord(i, f, f + rng.randint(0, 5),
                               rng.choice([0, 8, 24, 40, 56, 72]) + rng.randint(0, 5))
                   for i, f in enumerate(rng.randint(0, 12) for _ in range(rng.randint(0, 24)))]
        cases.append((records, rng.choice([1, 1, 4, 16]), rng.choice([50, 400, 100_000])))
    for _ in range(12):  # larger, aligned: some gaps stay open within the budget (enough nodes
        # for the check below without the shared instances)
        records = [UsageRecord(i, f, f + rng.randint(0, 8), rng.randint(1, 100))
                   for i, f in enumerate(rng.randint(0, 30) for _ in range(rng.randint(20, 60)))]
        cases.append((records, rng.choice([1, 4, 16, 64]), 2_500))
    cases.append((random_steps(120, 4), 8, 2_000))
    return cases


def _probe_compiled(monkeypatch, compiled: bool) -> None:
    """Every probe of the searches that follow compiled (from the first step), or none."""
    monkeypatch.setattr(exact_search, "PLAIN_STEPS", 0 if compiled else exact_search.UNLIMITED)
    monkeypatch.setattr(kernels, "COMPILE_FROM", 1 if compiled else 1 << 62)


def test_the_probe_gives_the_same_search_compiled_and_uncompiled(monkeypatch):
    # One source for the probe: run as plain Python it gives the compiled kernel's results
    # exactly: plans, proofs, nodes, every improvement on the way.
    cases = identity_cases()
    named = MINIMALLOC / "D.1048576.csv"
    if named.exists():  # a shared instance, a gap left open, the scout and the bisection at work
        cases.append((read_records_csv(named), 1, 2_500))
    _probe_compiled(monkeypatch, True)
    compiled = [exact_search.search(records, alignment, node_budget=nodes)
                for records, alignment, nodes in cases]
    _probe_compiled(monkeypatch, False)
    python = [exact_search.search(records, alignment, node_budget=nodes)
              for records, alignment, nodes in cases]
    assert python == compiled
    assert sum(r.nodes for r in compiled) > 5_000 and any(not r.proven_optimal for r in compiled)


def test_a_search_goes_on_compiled_after_plain_steps_to_the_same_result(monkeypatch):
    # The switch happens inside a probe (at a pause): nothing of the search changes.
    records, alignment, nodes = identity_cases()[-1]
    _probe_compiled(monkeypatch, False)
    python = exact_search.search(records, alignment, node_budget=nodes)
    monkeypatch.setattr(exact_search, "PLAIN_STEPS", python.steps // 3)
    switched = exact_search.search(records, alignment, node_budget=nodes)
    assert switched == python and python.steps > 3


def test_the_search_imports_numba_only_past_its_plain_steps():
    # `import numba` costs a quarter of a second, a compile 8-17 s: a search that ends early
    # (as on real models) must not pay it.
    code = ("import sys\n"
            "from packager.plan.portfolio import run_portfolio\n"
            "from packager.plan.problem import Problem\n"
            "from packager.plan.records import UsageRecord\n"
            "run_portfolio(Problem(records=(UsageRecord(0, 0, 1, 64), UsageRecord(1, 2, 3, 64))))\n"
            "from packager.plan.offsets import exact_search\n"
            "exact_search.search([UsageRecord(0, 5, 8, 2), UsageRecord(1, 6, 6, 9)], 4)\n"
            "assert 'numba' not in sys.modules, 'numba imported'\n"
            "exact_search.PLAIN_STEPS = 0\n"
            "exact_search.search([UsageRecord(0, 5, 8, 2), UsageRecord(1, 6, 6, 9)], 4)\n"
            "assert 'numba' in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_granule_of_sizes_and_alignment():
    sized = [UsageRecord(i, 0, 0, s) for i, s in enumerate([0, 2048, 3072, 1024])]
    assert exact_search.granule(sized, 1) == 1024  # an alignment dividing the sizes' gcd keeps it
    assert exact_search.granule(sized, 64) == 1024
    assert exact_search.granule(sized, 4096) == 1024  # aligned tops of 1 KiB multiples stay there
    assert exact_search.granule(sized, 96) == 32  # the gcd with the alignment
    assert exact_search.granule([UsageRecord(0, 0, 0, 0)], 16) == 1  # nothing to place


def test_an_instance_in_kib_is_searched_as_in_bytes():
    # D's sizes are KiB multiples: searched in bytes it probes the same capacities in steps of
    # 1,024 as its copy in KiB does in steps of 1 (a search in bytes used to spend its tail on
    # capacities no packing can have), so the nodes are the same and the arena 1,024 times.
    records = read_records_csv_or_skip("D")
    in_kib = [UsageRecord(r.tensor, r.first_op, r.last_op, r.size // 1024) for r in records]
    assert exact_search.granule(records, 1) == 1024 and exact_search.granule(in_kib, 1) == 1
    kib = exact_search.search(in_kib, 1, node_budget=3_000)
    byte = exact_search.search(records, 1, node_budget=3_000)
    assert byte.arena > offset_lower_bound(records)  # a gap left: the probes below the best ran
    assert (byte.arena, byte.proven_optimal, byte.nodes, byte.lower_bound) == (
        kib.arena * 1024, kib.proven_optimal, kib.nodes, kib.lower_bound * 1024)


def test_a_probe_given_its_nodes_in_shares_reaches_the_answer_of_one_call():
    records = read_records_csv_or_skip("A")
    inst = exact_search._Instance(records, 1)
    found, complete, used, _ = exact_search.fits(inst, CAPACITY, 400_000, None)
    assert complete and found is not None
    probe = exact_search._CapacityProbe(inst, CAPACITY)
    while not probe.complete:
        probe.run(5_000, None)
    assert probe.found == found and probe.spent >= used  # a run cut by a share starts again


def test_never_worse_than_the_plan_it_starts_from():
    records = read_records_csv_or_skip("A")
    start = exact_search.plan(records, 1, node_budget=2_000)  # first fit, then a little search
    again = exact_search.plan(records, 1, initial=start, node_budget=500)
    check_offset_plan(records, again)
    assert again.arena <= start.arena


def read_records_csv_or_skip(name: str) -> list[UsageRecord]:
    path = MINIMALLOC / f"{name}.1048576.csv"
    if not path.exists():
        pytest.skip(f"{path.name} not present (../shared/benchmarks/minimalloc is absent)")
    return read_records_csv(path)


# The optimum of each shared instance, and the nodes the search spends to prove it (the node
# count is the search's own: it pins determinism as much as the arena does).
# (B, 120,369 nodes, and D, not proven within the budget, are in docs/strategies.md's table from
# benchmarks/bench_exact.py; they are left out here to keep the suite short.)
# The nodes include the scout's (the default schedule: the bound's probe for 30 nodes per record,
# the scout for 100 per record, then the bound's probe again); before it A took 28,636, E 154,624
# and F 52,390, with the same arenas.
# (The nodes are the budgeted ones; the tiling probe's at the bound, TILING_NODES_PER_RECORD per
# record at most, are counted apart: it packs A after the first probe's 4,620 and 1,304 of its own
# (1,314 before its wells), against 44,652 before it; on E and F it packs nothing in its 10,750
# and 14,800 nodes, and the schedule after it is the one before.)
OPTIMA = {"A": (CAPACITY, 4_620, 1_304), "C": (1_039_360, 609, 0), "E": (CAPACITY, 176_984, 10_750),
          "F": (CAPACITY, 83_174, 14_800)}
# The steps those nodes take (exact_probe.S_WORK and the tiling probe's, what the step budget
# counts): pinned as well, since the budget of large inputs is counted in them.
STEPS = {"A": 13_262_222, "C": 843_436, "E": 124_402_542, "F": 129_998_477}


@pytest.mark.parametrize("name", sorted(OPTIMA))
def test_the_optimum_on_minimalloc_instances(name):
    records = read_records_csv_or_skip(name)
    arena, nodes, tiling = OPTIMA[name]
    result = exact_search.search(records, 1, node_budget=400_000)
    check_offset_plan(records, OffsetPlan(exact_search.NAME, result.offsets, result.arena))
    assert (result.arena, result.proven_optimal, result.nodes) == (arena, True, nodes)
    assert result.tiling_nodes == tiling
    assert result.steps == STEPS[name]
    assert result.arena == offset_lower_bound(records) <= CAPACITY


def test_two_runs_give_identical_plans_when_the_budget_runs_out():
    # D: A packs within the tiling probe's share, which is apart from this budget
    records = read_records_csv_or_skip("D")
    first = exact_search.plan(records, 1, node_budget=3_000)
    second = exact_search.plan(records, 1, node_budget=3_000)
    assert first == second
    assert not first.proven_optimal and not first.time_limit_hit


def test_the_time_limit_is_a_safety_net_that_says_when_it_was_hit():
    records = read_records_csv_or_skip("A")
    plan = exact_search.plan(records, 1, node_budget=10_000_000, time_limit=0.0)
    check_offset_plan(records, plan)
    assert plan.time_limit_hit and not plan.proven_optimal


def test_searches_are_registry_strategies_with_one_budget_type():
    assert SEARCHES == ("local_search", "best_fit_search", "exact_search")
    for search in SEARCH_STRATEGIES:
        assert isinstance(search.budget, Budget) and search.budget.work > 0
        assert search.name in strategy_names("offsets")
    assert [s.name for s in SEARCH_STRATEGIES if s.exact] == ["exact_search"]


def chain_of_steps(n: int, seed: int) -> list[UsageRecord]:
    """n records over a long timeline, each alive for a few steps: over 1,000 records."""
    return random_steps(n, seed)


def test_on_over_a_thousand_records_best_is_never_worse_than_the_rest():
    problem = Problem(records=tuple(chain_of_steps(1_200, 3)))
    result = run_portfolio(problem, baselines=False)
    by_name = {o.strategy: o for o in result.offsets}
    assert "exact_search" in by_name
    others = min(o.total for o in result.offsets if o.strategy != "exact_search")
    assert by_name["exact_search"].total <= others
    assert result.best_offsets.total == min(o.total for o in result.offsets)
    again = run_portfolio(problem, baselines=False)
    assert [o.plan for o in again.offsets] == [o.plan for o in result.offsets]


def test_portfolio_reports_a_proof_above_the_bound():
    # With 4-byte alignment the two records cannot meet the breadth bound (11 B): 2 B at 0 and 9 B
    # at 4 is the best, and only the exact search can say that no plan is smaller.
    records = (UsageRecord(0, 5, 8, 2), UsageRecord(1, 6, 6, 9))
    problem = Problem(records=records, alignment=4)
    result = run_portfolio(problem, baselines=False)
    assert problem.offset_lower_bound == 11
    assert result.best_offsets.total == 13 == brute_force(list(records), 4)
    assert result.offsets_optimal
    exact = [o for o in result.offsets if o.strategy == "exact_search"]
    assert exact and exact[0].plan.proven_optimal


def test_plan_json_says_proven_optimal_above_the_bound():
    from packager.text.plan_view import result_view

    problem = Problem(records=(UsageRecord(0, 5, 8, 2), UsageRecord(1, 6, 6, 9)), alignment=4)
    view = result_view(run_portfolio(problem, baselines=False), with_tensors=False)
    assert view["best_offsets_optimal"] is True
    assert not any(s.get("time_limit_hit") for s in view["strategies"])


@pytest.mark.parametrize("search", SEARCH_STRATEGIES, ids=lambda s: s.name)
def test_every_search_says_when_its_time_limit_stopped_it(search):
    records = tuple(chain_of_steps(300, 5))
    problem = Problem(records=records)
    start = run_portfolio(problem, offset_names=["greedy_in_order"], object_names=[],
                          baselines=False).best_offsets.plan
    assert start.arena > problem.offset_lower_bound
    stopped = search.improve(problem, start, Budget(search.budget.work, 0.0))
    check_offset_plan(list(records), stopped)
    assert stopped.time_limit_hit and stopped.arena <= start.arena
    # With work left to count and time to spare, the same budget gives the same plan twice.
    small = Budget(min(search.budget.work, 2_000), None)
    assert search.improve(problem, start, small) == search.improve(problem, start, small)


def test_a_search_that_cannot_close_the_gap_stops_by_counting_nodes_and_says_so():
    records = read_records_csv_or_skip("D")  # its bound is out of reach
    first = exact_search.search(records, 1, node_budget=4_000)
    assert not first.proven_optimal and not first.time_limit_hit
    assert first.stopped in ("no progress in 500 nodes", "node budget of 4,000 spent")
    assert first.nodes <= 4_000
    plan = exact_search.plan(records, 1, node_budget=4_000)
    check_offset_plan(records, plan)
    assert plan.search_stopped == first.stopped and plan.arena == first.arena


def test_two_runs_give_identical_plans_whatever_the_clock_says(monkeypatch):
    # The budget counts nodes: a clock that races (a loaded machine) changes nothing while the
    # safety net is far away; the plan, its nodes and why it stopped are the same.
    records = read_records_csv_or_skip("D")
    quiet = exact_search.search(records, 1, node_budget=4_000, time_limit=1e9)
    ticks = iter(range(0, 10**9, 1_000))

    class RacingClock:
        @staticmethod
        def process_time() -> float:
            return float(next(ticks))

    monkeypatch.setattr(exact_search, "time", RacingClock)
    loaded = exact_search.search(records, 1, node_budget=4_000, time_limit=1e9)
    assert loaded == quiet


def test_plan_says_when_the_exact_search_stopped_with_a_gap_left():
    from io import StringIO

    from rich.console import Console

    from packager.plan.portfolio import Outcome, PortfolioResult
    from packager.text.plan_text import print_result
    from packager.text.plan_view import result_view

    records = tuple(read_records_csv_or_skip("D"))
    problem = Problem(records=records)
    plan = exact_search.plan(list(records), 1, node_budget=4_000)
    result = PortfolioResult(problem, (Outcome("exact_search", "offsets", plan, 0.0),), (), ())
    assert plan.search_stopped and not result.offsets_optimal
    view = result_view(result, with_tensors=False)
    assert view["strategies"][0]["search_stopped"] == plan.search_stopped
    out = StringIO()
    print_result(Console(file=out, width=200), "records", result)
    assert f"exact_search stopped before closing the gap to the bound: {plan.search_stopped}" in out.getvalue()


# The scout (opt in): small probes over a ladder of capacities before the bound's probe.
@pytest.mark.parametrize("ladder", exact_search.SCOUT_LADDERS)
def test_a_scout_gives_a_valid_plan_the_same_on_every_run(ladder):
    records = read_records_csv_or_skip("A")
    runs = [exact_search.search(records, 1, node_budget=12_000, scout=ladder, scout_nodes=4_000)
            for _ in range(2)]
    assert runs[0] == runs[1]
    check_offset_plan(records, OffsetPlan(exact_search.NAME, runs[0].offsets, runs[0].arena))
    assert runs[0].nodes <= 12_000
    # every better plan is recorded, in order, the last one being the plan returned
    arenas = [arena for _, arena in runs[0].improvements]
    assert arenas == sorted(arenas, reverse=True) and arenas[-1] == runs[0].arena


def test_a_scout_finds_an_easy_capacity_the_bound_first_schedule_reaches_late():
    # On D, 1010 KiB packs in 339 nodes while the capacities around it stay open: the sweep
    # reaches MiniMalloc's bar (2^20) within 60,000 nodes (the default schedule at 50,000: 1052 KiB).
    records = read_records_csv_or_skip("D")
    swept = exact_search.search(records, 1, node_budget=60_000, scout="sweep", scout_nodes=60_000)
    check_offset_plan(records, OffsetPlan(exact_search.NAME, swept.offsets, swept.arena))
    assert swept.arena <= CAPACITY


def test_an_unknown_scout_ladder_is_refused():
    with pytest.raises(ValueError, match="unknown scout ladder"):
        exact_search.search([UsageRecord(0, 0, 1, 64)], 1, scout="luby", scout_nodes=10)


# The step budget: a node scans its part of the records, so on large inputs the search also
# counts steps (exact_probe.S_WORK) and stops at whichever budget runs out first.
def test_a_step_budget_stops_the_search_the_same_way_every_time_and_says_so():
    from benchmarks.bench_exact import long_lived

    records = long_lived(2_000, 1)  # stays above its bound far beyond this budget
    problem = Problem(records=tuple(records))
    start = run_portfolio(problem, offset_names=["greedy_by_size"], object_names=[],
                          baselines=False).best_offsets.plan
    runs = [exact_search.search(records, 1, start, node_budget=8_000_000, step_budget=20_000_000,
                                lower_bound=problem.offset_lower_bound) for _ in range(2)]
    assert runs[0] == runs[1]
    result = runs[0]
    assert not result.proven_optimal and not result.time_limit_hit
    assert result.stopped == "step budget of 20,000,000 spent"
    assert 20_000_000 <= result.steps < 21_000_000 and result.nodes < 8_000_000  # a node past it at most
    assert problem.offset_lower_bound < result.arena <= start.arena
    plan = exact_search.plan(records, 1, start, 8_000_000, None, problem.offset_lower_bound, 20_000_000)
    check_offset_plan(records, plan)
    assert (plan.offsets, plan.search_stopped) == (result.offsets, result.stopped)


def test_a_step_budget_it_does_not_reach_changes_nothing():
    records = read_records_csv_or_skip("A")
    free = exact_search.search(records, 1, node_budget=400_000)
    capped = exact_search.search(records, 1, node_budget=400_000, step_budget=free.steps + 1)
    assert capped == free and free.proven_optimal


def test_the_probe_counts_the_same_steps_compiled_and_uncompiled(monkeypatch):
    cases = [(records, alignment, nodes, steps)
             for (records, alignment, nodes), steps in zip(identity_cases()[:36:3],
                                                            [500, 5_000, 50_000, 10**9] * 3)]
    _probe_compiled(monkeypatch, True)
    compiled = [exact_search.search(r, a, node_budget=n, step_budget=s) for r, a, n, s in cases]
    _probe_compiled(monkeypatch, False)
    python = [exact_search.search(r, a, node_budget=n, step_budget=s) for r, a, n, s in cases]
    assert python == compiled
    assert any(r.stopped.startswith("step budget") for r in compiled)


def test_neighbour_rows_are_the_records_alive_at_a_common_step_in_ascending_order():
    import numpy as np

    from packager.plan.offsets.local_search import conflict_lists

    rng = random.Random(23)
    for _ in range(200):
        records = [UsageRecord(i, f, f + rng.randint(0, 6), rng.choice([0, 1, 5, 9]))
                   for i, f in enumerate(rng.randint(0, 15) for _ in range(rng.randint(0, 40)))]
        inst = exact_search._Instance(records, 1)
        position = {i: k for k, i in enumerate(inst.ids)}
        conflicts = conflict_lists(records)
        rows = [sorted(position[j] for j in conflicts[i]) for i in inst.ids]
        assert [list(inst.nbr_idx[inst.nbr_ptr[k]:inst.nbr_ptr[k + 1]]) for k in range(len(rows))] == rows
        assert inst.nbr_ptr.dtype == inst.nbr_idx.dtype == np.int64
        # the sections: bytes alive and records crossing each boundary, by their definition
        for c in range(inst.sections):
            alive = [k for k in range(len(inst.ids)) if inst.first[k] <= c <= inst.last[k]]
            assert list(inst.alive_idx[inst.alive_ptr[c]:inst.alive_ptr[c + 1]]) == alive
            assert inst.total0[c] == sum(int(inst.size[k]) for k in alive)
            if c + 1 < inst.sections:
                assert inst.cuts0[c] == sum(1 for k in alive if inst.last[k] > c)


def test_best_runs_the_exact_search_at_every_size_within_a_step_budget():
    from packager.plan.registry import EXACT_NODES, exact_steps, offset_strategy

    exact = offset_strategy("exact_search")
    assert exact.max_records is None and exact.budget.work == EXACT_NODES
    # D and J spend the whole node budget: 39,011,314,044 and 22,277,490,356 steps at 213 and
    # 409 records (benchmarks/bench_exact.py); their allowance keeps their plans.
    assert exact.budget.steps(213) > 39_011_314_044 and exact.budget.steps(409) > 22_277_490_356
    assert exact_steps(10_000) == 1_200_000_000 and exact_steps(100_000) == 10**10
    assert Budget(5, 1.0, exact_steps).capped(0.5) == Budget(5, 0.5, exact_steps)


def test_best_runs_the_exact_search_above_five_thousand_records():
    # `best` used to leave it out above 5,000 records; it now runs at every size, never worse
    # than the rest, the same on every run.
    problem = Problem(records=tuple(chain_of_steps(5_200, 3)))
    result = run_portfolio(problem, object_names=[], baselines=False)
    assert not result.skipped
    by_name = {o.strategy: o for o in result.offsets}
    others = min(o.total for o in result.offsets if o.strategy != "exact_search")
    assert by_name["exact_search"].total <= others
    assert result.offsets_optimal and result.best_offsets.total == problem.offset_lower_bound


def test_a_start_at_the_bound_is_returned_without_building_the_search(monkeypatch):
    records = chain_of_steps(300, 5)
    start = exact_search.plan(records, 1, node_budget=100_000)
    assert start.arena == offset_lower_bound(records)
    monkeypatch.setattr(exact_search, "_Instance", None)  # building it would fail
    result = exact_search.search(records, 1, start, node_budget=100_000)
    assert (result.offsets, result.arena, result.proven_optimal, result.nodes) == (
        start.offsets, start.arena, True, 0)
