"""Time a piece of work with Python's cyclic collector paused, so that a collection that happens to
fall inside one run does not move its figure (the commands run with it on: packager/cli.py)."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
