"""Model + semantics -> usage records: which tensors are planned, aliased, persistent, and when
each planned tensor is alive.

Two timelines, chosen by the semantics:
- per subgraph (TFLite, ideal): op i of a subgraph is time i; each subgraph is planned on its own
  and a control-flow child's arena exists while its calling op runs. Lifetimes come from TFLite's
  reference counting: graph outputs (and, with pinned inputs, graph inputs) hold an extra
  reference so they are never freed; a tensor is freed at the op that drops its last reference.
- inline (TFLite Micro): one timeline over the whole model; graph inputs are created at scope 0,
  each op opens a new scope, and the subgraphs a control-flow op runs are scheduled inside its
  scope range, so every subgraph is planned in the same arena. Records carry global tensor ids
  (subgraphs concatenated in order), as TFLite Micro's offline plan does.
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import ItemsView, ValuesView
from dataclasses import dataclass, field
from itertools import chain
from typing import Iterator, Mapping

import numpy as np

from packager.errors import ModelError
from packager.model import ELEMENT_BITS, Model, Subgraph, derived, tensor_bytes
from packager.plan.records import Records, UsageRecord
from packager.semantics import SEMANTICS, Semantics

# Why a tensor of the file gets no place in the working arena.
CONSTANT = "constant"
PERSISTENT = "persistent"
DYNAMIC = "dynamic"
ALIAS = "alias"
UNUSED = "unused"
PLANNED = "planned"
CALLER = "caller"  # an input of a control-flow child whose buffer the calling op supplies


@dataclass(frozen=True)
class ArenaLifetimes:
    """Everything a planner needs for one arena (a subgraph, or the whole model when inline)."""

    subgraph: int  # the subgraph, or 0 for a model-wide (inline) arena
    semantics: str
    num_steps: int  # operators (or TFLM scopes) on this arena's timeline
    records: Records  # any sequence of usage records given is made Records
    whole_run: frozenset[int]  # record positions allocated first and never freed (TFLite order)
    aliases: Mapping[int, int]  # tensor -> the planned tensor whose buffer it uses
    alias_intervals: Mapping[int, tuple[int, int]]
    category: Mapping[int, str]  # tensor -> one of the categories above
    persistent_bytes: int
    calls: Mapping[int, tuple[int, ...]] = field(default_factory=dict)  # op -> child subgraphs
    inline: bool = False
    tensor_subgraph: Mapping[int, tuple[int, int]] = field(default_factory=dict)
    # for inline arenas: global id -> (subgraph, tensor index)
    op_scopes: Mapping[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    # for inline arenas: (subgraph, op) -> (first, last) scope of the op, its children included

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", Records.of(self.records))

    def ids(self, category: str) -> list[int]:
        return sorted(t for t, c in self.category.items() if c == category)

    def where_columns(self, ids: list[int]) -> tuple[list[int], list[int]]:
        """(subgraph, tensor index) of each id, as tensor_subgraph.get(id, (subgraph, id)) gives
        them, as two columns: the sidecar plan asks for every planned tensor's."""
        mapping = self.tensor_subgraph
        if isinstance(mapping, GlobalIds):
            found = mapping.columns(ids)
            if found is not None:
                return found
        elif not mapping:  # a subgraph's own arena: ids are its tensors' indices
            return [self.subgraph] * len(ids), list(ids)
        pairs = [mapping.get(g, (self.subgraph, g)) for g in ids]
        return [s for s, _ in pairs], [t for _, t in pairs]


def model_lifetimes(model: Model, semantics: str | Semantics,
                    plan_dynamic: bool = False) -> list[ArenaLifetimes]:
    """The arenas of a model under a semantics: one per subgraph, or one for the whole model.

    With `plan_dynamic`, tensors the runtime would allocate on the fly once their size is known
    (outputs of data-dependent ops) are planned too: the multi-pass planner of dynamic.py gives
    them a place in a later pass.
    """
    sem = SEMANTICS[semantics] if isinstance(semantics, str) else semantics
    if SEMANTICS.get(sem.name) is not sem:  # semantics made on the fly: nothing to share
        return _model_lifetimes(model, sem, plan_dynamic)
    # Once per model (planning, then checking the plan, ask again); a new list each time.
    return list(derived(model, ("lifetimes", sem.name, plan_dynamic),
                        lambda: tuple(_model_lifetimes(model, sem, plan_dynamic))))


