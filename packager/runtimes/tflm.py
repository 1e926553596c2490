"""Measure TFLite Micro's arena: build its interpreter (in a child process) with allocation
recording and read the head (planned tensors and scratch buffers) and the tail (persistent
runtime data) from `print_allocations()` (REFERENCE.md section 4).

The arena handed to TFLite Micro must be big enough or it refuses the model; it is sized
generously from the file first (the head cannot exceed the sum of the tensors' sizes), and
retried larger once when TFLite Micro reports that it ran out of arena.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packager.model import Model
from packager.runtimes.child import MEASURED, REFUSED, TIMED_OUT, Unavailable, probe
from packager.kernels.tflm_arena import RECORDING_ALLOCATOR_EXTRA

_SLACK = 4 << 20  # tail, scratch buffers and temporaries during planning


@dataclass(frozen=True)
class TflmMeasurement:
    runtime: str
    version: str
    head: int
    tail: int
    total: int
    arena_bytes: int  # the arena we handed it


def first_arena_size(model: Model) -> int:
    tensors = sum(-(-(t.nbytes or 0) // 16) * 16 for sg in model.subgraphs for t in sg.tensors)
    return tensors + len(model.raw) + _SLACK


def _out_of_arena(reason: str) -> bool:
    text = reason.lower()
    return "arena" in text or "failed to allocate" in text and "memory" in text


def measure_tflm(path: Path, model: Model, timeout: float = 120.0) -> TflmMeasurement | Unavailable:
    size = first_arena_size(model)
    result = probe("tflm", Path(path), str(size), timeout=timeout)
    if result.outcome == REFUSED and _out_of_arena(result.reason):
        bigger = probe("tflm", Path(path), str(size * 8), timeout=timeout)
        if bigger.outcome == MEASURED or not _out_of_arena(bigger.reason):
            result = bigger
    data = result.data
    if result.outcome != MEASURED or data.get("head") is None:
        return Unavailable(result.outcome, result.reason or "no allocation recording",
                           data.get("runtime", "tflite-micro"), data.get("version", ""))
    return TflmMeasurement(data["runtime"], data["version"], data["head"], data["tail"],
                           data["total"], data["arena_bytes"])


# -- the smallest whole arena, by trying sizes in child processes --------------------------------

ARENA_STEP = 16  # arenas are tried in multiples of 16 bytes: the tail's padding follows the end


@dataclass(frozen=True)
class ArenaTry:
    arena: int
    ok: bool
    head: int | None = None
    tail: int | None = None
    outputs: tuple[str, ...] = ()  # digest of each output, inputs seeded the same way every time
    reason: str = ""  # why it failed (the runtime's words, or the crash)


@dataclass(frozen=True)
class SmallestArena:
    """The smallest arena (a multiple of 16) with which TFLite Micro set the model up and ran it,
    and what happened 16 bytes below."""
    runtime: str
    version: str
    arena: int
    head: int
    tail: int
    outputs: tuple[str, ...]
    below: str  # the failure at arena - 16
    children: int  # child processes it took


def try_arenas(path: Path, sizes: list[int], timeout: float = 120.0) -> list[ArenaTry] | Unavailable:
    """Try the sizes in order in one child process, up to the first failure (a crash counts as
    the failure of the size it was trying). Sizes and tails are a plain MicroInterpreter's: the
    Python interpreter's recording allocator gets RECORDING_ALLOCATOR_EXTRA bytes more, which
    places everything else exactly where a plain interpreter would (kernels/tflm_arena.py)."""
    tries = try_arenas_each([(path, sizes)], timeout)
    return tries if isinstance(tries, Unavailable) else tries[0]


def try_arenas_each(jobs: list[tuple[Path, list[int]]],
                    timeout: float = 120.0) -> list[list[ArenaTry]] | Unavailable:
    """`try_arenas` for several models in one child process (the runtime is loaded once), in
    order: each model's sizes up to its first failure. A crash is the failure of the size it was
    trying; the models after it are not tried (empty lists). A child that does not finish within
    `timeout` is stopped, and the whole call is Unavailable (timed out): a model that never ends
    (a WHILE loop whose condition stays true) would never end at any other size either."""
    import sys
    from packager.runtimes.child import MISSING, run_child
    extra = RECORDING_ALLOCATOR_EXTRA
    argv = []
    for path, sizes in jobs:
        argv += ["--", str(path), *(str(s + extra) for s in sizes)]
    result = run_child([sys.executable, "-m", "packager.runtimes.tflm_arena_probe", *argv[1:]], timeout)
    if result.outcome in (MISSING, TIMED_OUT):
        return Unavailable(result.outcome, result.reason, "tflite-micro", "")
    tries: list[list[ArenaTry]] = [[] for _ in jobs]
    for d in _json_lines(result):
        tries[d.get("model", 0)].append(
            ArenaTry(d["arena"] - extra, d["ok"], d.get("head"), None if d.get("tail") is None else d["tail"] - extra,
                     tuple(d.get("outputs", ())), d.get("reason", "")))
    for (_, sizes), done in zip(jobs, tries):
        if len(done) < len(sizes) and (not done or done[-1].ok):  # the child ended while at this model
            done.append(ArenaTry(sizes[len(done)], False, reason=result.reason or "the runtime crashed"))
            break
    return tries


def _json_lines(result) -> list[dict]:
    import json
    out = []
    for line in result.stdout.splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "arena" in value:
            out.append(value)
    return out


def smallest_arena(path: Path, model: Model, hint: int | None = None,
                   timeout: float = 120.0) -> SmallestArena | Unavailable:
    """Bisection over multiples of 16, one size per child process below the last working size.
    With a hint (the prediction), two tries settle it when the hint is right; a wrong hint is
    bracketed by steps that double away from it."""
    path = Path(path)
    hint = None if hint is None else _align(hint)
    children = 0

    def attempt(sizes: list[int]) -> list[ArenaTry]:
        """One child process trying the sizes; a missing runtime, or a try that did not finish
        in time, ends the whole search."""
        nonlocal children
        tries = try_arenas(path, sizes, timeout)
        children += 1
        if isinstance(tries, Unavailable):
            raise _Missing(tries)
        return tries

    try:
        return _bisect(model, hint, attempt, lambda: children)
    except _Missing as missing:
        return missing.unavailable


class _Missing(Exception):
    def __init__(self, unavailable: Unavailable) -> None:
        super().__init__(unavailable.reason)
        self.unavailable = unavailable


def _bisect(model: Model, hint: int | None, attempt, children) -> SmallestArena | Unavailable:
    works: ArenaTry | None = None
    fails: ArenaTry | None = None
    version = ""
    if hint is not None and hint > ARENA_STEP:
        tries = attempt([hint, hint - ARENA_STEP])
        if tries[0].ok:
            works = tries[0]
            if len(tries) > 1 and not tries[1].ok:
                fails = tries[1]
        else:
            fails = tries[0]
    if hint is not None and hint > ARENA_STEP:
        # A wrong hint is usually near: widen the bracket around it step by doubling step.
        step = 2 * ARENA_STEP
        while works is None and hint + step < first_arena_size(model):
            tries = attempt([_align(hint + step)])
            if tries[0].ok:
                works = tries[0]
            else:
                fails, step = tries[0], step * 2
        step = 2 * ARENA_STEP
        while works is not None and fails is None and works.arena - step > 0:
            tries = attempt([works.arena - step])
            if tries[0].ok:
                works, step = tries[0], step * 2
            else:
                fails = tries[0]
    if works is None:
        high = first_arena_size(model)
        if fails is not None:
            high = max(high, fails.arena + ARENA_STEP)
        tries = attempt([_align(high)])
        if not tries[0].ok:
            return Unavailable(REFUSED, tries[0].reason, "tflite-micro", "")
        works = tries[0]
    low = fails.arena if fails is not None else 0
    while works.arena - low > ARENA_STEP:
        middle = _align((low + works.arena) // 2)
        if middle <= low:
            middle = low + ARENA_STEP
        tries = attempt([middle])
        if tries[0].ok:
            works = tries[0]
        else:
            fails, low = tries[0], middle
    if fails is None or fails.arena != works.arena - ARENA_STEP:
        fails = ArenaTry(works.arena - ARENA_STEP, False, reason="no arena")
    return SmallestArena("tflite-micro", version or installed_version(), works.arena, works.head or 0,
                         works.tail or 0, works.outputs, fails.reason, children())


def _align(n: int) -> int:
    return -(-n // ARENA_STEP) * ARENA_STEP


def installed_version() -> str:
    try:
        from importlib.metadata import version
        return version("tflite-micro")
    except Exception:  # not installed or no metadata: the version is only informative
        return ""


def measure_with_smallest_arena(path: Path, model: Model, hint: int | None = None,
                                timeout: float = 120.0) -> tuple[TflmMeasurement | Unavailable,
                                                                 SmallestArena | Unavailable]:
    """The recording run's figures and the smallest arena, setting the model up once per try:
    the bisection's last working try (the Python interpreter's recording allocator, at the
    smallest arena + RECORDING_ALLOCATOR_EXTRA) carries the head and tail the recording run
    would give. Its tail is the one at that arena's end, whose padding follows the end
    address; the head does not depend on the arena. Only when the model does not run (the
    bisection finds no arena) is it set up once more, at a generous size, for the head and
    the runtime's reason."""
    smallest = smallest_arena(path, model, hint=hint, timeout=timeout)
    if isinstance(smallest, Unavailable) and smallest.outcome == TIMED_OUT:
        return smallest, smallest  # one more run would not finish either
    if not isinstance(smallest, SmallestArena):
        return measure_tflm(path, model, timeout=timeout), smallest
    tail = smallest.tail + RECORDING_ALLOCATOR_EXTRA
    return TflmMeasurement(smallest.runtime, smallest.version, smallest.head, tail,
                           smallest.head + tail, smallest.arena + RECORDING_ALLOCATOR_EXTRA), smallest
