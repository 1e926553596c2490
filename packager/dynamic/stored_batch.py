"""A batch that is -1 only in `shape_signature`: planned at the stored shape, by every command.

Converters write a free batch as -1 in `shape_signature` over a complete stored shape (batch 1).
TFLite's interpreter runs the stored shape unless the input is resized, and TFLite Micro cannot
resize at all, so with no --dim the stored shape is the one shape a runtime runs: every command
plans it and says so; --dim plans a range instead. Anything else still asks for --dim: a stored -1
(no size at all), a free dimension that is not an input's batch, or a size known only once an op
has run (a data-dependent output).

The converter stores 1 for every -1 of an intermediate tensor too, which is the batch's size only
where the dimension is the batch itself: a RESHAPE to [batch*H*W, C] is stored [1, 1]. Such
tensors are sized from the batch (their size expressions at the stored batch), not from the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from packager.dynamic.shapes import DimError, DynamicShapes, analyse, bounds_of, is_static, parse_dim
from packager.dynamic.symbolic import evaluate, symbols
from packager.model import Model
from packager.semantics import SEMANTICS


@dataclass(frozen=True)
class StoredBatch:
    shapes: DynamicShapes
    bounds: Mapping[str, tuple[int, int]]  # each batch symbol at its stored size
    sources: Mapping[str, str]  # symbol -> "input 'x' axis 0"
    stored: tuple[tuple[str, tuple[int, ...]], ...]  # each resizable input's name and stored shape
    placeholders: int  # tensors whose stored size is not the one the stored batch gives

    def note(self, semantics: str) -> str:
        """One line: what was planned, why, and how to plan other batches."""
        sem = SEMANTICS[semantics]
        names = ", ".join(self.bounds)
        stored = ", ".join(f"{name} {list(shape)}" for name, shape in self.stored)
        if sem.runs_stored_shapes:
            who = f"{sem.runtime} runs the stored shape ({stored})"
        elif sem.runtime:
            who = f"{sem.runtime} runs the stored shape ({stored}) unless the input is resized"
        else:
            who = f"a runtime runs the stored shape ({stored}) unless the input is resized"
        sized = (f" ({self.placeholders} tensor{'s' if self.placeholders != 1 else ''} stored with "
                 f"placeholder sizes are sized from the batch)" if self.placeholders else "")
        return (f"dynamic batch ({names}): {who}, so the plan is made for it{sized}; "
                f"give --dim {next(iter(self.bounds))}=MIN..MAX to plan for other batches")

    def view(self, semantics: str) -> dict:
        """The --json field: which dimensions were taken from the stored shape."""
        return {"dimensions": [{"symbol": n, "source": self.sources[n], "size": lo}
                               for n, (lo, _) in self.bounds.items()],
                "placeholder_tensors": self.placeholders,
                "range": f"--dim {next(iter(self.bounds))}=MIN..MAX plans a range of batches instead",
                "note": self.note(semantics)}


def stored_batch(model: Model, dims: Sequence[str]) -> StoredBatch | None:
    """The model planned at its stored shape when no --dim is given and its only free dimensions
    are its inputs' batches, stored complete; None otherwise (the usual rules apply)."""
    if dims or is_static(model):
        return None
    shapes = analyse(model)
    if not shapes.is_dynamic:
        return None
    if not all(not s.data_dependent and not s.stored_unknown and s.source.startswith("input ")
               and s.source.endswith(" axis 0") for s in shapes.symbols):
        return None
    if set(bounds_of(shapes, [])) == {s.name for s in shapes.symbols}:
        return None  # the graph fixes every batch: nothing to ask, the usual plan
    main = model.main
    inputs = [main.tensors[t] for t in main.inputs if t >= 0]
    if any(d <= 0 for t in inputs for d in t.shape):
        return None
    at = {}
    for t in inputs:
        sym = shapes.shapes.get(t.index, ())[:1]
        if sym and symbols(sym[0]):
            at[str(sym[0])] = t.shape[0]
    try:  # a stored batch the graph cannot take (a dimension 0 there) is no plan: ask for --dim
        bounds = bounds_of(shapes, [parse_dim(f"{s.name}={at[s.name]}") for s in shapes.symbols])
    except DimError:
        return None
    placeholders = sum(1 for t, size in shapes.sizes.items()
                       if symbols(size) and evaluate(size, at) != main.tensors[t].nbytes)
    return StoredBatch(shapes, bounds, {s.name: s.source for s in shapes.symbols},
                       tuple((t.name, tuple(t.shape)) for t in inputs if t.is_dynamic_shape), placeholders)