def _model_lifetimes(model: Model, sem: Semantics, plan_dynamic: bool) -> list[ArenaLifetimes]:
    if sem.inline_subgraphs:
        return [_inline_lifetimes(model, sem, plan_dynamic)]
    return [subgraph_lifetimes(model, i, sem, plan_dynamic) for i in range(len(model.subgraphs))]


# -- classification shared by both timelines --------------------------------------------------

_INTEGER = ("INT32", "INT64")
_SHAPE_ONLY = ("SHAPE", "RANK")  # read only their input's shape, known at Prepare
# Ops whose other outputs are sized at Prepare all the same: UNIQUE's indices, one per input
# element (unique.cc), are arena tensors; only the unique values are dynamic.
_DYNAMIC_ONLY = {"UNIQUE": (0,)}


def computed_at_prepare(sg: Subgraph, sem: Semantics) -> set[int]:
    """Outputs the runtime computes at Prepare into persistent read-only buffers (shape
    arithmetic: SHAPE, then ops over constants and such outputs); see Semantics."""
    out: set[int] = set()
    if not sem.prepare_time_outputs:
        return out
    known = {t.index for t in sg.tensors if t.is_constant}
    for op in sg.operators:
        if op.name not in sem.prepare_time_outputs or not op.outputs:
            continue
        outputs = [o for o in op.outputs if o >= 0]
        if not outputs or any(sg.tensors[o].type not in _INTEGER or sg.tensors[o].nbytes is None
                              for o in outputs):
            continue
        inputs = [i for i in op.inputs if i >= 0]
        if op.name in _SHAPE_ONLY or (inputs and all(i in known for i in inputs)):
            known.update(outputs)
            out.update(outputs)
    return out


def _classify(model: Model, sg: Subgraph, sem: Semantics, plan_dynamic: bool = False) -> dict[int, str]:
    """Categories of the tensors that cannot be planned; planned candidates are left out."""
    out: dict[int, str] = {}
    variables_persist = sem.persistent_variables
    for t in sg.tensors:
        if t.is_variable and variables_persist:
            out[t.index] = PERSISTENT
        elif t.has_data:  # is_constant
            out[t.index] = CONSTANT
        elif ELEMENT_BITS[t.type] is None:  # nbytes is None: sized while running
            out[t.index] = DYNAMIC
    prepared = computed_at_prepare(sg, sem)
    for t in prepared:
        out.setdefault(t, PERSISTENT)
    dequantized_persist, dynamic_rules = sem.persistent_dequantized_constants, sem.dynamic_output_rules
    for op in sg.operators:
        name = op.opcode.name
        # DENSIFY (a sparse constant made dense once) keeps its output persistent too.
        if dequantized_persist and name in ("DEQUANTIZE", "DENSIFY"):
            inputs = [i for i in op.inputs if i >= 0]
            if inputs and sg.tensors[inputs[0]].is_constant:
                for o in op.outputs:
                    out.setdefault(o, PERSISTENT)
        rule = dynamic_rules.get(name)
        if rule and any(k < len(op.inputs) and op.inputs[k] >= 0
                        and not sg.tensors[op.inputs[k]].is_constant
                        and not _empty_constant(model, sg, op.inputs[k])
                        and op.inputs[k] not in prepared for k in rule):
            for k, o in enumerate(op.outputs):
                if k in _DYNAMIC_ONLY.get(name, (k,)) \
                        and not (plan_dynamic and sg.tensors[o].nbytes is not None):
                    out.setdefault(o, DYNAMIC)
    if sem.while_prunes_unread:
        for t in pruned_by_while(model, sg):
            out.setdefault(t, UNUSED)
    if _inputs_owned_by_caller(model, sg.index, sem):
        for t in sg.inputs:
            if t >= 0 and sg.tensors[t].type not in ("RESOURCE", "VARIANT"):
                out.setdefault(t, CALLER)
    return out


