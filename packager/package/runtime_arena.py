"""TFLite Micro's whole arena for a packaged plan: the plan is TFLite Micro's head (the packaged
model carries it as OfflineMemoryAllocation, scratch buffers placed where TFLite Micro puts
them), and the tail and the set-up room come from the file (kernels/tflm_whole_arena.py)."""

from __future__ import annotations

from dataclasses import replace

from packager.kernels import tflm_coverage
from packager.kernels.tflm_arena import TARGET_CHOICES, target_named
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.errors import PackagerError
from packager.model import Model
from packager.package.sidecar import PackagePlan, RuntimeArena
from packager.semantics import SEMANTICS

RUNTIME = "tflite-micro 0.dev20261023182759"  # the pinned build the host figures are measured on
DEVICE_RUNTIME = "TFLite Micro 90b983c2"  # the sources the 32-bit targets are modelled on and built from


def check_target(name: str) -> str:
    if name.endswith("+cmsis-nn") and target_named(name[:-len("+cmsis-nn")]) is not None:
        raise PackagerError(f"target '{name}': CMSIS-NN kernels are not modelled yet (their scratch buffers "
                            "and OpData differ from the reference kernels'); choose a reference-kernel target")
    if target_named(name) is None:
        raise PackagerError(f"unknown target '{name}' (choose from {', '.join(TARGET_CHOICES)})")
    return name


def runtime_arena(plan: PackagePlan, model: Model, target: str = "host",
                  head: int | None = None, head_plan: str = "") -> RuntimeArena | None:
    """None unless the plan is TFLite Micro's (tflm semantics, one inline arena). `head`: the
    head TFLite Micro will have when the model keeps an offline plan of its own, `head_plan` whose
    plan that is."""
    if not SEMANTICS[plan.semantics].whole_arena_predicted or len(plan.arenas) != 1 or not plan.arenas[0].inline:
        return None
    rules = target_named(target)
    whole = predict_whole_arena(model, rules, head=plan.arena_bytes if head is None else head)
    modelled, rule = not rules.measured, rules.rule
    if rules.oracle and not tflm_coverage.unproven(model, rules.oracle):
        modelled, rule = False, f"{rule}; every kernel form proven on TFLite Micro built for {rules.oracle}"
    elif rules.oracle:
        rule = (f"{rule}; not proven on TFLite Micro built for {rules.oracle}: "
                f"{', '.join(tflm_coverage.unproven(model, rules.oracle))}")
    return RuntimeArena(runtime=RUNTIME if rules.name == "host" else DEVICE_RUNTIME, target=rules.name,
                        arena_bytes=whole.arena, head_bytes=whole.head, tail_bytes=whole.tail,
                        setup_bytes=whole.setup, exact=whole.exact, modelled=modelled, rule=rule,
                        reason=whole.why_inexact, head_plan=head_plan if head is not None else "")


def proven(arena: RuntimeArena) -> bool:
    """Whether the figure is the target's own TFLite Micro's, byte for byte: every kernel's memory
    modelled and the figures measured (host), proven on the target's build (the coverage matrix)
    or the packaged model run on it. Only such a figure is called exact."""
    return arena.exact and not arena.modelled


def with_runtime_arena(plan: PackagePlan, model: Model, target: str = "host",
                       head: int | None = None, head_plan: str = "") -> PackagePlan:
    return replace(plan, runtime_arena=runtime_arena(plan, model, target, head, head_plan))


def needed_bytes(plan: PackagePlan) -> tuple[int, int, str]:
    """(bytes the runtime needs, the least any plan could need, what they are) for --budget: the
    whole arena for TFLite Micro, else the plan's arenas."""
    arena = plan.runtime_arena
    if arena is None:
        return plan.arena_bytes, plan.lower_bound, "of arena"
    least = -(-max(plan.lower_bound + arena.tail_bytes, arena.setup_bytes) // 16) * 16
    return (arena.arena_bytes, least,
            f"of TFLite Micro arena (head {arena.head_bytes:,} + tail {arena.tail_bytes:,})")
