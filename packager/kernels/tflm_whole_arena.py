"""Predict TFLite Micro's whole arena from the model file: the head (the memory plan), the tail
(persistent memory) and the room TFLite Micro needs while it sets the model up.

The tail is simulated allocation by allocation, as TFLite Micro's buffer allocator takes it from
the arena's end downwards (`tail = AlignDown(tail - size, alignment)`), with the end on a 16-byte
boundary (the arena starts on one and its size is a multiple of 16). Set-up room: while planning,
the head holds the scratch-request array, the temporaries hold one AllocationInfo per tensor and
scratch buffer, and the GreedyMemoryPlanner needs 40 bytes per planned buffer from what is left
between them and the tail (which then lacks the graph inputs' and outputs' TfLiteTensors).

The figure is the smallest multiple of 16 bytes with which `MicroInterpreter` sets the model up
and runs it: the larger of head + tail and the set-up need (packager/kernels/tflm_arena.py has
the sizes; docs/tflm-arena.md the measurements).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter

import numpy as np

from packager.kernels.tflm_head import predict_tflm
from packager.kernels import tflm_arena, tflm_cmsis_nn, tflm_scratch
from packager.kernels.tflm_arena import HOST, Target
from packager.model import Model, tensor_bytes
from packager.plan.records import align_up

ARENA_ALIGNMENT = 16  # MicroArenaBufferAlignment: the arena's start and every persistent buffer


@dataclass(frozen=True)
class WholeArena:
    target: str
    arena: int  # the smallest arena: a multiple of 16 that works, 16 less does not
    head: int  # the memory plan's size (TFLite Micro's head after set-up)
    tail: int  # persistent memory after set-up, arena end on a 16-byte boundary
    setup: int  # the arena set-up needs: the larger of the planning step (tail at that moment,
    # temporaries, the planner's 40 B per buffer) and each kernel's Prepare (tail, scratch-request
    # array, the node's tensors as temporaries)
    binding: str  # "head + tail" or "set-up": which of the two sets the arena
    unmodelled: tuple[str, ...]  # kernels whose persistent or scratch memory is not known
    measured_target: bool  # a runtime in CI checks this target's figures
    rule: str

    # Kernels whose Prepare takes persistent buffers while its temporaries are live, counted in
    # full (which temporaries it still reads is not modelled): the figure is then the safe one,
    # and `least` the figure with none of them counted.
    overlapping: tuple[str, ...] = ()
    least: int = 0
    # The most the non-persistent memory holds while the model sets up, the tail apart: the
    # scratch-request array and a node's temporaries in Prepare, the planning step's temporaries
    # and planner room. With two buffers (MicroAllocator::Create(persistent, non_persistent)) the
    # temporaries are checked against the non-persistent buffer's end, not the tail
    # (kernels/tflm_regions.py).
    temporaries: int = 0
    # Where the rules count more than this target's build takes, known but not modelled per target:
    # each a sentence (the figure is then an upper bound).
    over_counted: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        """The figure is the runtime's, byte for byte (as far as the tests have shown)."""
        return not self.unmodelled and not self.overlapping and not self.over_counted

    @property
    def side(self) -> str:
        """Where the rules put the figure: "exact"; "lower" (a kernel's memory is left out, and
        memory left out only adds); "upper" (temporaries counted in full that the runtime may
        reuse); "unknown" (both at once)."""
        if self.unmodelled:
            return "unknown" if self.overlapping or self.over_counted else "lower"
        return "upper" if self.overlapping or self.over_counted else "exact"

    @property
    def why_inexact(self) -> str:
        """Why the figure is not exact, saying which side of the runtime's need it lies on."""
        parts = []
        if self.unmodelled:
            parts.append(f"the memory of TFLite Micro's {', '.join(self.unmodelled)} kernel(s) is not "
                         "modelled (the runtime may need more)")
        if self.overlapping:
            parts.append(f"{', '.join(self.overlapping)}'s Prepare takes persistent buffers while its "
                         "temporaries are live and the figure counts every temporary (the runtime may "
                         f"need up to {self.arena - self.least:,} B less)")
        parts += [f"{why} (the runtime may need less)" for why in self.over_counted]
        return "; ".join(parts)


