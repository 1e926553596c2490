"""Audit of the set-up room's rule (packager/kernels/tflm_prepare_temps.py) on the pinned
tflite-micro wheel: each `.tflite` given is set up under gdb, which logs, node by node, every
temporary TfLiteTensor TFLite Micro's Prepare takes (MicroAllocator::AllocateTempTfLiteTensor),
every temp allocation and every persistent buffer between them. The table compares the room
each node needs (the temporaries, below the tail its Prepare buffers leave) with the predicted
one: UNDER is an under-estimate (the rule must list the kernel), over a safe over-estimate.

    python -m benchmarks.tflm_prepare_temps_audit MODEL.tflite [MODEL.tflite ...]

Needs tflite-micro (pip install '.[runtimes]') and gdb; the wheel's library carries its symbols.
One-op models of each kernel (float32, int8, int16) make the audit complete: a model of several
ops works too, its nodes are told apart by FinishPrepareNodeAllocations.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.text_table import render
from packager.kernels import tflm_arena
from packager.kernels.tflm_arena import HOST, align_up
from packager.reader import read_model

_NS = "tflite::micro::"
# (function, event, registers holding its arguments: x86-64 System V)
_BREAKS = (
    ("MicroAllocator::AllocateTempTfLiteTensor", "tensor", ("ecx", "r8d")),
    ("SingleArenaBufferAllocator::AllocateTemp", "temp", ("rsi", "rdx")),
    ("SingleArenaBufferAllocator::AllocatePersistentBuffer", "persist", ("rsi", "rdx")),
    ("MicroAllocator::FinishPrepareNodeAllocations", "node_done", ("esi",)),
    ("MicroInterpreterGraph::PrepareSubgraphs", "prepare_begin", ()),
    ("MicroAllocator::FinishModelAllocation", "plan_begin", ()),
)

_GDB_SCRIPT = """
import gdb, json, os
gdb.execute("set breakpoint pending on")
gdb.execute("set pagination off")
events = []
class Log(gdb.Breakpoint):
    def __init__(self, spec, kind, regs):
        super().__init__(spec, internal=True)
        self.kind, self.regs = kind, regs
    def stop(self):
        events.append([self.kind] + [int(gdb.parse_and_eval("$" + r)) & 0xFFFFFFFFFFFFFFFF
                                     for r in self.regs])
        return False
for spec, kind, regs in json.loads(os.environ["AUDIT_BREAKS"]):
    Log(spec, kind, regs)
gdb.execute("run")
json.dump(events, open(os.environ["AUDIT_OUT"], "w"))
gdb.execute("quit")
"""

_SET_UP = """
import sys
from tflite_micro.python.tflite_micro import runtime
try:
    runtime.Interpreter.from_bytes(open(sys.argv[1], "rb").read(), arena_size=1 << 24)
except Exception as error:
    print("set-up failed:", str(error).splitlines()[0])
"""


def trace(path: Path, folder: Path) -> list[list]:
    script, runner, out = folder / "audit_gdb.py", folder / "set_up.py", folder / "events.json"
    script.write_text(_GDB_SCRIPT)
    runner.write_text(_SET_UP)
    env = dict(os.environ, AUDIT_OUT=str(out),
               AUDIT_BREAKS=json.dumps([[_NS + f, k, list(r)] for f, k, r in _BREAKS]))
    subprocess.run(["gdb", "-q", "-batch", "-x", str(script), "--args", sys.executable,
                    str(runner), str(path)], env=env, capture_output=True, timeout=600)
    return json.loads(out.read_text()) if out.exists() else []


def nodes(events: list[list]) -> list[list[list]]:
    """The events of each node's Prepare, in order (a node that failed last, unfinished)."""
    out, current, on = [], [], False
    for event in events:
        if event[0] == "prepare_begin":
            on = True
        elif event[0] == "plan_begin":
            break
        elif on and event[0] == "node_done":
            out.append(current)
            current = []
        elif on:
            current.append(event)
    return out + ([current] if current else [])


def measured_need(op, events: list[list]) -> tuple[int, str]:
    """Bytes from the head up to the last temporary, plus the tail taken before it; the
    sequence taken (input/output positions, P<bytes> for a persistent buffer, X for a bare
    temp buffer)."""
    temp = tail = need = pending = 0
    taken = []
    for event in events:
        if event[0] == "tensor":
            ids = [("i", k) for k, t in enumerate(op.inputs) if t == event[1]]
            ids += [("o", k) for k, t in enumerate(op.outputs) if t == event[1]]
            taken.append("%s%d" % ids[0] if ids else "?")
            pending = 3  # its TfLiteTensor, quantization and zero points
        elif event[0] == "temp":
            temp = align_up(temp, event[2]) + event[1]
            need = max(need, tail + temp)
            if pending:
                pending -= 1
            else:
                taken.append(f"X{event[1]}")
        elif event[0] == "persist":
            tail += align_up(event[1], 16)
            taken.append(f"P{event[1]}")
            pending = 0
    return need, " ".join(taken)


def predicted_need(model, s: int, op) -> int:
    sg = model.subgraphs[s]
    temp, _ = tflm_arena.prepare_temps(sg, op, HOST, 0)
    before = tflm_arena.prepare_temps_before_buffers(sg, op, HOST, 0)
    buffers = tflm_arena.persistent_buffers(model, s, op, HOST) or []
    after_init = sum(align_up(b, 16) for b in buffers[tflm_arena.init_buffers(op, buffers):])
    if before is not None:
        return max(before, after_init + temp)
    return after_init + temp if after_init else temp


def main(argv: list[str]) -> int:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in argv:
            model = read_model(Path(name))
            ops = [(s, op) for s, sg in enumerate(model.subgraphs) for op in sg.operators]
            for (s, op), events in zip(ops, nodes(trace(Path(name), Path(folder)))):
                need, taken = measured_need(op, events)
                predicted = predicted_need(model, s, op)
                verdict = "UNDER" if need > predicted else ("over" if need < predicted else "=")
                types = ",".join(model.subgraphs[s].tensors[t].type if t >= 0 else "-"
                                 for t in op.inputs)
                rows.append([Path(name).stem, op.name, types, taken, str(need), str(predicted), verdict])
    print(render(["model", "op", "inputs", "Prepare takes", "needs B", "predicted B", ""], rows))
    return 1 if any(r[-1] == "UNDER" for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
