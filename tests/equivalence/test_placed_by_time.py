"""The time index behind TFLite's arena prediction answers exactly as the planner's own scan:
the same placed tensors, in the same order, so every predicted offset stays the same."""

from __future__ import annotations

import random

import pytest

from benchmarks.synthetic import SHAPES, tflite_bytes
from fixtures.catalog import RUNS_IN_TFLITE
from fixtures.write_models import DEFAULT_DIR
from packager.compare import predict_tflite as predict_module
from packager.compare.placed_by_time import PlacedByTime
from packager.compare.predict_tflite import NEVER, predict_tflite, predict_after_invoke
from packager.kernels.tflite_scratch import LITERT, TFLITE_EIGEN
from packager.reader import read_model


class ScanAll:
    """The planner's scan as TFLite writes it: every placed tensor, each time."""

    def __init__(self, width: int, horizon: int) -> None:
        self.placed: list[tuple[int, int, int, int]] = []

    def add(self, entry):
        self.placed.append(entry)

    def remove(self, entry):
        self.placed.remove(entry)

    def overlapping(self, alloc, dealloc):
        return sorted(p for p in self.placed if not (p[3] < alloc or p[2] > dealloc))


@pytest.mark.parametrize("seed", range(20))
def test_index_answers_as_the_full_scan(seed):
    rng = random.Random(seed)
    horizon = rng.randint(1, 60)
    index, scan = PlacedByTime(rng.randint(1, 8), horizon), ScanAll(0, 0)
    entries = []
    for step in range(300):
        a = rng.randint(0, horizon)
        d = rng.choice([NEVER, a, a + rng.randint(0, 10), a - rng.randint(1, 3)])
        d = d if d == NEVER else min(d, horizon)
        if rng.random() < 0.1 and entries:
            old = entries.pop(rng.randrange(len(entries)))
            index.remove(old), scan.remove(old)
            continue
        entry = (rng.randint(0, 1000), 0, a, d)
        entry = (entry[0], entry[0] + rng.randint(1, 50), a, d)
        entries.append(entry)
        index.add(entry), scan.add(entry)
        qa = rng.randint(0, horizon)
        qd = rng.choice([NEVER, qa, qa + rng.randint(0, 20), qa - 1])
        assert index.overlapping(qa, qd) == scan.overlapping(qa, qd)


def _models(tmp_path):
    out = [DEFAULT_DIR / f"{name}.tflite" for name in sorted(RUNS_IN_TFLITE)]
    for shape in SHAPES:
        path = tmp_path / f"{shape}.tflite"
        path.write_bytes(tflite_bytes(SHAPES[shape](300)))
        out.append(path)
    return [p for p in out if p.exists()]


@pytest.mark.parametrize("rules", [LITERT, TFLITE_EIGEN], ids=["litert", "tflite-2.14"])
def test_prediction_is_the_one_the_full_scan_gives(tmp_path, monkeypatch, rules):
    models = _models(tmp_path)
    assert len(models) > len(SHAPES)
    indexed = [predict_tflite(read_model(p), rules) for p in models]
    after = [predict_after_invoke(read_model(p), pr, rules) for p, pr in zip(models, indexed)]
    monkeypatch.setattr(predict_module, "PlacedByTime", ScanAll)
    scanned = [predict_tflite(read_model(p), rules) for p in models]
    assert indexed == scanned
    assert after == [predict_after_invoke(read_model(p), pr, rules) for p, pr in zip(models, scanned)]
