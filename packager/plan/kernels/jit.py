"""The one module that imports numba.

`compiled(function)` is `function` compiled by numba (cached beside its source), or the function
itself where numba is missing: the same code either way, so the plans are the same.
`compiled_module(module)` does that to every function of a kernel module written as plain Python
functions that call each other (numba compiles a call only to a compiled function).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from types import ModuleType

try:
    from numba import njit
except ImportError:  # numba missing on this platform: the same loops, uncompiled
    njit = None


def compiled(function):
    if njit is None:
        return function
    return njit(cache=True)(function)


@functools.cache
def compiled_module(module: ModuleType) -> ModuleType:
    """A copy of `module` whose functions are `compiled` (made once per module). The module itself
    stays plain Python, so that it runs uncompiled without importing numba."""
    spec = importlib.util.spec_from_file_location(module.__name__ + "_compiled", module.__file__)
    copy = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = copy  # numba's cached code names the module it was compiled in
    spec.loader.exec_module(copy)
    for name, value in list(vars(copy).items()):
        if callable(value) and getattr(value, "__module__", None) == copy.__name__ and not isinstance(value, type):
            setattr(copy, name, compiled(value))
    return copy
