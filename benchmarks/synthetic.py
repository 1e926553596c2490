"""Synthetic graphs of any size for the scale benchmark, in four shapes, written two ways: as usage
records (for timing the strategies alone) and as a real .tflite file (for timing the whole
pipeline: read, lifetimes, portfolio, validation).

Every tensor is a float32 matrix [rows, cols]; ops keep shapes consistent (FULLY_CONNECTED,
ADD, CONCATENATION on axis 1, SOFTMAX, BATCH_MATMUL) so the file is a well-formed model. Weights
share one placeholder buffer: the files are for planning, not for running.

Shapes:
- chain: each op reads the previous tensor only (widths vary).
- residual: blocks of FC -> FC -> ADD(skip), the skip alive across the block.
- branching: blocks of 8 parallel two-op branches concatenated, then an FC back to the trunk.
- transformer: blocks of Q/K/V projections, scores = Q K^T, softmax, context, output projection,
  residual ADD, FFN (4x) and a second residual ADD.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from fixtures.builder import ModelBuilder
from packager.plan.records import UsageRecord

SYNTHETIC_VERSION = 1  # bump when a generator changes: cached .tflite files are named after it
ELEMENT_BYTES = 4
WIDTHS = (32, 48, 64, 96, 128, 192, 256)  # columns a tensor may have in chain/residual/branching
ROWS = 64
BRANCHES = 8
SEQUENCE, MODEL_WIDTH = 128, 256


@dataclass(frozen=True)
class SynthOp:
    kind: str
    inputs: tuple[int, ...]
    output: int


@dataclass
class SynthGraph:
    name: str
    shapes: list[tuple[int, int]] = field(default_factory=list)
    ops: list[SynthOp] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)

    @property
    def tensor_count(self) -> int:
        return len(self.shapes)

    def input(self, rows: int, cols: int) -> int:
        t = self._tensor(rows, cols)
        self.inputs.append(t)
        return t

    def _tensor(self, rows: int, cols: int) -> int:
        self.shapes.append((rows, cols))
        return len(self.shapes) - 1

    def _op(self, kind: str, inputs: tuple[int, ...], shape: tuple[int, int]) -> int:
        out = self._tensor(*shape)
        self.ops.append(SynthOp(kind, inputs, out))
        return out

    # The ops, with the output shape each one implies.
    def fc(self, x: int, cols: int) -> int:
        return self._op("FULLY_CONNECTED", (x,), (self.shapes[x][0], cols))

    def add(self, a: int, b: int) -> int:
        return self._op("ADD", (a, b), self.shapes[a])

    def concat(self, xs: list[int]) -> int:
        return self._op("CONCATENATION", tuple(xs),
                        (self.shapes[xs[0]][0], sum(self.shapes[x][1] for x in xs)))

    def softmax(self, x: int) -> int:
        return self._op("SOFTMAX", (x,), self.shapes[x])

    def matmul(self, a: int, b: int, transpose_b: bool) -> int:
        cols = self.shapes[b][0] if transpose_b else self.shapes[b][1]
        return self._op("BATCH_MATMUL_T" if transpose_b else "BATCH_MATMUL", (a, b),
                        (self.shapes[a][0], cols))


# -- the four shapes ------------------------------------------------------------------------------

def chain(n: int, seed: int = 0) -> SynthGraph:
    rng, g = random.Random(seed), SynthGraph(f"chain_{n}")
    x = g.input(ROWS, rng.choice(WIDTHS))
    while g.tensor_count < n:
        x = g.fc(x, rng.choice(WIDTHS))
    g.outputs.append(x)
    return g


def residual(n: int, seed: int = 0) -> SynthGraph:
    rng, g = random.Random(seed), SynthGraph(f"residual_{n}")
    x = g.input(ROWS, rng.choice(WIDTHS))
    while g.tensor_count < n:
        inner = g.fc(x, rng.choice(WIDTHS))
        x = g.add(g.fc(inner, g.shapes[x][1]), x)
    g.outputs.append(x)
    return g


def branching(n: int, seed: int = 0) -> SynthGraph:
    rng, g = random.Random(seed), SynthGraph(f"branching_{n}")
    x = g.input(ROWS, rng.choice(WIDTHS))
    while g.tensor_count < n:
        ends = [g.fc(g.fc(x, rng.choice(WIDTHS)), rng.choice(WIDTHS)) for _ in range(BRANCHES)]
        x = g.fc(g.concat(ends), rng.choice(WIDTHS))
    g.outputs.append(x)
    return g


def transformer(n: int, seed: int = 0) -> SynthGraph:
    g = SynthGraph(f"transformer_{n}")
    x = g.input(SEQUENCE, MODEL_WIDTH)
    while g.tensor_count < n:
        q, k, v = (g.fc(x, MODEL_WIDTH) for _ in range(3))
        probs = g.softmax(g.matmul(q, k, transpose_b=True))
        attended = g.add(g.fc(g.matmul(probs, v, transpose_b=False), MODEL_WIDTH), x)
        x = g.add(g.fc(g.fc(attended, 4 * MODEL_WIDTH), MODEL_WIDTH), attended)
    g.outputs.append(x)
    return g


SHAPES: dict[str, Callable[[int], SynthGraph]] = {
    "chain": chain, "residual": residual, "branching": branching, "transformer": transformer,
}


# -- emitters -------------------------------------------------------------------------------------

def usage_records(g: SynthGraph) -> list[UsageRecord]:
    """Minimal lifetimes (the 'paper' semantics): from the writing op to the last reader; graph
    inputs from op 0, graph outputs to the last op."""
    first = {t: 0 for t in g.inputs}
    last: dict[int, int] = {}
    for i, op in enumerate(g.ops):
        first[op.output] = i
        for t in op.inputs:
            last[t] = i
    end = max(len(g.ops) - 1, 0)
    for t in g.outputs:
        last[t] = end
    return [UsageRecord(t, first[t], max(first[t], last.get(t, first[t])), r * c * ELEMENT_BYTES)
            for t, (r, c) in enumerate(g.shapes)]


def tflite_bytes(g: SynthGraph) -> bytes:
    m = ModelBuilder(description=f"synthetic {g.name}")
    sg = m.subgraph("main")
    placeholder = m.buffer(bytes(16))
    ids = [sg.tensor(f"t{t}", list(shape)) for t, shape in enumerate(g.shapes)]
    weights: dict[tuple[int, int], int] = {}  # one constant per weight shape keeps files small

    def weight(out_cols: int, in_cols: int) -> int:
        key = (out_cols, in_cols)
        if key not in weights:
            weights[key] = sg.tensor(f"w{out_cols}x{in_cols}", [out_cols, in_cols],
                                     buffer=placeholder)
        return weights[key]

    for op in g.ops:
        ins = [ids[t] for t in op.inputs]
        out = [ids[op.output]]
        if op.kind == "FULLY_CONNECTED":
            w = weight(g.shapes[op.output][1], g.shapes[op.inputs[0]][1])
            sg.op("FULLY_CONNECTED", [ins[0], w, -1], out, options=dict(keep_num_dims=False))
        elif op.kind == "CONCATENATION":
            sg.op("CONCATENATION", ins, out, options=dict(axis=1))
        elif op.kind.startswith("BATCH_MATMUL"):
            sg.op("BATCH_MATMUL", ins, out, options=dict(adj_y=op.kind.endswith("_T")))
        else:
            sg.op(op.kind, ins, out)
    sg.inputs([ids[t] for t in g.inputs])
    sg.outputs([ids[t] for t in g.outputs])
    return m.build()
