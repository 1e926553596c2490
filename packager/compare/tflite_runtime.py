"""Measure TFLite's CPU arenas: load the model in the real interpreter (in a child process) and
read back where each tensor's buffer is.

After `allocate_tensors()` every tensor of the working arena points into one block, at the
block's base plus the offset the arena planner gave it. The probe reports every tensor's data
pointer and size; this module sorts them out (REFERENCE.md section 3):
- constants point into the model file (the file says which tensors have data): ignored;
- 0-d tensors are handed to Python as copies; the probe finds each one by writing two patterns
  into it and reading the process's memory (/proc/self/mem, Linux). One it cannot find (another
  system, or no single address follows the patterns) is reported apart as hidden;
- the base: graph inputs are allocated first and never freed, so the lowest input pointer is
  offset 0. (Subgraphs without planned inputs, such as IF branches whose inputs are the caller's
  buffers, fall back to the lowest pointer of the block holding most of the model's tensors.)
- the block: no arena can exceed the sum of its tensors' sizes rounded to 64 bytes, so only
  pointers in [base, base + that sum) can be in it. Inside that window, a contiguous run of
  buffers (holes under 64 bytes are alignment padding) holding a tensor the runtime always keeps
  in its persistent arena (variables, DEQUANTIZE outputs of constants) is the persistent arena,
  allocated next to the working one: left out.
Temporaries (indices past the model's tensors) are reported apart from the model's tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from packager.lifetimes import pruned_by_while
from packager.model import Model
from packager.semantics import TFLITE
from packager.runtimes.child import MEASURED, MISSING, ProbeResult, Unavailable, probe

ALIGNMENT_HOLE = 64  # a gap this large cannot be alignment padding inside one arena
INSTALL_HINT = "pip install 'tflpack[runtimes]' (ai-edge-litert and tflite-micro)"


@dataclass(frozen=True)
class MeasuredArena:
    subgraph: int
    arena: int  # bytes from the block's base to the highest end of a tensor in it
    offsets: dict[int, int]  # model tensor -> offset in the working arena
    sizes: dict[int, int]  # model tensor -> bytes (as the runtime sized it)
    scratch: dict[int, tuple[int, int]]  # temporary index -> (offset, bytes) in the working arena
    elsewhere: dict[int, int]  # model tensor -> bytes, buffer outside the working arena
    scratch_elsewhere: dict[int, int]  # temporary -> bytes, outside the working arena (persistent)
    unallocated: tuple[int, ...] = field(default=())  # model tensors with no buffer yet
    unknown: tuple[int, ...] = field(default=())  # model tensors whose address Python hides
    anchored: bool = True  # False: offset 0's address was guessed; offsets may be shifted

    @property
    def model_arena(self) -> int:
        return max((o + self.sizes[t] for t, o in self.offsets.items()), default=0)

    @property
    def scratch_bytes(self) -> int:
        return sum(n for _, n in self.scratch.values())


@dataclass(frozen=True)
class TfliteMeasurement:
    runtime: str  # "ai-edge-litert" or "tflite-runtime"
    version: str
    arenas: tuple[MeasuredArena, ...]  # after allocate_tensors()
    # After one Invoke with zeroed inputs (probe.after_invoke): None when it was not measured,
    # and then `invoke_error` says why.
    after_invoke: tuple[MeasuredArena, ...] | None = None
    invoke_error: str = ""
    # Other signatures' entry points, each allocated as its signature runner allocates it
    # (after the Invoke above): subgraph -> its arena, or why the runtime refused it.
    signature_runners: dict[int, MeasuredArena | str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(a.arena for a in self.arenas)

    @property
    def total_after_invoke(self) -> int | None:
        return None if self.after_invoke is None else sum(a.arena for a in self.after_invoke)


def _regions(buffers: list[tuple[int, int, int]]) -> list[list[tuple[int, int, int]]]:
    """(pointer, bytes, index) sorted into runs separated by holes of ALIGNMENT_HOLE or more."""
    regions: list[list[tuple[int, int, int]]] = []
    end = None
    for ptr, n, i in sorted(buffers):
        if end is None or ptr >= end + ALIGNMENT_HOLE:
            regions.append([])
            end = ptr + n
        regions[-1].append((ptr, n, i))
        end = max(end, ptr + n)
    return regions


def known_persistent(model: Model, subgraph: int) -> set[int]:
    """Tensors every TFLite version keeps in the persistent arena."""
    sg = model.subgraphs[subgraph]
    out = {t.index for t in sg.tensors if t.is_variable}
    for op in sg.operators:
        if op.name in ("DEQUANTIZE", "DENSIFY") and op.inputs and op.inputs[0] >= 0 \
                and sg.tensors[op.inputs[0]].is_constant:
            out.update(o for o in op.outputs if o >= 0)
    return out


def _base(sg, buffers: list[tuple[int, int, int]], unknown: list[int],
          regions) -> tuple[int | None, bool]:
    """(offset 0's address, whether it is certain). Inputs are placed first, by index, so the
    lowest-index input is at offset 0; when Python hides that input's address (a 0-d tensor) or
    the subgraph has no planned input, the lowest pointer of the busiest block is a best guess."""
    pointers = {i: p for p, _, i in buffers}
    inputs = sorted(t for t in sg.inputs if t >= 0 and not sg.tensors[t].is_variable
                    and not sg.tensors[t].is_constant and (t in pointers or t in unknown))
    if inputs and inputs[0] in pointers:
        return pointers[inputs[0]], True
    if not regions:
        return None, False
    n_model = len(sg.tensors)
    busiest = max(regions, key=lambda r: (sum(1 for _, _, i in r if i < n_model), len(r)))
    return min(p for p, _, _ in busiest), False


def classify_subgraph(model: Model, subgraph: int, rows: list,
                      persistent_temporaries: frozenset[int] = frozenset(),
                      borrowed: frozenset[int] = frozenset()) -> MeasuredArena:
    """A control-flow child's inputs whose buffers the calling op supplies, and any tensor that
    points at one of its callers' buffers (`borrowed`: an IF branch's outputs after Invoke), are
    not this arena's."""
    sg = model.subgraphs[subgraph]
    n_model = len(sg.tensors)
    buffers, unallocated, unknown = [], [], []
    pruned = pruned_by_while(model, sg)  # no buffer of their own: whatever they point at is not the arena
    pruned = pruned | caller_owned_inputs(model, subgraph)
    for index, ptr, nbytes in rows:
        is_model = index < n_model
        if is_model and sg.tensors[index].is_constant:
            continue
        if is_model and index in pruned:
            continue
        if ptr is not None and ptr in borrowed:
            continue
        if ptr is None or not isinstance(nbytes, int) or nbytes == 0:
            if is_model:
                (unknown if "copy" in str(nbytes) else unallocated).append(index)
            continue
        buffers.append((ptr, nbytes, index))
    regions = _regions(buffers)
    base, anchored = _base(sg, buffers, unknown, regions)
    sizes_seen = [n for _, n, _ in buffers] + [sg.tensors[t].nbytes or 0 for t in unknown]
    window = sum(-(-n // ALIGNMENT_HOLE) * ALIGNMENT_HOLE for n in sizes_seen)
    persistent = known_persistent(model, subgraph)
    working = set()
    for region in regions:
        if base is None or any(i in persistent for _, _, i in region):
            continue
        if persistent_temporaries and all(i >= n_model for _, _, i in region):
            continue  # only temporaries, where kernels keep some persistent: that arena
        working.update(i for p, _, i in region if base <= p < base + window)
    offsets, sizes, scratch, elsewhere, scratch_elsewhere = {}, {}, {}, {}, {}
    for ptr, n, i in buffers:
        if i in working:
            if i < n_model:
                offsets[i], sizes[i] = ptr - base, n
            else:
                scratch[i] = (ptr - base, n)
        elif i < n_model:
            elsewhere[i] = n
        else:
            scratch_elsewhere[i] = n
    ends = [o + sizes[t] for t, o in offsets.items()] + [o + n for o, n in scratch.values()]
    return MeasuredArena(subgraph, max(ends, default=0), offsets, sizes, scratch, elsewhere,
                         scratch_elsewhere, tuple(unallocated), tuple(unknown), anchored)


def caller_owned_inputs(model: Model, subgraph: int) -> set[int]:
    """Inputs of a subgraph whose buffers its calling op supplies (TFLite's kTfLiteCustom)."""
    sg = model.subgraphs[subgraph]
    for caller in model.subgraphs:
        for op in caller.operators:
            positions = TFLITE.caller_owned_inputs.get(op.name, ())
            if any(p < len(op.subgraphs) and op.subgraphs[p] == subgraph for p in positions):
                return {t for t in sg.inputs if t >= 0}
    return set()


def callers_of(model: Model, subgraph: int) -> set[int]:
    return {c.index for c in model.subgraphs for op in c.operators if subgraph in op.subgraphs}


def _persistent_temporaries(model: Model, runtime: str, version: str) -> dict[int, frozenset[int]]:
    """Per subgraph, the temporaries whose kernel asks for kTfLiteArenaRwPersistent (tflite-runtime
    2.14's float CONV_2D transposed weights...). Their indices are only predicted, so they serve as
    a hint: in such a subgraph, a block of buffers holding temporaries alone is the persistent
    arena (the working arena always holds the model's tensors, and has no holes of 64 bytes)."""
    from packager.compare.predict_tflite import predict_tflite
    from packager.kernels.tflite_scratch import rules_for

    try:
        predictions = predict_tflite(model, rules_for(runtime, version))
    except Exception:  # a model the predictor cannot read: classify without the hint
        return {}
    return {p.subgraph: frozenset(s.index for s in p.scratch if s.offset is None)
            for p in predictions}


def measurement_from_probe(model: Model, result: ProbeResult) -> TfliteMeasurement | Unavailable:
    data = result.data
    if result.outcome != MEASURED:
        return Unavailable(result.outcome, result.reason, data.get("runtime", ""),
                           data.get("version", ""))
    persistent = _persistent_temporaries(model, data["runtime"], data["version"])
    arenas = _classify_all(model, data["subgraphs"], persistent)
    runners = {int(s): classify_subgraph(model, int(s), r["rows"]) if "rows" in r
               else r.get("error", "not measured")
               for s, r in (data.get("signature_runners") or {}).items()}
    after = data.get("after_invoke") or {"error": "not measured by this probe"}
    if "subgraphs" not in after:
        return TfliteMeasurement(data["runtime"], data["version"], arenas, None,
                                 after.get("error", "not measured"), runners)
    invoked = _classify_all(model, after["subgraphs"], persistent)
    return TfliteMeasurement(data["runtime"], data["version"], arenas, invoked,
                             signature_runners=runners)


def _classify_all(model: Model, subgraph_rows: list, persistent) -> tuple[MeasuredArena, ...]:
    pointers = [frozenset(r[1] for r in rows if r[1] is not None) for rows in subgraph_rows]
    return tuple(
        classify_subgraph(model, s, rows, persistent.get(s, frozenset()),
                          frozenset().union(*(pointers[c] for c in callers_of(model, s)
                                               if c < len(pointers) and c != s)))
        for s, rows in enumerate(subgraph_rows) if s < len(model.subgraphs))


def measure_tflite(path: Path, model: Model, timeout: float = 120.0,
                   runtime: str | None = None) -> TfliteMeasurement | Unavailable:
    """TFLite's arenas for the model at `path` (already read as `model`), measured in a child.
    `runtime`: litert or tflite-runtime (tflite_versions.py); None: whichever this environment has."""
    locate = _to_locate(model)
    runners = (runner_subgraphs(model),) if runner_subgraphs(model) else ()
    if runtime is None:
        return measurement_from_probe(model, probe("tflite", Path(path), "-", locate, *runners,
                                                   timeout=timeout))
    from packager.runtimes.tflite_versions import choice

    which = choice(runtime)
    if not which.installed:
        return Unavailable(MISSING, which.missing_reason, which.package)
    return measurement_from_probe(model, probe("tflite", Path(path), which.package, locate,
                                               *runners, timeout=timeout, python=which.python))


def runner_subgraphs(model: Model) -> str:
    """The entry points of signatures other than subgraph 0's, as the probes take them ("S,S")."""
    return ",".join(str(s) for s in sorted({d.subgraph for d in model.signature_defs} - {0}))


def _to_locate(model: Model) -> str:
    """The probe's list of 0-d tensors to find by writing into them ("S.I,S.I"): every one that
    is not a constant (those live in the read-only file) and has a buffer of its own."""
    wanted = []
    for sg in model.subgraphs:
        pruned = pruned_by_while(model, sg)
        wanted += [f"{sg.index}.{t.index}" for t in sg.tensors
                   if t.shape == () and not t.is_constant and t.nbytes and t.index not in pruned]
    return ",".join(wanted)


@dataclass(frozen=True)
class ArenaLayout:
    """Subgraph 0's measured layout, as the report's layout chart wants it."""

    runtime: str  # e.g. "ai-edge-litert 2.3.0"
    arena: int
    offsets: dict[int, int]
    extra: tuple[tuple[str, int], ...]  # (name, bytes) of buffers the file does not describe


def measure_arena_layout(path: Path) -> ArenaLayout | None:
    """The hook emit/measured.py calls: None when the runtime is missing or refuses the model."""
    from packager.reader import read_model

    model = read_model(path)
    result = measure_tflite(path, model)
    if not isinstance(result, TfliteMeasurement) or not result.arenas:
        return None
    main = result.arenas[0]
    extra = tuple((f"temporary {i}", n) for i, (_, n) in sorted(main.scratch.items()))
    return ArenaLayout(f"{result.runtime} {result.version}", main.arena, dict(main.offsets), extra)
