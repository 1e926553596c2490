"""The tensor indices TFLite's kernels add, as each runtime gives them: ops whose kernel reserves
its indices in Init come before a CONV_2D that adds its temporary in Prepare, even when they run
after it (fixtures/init_reserved.py). Each temporary the runtime reports must be predicted at its
index, with its size and its place, under ai-edge-litert and tflite-runtime 2.14."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fixtures.init_reserved import SECOND, write
from packager.compare.comparison import check_arena
from packager.compare.predict_tflite import predict_tflite
from packager.compare.tflite_runtime import TfliteMeasurement, _to_locate, measurement_from_probe
from packager.kernels.tflite_scratch import rules_for
from packager.reader import read_model
from packager.runtimes.batch import measure_many
from packager.runtimes.tflite_versions import CHOICES, choice

INSTALLED = [name for name in CHOICES if choice(name).installed]
if not INSTALLED:
    pytest.skip("no TFLite runtime installed (pip install '.[runtimes]')", allow_module_level=True)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("init_reserved")
    write(folder)
    return folder


@functools.cache
def _measured(folder: str, runtime: str) -> dict[str, TfliteMeasurement]:
    which = choice(runtime)
    paths = sorted(Path(folder).glob("*.tflite"))
    models = [read_model(p) for p in paths]
    results = measure_many([(p, _to_locate(m)) for p, m in zip(paths, models)], which.package,
                           which.python)
    return {p.name.split("__")[0]: (m, measurement_from_probe(m, r))
            for p, m, r in zip(paths, models, results)}


@pytest.mark.parametrize("runtime", INSTALLED)
@pytest.mark.parametrize("op", sorted(SECOND))
def test_every_temporary_has_the_runtimes_index(folder, runtime, op):
    model, result = _measured(str(folder), runtime)[op]
    assert isinstance(result, TfliteMeasurement), result
    (measured,) = result.arenas
    (predicted,) = predict_tflite(model, rules_for(result.runtime, result.version))
    by_index = {s.index: s for s in predicted.scratch}
    reported = {**{i: n for i, (_, n) in measured.scratch.items()},
                **measured.scratch_elsewhere}
    assert reported, "the runtime reported no temporary"
    for index, nbytes in reported.items():
        assert index in by_index, (op, runtime, index, sorted(by_index))
        assert by_index[index].nbytes == nbytes, (op, runtime, index, by_index[index])
    for index, (offset, _) in measured.scratch.items():
        assert by_index[index].offset == offset, (op, runtime, index, by_index[index])
    assert check_arena(measured, predicted).exact
