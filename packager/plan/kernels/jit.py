"""The one module that imports numba.

`compiled(function)` is `function` compiled by numba (cached beside its source), or the function
itself where numba is missing: the same code either way, so the plans are the same.
"""

from __future__ import annotations

try:
    from numba import njit
except ImportError:  # numba missing on this platform: the same loops, uncompiled
    njit = None


def compiled(function):
    if njit is None:
        return function
    return njit(cache=True)(function)
