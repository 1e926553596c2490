"""min_cost_flow's compiled loop (kernels/min_cost_flow.py, from kernels.COMPILE_FROM records)
hands every record the same predecessor as the strategy's readable form (its numpy steps, below
that size), compiled or not, on random records with ties, the benchmark's shapes and real models;
and the flow they find is the optimal one."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks.synthetic import SHAPES, usage_records as shape_records
from packager.plan import kernels
from packager.plan.objects import min_cost_flow
from packager.plan.records import UsageRecord
from packager.plan.validate import check_object_plan
from tests.conftest import numba_imported_by
from tests.plan.model_records import model_records
from tests.pins.pin_cases import random_records
from tests.plan.test_object_strategies import best_reuse_cost

REPO = Path(__file__).resolve().parents[2]


def flow_cost(records, reused) -> int:
    """What the flow pays: a new object costs its size, a reused one the size increase."""
    return sum(r.size if c < 0 else max(0, r.size - records[c].size) for r, c in zip(records, reused))


def readable_form(records):
    return min_cost_flow._reused_records(records, min_cost_flow._Graph(records))


def compiled_form(records):
    return min_cost_flow._compiled_reused_records(records, min_cost_flow._Graph(records))


def uncompiled_form(records):
    from packager.plan.kernels.min_cost_flow import assign  # the plain module: uncompiled
    return min_cost_flow._compiled_reused_records(records, min_cost_flow._Graph(records), assign)


def random_cases(count: int, seed: int = 0):
    rng = random.Random(seed)
    for k in range(count):
        n = rng.randrange(1, 90)
        # Few operators and few sizes give long plateaus of equal distances: ties everywhere.
        yield random_records(1000 * seed + k, n, rng.randrange(1, 40), rng.randrange(1, 14),
                             rng.choice([3, 40, 5000, 100_000]))


def test_the_kernel_compiled_or_not_gives_every_record_the_readable_forms_predecessor():
    for records in random_cases(300):
        expected = readable_form(records)
        assert compiled_form(records) == expected
        assert uncompiled_form(records) == expected


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_forms_agree_on_the_benchmark_shapes(shape):
    records = shape_records(SHAPES[shape](700))
    assert compiled_form(records) == readable_form(records)


def test_the_flow_is_the_optimal_one():
    # Brute force over every way of chaining records: both forms find the least flow cost.
    rng = random.Random(5)
    for k in range(150):
        n = rng.randrange(1, 7)
        records = random_records(k, n, rng.randrange(1, 8), rng.randrange(1, 5), rng.choice([8, 40]))
        optimum = best_reuse_cost(records)
        assert flow_cost(records, readable_form(records)) == optimum
        assert flow_cost(records, compiled_form(records)) == optimum


def test_from_compile_from_records_the_compiled_loop_runs_and_keeps_valid_plans(monkeypatch):
    records = random_records(11, kernels.COMPILE_FROM, 700, 30, 100_000)
    calls = []
    compiled = min_cost_flow._compiled_reused_records
    monkeypatch.setattr(min_cost_flow, "_compiled_reused_records",
                        lambda *a: calls.append(len(a[0])) or compiled(*a))
    plan = min_cost_flow.plan(records)
    assert calls == [kernels.COMPILE_FROM]
    check_object_plan(records, plan)
    assert plan.total <= flow_cost(records, readable_form(records))
    min_cost_flow.plan(records[:-1])
    assert calls == [kernels.COMPILE_FROM]  # one record fewer: the readable form


def test_every_compiled_solver_runs_only_from_compile_from_records():
    # The range-tree solver runs above LOOP_RECORDS, so that bound must not be below the size.
    assert kernels.COMPILE_FROM <= min_cost_flow.LOOP_RECORDS


def test_above_the_old_cap_it_plans():
    # It refused above 3,000 records before the compiled loop; now above MAX_RECORDS only.
    assert min_cost_flow.MAX_RECORDS >= 10_000
    records = shape_records(SHAPES["chain"](4000))
    plan = min_cost_flow.plan(records)
    check_object_plan(records, plan)


def test_inputs_below_compile_from_never_import_numba():
    assert not numba_imported_by("from packager.plan import kernels\n"
                                 "from packager.plan.objects import min_cost_flow\n"
                                 "from packager.plan.records import UsageRecord\n"
                                 "records = [UsageRecord(i, i // 4, i // 4 + i % 3, 10 + i % 5)\n"
                                 "           for i in range(kernels.COMPILE_FROM - 1)]\n"
                                 "min_cost_flow.plan(records)\n")


def test_records_of_size_zero_and_empty_inputs():
    assert min_cost_flow.plan([]).assignment == ()
    records = [UsageRecord(i, i, i, 0) for i in range(5)]
    assert compiled_form(records) == readable_form(records)


FIXTURE_MODELS = sorted((REPO / "fixtures" / "models").glob("*.tflite"))


def test_the_forms_agree_on_real_models():
    cases = model_records()
    assert cases
    for name, records in cases:
        assert compiled_form(records) == readable_form(records), name