def _over_counted(model: Model, target: Target) -> tuple[str, ...]:
    """Target.over_counted's sentences for the kernels of the model."""
    if not target.over_counted:
        return ()
    over = {op.name for sg in model.subgraphs for op in sg.operators if op.name in target.over_counted}
    return tuple(target.over_counted[name] for name in sorted(over))


class _Tail:
    """Distance from the arena's (16-aligned) end down to TFLite Micro's tail pointer."""

    def __init__(self) -> None:
        self.bytes = 0

    def take(self, size: int, alignment: int) -> None:
        self.bytes = align_up(self.bytes + size, alignment)


def predict_whole_arena(model: Model, target: Target = HOST, head: int | None = None,
                        after: int | None = None) -> WholeArena:
    """`head`: the plan's size when the model carries its own offline plan (else TFLite Micro's
    own planner, predicted). `after`: the tail earlier models set up on the same allocator left
    (kernels/tflm_shared_arena.py); None, a fresh allocator of the model's own."""
    if head is None:
        head = predict_tflm(model, target.cmsis_nn, pointer=target.pointer).head
    unmodelled: set[str] = set()
    tail = _Tail()
    a = target.struct_align
    if after is None:
        for size in target.allocator_objects:
            tail.take(size, a)
    else:
        tail.bytes = after
    variables = tflm_arena.resource_variable_count(model)
    if variables:
        tail.take(target.resource_variables, ARENA_ALIGNMENT)
        tail.take(target.resource_variable * variables, ARENA_ALIGNMENT)
    tail.take(target.builtin_allocator, a)
    tail.take(target.subgraph_allocations * len(model.subgraphs), a)
    for sg in model.subgraphs:
        if sg.tensors:
            tail.take(target.eval_tensor * len(sg.tensors), a)
    for sg in model.subgraphs:
        if sg.operators:
            tail.take(target.node_and_registration * len(sg.operators), a)
    figures = _OpFigures(model, target)
    distinct, which = figures.of_all(model)  # each node's figures, subgraphs in order, nodes in order
    # The tail pointer's steps, inlined (_Tail.take): one per node with builtin data.
    taken = tail.bytes
    data = [f.data for f in distinct]
    if any(d is not None for d in data):
        for d in map(data.__getitem__, which.tolist()):
            if d is not None:
                size, alignment = d
                taken = -(-(taken + size) // alignment) * alignment
    unmodelled.update(f.unmodelled for f in distinct if f.unmodelled is not None)
    if target.unsettled:
        unmodelled.update(target.unsettled & {op.name for sg in model.subgraphs for op in sg.operators})
    # Init runs for every node before any Prepare, each buffer on a 16-byte boundary: once the
    # first is taken the tail is on one, and each buffer after it adds its size rounded up.
    init = np.array([f.first > 0 for f in distinct], dtype=bool)
    if init.any():
        rounded = np.array([sum(align_up(size, ARENA_ALIGNMENT) for size in f.buffers[:f.first])
                            for f in distinct], dtype=np.int64)
        size = distinct[int(which[np.flatnonzero(init[which])[0]])].buffers[0]
        taken = (align_up(taken + size, ARENA_ALIGNMENT) - align_up(size, ARENA_ALIGNMENT)
                 + int(rounded[which].sum()))
    tail.bytes = taken
    requests = 0
    # Prepare, node by node: the head holds the scratch-request array, temp the node's tensors
    # (a TfLiteTensor each, with its quantization), and temp may not reach the tail.
    prepare_peak = temp_peak = 0
    overlap_peak: tuple[int, str] = (0, "")
    firsts = np.cumsum([0] + [len(sg.operators) for sg in model.subgraphs]).tolist()
    visited = _visited(distinct, which)
    for p, number in zip(visited.tolist(), which[visited].tolist()):
        s = bisect_right(firsts, p) - 1
        sg, f = model.subgraphs[s], distinct[number]
        op = sg.operators[p - firsts[s]]
        buffers = f.buffers[f.first:]
        start = target.scratch_request * (requests + target.max_scratch_per_op)
        temp, live, before = figures.temps(f, number, start)
        temp_peak = max(temp_peak, temp)
        # Temporaries taken after Prepare's buffers count once those buffers are taken (below);
        # with no buffer between them, every temporary is live at once.
        prepare_peak = max(prepare_peak, tail.bytes + (temp if before is None or not buffers else before))
        for size in buffers:
            tail.take(size, ARENA_ALIGNMENT)
        if buffers and before is not None:
            # The kernel takes more temporaries after its buffers: all of them must fit below
            # the tail those buffers leave (TFLite Micro checks a temporary against the tail),
            # so no buffer overwrites one.
            prepare_peak = max(prepare_peak, tail.bytes + temp)
        elif buffers:
            # TFLite Micro checks a persistent buffer against the head only, so one taken while
            # the node's tensors sit in temp memory may overwrite them: the part the kernel
            # still reads must not be (kernels/tflm_arena.py, prepare_temps).
            if f.overlap_by_rule:  # a known rule: the figure is exact
                prepare_peak = max(prepare_peak, tail.bytes + live)
            elif tail.bytes + temp > overlap_peak[0]:
                overlap_peak = (tail.bytes + temp, op.name)
        if not f.requests_known:
            unmodelled.add(tflm_arena.unmodelled_name(model, s, op))
        requests += f.requests
    for size in tflm_arena.resource_buffers(model):
        tail.take(size, ARENA_ALIGNMENT)
    if requests:
        tail.take(target.scratch_handle * requests, a)
    planned = requests  # TFLite Micro plans the scratch buffers, and every tensor below
    for s, sg in enumerate(model.subgraphs):
        for t, n in zip(sg.tensors, tensor_bytes(model, s)):
            if n and t.is_variable:
                tail.take(n, ARENA_ALIGNMENT)
            elif n and not t.has_data:
                planned += 1
    at_planning = tail.bytes
    main = model.subgraphs[0]
    for ids in (main.inputs, main.outputs):
        tail.take(target.pointer * len(ids), ARENA_ALIGNMENT)
        for t in ids:
            for size, alignment in tflm_arena.quantized_io_bytes(main.tensors[t], target):
                tail.take(size, alignment)
    tensors = sum(len(sg.tensors) for sg in model.subgraphs)
    temporaries = (target.scratch_request * (requests + target.max_scratch_per_op)
                   + align_up(target.pointer * len(model.subgraphs), a)
                   + target.allocation_info * (tensors + requests))
    planning = align_up(temporaries, ARENA_ALIGNMENT) + target.planner_per_buffer * planned
    temp_peak = max(temp_peak, planning)
    setup = align_up(at_planning, ARENA_ALIGNMENT) + planning
    setup = max(setup, prepare_peak)
    whole = align_up(head + tail.bytes, ARENA_ALIGNMENT)
    arena = least = max(whole, align_up(setup, ARENA_ALIGNMENT))
    overlapping: tuple[str, ...] = ()
    if align_up(overlap_peak[0], ARENA_ALIGNMENT) > arena:
        # Below it the kernel may still work (it depends on which temporaries it reads after
        # taking the buffer) or crash: the figure is the safe one, not proven the smallest;
        # `least` counts none of the overlapping temporaries, so the need lies between the two.
        setup = overlap_peak[0]
        arena = align_up(setup, ARENA_ALIGNMENT)
        overlapping = (overlap_peak[1],)
    over = _over_counted(model, target)
    return WholeArena(target.name, arena, head, tail.bytes, setup,
                      "head + tail" if whole >= setup else "set-up", tuple(sorted(unmodelled)),
                      target.measured, target.rule, overlapping, least, temp_peak, over)


# Kernels whose figures (builtin data, persistent buffers, temporaries, scratch requests) read the
# op's builtin options: the memo below keys them by their options too. Every other builtin
# kernel's figures read only the op code and its tensors' types, shapes and quantization.
_READS_OPTIONS = frozenset({"BATCH_MATMUL", "SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM", "VAR_HANDLE"})


@dataclass(frozen=True)
class _Figures:
    """What one node asks of the arena, apart from where its temporaries start."""

    data: tuple[int, int] | None  # builtin data (size, alignment)
    buffers: list[int]  # persistent buffers, Init's first
    first: int  # how many of them Init takes
    unmodelled: str | None  # the kernel's name when its persistent memory is not modelled
    taken: list[int]  # temporaries (tensor ids) of the node it was computed for
    overlap_by_rule: bool  # tflm_arena.prepare_buffers_overlap_by_rule
    requests: int  # scratch requests
    requests_known: bool
    key: tuple | None  # the signature it is shared under (None: computed for this node only)
    quiet: bool = False  # Prepare takes no buffer and requests nothing: the tail stays as it was
    # The (subgraph, operator) it was computed for: its temporaries are those of every node of
    # its signature (tensors of equal fields at every position).
    node: tuple = field(default=(), compare=False, repr=False)


class _OpFigures:
    """Each node's figures, computed once per signature: the op code (with its options where a
    kernel reads them) and, for each input and output, every field of the tensor but its index,
    name and buffer. The kernel rules (kernels/tflm_arena.py, tflm_prepare_temps.py,
    tflm_scratch.py) read nothing else of a builtin node, so nodes with one signature have the
    same figures; custom ops are computed one by one.
    Temporaries' offsets are kept relative to their start, per start modulo the alignments'
    common multiple (align_up(start + k*A, a) = align_up(start, a) + k*A when a divides A)."""

    def __init__(self, model: Model, target: Target) -> None:
        self.model, self.target = model, target
        self.memo: dict[tuple, _Figures] = {}
        self.temps_memo: dict[tuple, tuple[int, int, int | None]] = {}
        self.period = math.lcm(*tflm_arena.temp_alignments(target))
        self.tensor_keys: dict[int, list[int]] = {}
        self.field_numbers: dict[tuple, int] = {}
        # CMSIS-NN's scratch sizes read the convolutions' strides, padding and dilation too.
        self.reads_options = _READS_OPTIONS | (tflm_cmsis_nn.READS_OPTIONS if target.cmsis_nn else frozenset())

    shared = True  # False: every node's figures computed alone (the tests compare the two)

    def _tensor_keys(self, s: int, sg) -> list:
        """Each tensor's fields but its index, name and buffer; the last entry stands for an
        absent optional tensor (-1), with the fields of the tensor -1 would index."""
        keys = self.tensor_keys.get(s)
        if keys is None:
            fields = [(x.type, x.shape, x.shape_signature, x.has_data, x.quantized,
                       x.is_variable, x.sparse, x.quant_channels, x.unknown_axes)
                      for x in sg.tensors]
            fields.append(("absent", fields[-1] if fields else None))
            numbers = self.field_numbers  # small numbers: cheap to hash in every node's key
            keys = [numbers.setdefault(f, len(numbers)) for f in fields]
            self.tensor_keys[s] = keys
        return keys

    def _key(self, s: int, sg, op) -> tuple | None:
        if op.opcode.is_custom:
            return None
        options = ()
        if op.name in self.reads_options:
            options = tuple(sorted(op.options.items()))
            try:
                hash(options)
            except TypeError:
                return None
        keys = self._tensor_keys(s, sg)
        absent = len(keys) - 1
        code = op.opcode
        return (code.builtin_code, code.name, code.custom_code, code.version, options, tuple([keys[t if t >= 0 else absent] for t in op.inputs]),
                tuple([keys[t if t >= 0 else absent] for t in op.outputs]))

    def of(self, s: int, sg, op) -> _Figures:
        key = self._key(s, sg, op)
        if key is not None:
            known = self.memo.get(key)
            if known is not None:
                return known
        return self._computed(s, sg, op, key)

    def of_all(self, model: Model) -> tuple[list[_Figures], np.ndarray]:
        """of() for every node, subgraphs in order, as (the distinct figures, each node's index
        into them): the nodes of one signature found over whole columns (the op code and each
        operand's tensor key, rows of one arity compared as packed numbers), the key of each
        signature built once from one of its nodes (a model of 100,000 nodes has a few
        thousand signatures at most)."""
        distinct: list[_Figures] = []
        number: dict[int, int] = {}  # id(figures) -> index in distinct

        def index_of(f: _Figures) -> int:
            k = number.get(id(f))
            if k is None:
                k = number[id(f)] = len(distinct)
                distinct.append(f)
            return k

        which = []
        for s, sg in enumerate(model.subgraphs):
            ops = sg.operators
            node = np.full(len(ops), -1, dtype=np.int64)
            which.append(node)
            if not ops:
                continue
            keys = self._tensor_keys(s, sg)  # [-1]: the absent tensor, as _key gives -1
            lookup, key_column = keys.__getitem__, np.asarray(keys, dtype=np.int64)
            codes = list(map(attrgetter("opcode"), ops))  # a few objects, each node's by reference
            some_node = dict(zip(map(id, codes), range(len(ops))))  # op code -> a node running it
            code_number = dict(zip(some_node, range(len(some_node))))
            code_of = np.fromiter(map(code_number.__getitem__, map(id, codes)), dtype=np.int64, count=len(ops))
            del codes
            by_node = np.array([code.is_custom or code.name in self.reads_options
                                for code in (ops[k].opcode for k in some_node.values())], dtype=bool)
            alone = by_node[code_of] | (not self.shared)
            in_counts, in_flat = _operands(ops, "inputs")
            out_counts, out_flat = _operands(ops, "outputs")
            for counts, flat in ((in_counts, in_flat), (out_counts, out_flat)):
                if len(flat) and int(flat.min()) < -1:  # ids only _key reads (as the absent tensor)
                    alone[np.repeat(np.arange(len(ops)), counts)[flat < -1]] = True
            for k in np.flatnonzero(alone).tolist():
                node[k] = index_of(self.of(s, sg, ops[k]))
            shared = ~alone
            arity = in_counts * (int(out_counts.max()) + 1) + out_counts
            in_starts, out_starts = np.cumsum(in_counts) - in_counts, np.cumsum(out_counts) - out_counts
            for a in np.unique(arity[shared]).tolist():
                members = np.flatnonzero(shared & (arity == a))
                columns = [code_of[members]]
                for starts, flat, width in ((in_starts, in_flat, int(in_counts[members[0]])),
                                            (out_starts, out_flat, int(out_counts[members[0]]))):
                    at = starts[members]
                    columns += [key_column[flat[at + j]] for j in range(width)]
                first, group = _distinct_rows(columns)
                numbers = []
                for k in members[first].tolist():
                    op = ops[k]
                    code = op.opcode
                    key = (code.builtin_code, code.name, code.custom_code, code.version, (),
                           tuple(map(lookup, op.inputs)), tuple(map(lookup, op.outputs)))
                    known = self.memo.get(key)
                    numbers.append(index_of(known if known is not None else self._computed(s, sg, op, key)))
                node[members] = np.asarray(numbers, dtype=np.int64)[group]
        return distinct, (np.concatenate(which) if which else np.zeros(0, dtype=np.int64))

    def _computed(self, s: int, sg, op, key: tuple | None) -> _Figures:
        model, target = self.model, self.target
        buffers = tflm_arena.persistent_buffers(model, s, op, target)
        unmodelled = None
        if buffers is None:
            unmodelled = tflm_arena.unmodelled_name(model, s, op)
            buffers = []
        wanted, known_requests = tflm_scratch.requests(sg, op, model, s, target.cmsis_nn, target.pointer)
        first = tflm_arena.init_buffers(op, buffers)
        overlap = tflm_arena.buffers_may_overlap_temps(sg, op, target)
        figures = _Figures(tflm_arena.builtin_data(op, target), buffers, first, unmodelled,
                           tflm_arena.prepare_temp_tensors(op, sg, target),
                           overlap, len(wanted), known_requests,
                           key, quiet=known_requests and not wanted and not buffers[first:], node=(sg, op))
        if key is not None:
            self.memo[key] = figures
        return figures

    def temps(self, f: _Figures, number: int, start: int) -> tuple[int, int, int | None]:
        """(temp, live, before) of tflm_arena.prepare_temps and prepare_temps_before_buffers
        for temporaries laid from `start`; `before` None where every temporary counts. `number`:
        f's index among of_all's distinct figures (a small key, cheaper to hash than f.key)."""
        memo_key = None if f.key is None else (number, start % self.period)
        if memo_key is not None and memo_key in self.temps_memo:
            temp, live, before = self.temps_memo[memo_key]
            return temp + start, live + start, None if before is None else before + start
        target = self.target
        sg, op = f.node
        temp, live = tflm_arena.prepare_temps(sg, op, target, start, f.taken)
        before = tflm_arena.prepare_temps_before_buffers(sg, op, target, start, f.taken)
        if not f.buffers[f.first:] and op.name == "TFLM_DECODE":
            before = None  # a decode type not modelled: every temporary counts, as by default
        if memo_key is not None:
            self.temps_memo[memo_key] = (temp - start, live - start,
                                         None if before is None else before - start)
        return temp, live, before


def _operands(ops, field: str) -> tuple[np.ndarray, np.ndarray]:
    """(each node's number of `field` operands, all of them in order) as columns."""
    lists = list(map(attrgetter(field), ops))
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    return counts, np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(counts.sum()))


