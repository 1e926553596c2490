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
the sizes; the README's section "TFLite Micro's whole arena" the measurements).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from packager.compare.predict_tflm import predict_tflm
from packager.kernels import tflm_arena, tflm_scratch
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

    @property
    def exact(self) -> bool:
        """The figure is the runtime's, byte for byte (as far as the tests have shown)."""
        return not self.unmodelled

    @property
    def why_inexact(self) -> str:
        if self.unmodelled:
            return f"the memory of TFLite Micro's {', '.join(self.unmodelled)} kernel(s) is not modelled"
        return ""


class _Tail:
    """Distance from the arena's (16-aligned) end down to TFLite Micro's tail pointer."""

    def __init__(self) -> None:
        self.bytes = 0

    def take(self, size: int, alignment: int) -> None:
        self.bytes = align_up(self.bytes + size, alignment)


def predict_whole_arena(model: Model, target: Target = HOST, head: int | None = None) -> WholeArena:
    """`head`: the plan's size when the model carries its own offline plan (else TFLite Micro's
    own planner, predicted)."""
    if head is None:
        head = predict_tflm(model).head
    unmodelled: set[str] = set()
    tail = _Tail()
    a = target.struct_align
    for size in target.allocator_objects:
        tail.take(size, a)
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
    each = figures.of_all(model)  # each node's figures, subgraphs in order, nodes in order
    distinct = {id(f): f for f in each}.values()
    # The tail pointer's steps, inlined (_Tail.take): one or two per node on large models.
    taken = tail.bytes
    if any(f.data is not None for f in distinct):
        for f in each:
            if f.data is not None:
                size, alignment = f.data
                taken = -(-(taken + size) // alignment) * alignment
    if any(f.unmodelled is not None or f.first for f in distinct):
        for f in each:
            if f.unmodelled is not None:
                unmodelled.add(f.unmodelled)
            if f.first:
                for size in f.buffers[:f.first]:  # Init runs for every node before any Prepare
                    taken = -(-(taken + size) // ARENA_ALIGNMENT) * ARENA_ALIGNMENT
    tail.bytes = taken
    requests = 0
    # Prepare, node by node: the head holds the scratch-request array, temp the node's tensors
    # (a TfLiteTensor each, with its quantization), and temp may not reach the tail.
    prepare_peak = 0
    overlap_peak: tuple[int, str] = (0, "")
    # A node that takes no buffer and requests nothing leaves the tail and the request count as
    # they were: the next node of its figures then reaches the same peak, so it is skipped.
    seen_since_change: set[int] = set()
    ops = ((s, sg, op) for s, sg in enumerate(model.subgraphs) for op in sg.operators)
    for (s, sg, op), f in zip(ops, each):
        quiet = f.quiet
        if quiet:
            if id(f) in seen_since_change:
                continue
            seen_since_change.add(id(f))
        else:
            seen_since_change.clear()
        buffers = f.buffers[f.first:]
        start = target.scratch_request * (requests + target.max_scratch_per_op)
        temp, live, before = figures.temps(f, sg, op, start)
        prepare_peak = max(prepare_peak, tail.bytes + (temp if before is None else before))
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
            if f.softmax_overlap:  # a known rule: the figure is exact
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
    sizes = [tensor_bytes(model, s) for s in range(len(model.subgraphs))]
    for sg, nbytes in zip(model.subgraphs, sizes):
        for t, n in zip(sg.tensors, nbytes):
            if t.is_variable and n:
                tail.take(n, ARENA_ALIGNMENT)
    at_planning = tail.bytes
    main = model.subgraphs[0]
    for ids in (main.inputs, main.outputs):
        tail.take(target.pointer * len(ids), ARENA_ALIGNMENT)
        for t in ids:
            for size, alignment in tflm_arena.quantized_io_bytes(main.tensors[t], target):
                tail.take(size, alignment)
    tensors = sum(len(sg.tensors) for sg in model.subgraphs)
    planned = sum(1 for sg, nbytes in zip(model.subgraphs, sizes) for t, n in zip(sg.tensors, nbytes)
                  if n and not t.has_data and not t.is_variable) + requests  # TFLite Micro plans them
    temporaries = (target.scratch_request * (requests + target.max_scratch_per_op)
                   + align_up(target.pointer * len(model.subgraphs), a)
                   + target.allocation_info * (tensors + requests))
    setup = (align_up(at_planning, ARENA_ALIGNMENT) + align_up(temporaries, ARENA_ALIGNMENT)
             + target.planner_per_buffer * planned)
    if requests:
        setup += target.setup_margin_with_scratch
    setup = max(setup, prepare_peak)
    whole = align_up(head + tail.bytes, ARENA_ALIGNMENT)
    arena = max(whole, align_up(setup, ARENA_ALIGNMENT))
    if align_up(overlap_peak[0], ARENA_ALIGNMENT) > arena:
        # Below it the kernel may still work (it depends on which temporaries it reads after
        # taking the buffer) or crash: the figure is the safe one, not proven the smallest.
        setup = overlap_peak[0]
        arena = align_up(setup, ARENA_ALIGNMENT)
        unmodelled.add(f"{overlap_peak[1]} (Prepare overlaps its buffers with its temporaries)")
    return WholeArena(target.name, arena, head, tail.bytes, setup,
                      "head + tail" if whole >= setup else "set-up", tuple(sorted(unmodelled)),
                      target.measured, target.rule)


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
    taken: list[int] | None  # temporaries (tensor ids) of the node it was computed for
    softmax_overlap: bool
    requests: int  # scratch requests
    requests_known: bool
    key: tuple | None  # the signature it is shared under (None: computed for this node only)
    quiet: bool = False  # Prepare takes no buffer and requests nothing: the tail stays as it was


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
        if op.name in _READS_OPTIONS:
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

    def of_all(self, model: Model) -> list[_Figures]:
        """of() for every node, subgraphs in order: the same keys, built with the op code's part
        worked out once per op code (a model of 100,000 nodes has a few dozen)."""
        out = []
        memo = self.memo
        for s, sg in enumerate(model.subgraphs):
            keys = self._tensor_keys(s, sg)
            # keys[-1] is the absent tensor's: what _key gives -1 (the one negative id a read
            # model holds; anything else goes through _key).
            lookup = keys.__getitem__
            codes: dict[int, tuple] = {}
            for op in sg.operators:
                code = op.opcode
                known_code = codes.get(id(code))
                if known_code is None:
                    known_code = codes[id(code)] = (
                        (code.builtin_code, code.name, code.custom_code, code.version),
                        code.is_custom or code.name in _READS_OPTIONS)
                fields, by_node = known_code
                ins, outs = op.inputs, op.outputs
                if by_node or (ins and min(ins) < -1) or (outs and min(outs) < -1):
                    out.append(self.of(s, sg, op))
                    continue
                key = (*fields, (), tuple(map(lookup, ins)), tuple(map(lookup, outs)))
                known = memo.get(key)
                out.append(known if known is not None else self._computed(s, sg, op, key))
        return out

    def _computed(self, s: int, sg, op, key: tuple | None) -> _Figures:
        model, target = self.model, self.target
        buffers = tflm_arena.persistent_buffers(model, s, op, target)
        unmodelled = None
        if buffers is None:
            unmodelled = tflm_arena.unmodelled_name(model, s, op)
            buffers = []
        wanted, known_requests = tflm_scratch.requests(sg, op, model, s)
        first = tflm_arena.init_buffers(op, buffers)
        figures = _Figures(tflm_arena.builtin_data(op, target), buffers, first, unmodelled,
                           tflm_arena.prepare_temp_tensors(op, sg),
                           tflm_arena.softmax_tables_overlap(sg, op), len(wanted), known_requests,
                           key, quiet=known_requests and not wanted and not buffers[first:])
        if key is not None:
            self.memo[key] = figures
        return figures

    def temps(self, f: _Figures, sg, op, start: int) -> tuple[int, int, int | None]:
        """(temp, live, before) of tflm_arena.prepare_temps and prepare_temps_before_buffers
        for temporaries laid from `start`; `before` None where every temporary counts."""
        memo_key = None if f.key is None else (f.key, start % self.period)
        if memo_key is not None and memo_key in self.temps_memo:
            temp, live, before = self.temps_memo[memo_key]
            return temp + start, live + start, None if before is None else before + start
        target = self.target
        taken = f.taken if f.key is None else tflm_arena.prepare_temp_tensors(op, sg)
        temp, live = tflm_arena.prepare_temps(sg, op, target, start, taken)
        before = tflm_arena.prepare_temps_before_buffers(sg, op, target, start, taken)
        if not f.buffers[f.first:] and op.name == "TFLM_DECODE":
            before = None  # a decode type not modelled: every temporary counts, as by default
        if memo_key is not None:
            self.temps_memo[memo_key] = (temp - start, live - start,
                                         None if before is None else before - start)
        return temp, live, before
