"""What a planner is asked to solve: the records of one arena and the runtime's constraints."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from packager.plan.records import Records, object_lower_bound, offset_lower_bound


@dataclass(frozen=True)
class Problem:
    records: Records  # any sequence of usage records given is made Records
    alignment: int = 1
    whole_run: frozenset[int] = field(default_factory=frozenset)  # positions TFLite places first
    fixed: dict[int, int] = field(default_factory=dict)  # positions with offline offsets (TFLM)
    aliases: dict[int, int] = field(default_factory=dict)  # tensor -> planned tensor it shares
    alias_intervals: dict[int, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", Records.of(self.records))

    @cached_property
    def offset_lower_bound(self) -> int:
        return offset_lower_bound(self.records)

    @cached_property
    def object_lower_bound(self) -> int:
        return object_lower_bound(self.records)