def _empty_constant(model: Model, sg: Subgraph, t: int) -> bool:
    """A zero-element tensor whose buffer holds an empty data vector: TFLite reads it as a
    read-only constant, so an output sized from it is known at Prepare (converters leave one on
    RESHAPEs that squeeze; measured on openWakeWord's hey_jarvis model and
    fixtures/runtime_cases.py's if_passed_weights, both TFLite versions). Without the vector it
    is an arena tensor, and the output is sized while running."""
    tensor = sg.tensors[t]
    return (tensor.num_elements == 0 and 0 < tensor.buffer < len(model.buffers)
            and model.buffers[tensor.buffer].empty_data)


def pruned_by_while(model: Model, sg: Subgraph) -> set[int]:
    """Tensors of `sg` a WHILE leaves without a buffer (Semantics.while_prunes_unread)."""
    out: set[int] = set()
    whiles = [(caller, op) for caller in model.subgraphs for op in caller.operators
              if op.subgraphs and op.name == "WHILE" and len(op.subgraphs) >= 2]
    if not whiles:
        return out
    read = {i for op in sg.operators for i in op.inputs if i >= 0}
    for caller, op in whiles:
        cond, body = (model.subgraphs[i] if 0 <= i < len(model.subgraphs) else None
                      for i in op.subgraphs[:2])
        if cond is sg:
            out.update(t for t in sg.inputs if t >= 0 and t not in read)
        if caller is sg and body is not None:
            for k, o in enumerate(op.outputs):
                passes = (k < len(body.inputs) and k < len(body.outputs)
                          and body.inputs[k] == body.outputs[k])
                if o >= 0 and passes and o not in read:
                    out.add(o)
    return out


def _inputs_owned_by_caller(model: Model, index: int, sem: Semantics) -> bool:
    for caller in model.subgraphs:
        for op in caller.operators:
            if not op.subgraphs:  # runs no subgraph: owns no inputs of one (most ops)
                continue
            positions = sem.caller_owned_inputs.get(op.name, ())
            if any(p < len(op.subgraphs) and op.subgraphs[p] == index for p in positions):
                return True
    return False


# -- per-subgraph timeline (TFLite, ideal) ----------------------------------------------------

def subgraph_lifetimes(model: Model, index: int, sem: Semantics, plan_dynamic: bool = False) -> ArenaLifetimes:
    sg = model.subgraphs[index]
    n_ops = len(sg.operators)
    category = _classify(model, sg, sem, plan_dynamic)
    produced = {o for op in sg.operators for o in op.outputs if o >= 0}
    graph_inputs = {i for i in sg.inputs if i >= 0}
    graph_outputs = {o for o in sg.outputs if o >= 0}
    arena = [t.index for t in sg.tensors if t.index not in category]
    for t in arena:
        if t not in produced and t not in graph_inputs:
            category[t] = UNUSED
    arena_set = {t for t in arena if t not in category}

    # TFLite's first reference count: outputs, pinned inputs, and every read of a tensor.
    refs = {t: 0 for t in arena_set}
    for t in graph_outputs & arena_set:
        refs[t] += 1
    if sem.pin_inputs:
        for t in graph_inputs & arena_set:
            refs[t] += 1
    for op in sg.operators:
        for i in op.inputs:
            if i in refs:
                refs[i] += 1

    root = _identify_inplace(sg, sem, arena_set, refs, graph_inputs, graph_outputs)

    def find(t: int) -> int:
        while t in root:
            t = root[t]
        return t

    # Second pass: references now count against the buffer's owner (the root of an alias chain);
    # without aliases every tensor owns its buffer, and the counts are the first pass's.
    if root:
        live_refs = {t: 0 for t in arena_set}
        for t in graph_outputs & arena_set:
            live_refs[find(t)] += 1
        if sem.pin_inputs:
            for t in graph_inputs & arena_set:
                live_refs[find(t)] += 1
        for op in sg.operators:
            for i in op.inputs:
                if i in arena_set:
                    live_refs[find(i)] += 1
    else:
        live_refs = dict(refs)
    alloc: dict[int, int] = {t: 0 for t in graph_inputs & arena_set}
    dealloc: dict[int, int] = {}
    last_read: dict[int, int] = {}
    for i, op in enumerate(sg.operators):
        for o in op.outputs:
            if o in arena_set:
                alloc.setdefault(o, i)
        for t in op.inputs:
            if t in arena_set:
                last_read[t] = i
                r = find(t) if root else t
                live_refs[r] -= 1
                if live_refs[r] == 0 and r in alloc:
                    dealloc[r] = i
    end = max(n_ops - 1, 0)
    nbytes, rounding = tensor_bytes(model, index), sem.size_rounding
    records, whole_run = [], set()
    for t in sorted(arena_set - set(root)):
        first = alloc[t]
        never_freed = t not in dealloc
        if never_freed and not sem.unread_to_end and t not in graph_outputs and live_refs[t] <= 0:
            last = max(first, last_read.get(t, first))  # freed right after its last use
            never_freed = False
        else:
            last = end if never_freed else dealloc[t]
        if never_freed and first == 0:
            whole_run.add(len(records))
        records.append(UsageRecord(t, first, last, _rounded(nbytes[t] or 0, rounding)))
    for t in arena_set:
        category.setdefault(t, ALIAS if t in root else PLANNED)
    aliases = {t: find(t) for t in root}
    alias_intervals = {t: (alloc[t], max(alloc[t], last_read.get(t, alloc[t]))) for t in root}
    persistent_bytes = sum(_rounded(nbytes[t] or 0, rounding) for t, c in category.items() if c == PERSISTENT)
    calls = {op.index: op.subgraphs for op in sg.operators if op.subgraphs}
    return ArenaLifetimes(subgraph=index, semantics=sem.name, num_steps=n_ops,
                          records=Records.of(records), whole_run=frozenset(whole_run), aliases=aliases,
                          alias_intervals=alias_intervals, category=category,
                          persistent_bytes=persistent_bytes, calls=calls)


