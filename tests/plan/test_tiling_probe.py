"""The exact search's tiling probe (offsets/_tiling.py, kernels/tiling_probe.py): the same answer
as brute force at every capacity, a packing at the bound of perfect packings, the same nodes and
offsets compiled or not."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from benchmarks import perfect_packing
from benchmarks.bench_exact import random_steps
from packager.plan.offsets import exact_search
from packager.plan.offsets._tiling import (FULL_ORDERS, LEVEL_SPREAD, ORDERS, TilingProbe, TilingRestarts,
                                          TilingRounds, conflict_rank, full_at, luby)
from packager.plan.csv_records import parse_records_csv
from packager.plan.records import OffsetPlan, UsageRecord, arena_of, offset_lower_bound
from packager.plan.validate import check_offset_plan
from tests.plan.test_exact_search import brute_force

UNLIMITED = 1 << 60


def answer(records, capacity, nodes=1_000_000):
    """(packed, offsets) of the tiling probe at `capacity`, run to its end."""
    inst = exact_search._Instance(records, 1)
    rounds = TilingRounds(inst, capacity)
    rounds.run(nodes, UNLIMITED, exact_search.PLAIN_STEPS)
    assert rounds.complete
    if rounds.found is None:
        return False, None
    return True, in_record_order(records, inst, rounds.found)


def in_record_order(records, inst, found) -> list[int]:
    """The offsets a probe found (in the instance's order), in the records' order."""
    offsets = [0] * len(records)
    for k, i in enumerate(inst.ids):
        offsets[i] = found[k]
    return offsets


def probes_agree_with_brute_force(seed: int, probes) -> None:
    """Each probe `probes(inst, capacity)` gives, run to its end, packs exactly the capacities brute
    force packs, on a small random instance."""
    records = random_steps(7, seed)
    optimum = brute_force(records, 1)
    step = exact_search.granule(records, 1)
    inst = exact_search._Instance(records, 1)
    for capacity in range(offset_lower_bound(records), optimum + 2 * step, step):
        for probe in probes(inst, capacity):
            probe.run(1_000_000, UNLIMITED, False)
            assert probe.complete and (probe.found is not None) == (capacity >= optimum)


@pytest.mark.parametrize("seed", range(8))
def test_it_packs_exactly_the_capacities_brute_force_packs(seed):
    records = random_steps(7, seed)
    optimum = brute_force(records, 1)
    step = exact_search.granule(records, 1)
    for capacity in range(offset_lower_bound(records), optimum + 2 * step, step):
        packed, offsets = answer(records, capacity)
        assert packed == (capacity >= optimum), (capacity, optimum)
        if packed:
            check_offset_plan(records, OffsetPlan("t", tuple(offsets), arena_of(records, offsets)))
            assert arena_of(records, offsets) <= capacity


@pytest.mark.parametrize("seed", range(8))
def test_with_the_records_that_fit_first_it_packs_exactly_what_brute_force_packs(seed):
    # the order of a point's candidates (here: those whose top meets a neighbour's floor first)
    # changes the path, never the answer
    probes_agree_with_brute_force(seed, lambda inst, capacity: [TilingProbe(inst, capacity, order, fit=True)
                                                                for order in ORDERS])


def test_on_a_full_instance_the_orders_run_again_with_the_records_that_fit_first():
    # perfect 500, seed 5: the three orders alone leave it open after 50 nodes per record (the
    # search's share); the sizes order with the records that fit first packs it
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(500, 5)))
    inst = exact_search._Instance(records, 1)
    rounds = TilingRounds(inst, perfect_packing.WIDTH)
    assert [p.fit for p in rounds.probes[:len(FULL_ORDERS)]] == [0, 0, 0, 1, 1, 1, 0]
    nodes, _, _ = rounds.run(50 * 500, UNLIMITED, 0)
    assert rounds.found is not None and nodes < 50 * 500
    offsets = in_record_order(records, inst, rounds.found)
    check_offset_plan(records, OffsetPlan("t", tuple(offsets), perfect_packing.WIDTH))
    assert arena_of(records, offsets) == perfect_packing.WIDTH
    # where a section has slack the three orders run alone
    assert len(TilingRounds(inst, perfect_packing.WIDTH + 1024).probes) == len(ORDERS)


@pytest.mark.parametrize("seed", range(8))
def test_with_the_earliest_starts_first_it_packs_exactly_what_brute_force_packs(seed):
    probes_agree_with_brute_force(seed, lambda inst, capacity: [TilingProbe(inst, capacity, "early")])


def test_on_a_full_instance_the_earliest_starts_first_runs_seventh():
    # perfect 1,000, seed 1: the six other searches leave it open after 50 nodes per record (the
    # search's share; 137,972 nodes between them); the earliest starts first packs it in 1,082
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(1000, 1)))
    inst = exact_search._Instance(records, 1)
    rounds = TilingRounds(inst, perfect_packing.WIDTH)
    assert len(rounds.probes) == len(FULL_ORDERS) + 2 and FULL_ORDERS[-1] == ("early", False)
    nodes, _, _ = rounds.run(50 * 1000, UNLIMITED, 0)
    assert rounds.found is not None and nodes < 50 * 1000
    offsets = in_record_order(records, inst, rounds.found)
    check_offset_plan(records, OffsetPlan("t", tuple(offsets), perfect_packing.WIDTH))
    assert arena_of(records, offsets) == perfect_packing.WIDTH


@pytest.mark.parametrize("seed", range(1, 6))
def test_it_packs_perfect_packings_at_their_bound(seed):
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(60, seed)))
    assert offset_lower_bound(records) == perfect_packing.WIDTH
    packed, offsets = answer(records, perfect_packing.WIDTH, nodes=60 * 50)
    assert packed
    check_offset_plan(records, OffsetPlan("t", tuple(offsets), perfect_packing.WIDTH))


def test_compiled_and_plain_take_the_same_nodes_to_the_same_offsets():
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(120, 2)))
    for jump in (False, True):
        runs = []
        for compiled in (False, True):
            probe = TilingProbe(exact_search._Instance(records, 1), perfect_packing.WIDTH, "small", jump=jump)
            probe.run(100_000, UNLIMITED, compiled)
            runs.append((probe.complete, probe.found, probe.nodes, probe.steps))
        assert runs[0] == runs[1] and runs[0][1] is not None


def test_the_tiling_probe_leads_where_every_section_is_full_at_the_bound():
    # perfect 250, seed 1: every section holds the bound, so a packing there is a tiling; the
    # first probe's share at the bound packs nothing (7,500 nodes), the tiling probe does, and
    # now runs first: the first probe never starts
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(250, 1)))
    inst = exact_search._Instance(records, 1)
    assert full_at(inst, perfect_packing.WIDTH)
    assert not full_at(inst, perfect_packing.WIDTH + 1024)
    result = exact_search.search(records, 1, node_budget=400_000)
    assert (result.arena, result.proven_optimal) == (perfect_packing.WIDTH, True)
    assert result.nodes == 0 and 0 < result.tiling_nodes < 50 * 250
    check_offset_plan(records, OffsetPlan("t", result.offsets, result.arena))


def test_where_it_leads_its_steps_are_its_own_up_to_a_multiple_of_the_step_budget():
    # perfect 1,000 seed 92 packs after 15.5 billion steps of the tiling probe, more than the
    # search's whole step budget at 1,000 records (12 billion): so on a full instance the tiling
    # probe's steps are counted apart, up to FULL_TILING_STEP_FACTOR times the step budget. Here
    # perfect 250 seed 1, under a step budget far below what its tiling search takes
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(250, 1)))
    free = exact_search.search(records, 1, node_budget=400_000)
    needed = free.tiling_steps
    assert needed > 1_000_000 and free.steps == 0
    factor = exact_search.FULL_TILING_STEP_FACTOR
    enough = exact_search.search(records, 1, node_budget=400_000, step_budget=needed // factor + 1)
    assert (enough.arena, enough.proven_optimal, enough.tiling_steps) == (perfect_packing.WIDTH, True, needed)
    assert enough.steps == 0 and enough.offsets == free.offsets  # the search's own budget untouched
    # a tenth of that: the tiling probe stops at its own limit, the rest of the search runs within
    # the step budget and ends above the bound
    budget = needed // factor // 10
    short = exact_search.search(records, 1, node_budget=400_000, step_budget=budget)
    assert factor * budget <= short.tiling_steps < needed and not short.proven_optimal
    assert short.steps >= budget and short.stopped == (
        f"step budget of {budget:,} spent, after the tiling probe's own {short.tiling_nodes:,} nodes"
        f" and {short.tiling_steps:,} steps at the bound")
    check_offset_plan(records, OffsetPlan("t", short.offsets, short.arena))


def test_the_first_probe_leads_where_a_section_has_slack():
    # the same packing with one more record in a section of its own: that section has slack, so
    # the first probe runs first at the bound, as before the rule
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(100, 4)))
    end = max(r.last_op for r in records) + 1
    records = list(records) + [replace(records[0], tensor=len(records), first_op=end, last_op=end, size=1024)]
    assert not full_at(exact_search._Instance(records, 1), perfect_packing.WIDTH)
    result = exact_search.search(records, 1, node_budget=400_000)
    assert (result.arena, result.proven_optimal) == (perfect_packing.WIDTH, True)
    assert result.nodes >= exact_search.BOUND_FIRST_NODES_PER_RECORD * 100  # its share, spent


def test_a_perfect_packing_covers_its_strip():
    buffers = perfect_packing.cut(200, 4)
    steps = max(upper for _, upper, _, _ in buffers)
    load = np.zeros(steps, np.int64)
    for lower, upper, size, _ in buffers:
        load[lower:upper] += size
    assert (load == perfect_packing.WIDTH).all()
    records = parse_records_csv(perfect_packing.csv_text(buffers))
    offsets = tuple(o for *_, o in buffers)
    check_offset_plan(records, OffsetPlan("cut", offsets, arena_of(records, offsets)))
    assert perfect_packing.cut(200, 4) == buffers  # deterministic


def test_merging_pairs_keeps_every_step_full():
    buffers = perfect_packing.cut(1000, 1)
    joined = perfect_packing.merged(buffers, 30)
    assert len(joined) == 970
    steps = max(upper for _, upper, _, _ in buffers)
    for each in (buffers, joined):
        load = np.zeros(steps, np.int64)
        for lower, upper, size, _ in each:
            load[lower:upper] += size
        assert (load == perfect_packing.WIDTH).all()
    with pytest.raises(ValueError, match="pairs can be joined"):
        perfect_packing.merged(buffers, 1_000)


@pytest.mark.parametrize("n, seed", [(250, 2), (250, 5), (500, 3)])
def test_a_well_above_the_lowest_floor_is_filled_first_when_it_must_be(n, seed):
    # Perfect packings the probe left open within its share (50 nodes per record) while it
    # filled only the lowest floor: a walled run without slack higher up is filled (or found
    # untileable) at once, and each packs within a few nodes per record.
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(n, seed)))
    packed, offsets = answer(records, perfect_packing.WIDTH, nodes=8 * n)
    assert packed
    check_offset_plan(records, OffsetPlan("t", tuple(offsets), perfect_packing.WIDTH))


@pytest.mark.parametrize("seed", range(8, 24))
def test_it_packs_exactly_what_brute_force_packs_on_more_instances(seed):
    # the wells' rules prune only what cannot be completed: held to brute force on more shapes
    records = random_steps(7, seed)
    optimum = brute_force(records, 1)
    step = exact_search.granule(records, 1)
    for capacity in (optimum - step, optimum):
        if capacity >= offset_lower_bound(records):
            assert answer(records, capacity)[0] == (capacity >= optimum), (capacity, optimum)


def full_instance(seed: int, units: int = 24, steps: int = 10, granule: int = 64) -> list[UsageRecord]:
    """Records that hold `units` granules at every step (each step ends some records and starts
    new ones of the same total, sizes drawn at random): full at that bound, tileable or not."""
    rng = random.Random(seed)
    done, alive = [], []

    def start(step: int, total: int) -> None:
        while total > 0:
            size = rng.randint(1, total)
            alive.append((step, size))
            total -= size

    start(0, units)
    for step in range(1, steps):
        ending = [record for record in alive if rng.random() < 0.4]
        for record in ending:
            alive.remove(record)
            done.append((record[0], step - 1, record[1]))
        start(step, sum(size for _, size in ending))
    done += [(first, steps - 1, size) for first, size in alive]
    return [UsageRecord(i, first, last, size * granule) for i, (first, last, size) in enumerate(done)]


def answers_as(probe, tileable, records, inst, capacity, seed):
    """Runs `probe` to its end: it must answer `tileable`, with a valid packing where it packs."""
    probe.run(10_000_000, UNLIMITED, True)
    assert probe.complete and (probe.found is not None) == tileable, seed
    if tileable:
        offsets = in_record_order(records, inst, probe.found)
        check_offset_plan(records, OffsetPlan("t", tuple(offsets), capacity))


@pytest.mark.parametrize("block", range(4))
def test_backjumping_on_full_instances_packs_exactly_what_the_search_without_it_packs(block):
    # backing up past choices a dead end does not involve (`jump`, on where every section is full)
    # only cuts what cannot be completed: on full instances, tileable or not, every order with it
    # answers as the search without it (complete: held to brute force above), and brute force
    # agrees where the instance is small enough for it
    answers = []
    for seed in range(60 * block, 60 * block + 60):
        records = full_instance(seed)
        capacity = 24 * 64
        inst = exact_search._Instance(records, 1)
        assert full_at(inst, capacity)
        reference = TilingProbe(inst, capacity, "area")
        reference.run(200_000, UNLIMITED, True)
        if not reference.complete:
            continue  # (a handful of untileable ones take longer to search out)
        tileable = reference.found is not None
        if len(records) <= 7:
            assert tileable == (brute_force(records, 1) == capacity)
        # and in random orders of records and sections, as a restart draws them
        shuffled = TilingProbe(inst, capacity, "random", jump=True, drawn=np.random.default_rng(seed))
        probes = [TilingProbe(inst, capacity, order, fit, jump=True) for order, fit in FULL_ORDERS]
        # (the seven count their dead ends as a learning restart's searches do)
        conflicts = np.zeros(len(records), np.int64)
        for probe in probes:
            probe.conflicts = conflicts
        for probe in probes + [shuffled]:
            answers_as(probe, tileable, records, inst, capacity, seed)
        # and in an order drawn from their dead ends, counting its own, as a learning restart's
        assert conflicts.sum() > 0 or tileable
        learning = TilingProbe(inst, capacity, "random", jump=True, drawn=np.random.default_rng(seed),
                               conflicts=conflicts)
        answers_as(learning, tileable, records, inst, capacity, seed)
        answers.append(tileable)
    assert len(answers) >= 55 and 0 < answers.count(False) < len(answers)  # both kinds met


def test_backjumping_packs_a_perfect_packing_the_search_without_it_leaves_open():
    # perfect 1,000, seed 9: smaller sizes first stays 140 to 155 records deep for 10,000 nodes
    # without it (a choice far above left a well untileable); with it, it packs in 2,666
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(1000, 9)))
    inst = exact_search._Instance(records, 1)
    runs = []
    for jump in (False, True):
        probe = TilingProbe(inst, perfect_packing.WIDTH, "small", jump=jump)
        probe.run(10_000, UNLIMITED, True)
        runs.append((probe.found is not None, probe.nodes))
    assert runs == [(False, 10_000), (True, 2_666)]


def test_luby_sequence():
    assert [luby(i) for i in range(1, 16)] == [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]


def test_restarts_pack_where_the_seven_orders_stall_and_are_the_same_every_run():
    # perfect 1,000, seed 6: the seven searches stay open within the search's share (50 nodes per
    # record); the fresh random orders of TilingRestarts pack it, the same nodes every run
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(1000, 6)))
    results = []
    for _ in range(2):
        inst = exact_search._Instance(records, 1)
        rounds = TilingRounds(inst, perfect_packing.WIDTH)
        plain = rounds.probes[-2]
        assert isinstance(plain, TilingRestarts) and not plain.learning
        nodes, _, _ = rounds.run(50 * 1000, UNLIMITED, 0)
        assert rounds.found is not None and plain.found is not None
        results.append((nodes, rounds.found))
    assert results[0] == results[1]
    offsets = in_record_order(records, inst, results[0][1])
    check_offset_plan(records, OffsetPlan("t", tuple(offsets), perfect_packing.WIDTH))
    assert arena_of(records, offsets) == perfect_packing.WIDTH


def test_conflict_rank_tries_the_records_in_more_dead_ends_later_and_is_the_same_every_run():
    counts = np.array([0, 500, 3, 0, 40, 500, 1, 0] * 50, np.int64)
    ranks = [conflict_rank(counts, np.random.default_rng(7)) for _ in range(2)]
    assert (ranks[0] == ranks[1]).all() and sorted(ranks[0].tolist()) == list(range(len(counts)))
    level = np.array([((1 + int(c)) ** 4).bit_length() for c in counts.tolist()])
    for a in range(8):
        for b in range(8):
            if level[a] >= level[b] + LEVEL_SPREAD:  # every record of count a after every one of b
                assert ranks[0][a::8].min() > ranks[0][b::8].max(), (counts[a], counts[b])
    # within a level, the draw decides: records of one count are not in record order
    assert sorted(ranks[0][0::8].tolist()) != ranks[0][0::8].tolist()


def test_learning_restarts_pack_what_random_restarts_leave_open():
    # perfect 1,000, seed 20: the seven searches and restarts in random orders stay open at 200
    # nodes per record (and at 800); with restarts that learn from the dead ends beside them,
    # the learning ones pack it, the same nodes every run
    records = parse_records_csv(perfect_packing.csv_text(perfect_packing.cut(1000, 20)))
    results, packings = [], []
    for learning in (False, True, True):
        inst = exact_search._Instance(records, 1)
        rounds = TilingRounds(inst, perfect_packing.WIDTH)
        assert [type(p) for p in rounds.probes[-2:]] == [TilingRestarts, TilingRestarts]
        assert [p.learning for p in rounds.probes[-2:]] == [False, True]
        if not learning:  # as the rounds were without them
            rounds.probes.pop()
            rounds.weights.pop()
        nodes, _, _ = rounds.run(200 * 1000, UNLIMITED, 0)
        results.append((rounds.found is not None, nodes))
        if learning:
            assert rounds.probes[-1].found is not None and rounds.probes[-1].conflicts.sum() > 0
            packings.append(rounds.found)
    assert results == [(False, 200_000), (True, 151_101), (True, 151_101)]
    assert packings[0] == packings[1]
    offsets = in_record_order(records, inst, packings[0])
    check_offset_plan(records, OffsetPlan("t", tuple(offsets), perfect_packing.WIDTH))
    assert arena_of(records, offsets) == perfect_packing.WIDTH
