"""Predict TFLite's working arena from the model file: every tensor's offset and the arena size.

The usage records come from lifetimes.py under `tflite` semantics; the op temporaries from
tflite_scratch.py. What this module adds is TFLite's exact allocation order
(ArenaPlanner::CalculateAllocations and CreateTensorAllocationVector):

1. the tensors to place are gathered node by node, each node's tensors in the iteration order of
   its `std::unordered_set` (`nodes_to_tensors_`: node 0 gets the variables and graph inputs,
   then every node its outputs, then its temporaries);
2. kept if they live in the working arena with bytes > 0, or in the persistent arena (those take
   part in the sort but are placed elsewhere);
3. sorted by `std::sort` with TFLite's comparator: alive for the whole run (allocated at node 0,
   never freed) first, by index; then by size, largest first; then by allocation node. The sort
   is not stable, so ties keep whatever order introsort leaves them in;
4. placed one by one with SimpleMemoryArena's gap rule (greedy_by_size_tflite.arena_offset);
   tensors that share an input's buffer (in-place ops) take part in the sort but are not placed.

Tensors the file holds at a placeholder shape are first given the shape Prepare gives them
(dynamic/prepared_shapes.py: NON_MAX_SUPPRESSION's outputs at max_output_size, and what follows).
Only nodes prepared by `allocate_tensors()` are placed: TFLite stops preparing after the first node
whose outputs are dynamic, and allocates the rest at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packager.compare.placed_by_time import PlacedByTime
from packager.dynamic.prepared_shapes import with_prepared_shapes
from packager.lifetimes import (ALIAS, DYNAMIC, PERSISTENT, ArenaLifetimes, pruned_by_while,
                                computed_at_prepare, model_lifetimes)
from packager.model import Model
from packager.plan.offsets.greedy_by_size_tflite import arena_offset
from packager.kernels import tflite_scratch
from packager.kernels.libstdcxx import introsort, unordered_set_order
from packager.kernels.tflite_scratch import OpScratch, ScratchRules
from packager.semantics import TFLITE

NEVER = 2**31 - 1  # kNodeNotAssigned: a tensor never freed
_HANDLES = ("RESOURCE", "VARIANT")  # handle outputs do not stop Prepare (VAR_HANDLE and the like)
# ...except HASHTABLE's: allocate_tensors() prepares nothing after it (measured, both versions, on
# fixtures/op_matrix.py: the ops after it have no buffer until Invoke).
_STOPPING_HANDLES = frozenset({"HASHTABLE"})


@dataclass(frozen=True)
class Candidate:
    """A tensor that takes part in TFLite's allocation sort."""

    index: int  # tensor index in the subgraph (temporaries: past the model's tensors)
    nbytes: int
    alloc: int
    dealloc: int  # NEVER when it is never freed
    placed: bool  # False: persistent arena, or an in-place output sharing its input's buffer

    @property
    def whole_run(self) -> bool:
        return self.alloc == 0 and self.dealloc == NEVER


@dataclass(frozen=True)
class PredictedScratch:
    index: int
    op: int
    op_name: str
    what: str
    nbytes: int
    offset: int | None  # None: not in the working arena (persistent or dynamic)


@dataclass(frozen=True)
class PredictedArena:
    subgraph: int
    arena: int  # bytes: max(offset + size) over everything placed
    model_arena: int  # the same over the model's own tensors only
    offsets: dict[int, int]  # model tensor -> offset (in-place outputs: their owner's offset)
    scratch: tuple[PredictedScratch, ...]
    prepared_ops: int  # ops prepared by allocate_tensors (all, unless a dynamic output stops it)
    uncovered_ops: tuple[str, ...] = field(default=())  # ops whose scratch rule is unknown
    sizes: dict[int, int] = field(default_factory=dict)  # model tensor -> bytes, as placed
    uncovered_why: tuple[str, ...] = field(default=())  # "OP: the rule that is missing"
    # False: a subgraph allocate_tensors() leaves alone (another signature's entry point, which
    # get_signature_runner allocates on demand): no tensor of it has a buffer yet.
    allocated: bool = True


def _less(a: Candidate, b: Candidate) -> bool:
    if a.whole_run:
        return a.index < b.index if b.whole_run else True
    if b.whole_run:
        return False
    if a.nbytes != b.nbytes:
        return a.nbytes > b.nbytes
    return a.alloc < b.alloc


def dynamic_while_outputs(model: Model, subgraph: int) -> set[int]:
    """Outputs of the WHILEs whose body holds a dynamic tensor: while.cc's Prepare then makes
    every output dynamic (sized at each iteration), so the caller stops preparing at that WHILE
    and everything after it, a second loop's subgraphs included, waits for Invoke (measured on
    the coverage matrix's two-loop model, both versions)."""
    sg = model.subgraphs[subgraph]
    return {o for op in sg.operators if op.name == "WHILE" and len(op.subgraphs) >= 2
            and tflite_scratch.has_dynamic_tensors(model, op.subgraphs[1]) for o in op.outputs if o >= 0}


