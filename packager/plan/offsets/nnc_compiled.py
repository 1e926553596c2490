"""`nnc_loop.run` compiled by numba (importing numba: `nnc` asks for this module only where numba
is already loaded). The compiled code is cached beside the source."""

from __future__ import annotations

from numba import njit

from packager.plan.offsets import nnc_loop

run = njit(cache=True)(nnc_loop.run)
