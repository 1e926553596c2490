"""The shapes TFLite gives tensors at Prepare, where the file only holds a placeholder.

A converter writes a resizable output as shape [1] with signature [-1] when its size depends on
an op's inputs. TFLite's Prepare resizes every output from its inputs before the arena is
planned: NON_MAX_SUPPRESSION_V4/V5 size their selected outputs to `max_output_size` when it is a
constant (non_max_suppression.cc, Prepare), and the ops downstream follow (GATHER of the
selected indices...). The arena holds the resized tensors, so a prediction of that arena must
see them at those sizes.

Only tensors whose signature marks them resizable are changed, and only to a shape that the
shape rules (shape_rules.py) fix to plain numbers: a size that still depends on an input
dimension or on data stays as the file has it.
"""

from __future__ import annotations

from dataclasses import replace

from packager.dynamic.shapes import analyse
from packager.model import Model


def resized_at_prepare(model: Model) -> dict[tuple[int, int], tuple[int, ...]]:
    """(subgraph, tensor) -> the shape Prepare gives it, for every tensor it changes."""
    out: dict[tuple[int, int], tuple[int, ...]] = {}
    for sg in model.subgraphs:
        if not any(t.is_dynamic_shape and not t.is_constant for t in sg.tensors):
            continue
        shapes = analyse(model, sg.index).shapes
        for t, shape in shapes.items():
            tensor = sg.tensors[t]
            if not tensor.is_dynamic_shape or tensor.is_constant:
                continue
            if all(isinstance(d, int) and d >= 0 for d in shape) and tuple(shape) != tensor.shape:
                out[(sg.index, t)] = tuple(int(d) for d in shape)
    return out


def with_prepared_shapes(model: Model) -> Model:
    """The same model, its placeholder shapes replaced by the ones Prepare gives them (the model
    itself when Prepare changes none)."""
    resized = resized_at_prepare(model)
    if not resized:
        return model
    subgraphs = []
    for sg in model.subgraphs:
        tensors = tuple(replace(t, shape=resized[(sg.index, t.index)])
                        if (sg.index, t.index) in resized else t for t in sg.tensors)
        subgraphs.append(replace(sg, tensors=tensors))
    return replace(model, subgraphs=tuple(subgraphs))
