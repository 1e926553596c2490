"""Compiled loops: accelerators for large inputs, never the only copy of an algorithm.

Every strategy module opens with its algorithm as readable Python (`plan()`), and that is what
runs on ordinary models. A kernel here is the same algorithm written over int64 arrays so numba
can compile it; a strategy hands its work to its kernel only from `COMPILE_FROM` records on,
where the compiled loop repays numba's import and the first load (or compile) of its code.
Tests hold every kernel to its strategy's readable form.

`jit.py` is the one module that imports numba, and nothing imports it below `COMPILE_FROM`
records, so a real model never waits for a compile. The offset strategies' kernel modules
(placement, skyline, nnc, exact_probe) are plain Python, importable without numba; `compiled()`
gives a kernel module's compiled copy. A large run that may stop early (`package`, which needs
only the best plan) starts its kernel uncompiled and compiles it only if it goes on: stopped
early, it never pays numba's import and memory.
"""

# Records from which a strategy runs its compiled kernel (one size for every kernel). Measured on
# the benchmark shapes (chain, branching, transformer): the readable placement loops of the seven
# offset strategies that have a kernel cost 0.08-0.13 s of CPU together at 1,000 records,
# 0.26-0.43 s at 2,000 and 1.0-1.1 s at 4,000, against 0.4 s for numba's import and the first
# load of the cached kernels (seconds more for a compile on a fresh install): the kernels pay
# from about 2,000 records.
COMPILE_FROM = 2_000


def use_kernel(records: int) -> bool:
    """Whether an input of this many records runs compiled."""
    return records >= COMPILE_FROM


def compiled(kernel):
    """The compiled copy of a plain kernel module (imports numba on first use)."""
    from packager.plan.kernels import jit

    return jit.compiled_module(kernel)
