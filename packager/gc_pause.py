"""Pause Python's cyclic garbage collector while a step builds many objects that make no cycles.

After planning a 100,000-operator model the process holds millions of objects; each of the
collector's full passes walks all of them, and a step that builds a few hundred thousand objects
(parsing a plan file back, writing one) triggers several such passes: more than half of its time
at that size. Objects are still freed as soon as nothing refers to them; collection resumes
(if it was on) when the step ends.
"""

from __future__ import annotations

import functools
import gc
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

F = TypeVar("F", bound=Callable)


@contextmanager
def collector_paused() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def without_collector_pauses(function: F) -> F:
    """`function` run with the collector paused (see collector_paused)."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        with collector_paused():
            return function(*args, **kwargs)
    return run  # type: ignore[return-value]
