"""The placement loop's Python form over the dense timeline's steps (`_placement_steps`) gives the
offsets of the bucket form (`_placement.place`) on every input it takes: best fit or first fit,
TFLite's way of remembering gaps or not, any alignment, stopped by a limit and resumed (as Python,
or compiled from the bucket buffers it rebuilds), on random records and the synthetic shapes."""

from __future__ import annotations

import random

import pytest

from benchmarks.synthetic import SHAPES, usage_records as shape_records
from packager.plan.offsets import _gaps, _placement_steps, greedy_by_size_tflite
from packager.plan.offsets._stop import StopRule
from packager.plan.records import UsageRecord


def _records(seed: int) -> tuple[UsageRecord, ...]:
    """Random records: short lives mostly, some long, empty ones, odd sizes, sparse times."""
    rng = random.Random(seed)
    n = rng.choice([65, 200, 1_000, 3_000])
    times = rng.choice([5, 60, 2_000, 10 ** 9])
    out = []
    for i in range(n):
        first = rng.randrange(times)
        life = rng.randrange(times) if rng.random() < 0.02 else rng.choice([0, 0, 1, 2, 5])
        size = rng.choice([0, 1, 13, 16, 48, 64, 64, 100, 4096, rng.randrange(1, 70_000)])
        out.append(UsageRecord(i, first, first + life, size))
    return tuple(out)


def _loop(records, order, alignment, best_fit, remember_unaligned, by_steps, monkeypatch):
    monkeypatch.setattr(_gaps, "COMPILE_FROM", 10 ** 12)  # both forms as Python
    # any records may take the steps (the threshold only weighs speed); none take them at 0
    monkeypatch.setattr(_placement_steps, "STEPS_PER_RECORD", 10 ** 9 if by_steps else 0)
    loop = _gaps.PlacementLoop(records, order, alignment, best_fit=best_fit,
                               remember_unaligned=remember_unaligned, skip_empty=True)
    assert loop._by_steps == by_steps
    return loop


def _orders(records, seed):
    yield greedy_by_size_tflite.allocation_order(records, frozenset())
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    yield order[: len(order) * 3 // 4]  # some positions missing: they stay at 0


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("best_fit, remember_unaligned", [(True, True), (True, False), (False, False)])
def test_the_steps_give_the_buckets_offsets(seed, best_fit, remember_unaligned, monkeypatch):
    records = _records(seed)
    for alignment in (1, 16):
        for order in _orders(records, seed):
            expected = _loop(records, order, alignment, best_fit, remember_unaligned, False,
                             monkeypatch).run()
            assert _loop(records, order, alignment, best_fit, remember_unaligned, True,
                         monkeypatch).run() == expected


def _stop_somewhere(records, order, alignment) -> StopRule:
    """A limit some record placed about halfway ends above."""
    full = _gaps.place_in_order(records, order, alignment, remember_unaligned=True)
    ends = sorted(o + r.size for o, r in zip(full, records) if r.size)
    return StopRule(limit=ends[len(ends) // 2])


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("compiled_after", [False, True])
def test_a_stopped_run_resumed_gives_the_uninterrupted_offsets(seed, compiled_after, monkeypatch):
    records = _records(seed)
    order = greedy_by_size_tflite.allocation_order(records, frozenset())
    expected = _loop(records, order, 16, True, True, False, monkeypatch).run()
    loop = _loop(records, order, 16, True, True, True, monkeypatch)
    stop = _stop_somewhere(records, order, 16)
    stopped = loop.run(stop)
    if stopped is not None:  # nothing above the limit: it ran to its end
        assert stopped == expected
        return
    assert 0 < loop.done < loop.steps
    if compiled_after:
        if _gaps.compiled_module() is None:
            pytest.skip("numba is not installed on this platform")
        loop._may_compile = True  # resumed without a limit: goes on compiled from the buckets
    assert loop.run() == expected
    assert loop._compiled == compiled_after


@pytest.mark.parametrize("seed", range(8))
def test_the_rebuilt_buckets_are_the_bucket_forms_own(seed, monkeypatch):
    # Stopped at the same step, the bucket form holds the very buffers that the steps' form
    # rebuilds for the compiled loop.
    records = _records(seed)
    order = greedy_by_size_tflite.allocation_order(records, frozenset())
    stop = _stop_somewhere(records, order, 1)
    buckets = _loop(records, order, 1, True, True, False, monkeypatch)
    steps = _loop(records, order, 1, True, True, True, monkeypatch)
    if buckets.run(stop) is not None:
        pytest.skip("no record ends above the limit")
    assert steps.run(stop) is None and steps.done == buckets.done
    from packager.plan.records import time_columns
    args, state = steps._bucket_args(time_columns(records))
    assert list(state) == list(buckets._state)
    assert args[10:15] == buckets._args[10:15]  # head, nxt, who, start_of, end_of
    assert args[:10] == buckets._args[:10]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_synthetic_shapes_give_the_same_offsets(shape, monkeypatch):
    records = tuple(shape_records(SHAPES[shape](3_000)))
    order = greedy_by_size_tflite.allocation_order(records, frozenset())
    expected = _loop(records, order, 16, True, True, False, monkeypatch).run()
    assert _loop(records, order, 16, True, True, True, monkeypatch).run() == expected


def test_long_lived_records_keep_the_buckets(monkeypatch):
    # A record alive over the whole run would join every step's list: the buckets take it.
    records = tuple(UsageRecord(i, i, 10 ** 4 if i % 2 else i + 40, 16) for i in range(100))
    loop = _gaps.PlacementLoop(records, list(range(100)), 1, best_fit=True)
    assert not loop._by_steps
