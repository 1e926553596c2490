"""A saving is claimed only where the runtime's memory is modelled in full: TFLite Micro's row
checks the head's size alone, so a head other than the predicted one (a model with several
signatures, whose other subgraphs TFLite Micro plans into the same head) claims none."""

from __future__ import annotations

from packager.compare.comparison import Planned, RuntimeComparison


def _tflm(measured: int, predicted: int) -> RuntimeComparison:
    plan = Planned(semantics="tflm", best=predicted, bound=predicted, strategies=("greedy",))
    return RuntimeComparison(runtime="tflm", status="measured", reason="", package="tflite-micro",
                             version="0", planned=plan, model_only=plan, predicted=predicted,
                             predicted_model=predicted, uncovered_ops=(), measured=measured)


def test_a_head_other_than_predicted_claims_no_saving():
    row = _tflm(measured=24_576, predicted=10_240)  # three signatures, measured
    assert row.exact is False
    assert row.saving is None and row.saving_pct is None
    assert "head" in row.saving_withheld_because


def test_an_exact_head_keeps_its_saving():
    row = _tflm(measured=10_240, predicted=10_240)
    assert row.exact is True
    assert row.saving == 0 and not row.saving_withheld_because