def _identify_inplace(sg: Subgraph, sem: Semantics, arena: set[int], refs: Mapping[int, int],
                      graph_inputs: set[int], graph_outputs: set[int]) -> dict[int, int]:
    """output -> input whose buffer it takes, following the semantics' in-place rules."""
    root: dict[int, int] = {}
    readers: dict[int, list[int]] = {}  # tensor -> the ops that read it, made when first needed
    readers_made = False

    def find(t: int) -> int:
        while t in root:
            t = root[t]
        return t

    def group_last_read(r: int) -> int:
        nonlocal readers_made
        if not readers_made:
            readers_made = True
            for i, op in enumerate(sg.operators):
                for t in op.inputs:
                    readers.setdefault(t, []).append(i)
        members = [r] + [a for a in root if find(a) == r]
        return max((max(readers.get(m, [-1])) for m in members), default=-1)

    inplace = sem.inplace
    for i, op in enumerate(sg.operators):
        rule = inplace.get(op.opcode.name)
        if rule is None or not op.outputs or op.outputs[0] not in arena:
            continue
        out = op.outputs[0]
        if not sem.inplace_allows_graph_io and out in graph_outputs:
            continue
        chosen = None
        for k in rule.inputs:
            if k >= len(op.inputs) or op.inputs[k] not in arena:
                continue
            src = op.inputs[k]
            t_in, t_out = sg.tensors[src], sg.tensors[out]
            if not sem.inplace_allows_graph_io and src in graph_inputs:
                continue
            if not rule.data_unmodified:
                if t_in.nbytes != t_out.nbytes or (t_in.nbytes or 0) <= 4:
                    continue
                if sem.inplace_needs_single_reader:
                    if refs[src] > 1:
                        continue
                elif group_last_read(find(src)) > i or find(src) in graph_outputs:
                    continue  # the buffer is still read after this op
            elif t_in.nbytes != t_out.nbytes:
                continue
            chosen = src
            break
        if chosen is None:
            continue
        r = find(chosen)
        if not rule.data_unmodified and sem.inplace_needs_single_reader and refs[r] > 1:
            continue
        root[out] = r
    return root


# -- inline timeline (TFLite Micro) -----------------------------------------------------------