def _distinct_rows(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(a row of each distinct value, each row's distinct value) of rows of small non-negative
    numbers given column by column: the columns packed into one number per row (renumbered
    when 62 bits would not hold the next), then one sort."""
    packed, used = np.zeros(len(columns[0]), dtype=np.int64), 0
    for column in columns:
        bits = max(int(column.max(initial=0)).bit_length(), 1)
        if used + bits > 62:
            packed = np.unique(packed, return_inverse=True)[1].reshape(-1).astype(np.int64)
            used = max(int(packed.max(initial=0)).bit_length(), 1)
        packed = (packed << bits) | column
        used += bits
    _, first, group = np.unique(packed, return_index=True, return_inverse=True)
    return first, group.reshape(-1)


def _visited(distinct: list[_Figures], which: np.ndarray) -> np.ndarray:
    """The nodes whose Prepare can change the figures, in order: every node but a quiet one (no
    buffer, no request) whose figures a quiet node has had since the last node that was not:
    that node starts its temporaries at the same place below the same tail, so it reaches the
    same peak."""
    quiet = np.array([f.quiet for f in distinct], dtype=bool)[which]
    since = np.cumsum(~quiet)  # how many loud nodes up to each node: quiet runs share a number
    runs = since[quiet] * len(distinct) + which[quiet]
    firsts = np.flatnonzero(quiet)[np.unique(runs, return_index=True)[1]]
    return np.sort(np.concatenate([np.flatnonzero(~quiet), firsts]))
