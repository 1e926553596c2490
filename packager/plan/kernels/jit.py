"""The one module that imports numba.

`compiled_module(module)` is a copy of a kernel module (plain Python functions over int64 arrays
that call each other) whose functions are compiled by numba, cached beside their source; where
numba is missing, the same functions uncompiled: the same code either way, so the same plans.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from types import FunctionType, ModuleType

from packager.plan import kernels

try:
    from numba import njit
    from numba.core import event
except ImportError:  # numba missing on this platform: the same loops, uncompiled
    njit = event = None

_KERNELS = __name__.rpartition(".")[0] + "."  # the room's modules: packager.plan.kernels.*


def _compiled_here(data) -> bool:
    """Whether a compile event (numba's event API) is the compile of one of our kernels."""
    func = getattr(data.get("dispatcher"), "py_func", None)
    return getattr(func, "__module__", "").startswith(_KERNELS)


if event is not None:
    class _AfterCompile(event.Listener):
        """Calls `kernels.AFTER_COMPILE` after each compile of one of our kernels (a load from
        numba's cache is no compile)."""

        def on_start(self, ev) -> None:
            pass

        def on_end(self, ev) -> None:
            if _compiled_here(ev.data):
                for call in kernels.AFTER_COMPILE:
                    call()

    event.register("numba:compile", _AfterCompile())


@functools.cache
def compiled_module(module: ModuleType) -> ModuleType:
    """A copy of `module` whose functions are compiled (made once per module). The module itself
    stays plain Python, so that it runs uncompiled without importing numba. A function it imports
    from another kernel module is that module's compiled copy (numba compiles a call only to a
    compiled function)."""
    spec = importlib.util.spec_from_file_location(module.__name__ + "_compiled", module.__file__)
    copy = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = copy  # numba's cached code names the module it was compiled in
    spec.loader.exec_module(copy)
    for name, value in list(vars(copy).items()):
        if not isinstance(value, FunctionType):
            continue
        if value.__module__ == copy.__name__:
            setattr(copy, name, value if njit is None else njit(cache=True)(value))
        elif value.__module__.startswith(_KERNELS) and value.__module__ != __name__:
            setattr(copy, name, getattr(compiled_module(sys.modules[value.__module__]), value.__name__))
    return copy