def _inline_lifetimes(model: Model, sem: Semantics, plan_dynamic: bool = False) -> ArenaLifetimes:
    offsets, total = [], 0
    for sg in model.subgraphs:
        offsets.append(total)
        total += len(sg.tensors)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    op_scopes: dict[tuple[int, int], tuple[int, int]] = {}
    # Without control flow op i of the main subgraph is scope i + 1: no need to write that down.
    calls_children = any(op.subgraphs for op in model.subgraphs[0].operators) if model.subgraphs else True
    scope = 0
    visiting: set[int] = set()

    # TFLite Micro's AllocationInfoBuilder (micro_allocation_info.cc): "created" resets both ends
    # (UpdateFirstCreated), "used" moves the last end (UpdateLastUsed) to the current scope:
    # scopes only grow, so that is always the latest.
    def mark(index: int) -> None:
        nonlocal scope
        if index in visiting:
            raise ModelError(f"subgraph {index} calls itself: recursive control flow cannot be planned")
        visiting.add(index)
        sg, base = model.subgraphs[index], offsets[index]
        # Inputs and outputs are created when the subgraph is entered (outputs again when written).
        for t in (*sg.inputs, *sg.outputs):
            if t >= 0:
                first[base + t] = last[base + t] = scope  # created
        for i, op in enumerate(sg.operators):
            scope += 1
            for t in op.outputs:
                if t >= 0:
                    first[base + t] = last[base + t] = scope  # created
            start = scope
            for child in op.subgraphs:
                scope += 1  # each child invocation opens a scope of its own
                mark(child)
            for t in op.inputs:
                if t >= 0:
                    last[base + t] = scope  # used
            for t in op.outputs:
                if t >= 0:
                    last[base + t] = scope  # used
            if calls_children:
                op_scopes[(index, i)] = (start, scope)  # an op's scratch lives over this span
        for t in sg.outputs:
            if t >= 0:
                last[base + t] = scope  # used
        visiting.discard(index)

    if calls_children:
        mark(0)
        ends = [_ends_of(first, last, offsets[s], len(sg.tensors)) for s, sg in enumerate(model.subgraphs)]
    else:  # no op runs a subgraph: op i opens scope i + 1, worked out over whole columns
        scope = len(model.subgraphs[0].operators)
        ends = [_chain_ends(model.subgraphs[0])]
        ends += [_ends_of({}, {}, 0, len(sg.tensors)) for sg in model.subgraphs[1:]]
    # TFLite Micro sets up every subgraph (AllocateTensors) and gives a buffer to every tensor that
    # is not constant, not a variable and not empty. One that no op it runs creates or reads
    # (another signature's subgraph, a dangling tensor) keeps lifetime -1 to -1: all of them live
    # at once, beside nothing else, with the scratch buffers of the kernels of the subgraphs no op
    # runs (every subgraph is prepared). A scope after the last stands for that -1 (it overlaps
    # the same buffers); a tensor read but never written (-1 to its last reader) then spans every
    # scope, an upper bound (no model seen has both).
    cats_of = [{t: c for t, c in _classify(model, sg, sem, plan_dynamic).items() if 0 <= t < len(sg.tensors)}
               for sg in model.subgraphs]
    never = []
    for s, sg in enumerate(model.subgraphs):
        starts, stops = ends[s]
        sized = np.array([(b or 0) > 0 for b in tensor_bytes(model, s)], dtype=bool)
        free = np.ones(len(sg.tensors), dtype=bool)
        free[list(cats_of[s])] = False
        never.append(free & sized & (starts < 0) & (stops < 0))
    reached = {s for (s, _) in op_scopes} if calls_children else {0}
    idle_ops = [(s, i) for s, sg in enumerate(model.subgraphs) if s not in reached for i in range(len(sg.operators))]
    before_all = -1
    if idle_ops or any(n.any() for n in never):
        before_all = scope = scope + 1
        if not calls_children:
            op_scopes = dict(OneScopePerOp(len(model.subgraphs[0].operators)).items())
            calls_children = True
        op_scopes.update({key: (before_all, before_all) for key in idle_ops})
    category: list[str] = []  # every tensor's, in global id order
    columns: list[list[np.ndarray]] = [[], [], [], []]  # the records' tensor, first, last, size
    persistent = 0
    rounding = sem.size_rounding
    for s, sg in enumerate(model.subgraphs):
        n = len(sg.tensors)
        # (an op's absent optional output, -1, may be classified too: no tensor of the file)
        cats = cats_of[s]
        starts, stops = ends[s]
        classified = np.zeros(n, dtype=bool)
        classified[list(cats)] = True
        # Read but never written (an Ethos-U op's scratch tensors): TFLite Micro still
        # allocates it, alive from before the first scope (-1) to its last reader.
        starts = np.where(~classified & (starts < 0) & (stops >= 0), 0, starts)
        if before_all >= 0:
            stops = np.where(~classified & (ends[s][0] < 0) & (stops >= 0), before_all, stops)
            starts = np.where(never[s], before_all, starts)
            stops = np.where(never[s], before_all, stops)
        unused = ~classified & (starts < 0)  # empty, and no op creates it
        planned = np.flatnonzero(~classified & (starts >= 0))
        nbytes = tensor_bytes(model, s)
        names = [PLANNED] * n
        for t in np.flatnonzero(unused).tolist():
            names[t] = UNUSED
        for t, c in cats.items():
            names[t] = c
            if c == PERSISTENT:
                persistent += _rounded(nbytes[t] or 0, rounding)
        category += names
        firsts = starts[planned]
        rounded = {v: _rounded(v or 0, rounding) for v in set(nbytes)}  # each distinct size once
        for column, values in zip(columns, (planned + offsets[s], firsts, np.maximum(firsts, stops[planned]),
                                            list(map(rounded.__getitem__, map(nbytes.__getitem__, planned.tolist()))))):
            column.append(np.asarray(values, dtype=np.int64))
    records = Records(*(np.concatenate(c) if c else np.zeros(0, dtype=np.int64) for c in columns))
    return ArenaLifetimes(subgraph=0, semantics=sem.name, num_steps=scope + 1,
                          records=records, whole_run=frozenset(), aliases={},
                          alias_intervals={}, category=EveryTensor(category), persistent_bytes=persistent,
                          calls={}, inline=True, tensor_subgraph=GlobalIds(offsets, total),
                          op_scopes=op_scopes if calls_children else OneScopePerOp(len(model.subgraphs[0].operators)))


