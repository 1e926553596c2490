"""Does a plan file just written read back as the plan it was written from?

Either form is parsed in full from the written bytes, as `load` parses it (the JSON by the
standard library's parser, types checked: 1 is not true), and the plan it gives must equal the
plan it was written from, field by field and column by column.
"""

from __future__ import annotations

from packager.errors import PlanError
from packager.package import plan_flatbuffer, plan_json
from packager.package.sidecar import PackagePlan


def reads_back(data: bytes, plan: PackagePlan) -> bool:
    """True when the plan file (either form) reads back as exactly `plan`."""
    parse = plan_flatbuffer.loads if plan_flatbuffer.is_flatbuffer_plan(data) else plan_json.loads
    try:
        return parse(data) == plan
    except PlanError:
        return False