def _prepared_ops(model: Model, arena: ArenaLifetimes, start: int = 0) -> int:
    """Ops prepared from `start` up to the first one with a dynamic output (that one included):
    Subgraph::PrepareOpsStartingAt stops there, and the rest is allocated while running."""
    sg = model.subgraphs[arena.subgraph]
    looped = dynamic_while_outputs(model, arena.subgraph)
    for i, op in enumerate(sg.operators[start:], start):
        if any(o >= 0 and (arena.category.get(o) == DYNAMIC or o in looped)
               and (sg.tensors[o].type not in _HANDLES or op.name in _STOPPING_HANDLES)
               for o in op.outputs):
            return i + 1
    return len(sg.operators)


def late_while_outputs(model: Model, arena: ArenaLifetimes) -> set[int]:
    """Outputs of the subgraph's WHILEs that allocate_tensors() does not prepare (past a
    dynamic output) and that a WHILE prepared by allocate_tensors() would leave without a
    buffer (a loop variable passed through unchanged and read by no op). Prepared while
    running, such a WHILE gives them a buffer in the arena like any output, never freed, as it
    is never read (measured on both versions: fixtures/late_while.py)."""
    sg = model.subgraphs[arena.subgraph]
    first = _prepared_ops(model, arena)
    late = {o for op in sg.operators[first:] if op.name == "WHILE" for o in op.outputs if o >= 0}
    return late & pruned_by_while(model, sg)


def _readers_and_outputs(model: Model, subgraph: int) -> tuple[dict[int, int], set[int]]:
    sg = model.subgraphs[subgraph]
    last_read: dict[int, int] = {}
    for i, op in enumerate(sg.operators):
        for t in op.inputs:
            if t >= 0:
                last_read[t] = i
    return last_read, {o for o in sg.outputs if o >= 0}


def _model_candidates(model: Model, arena: ArenaLifetimes) -> dict[int, Candidate]:
    sg = model.subgraphs[arena.subgraph]
    out: dict[int, Candidate] = {}
    for pos, r in enumerate(arena.records):
        # The whole-run test is all the sort asks of the free node; conflicts need only last_op.
        dealloc = NEVER if pos in arena.whole_run else r.last_op
        out[r.tensor] = Candidate(r.tensor, r.size, r.first_op, dealloc, placed=True)
    producers = {o: i for i, op in enumerate(sg.operators) for o in op.outputs if o >= 0}
    last_read, outputs = _readers_and_outputs(model, arena.subgraph)
    read_only = computed_at_prepare(sg, TFLITE)  # kTfLitePersistentRo: not in the planner at all
    for t, cat in arena.category.items():
        if t in read_only:
            continue
        size = sg.tensors[t].nbytes or 0
        if cat == ALIAS:
            # Its own reference count is never dropped (reads count against its owner).
            out[t] = Candidate(t, size, arena.alias_intervals[t][0], NEVER, placed=False)
        elif cat == PERSISTENT:
            if sg.tensors[t].is_variable:
                out[t] = Candidate(t, size, 0, NEVER, placed=False)
            elif t in producers:
                freed = t not in outputs and t in last_read
                out[t] = Candidate(t, size, producers[t], last_read[t] if freed else NEVER,
                                   placed=False)
    return out


def _node_sets(model: Model, arena: ArenaLifetimes, scratch: list[OpScratch],
               first_temp: list[int]) -> list[list[int]]:
    """The insertion sequence of each node's `nodes_to_tensors_` set."""
    sg = model.subgraphs[arena.subgraph]
    inserts: list[list[int]] = [[] for _ in range(max(len(sg.operators), 1))]
    inserts[0] += [t.index for t in sg.tensors if t.is_variable]
    inserts[0] += [t for t in sg.inputs if t >= 0]
    for i, op in enumerate(sg.operators):
        inserts[i] += [o for o in op.outputs if o >= 0]
        inserts[i] += [first_temp[i] + tmp.slot for tmp in scratch[i].temporaries]
    return inserts


def _views_of_dynamic_outputs(model: Model, arena: ArenaLifetimes, prepared: int) -> dict[int, int]:
    """Input -> the last op reading its dynamic view (an in-place op whose output is dynamic),
    for the ops prepared at `prepared` or before. Both versions keep the input's buffer that
    long, whether the view shares it (ai-edge-litert) or gets its own (tflite-runtime 2.14):
    measured on fixtures/runtime_cases.py's shape_arithmetic."""
    sg = model.subgraphs[arena.subgraph]
    last_read, _ = _readers_and_outputs(model, arena.subgraph)
    out: dict[int, int] = {}
    for i, op in enumerate(sg.operators[:prepared]):
        rule = TFLITE.inplace.get(op.name)
        if rule and rule.data_unmodified and op.outputs and op.inputs \
                and arena.category.get(op.outputs[0]) == DYNAMIC and op.outputs[0] in last_read:
            out[op.inputs[0]] = max(out.get(op.inputs[0], i), last_read[op.outputs[0]])
    return out