def _rounded(nbytes: int, rounding: int) -> int:
    """The bytes a tensor takes in the arena under a semantics: Tensor.nbytes (0 for a variable
    size), rounded up to the semantics' size rounding (align_up)."""
    return -(-nbytes // rounding) * rounding if rounding > 1 else nbytes


def _ends_of(first: Mapping[int, int], last: Mapping[int, int], base: int,
             n: int) -> tuple[np.ndarray, np.ndarray]:
    """The scopes a subgraph's tensors are created and last used at, -1 where never."""
    starts, stops = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    for g, scope in first.items():
        if base <= g < base + n:
            starts[g - base] = scope
    for g, scope in last.items():
        if base <= g < base + n:
            stops[g - base] = scope
    return starts, stops


def _chain_ends(sg: Subgraph) -> tuple[np.ndarray, np.ndarray]:
    """What mark() gives the main subgraph when no op runs a subgraph, over whole columns. Scopes
    only grow, so each end is the largest scope of its events: created (graph inputs and
    outputs at 0, an op's outputs at its scope) for the first, created or used (an op's
    inputs and outputs, the graph's outputs at the last scope) for the last."""
    n, ops = len(sg.tensors), sg.operators
    starts, stops = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    io = np.array([t for t in (*sg.inputs, *sg.outputs) if t >= 0], dtype=np.int64)
    starts[io] = 0
    stops[io] = 0

    def events(lists: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
        ids = np.fromiter(chain.from_iterable(lists), dtype=np.int64)
        scopes = np.repeat(np.arange(1, len(lists) + 1, dtype=np.int64),
                           np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)))
        kept = ids >= 0
        return ids[kept], scopes[kept]

    written, at = events([op.outputs for op in ops])
    np.maximum.at(starts, written, at)
    np.maximum.at(stops, written, at)
    read, at = events([op.inputs for op in ops])
    np.maximum.at(stops, read, at)
    outputs = np.array([t for t in sg.outputs if t >= 0], dtype=np.int64)
    stops[outputs] = len(ops)
    return starts, stops


