"""TFLite Micro's whole arena for a packaged plan: the plan is TFLite Micro's head (the packaged
model carries it as OfflineMemoryAllocation, scratch buffers placed where TFLite Micro puts
them), and the tail and the set-up room come from the file (kernels/tflm_whole_arena.py)."""

from __future__ import annotations

from dataclasses import replace

from packager.kernels import tflm_coverage, tflm_scratch
from packager.kernels.tflm_arena import TARGET_CHOICES, target_named
from packager.kernels.tflm_head import predict_tflm
from packager.kernels.tflm_whole_arena import predict_whole_arena
from packager.errors import PackagerError
from packager.model import Model
from packager.package.sidecar import PackagePlan, RuntimeArena
from packager.package.standing import EXACT, SIDE_WORDS, Shown, decide
from packager.semantics import SEMANTICS

RUNTIME = "tflite-micro 0.dev20261023182759"  # the pinned build the host figures are measured on
DEVICE_RUNTIME = "TFLite Micro 90b983c2"  # the sources the 32-bit targets are modelled on and built from


def check_target(name: str) -> str:
    if target_named(name) is None:
        raise PackagerError(f"unknown target '{name}' (choose from {', '.join(TARGET_CHOICES)})")
    return name


def scratch_differs_from_host(model: Model, target: str) -> bool:
    """Whether the target's kernels ask for other scratch buffers than the host's, which the plan
    made room for: CMSIS-NN's, and a 32-bit build's pointer-sized ones (ADD_N)."""
    rules = target_named(target)
    return bool(rules.cmsis_nn) or (rules.pointer != 8 and tflm_scratch.reads_pointer(model))


def runtime_arena(plan: PackagePlan, model: Model, target: str = "host",
                  head: int | None = None, head_plan: str = "") -> RuntimeArena | None:
    """None unless the plan is TFLite Micro's (tflm semantics, one inline arena). `head`: the
    head TFLite Micro will have when the model keeps an offline plan of its own, `head_plan` whose
    plan that is. Its standing is the rules' (bound: their side, reason: why not exact) until
    with_standing settles it from what a runtime showed; nothing is written before."""
    if not SEMANTICS[plan.semantics].whole_arena_predicted or len(plan.arenas) != 1 or not plan.arenas[0].inline:
        return None
    rules = target_named(target)
    if scratch_differs_from_host(model, target):
        # CMSIS-NN's kernels ask for other scratch buffers than the plan made room for, and a
        # 32-bit build's ADD_N for 4 B an input pointer where the plan has 8: TFLite Micro places
        # them around the tensors the packaged model fixes (this plan's offsets, or the model's
        # own offline plan when it is kept).
        from packager.package.build import offline_offsets
        kept = head is not None
        head = predict_tflm(model, rules.cmsis_nn, None if kept else offline_offsets(plan),
                            pointer=rules.pointer).head
    whole = predict_whole_arena(model, rules, head=plan.arena_bytes if head is None else head)
    modelled, rule = not rules.measured, rules.rule
    if rules.oracle and not tflm_coverage.unproven(model, rules.oracle):
        modelled, rule = False, f"{rule}; every kernel form proven on TFLite Micro built for {rules.oracle}"
    elif rules.oracle:
        rule = (f"{rule}; not proven on TFLite Micro built for {rules.oracle}: "
                f"{', '.join(tflm_coverage.unproven(model, rules.oracle))}")
    return RuntimeArena(runtime=RUNTIME if rules.name == "host" else DEVICE_RUNTIME, target=rules.name,
                        arena_bytes=whole.arena, head_bytes=whole.head, tail_bytes=whole.tail,
                        setup_bytes=whole.setup, exact=False, modelled=modelled, rule=rule,
                        reason=whole.why_inexact, head_plan=head_plan if head is not None else "",
                        bound=whole.side, not_run="not settled")


def with_standing(plan: PackagePlan, shown: Shown | None, not_run: str) -> PackagePlan:
    """The plan with its whole arena's standing settled (package/standing.py): `shown`, what a
    build ran (None: nothing ran, `not_run` says why). A device target whose every kernel form
    its build has proven (the coverage matrix: not `modelled`) is settled by that proof."""
    arena = plan.runtime_arena
    if arena is None:
        return plan
    device = arena.target != "host"
    proven_by = (f"every kernel form in the model proven on {DEVICE_RUNTIME} built for {arena.target} "
                 "(its coverage matrix)") if device and not arena.modelled else ""
    bits = "32-bit " if target_named(arena.target).pointer == 4 else ""
    modelled_as = f"from {arena.target}'s {bits}structure sizes" if arena.modelled else ""
    standing = decide(arena.arena_bytes, arena.target, arena.bound, arena.reason, shown, not_run,
                      modelled_as, proven_by)
    if shown is not None and shown.target == arena.target:
        not_run = ""
    elif device:
        not_run = f"no {arena.target} build ran it"
    return replace(plan, runtime_arena=replace(arena, bound=standing.bound, exact=standing.bound == EXACT,
                                               reason=standing.reason, not_run=not_run))


def whole_arena_sentences(arena: RuntimeArena | None) -> list[str]:
    """The whole arena as the report page states it: what to declare (the runtime's not running
    the model said first), what it is made of, and its standing's reason."""
    if arena is None:
        return []
    before = f"Not run on TFLite Micro ({arena.not_run}): declare" if arena.not_run else "Declare"
    return [f"{before} {arena.arena_bytes:,} bytes of TFLite Micro arena ({arena.runtime}, target "
            f"{arena.target}; {SIDE_WORDS[arena.bound]}) = {parts_text(arena)}.",
            f"{'Exact' if arena.exact else 'Standing'}: {arena.reason}."]


def parts_text(arena: RuntimeArena, parts: tuple[str, str] = ("", "")) -> str:
    """What the whole arena is made of, in words whose figures add up to it: head + tail, or
    the set-up room when that decides (TFLite Micro needs it while it sets the model up).
    `parts`: what to say after the head's and the tail's figures."""
    head_tail = arena.head_bytes + arena.tail_bytes
    rounded = lambda n: "" if n == arena.arena_bytes else ", rounded up to 16"  # noqa: E731
    sum_text = f"head {arena.head_bytes:,}{parts[0]} + tail {arena.tail_bytes:,}{parts[1]}"
    if arena.setup_bytes > head_tail:
        return (f"the set-up room {arena.setup_bytes:,}{rounded(arena.setup_bytes)} (TFLite Micro needs it "
                f"while it sets the model up), more than {sum_text} = {head_tail:,}")
    return f"{sum_text}{rounded(head_tail)}; the set-up room {arena.setup_bytes:,} is less"



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
    return arena.arena_bytes, least, f"of TFLite Micro arena ({parts_text(arena)})"
