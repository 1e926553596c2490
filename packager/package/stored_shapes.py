"""The shapes TFLite Micro runs: the stored ones (it ignores shape_signature).

A stored -1 has no size at all: `--dim NAME=N` gives it, and the packaged model stores N. (A
batch that is -1 only in shape_signature over a complete stored shape is planned at the stored
shape by every command: packager/dynamic/stored_batch.py.)"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from typing import Sequence

from packager.arenas import dynamic_shapes
from packager.dynamic.shapes import DimError, parse_dim, require_bounds
from packager.dynamic.symbolic import evaluate, symbols
from packager.model import Model, Tensor
from packager.package.tflite_patch import _deref, _table_fields, _table_vector, _u32
from packager.reader import with_tensors_reread
from packager.semantics import SEMANTICS


# -- stored -1: a size the file does not have ---------------------------------------------------

MODEL_SUBGRAPHS, SUBGRAPH_TENSORS, TENSOR_SHAPE, TENSOR_SHAPE_SIGNATURE = 2, 0, 0, 7  # schema.fbs field ids


@dataclass(frozen=True)
class StoredSizes:
    model: Model  # the model TFLite Micro runs: the sizes --dim gives written into its stored shapes
    dims: tuple[str, ...]  # the --dim options left for the symbols the file does not store as -1
    note: str | None  # what the summary says; None when nothing was written


def unknown_stored(model: Model) -> list[tuple[int, Tensor]]:
    """(subgraph, tensor) of every tensor whose stored shape has a -1."""
    return [(sg.index, t) for sg in model.subgraphs for t in sg.tensors if t.unknown_axes]


def with_stored_sizes(model: Model, semantics: str, dims: Sequence[str]) -> StoredSizes:
    """TFLite Micro runs the stored shape, so a stored -1 needs one size: the one `--dim NAME=N`
    gives. Every stored size that follows from those symbols is written into the file (shape and
    shape_signature, in place: the vectors keep their length), and the model is read again: the
    plan, the packaged model and the verification are then those of the model TFLite Micro runs.
    Other runtimes resize at run time, so there the symbols stay symbols (a range is fine)."""
    unknown = unknown_stored(model)
    if not unknown or not SEMANTICS[semantics].runs_stored_shapes:
        return StoredSizes(model, tuple(dims), None)
    elsewhere = next(((sg, t) for sg, t in unknown if sg != 0), None)
    if elsewhere is not None:
        sg, t = elsewhere
        raise DimError(f"tensor '{t.name}' of subgraph {sg} is stored with a -1 dimension: only the main "
                       f"subgraph's stored sizes can be given with --dim")
    shapes, bounds = dynamic_shapes(model, dims)
    stored = [s for s in shapes.symbols if s.stored_unknown]
    require_bounds(replace(shapes, symbols=tuple(stored)), bounds)
    for s in stored:
        lo, hi = bounds[s.name]
        if lo != hi:
            raise DimError(f"--dim {s.name}={lo}..{hi}: TFLite Micro runs one stored shape, and the file "
                           f"stores {s.stored_unknown}; give --dim {s.name}=N (the size it runs at)")
    binding = {s.name: bounds[s.name][1] for s in stored}
    data = bytearray(model.raw)
    tensors = _table_vector(data, _table_fields(data, _table_vector(data, _table_fields(
        data, _u32(data, 0))[MODEL_SUBGRAPHS])[0])[SUBGRAPH_TENSORS])
    written, rewritten = [], []
    for t in model.main.tensors:
        if t.is_constant or t.shape_signature is None or t.index not in shapes.shapes:
            continue
        sizes = {}
        for axis, expr in enumerate(shapes.shapes[t.index]):
            if axis >= len(t.shape_signature) or t.shape_signature[axis] >= 0:
                continue
            names = symbols(expr)
            if names and names <= set(binding):
                sizes[axis] = evaluate(expr, binding)
            elif axis in t.unknown_axes:
                raise DimError(f"tensor '{t.name}' is stored with shape {_stored(t)} and its axis {axis} "
                               f"does not follow from the inputs' sizes, so TFLite Micro cannot run it")
        if any(v < 1 for v in sizes.values()):
            raise DimError(f"tensor '{t.name}' would have shape {[sizes.get(k, d) for k, d in enumerate(t.shape)]} "
                           f"at {', '.join(f'{n} = {v}' for n, v in binding.items())}: no size is below 1")
        rewritten.append(t.index)
        fields = _table_fields(data, tensors[t.index])
        for field in (TENSOR_SHAPE, TENSOR_SHAPE_SIGNATURE):
            vec = _deref(data, fields[field]) if field in fields else None
            if vec is None:
                continue
            for axis, v in sizes.items():
                if axis < _u32(data, vec):
                    struct.pack_into("<i", data, vec + 4 + 4 * axis, v)
        if t.unknown_axes:
            written.append(f"{_stored(t)} as {[sizes.get(k, d) for k, d in enumerate(t.shape)]}")
    fixed = with_tensors_reread(model, data, 0, rewritten)  # only the tensors written to change
    given = ", ".join(f"--dim {n}={v}" for n, v in binding.items())
    left = tuple(d for d in dims if parse_dim(d).name not in binding and (parse_dim(d).rename or "") not in binding)
    shown = "; ".join(written[:3]) + (f"; and {len(written) - 3} more" if len(written) > 3 else "")
    return StoredSizes(fixed, left, f"stored shapes with -1: TFLite Micro runs the stored shape, so the "
                                    f"model is planned and packaged with {given}: {shown}")


def _stored(t: Tensor) -> str:
    return f"'{t.name}' {[-1 if k in t.unknown_axes else d for k, d in enumerate(t.shape)]}"