class GlobalIds(Mapping):
    """An inline arena's tensor_subgraph: global id -> (subgraph, tensor index) for every tensor
    of every subgraph (the subgraphs' tensors concatenated in order), worked out from where each
    subgraph starts instead of held as a dict of a tuple per tensor. Reads, compares and prints
    as that dict."""

    __slots__ = ("_starts", "_total")

    def __init__(self, starts: list[int], total: int) -> None:
        self._starts, self._total = tuple(starts), total

    def __getitem__(self, key: int) -> tuple[int, int]:
        try:
            g = operator.index(key)  # any integer a dict would take (numpy's too)
        except TypeError:
            raise KeyError(key) from None
        if not 0 <= g < self._total:
            raise KeyError(key)
        s = bisect_right(self._starts, g) - 1  # the last subgraph starting at or before g
        return s, g - self._starts[s]

    def get(self, key, default=None):
        """Mapping.get without its exception round trip: asked once per tensor by the writers."""
        if type(key) is int and 0 <= key < self._total:
            starts = self._starts
            if len(starts) == 1:
                return 0, key
            s = bisect_right(starts, key) - 1
            return s, key - starts[s]
        try:
            return self[key]
        except KeyError:
            return default

    def columns(self, ids: list[int]) -> tuple[list[int], list[int]] | None:
        """(subgraph, tensor index) of each id, as two columns worked out over the whole list;
        None when some id is not a global id (the caller asks get() for each)."""
        if not ids:
            return [], []
        if set(map(type, ids)) != {int} or min(ids) < 0 or max(ids) >= self._total:
            return None
        starts = self._starts
        if len(starts) == 1:
            return [0] * len(ids), list(ids)
        g, at = np.array(ids, dtype=np.int64), np.array(starts, dtype=np.int64)
        s = np.searchsorted(at, g, side="right") - 1  # the last subgraph starting at or before g
        return s.tolist(), (g - at[s]).tolist()

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._total))

    def __len__(self) -> int:
        return self._total

    def __repr__(self) -> str:
        return repr(dict(self))


class EveryTensor(Mapping):
    """An inline arena's category: global id -> category of every tensor of every subgraph (ids
    0 .. n - 1, every one present), held as one list of names instead of a dict of an entry per
    tensor (a dict of 100,000 entries is 5 MB, kept while the model is). Reads, compares and
    prints as that dict."""

    __slots__ = ("_names",)

    def __init__(self, names: list[str]) -> None:
        self._names = names

    def __getitem__(self, key: int) -> str:
        try:
            g = operator.index(key)  # any integer a dict would take (numpy's too)
        except TypeError:
            raise KeyError(key) from None
        if not 0 <= g < len(self._names):
            raise KeyError(key)
        return self._names[g]

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self._names)))

    def __len__(self) -> int:
        return len(self._names)

    def items(self) -> ItemsView:
        return _EveryItem(self)

    def values(self) -> ValuesView:
        return _EveryValue(self)

    def __repr__(self) -> str:
        return repr(dict(self))


class _EveryItem(ItemsView):
    """EveryTensor's items, in id order, without a lookup per id."""

    def __iter__(self) -> Iterator[tuple[int, str]]:
        names = self._mapping._names
        return zip(range(len(names)), names)


class _EveryValue(ValuesView):
    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping._names)


class OneScopePerOp(Mapping):
    """An inline arena's op_scopes when no op runs a subgraph: (0, i) -> (i + 1, i + 1), the
    scope op i of the main subgraph opens, without a dict of two tuples per operator. Reads,
    compares and prints as that dict."""

    __slots__ = ("_ops",)

    def __init__(self, ops: int) -> None:
        self._ops = ops

    def __getitem__(self, key: tuple[int, int]) -> tuple[int, int]:
        try:
            s, i = key
            s, i = operator.index(s), operator.index(i)
        except (TypeError, ValueError):
            raise KeyError(key) from None
        if s != 0 or not 0 <= i < self._ops:
            raise KeyError(key)
        return i + 1, i + 1

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return ((0, i) for i in range(self._ops))

    def __len__(self) -> int:
        return self._ops

    def __repr__(self) -> str:
        return repr(dict(self))