def _placed_index(candidates: dict[int, Candidate], kept_for_views: dict[int, int],
                  operators: int) -> PlacedByTime:
    """An empty index for the tensors to place: buckets as wide as their median lifetime, time
    clamped past every node any of them (or any kept view) names."""
    placed = [c for c in candidates.values() if c.placed and c.nbytes > 0]
    horizon = max([operators, *kept_for_views.values()]
                  + [c.alloc for c in placed] + [c.dealloc for c in placed if c.dealloc != NEVER])
    lifetimes = sorted(min(c.dealloc, horizon) - c.alloc + 1 for c in placed)
    width = lifetimes[len(lifetimes) // 2] if lifetimes else 1
    return PlacedByTime(width, horizon)


def predict_subgraph(model: Model, arena: ArenaLifetimes, rules: ScratchRules,
                     invoked: bool = False) -> PredictedArena:
    """`invoked`: the arena after one Invoke, when the ops past the first dynamic output have
    been prepared and placed too, batch by batch, around what is already placed
    (Subgraph::Invoke calls PrepareOpsAndTensors again from the next unprepared op)."""
    sg = model.subgraphs[arena.subgraph]
    scratch = tflite_scratch.subgraph_scratch(model, arena.subgraph, rules)
    batches = [(0, _prepared_ops(model, arena))]
    while invoked and batches[-1][1] < len(sg.operators):
        batches.append((batches[-1][1], _prepared_ops(model, arena, batches[-1][1])))
    prepared = batches[-1][1]
    first_temp = tflite_scratch.first_indices(sg, scratch, rules, prepared)

    candidates = _model_candidates(model, arena)
    if invoked:
        producers = {o: i for i, op in enumerate(sg.operators) for o in op.outputs if o >= 0}
        for t in late_while_outputs(model, arena):
            candidates[t] = Candidate(t, sg.tensors[t].nbytes or 0, producers[t], NEVER,
                                      placed=True)
    for t in dynamic_while_outputs(model, arena.subgraph):  # sized while running: no place
        candidates.pop(t, None)
    temps: dict[int, tuple[int, object]] = {}
    for i in range(prepared):
        for tmp in scratch[i].temporaries:
            index = first_temp[i] + tmp.slot
            temps[index] = (i, tmp)
            if tmp.kind == tflite_scratch.ARENA and tmp.nbytes > 0:
                candidates[index] = Candidate(index, tmp.nbytes, i, i, placed=True)
            elif tmp.kind == tflite_scratch.PERSISTENT:
                candidates[index] = Candidate(index, tmp.nbytes, i, i, placed=False)

    node_sets = _node_sets(model, arena, scratch, first_temp)
    offsets: dict[int, int] = {}
    placed: list[tuple[int, int, int, int]] = []  # (offset, end, alloc, dealloc)
    kept_for_views = _views_of_dynamic_outputs(model, arena, prepared)
    position: dict[int, int] = {}  # tensor -> its entry in `placed`
    by_time = _placed_index(candidates, kept_for_views, len(sg.operators))
    for first, last in batches:
        if first > 0:
            # A dynamic view written at run time into its input's buffer keeps that buffer until
            # the view's last reader: the ops prepared now are placed around it.
            for root, until in kept_for_views.items():
                if root in position:
                    o, e, a, d = placed[position[root]]
                    placed[position[root]] = (o, e, a, max(d, until))
                    by_time.remove((o, e, a, d))
                    by_time.add(placed[position[root]])
        gathered: list[Candidate] = []
        for node in range(first, max(last, 1)):
            for t in unordered_set_order(node_sets[node]):
                c = candidates.get(t)
                if c is not None and (c.nbytes > 0 or not c.placed) and c.alloc == node:
                    gathered.append(c)
        for c in introsort(gathered, _less):
            if not c.placed or c.nbytes == 0:
                continue
            # Every placed tensor alive at some node of c's lifetime, by offset (as the planner's scan).
            conflicts = by_time.overlapping(c.alloc, c.dealloc)
            offset = arena_offset(conflicts, c.nbytes, TFLITE.alignment)
            offsets[c.index] = offset
            position[c.index] = len(placed)
            placed.append((offset, offset + c.nbytes, c.alloc, c.dealloc))
            by_time.add(placed[-1])

    model_offsets = {t: o for t, o in offsets.items() if t < len(sg.tensors)}
    for alias, root in arena.aliases.items():
        if root in model_offsets:
            model_offsets[alias] = model_offsets[root]
    if rules.dynamic_views_share_input:
        for op in sg.operators[:prepared]:
            rule = TFLITE.inplace.get(op.name)
            if rule and rule.data_unmodified and op.outputs and op.inputs \
                    and arena.category.get(op.outputs[0]) == DYNAMIC and op.inputs[0] in model_offsets:
                model_offsets[op.outputs[0]] = model_offsets[op.inputs[0]]
    sizes = {t: sg.tensors[t].nbytes or 0 for t in model_offsets}
    predicted_scratch = tuple(
        PredictedScratch(index, op, sg.operators[op].name, tmp.what, tmp.nbytes, offsets.get(index))
        for index, (op, tmp) in sorted(temps.items()))
    uncovered = tuple(sorted({sg.operators[i].name for i in range(prepared)
                              if not scratch[i].covered}))
    uncovered_why = tuple(sorted({f"{sg.operators[i].name}: {scratch[i].why}"
                                  for i in range(prepared) if not scratch[i].covered}))
    return PredictedArena(
        subgraph=arena.subgraph,
        arena=max((end for _, end, _, _ in placed), default=0),
        model_arena=max((model_offsets[t] + sizes[t] for t in model_offsets), default=0),
        offsets=model_offsets, scratch=predicted_scratch, prepared_ops=prepared,
        uncovered_ops=uncovered, sizes=sizes, uncovered_why=uncovered_why)


def not_yet_allocated(model: Model, predictions: list[PredictedArena]) -> set[int]:
    """Subgraphs allocate_tensors() leaves alone: other signatures' entry points, and the
    subgraphs only ops it did not prepare would call (past a dynamic output)."""
    prepared = {p.subgraph: p.prepared_ops for p in predictions}
    reached, todo = {0}, [0]
    while todo:
        sg = model.subgraphs[todo.pop()]
        for op in sg.operators[:prepared.get(sg.index, len(sg.operators))]:
            for child in op.subgraphs:
                if child not in reached and 0 <= child < len(model.subgraphs):
                    reached.add(child)
                    todo.append(child)
    return {sg.index for sg in model.subgraphs if sg.index not in reached}


def _not_allocated(p: PredictedArena) -> PredictedArena:
    return PredictedArena(p.subgraph, 0, 0, {}, (), 0, allocated=False)


def predict_tflite(model: Model, rules: ScratchRules) -> list[PredictedArena]:
    """One prediction per subgraph arena, at the shapes Prepare gives the tensors."""
    model = with_prepared_shapes(model)
    predictions = [predict_subgraph(model, a, rules) for a in model_lifetimes(model, TFLITE)]
    apart = not_yet_allocated(model, predictions)
    return [_not_allocated(p) if p.subgraph in apart else p for p in predictions]


def predict_after_invoke(model: Model, predictions: list[PredictedArena],
                         rules: ScratchRules) -> tuple[list[PredictedArena], str]:
    """The arenas as they stand after one Invoke, and why that is not exact ("" when it is).

    Measured under both versions (tests/compare/test_after_invoke.py): a WHILE releases its
    condition's and body's arenas when it finishes (nothing of theirs keeps a buffer); every
    other arena keeps the layout allocate_tensors() gave it, plus the ops past a dynamic output,
    now prepared and placed around it (predict_subgraph, invoked). An IF releases the arena of the
    branch that ran (its outputs then point at the IF's buffers), but which branch runs depends
    on the data."""
    released = {i for sg in model.subgraphs for op in sg.operators if op.name == "WHILE"
                for i in op.subgraphs[:2]}
    model = with_prepared_shapes(model)
    lifetimes = model_lifetimes(model, TFLITE)
    after = [PredictedArena(p.subgraph, 0, 0, {}, (), p.prepared_ops, p.uncovered_ops, {})
             if p.subgraph in released else
             p if not p.allocated or p.prepared_ops == len(model.subgraphs[p.subgraph].operators) else
             predict_subgraph(model, lifetimes[p.subgraph], rules, invoked=True)
             for p in predictions]
    branches = any(op.name == "IF" for sg in model.subgraphs for op in sg.operators)
    return after, ("an IF releases the arena of the branch that ran, and which branch runs "
                   "depends on the input data" if branches else "")


def predict_signature_runners(model: Model, rules: ScratchRules) -> dict[int, PredictedArena]:
    """The arenas of other signatures' entry points as their signature runners allocate them
    (each subgraph prepared and planned on its own, as subgraph 0 is by allocate_tensors())."""
    model = with_prepared_shapes(model)
    entries = {d.subgraph for d in model.signature_defs} - {0}
    lifetimes = model_lifetimes(model, TFLITE)
    return {s: predict_subgraph(model, lifetimes[s], rules) for s in sorted(entries)
            if s < len(lifetimes)}
