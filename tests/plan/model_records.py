"""The usage records of real models (the fixture models and, where present, ../shared/models),
under both semantics, for the tests that hold a fast form to its strategy's readable plan()."""

from __future__ import annotations

from functools import lru_cache

from tests.conftest import REPO, SHARED_MODELS


@lru_cache(maxsize=1)
def model_records() -> tuple[tuple[str, tuple], ...]:
    """(model/semantics, records) of every arena the packager plans."""
    from packager.arenas import arenas_to_plan
    from packager.reader import read_model

    paths = sorted((REPO / "fixtures" / "models").glob("*.tflite")) + sorted(SHARED_MODELS.glob("**/*.tflite"))
    out = []
    for path in paths:
        for semantics in ("tflite", "tflm"):
            try:
                arenas = arenas_to_plan(read_model(str(path)), semantics)
            except Exception:  # a model one semantics refuses: the other one covers it
                continue
            out += [(f"{path.name}/{semantics}", tuple(a.lifetimes.records)) for a in arenas]
    return tuple(out)
