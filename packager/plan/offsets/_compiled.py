"""The loops compiled by numba: `_placement.place` and `_skyline.skyline`, the same source.

This module imports numba (about a quarter of a second): `_gaps` imports it only for inputs
large enough to repay that, and the compiled code is cached beside the source.
"""

from __future__ import annotations

from numba import njit

from packager.plan.offsets import _placement, _skyline

place = njit(cache=True)(_placement.place)
skyline = njit(cache=True)(_skyline.skyline)
