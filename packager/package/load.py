"""Read a packaged plan back: `load(plan_path, model_path)` takes either form (JSON or FlatBuffer),
checks that the model is the one the plan was made for (sha256), and re-validates the plan against
the model with the independent validator. Any problem raises a PackagerError subclass."""

from __future__ import annotations

import hashlib
from pathlib import Path

from packager.package import plan_flatbuffer, plan_json
from packager.errors import PlanError
from packager.package.sidecar import FORMAT_NAME, READABLE_VERSIONS, PackagePlan
from packager.package.check import check_package_plan
from packager.reader import read_model


class PlanFileError(PlanError):
    """The plan file is unreadable, of another format, or made for another model."""


def parse_plan(data: bytes) -> PackagePlan:
    """Either form, told apart by the FlatBuffer's file identifier."""
    if plan_flatbuffer.is_flatbuffer_plan(data):
        plan = plan_flatbuffer.loads(data)
    elif data.lstrip()[:1] == b"{":
        plan = plan_json.loads(data)
    else:
        raise PlanFileError("not a plan file (neither JSON nor a FlatBuffer with identifier 'TPLN')")
    if plan.format != FORMAT_NAME:
        raise PlanFileError(f"not a tflpack plan (format '{plan.format}')")
    if plan.format_version not in READABLE_VERSIONS:
        raise PlanFileError(f"plan format version {plan.format_version}; this tflpack reads versions "
                            f"{', '.join(map(str, READABLE_VERSIONS))}")
    return plan


def load(plan_path: str | Path, model_path: str | Path) -> PackagePlan:
    plan_path = Path(plan_path)
    try:
        data = plan_path.read_bytes()
    except OSError as e:
        raise PlanFileError(f"{plan_path}: cannot read ({e.strerror or e})") from None
    try:
        plan = parse_plan(data)
    except PlanError as e:
        raise PlanFileError(f"{plan_path.name}: {e}") from None
    model = read_model(model_path)
    digest = hashlib.sha256(model.raw).hexdigest()
    if digest != plan.source.sha256:
        raise PlanFileError(f"{Path(model_path).name} (sha256 {digest[:16]}...) is not the model "
                            f"{plan_path.name} was made for ({plan.source.file}, sha256 "
                            f"{plan.source.sha256[:16]}...)")
    try:
        check_package_plan(plan, model)
    except PlanError as e:
        raise PlanError(f"{plan_path.name}: {e}") from None
    return plan
