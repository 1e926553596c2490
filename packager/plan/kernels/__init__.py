"""Compiled loops: accelerators for large inputs, never the only copy of an algorithm.

Every strategy module opens with its algorithm as readable Python (`plan()`), and that is what
runs on ordinary models. A kernel here is the same algorithm written over int64 arrays so numba
can compile it; a strategy hands its work to its kernel only from `COMPILE_FROM` records on,
where the compiled loop repays numba's import and the first load (or compile) of its code.
Tests hold every kernel to its strategy's readable form.

`jit.py` is the one module that imports numba; the kernel modules import it, and nothing imports
a kernel module below `COMPILE_FROM` records, so a real model never waits for a compile.
"""

# Records from which a strategy runs its compiled kernel (one size for every kernel).
COMPILE_FROM = 2_000


def use_kernel(records: int) -> bool:
    """Whether an input of this many records runs compiled."""
    return records >= COMPILE_FROM
