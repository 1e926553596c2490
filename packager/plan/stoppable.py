"""The offset strategies that may stop early: those that place records one at a time and never
move them, so that a record placed above a limit means their arena ends above it too (see
`offsets/_stop.py`). Each entry runs the strategy exactly as the registry does, under a StopRule."""

from __future__ import annotations

from typing import Callable

from packager.plan.offsets import (greedy_by_breadth, greedy_by_size_tflite, greedy_by_size_tflm,
                                   greedy_in_order, naive, path_cover, strip_packing)
from packager.plan.offsets._stop import Paused, StopRule
from packager.plan.problem import Problem
from packager.plan.records import OffsetPlan

Start = Callable[[Problem, StopRule], "OffsetPlan | Paused"]

STOPPABLE: dict[str, Start] = {
    "naive": lambda p, stop: naive.start(p.records, p.alignment, stop),
    "greedy_in_order": lambda p, stop: greedy_in_order.start(p.records, p.alignment, stop),
    "greedy_by_size": lambda p, stop: greedy_by_size_tflite.start(p.records, p.alignment, p.whole_run, stop),
    "greedy_by_size_tflm": lambda p, stop: greedy_by_size_tflm.start(p.records, p.alignment, p.fixed, stop),
    "greedy_by_breadth": lambda p, stop: greedy_by_breadth.start(p.records, p.alignment, stop),
    "strip_packing": lambda p, stop: strip_packing.start(p.records, p.alignment, stop),
    "path_cover": lambda p, stop: path_cover.start(p.records, p.alignment, stop),
}
