"""Compiled loops: accelerators for large inputs, never the only copy of an algorithm.

Every strategy module opens with its algorithm as readable Python (`plan()`), and that is what
runs on ordinary models. A kernel here is the same algorithm written over int64 arrays so numba
can compile it; a strategy hands its work to its kernel only from `COMPILE_FROM` records on
(NNC from twice that: `_nnc_kernel.COMPILE_TIMES`), where the compiled loop repays numba's import
and the first load (or compile) of its code.
Tests hold every kernel to its strategy's readable form.

`jit.py` is the one module that imports numba, and nothing imports it below `COMPILE_FROM`
records, so a real model never waits for a compile. Every other module here (placement, skyline,
nnc, exact_probe, min_cost_flow, min_cost_flow_range, column_tree) is plain Python, importable
without numba; `compiled()` gives a kernel module's compiled copy. A large run that may stop early (`package`, which needs
only the best plan) starts its kernel uncompiled and compiles it only if it goes on: stopped
early, it never pays numba's import and memory.
"""

# Records from which a strategy runs its compiled kernel (NNC from a multiple of it, for its 14-18 s
# first compile: `offsets/_nnc_kernel.py`). Measured on the benchmark shapes (chain, branching,
# transformer; CPU on an idle machine): the readable forms of the seven offset strategies that
# have a kernel cost 0.25-0.35 s together at 1,000 records (NNC's scan 0.15-0.22 s of it; 0.4-0.7 s
# on a slower, loaded one) and 0.9-1.6 s at 2,000, against about 0.4 s for numba's import and the
# first load of the cached kernels (seconds more for a compile on a fresh install), after which
# the kernels take milliseconds: they pay from about 1,000 records. Real models have a few
# hundred records (the largest here about 250), so they never import numba.
COMPILE_FROM = 1_000


def use_kernel(records: int, times: int = 1) -> bool:
    """Whether an input of this many records runs compiled (`times`: a kernel whose first
    compile costs more than its readable form saves starts at that multiple of COMPILE_FROM)."""
    return records >= times * COMPILE_FROM


# Called, without arguments, after each compile of one of these kernels by numba (never after a
# load from numba's cache). The command line collects the compile's garbage there
# (packager/cli.py owns the cyclic collector's settings; the library leaves them alone).
AFTER_COMPILE: list = []


def compiled(kernel):
    """The compiled copy of a plain kernel module (imports numba on first use)."""
    from packager.plan.kernels import jit

    return jit.compiled_module(kernel)
