"""A saving is claimed only where the runtime's memory is modelled in full: TFLite Micro's row
checks the head's size alone, so a head other than the predicted one (a model with several
signatures, whose other subgraphs TFLite Micro plans into the same head) claims none."""

from __future__ import annotations

from packager.compare.comparison import ArenaCheck, Planned, RuntimeComparison


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


def _tflite(unplanned: tuple[int, ...]) -> RuntimeComparison:
    plan = Planned(semantics="tflite", best=1_000, bound=1_000, strategies=("greedy",))
    check = ArenaCheck(subgraph=0, measured=2_254, predicted=1_033, measured_model=2_254,
                       predicted_model=1_033, compared=3, mismatched=unplanned,
                       scratch_equal=True, anchored=True, unplanned=unplanned)
    return RuntimeComparison(runtime="tflite", status="measured", reason="",
                             package="tflite-runtime", version="2.14.0", planned=plan,
                             model_only=plan, predicted=1_033, predicted_model=1_033,
                             uncovered_ops=(), measured=2_254, checks=(check,))


def test_tensors_the_runtime_placed_and_the_prediction_left_out_claim_no_saving():
    """The prediction thought them allocated while running (so the best plan leaves them out),
    and the runtime placed them at allocate_tensors(): the 1,254 B difference is no saving."""
    row = _tflite(unplanned=(5, 6, 7))
    assert row.exact is False
    assert row.saving is None
    assert "3 tensors the prediction leaves out" in row.saving_withheld_because


def test_tensors_only_at_other_offsets_keep_the_saving():
    row = _tflite(unplanned=())
    assert row.saving == 1_254
