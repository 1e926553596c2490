"""Models whose only dynamic dimension is the inputs' batch (shape_signature -1 on axis 0) with a
complete stored shape: TFLite Micro ignores shape_signature and runs the stored shape, so such a
model packages for it without --dim, planned at the stored shape, and says so."""

from __future__ import annotations

from typing import Sequence

from packager.arenas import dynamic_shapes
from packager.dynamic.shapes import is_static
from packager.model import Model
from packager.semantics import SEMANTICS


def stored_batch_note(model: Model, semantics: str, dims: Sequence[str]) -> str | None:
    """The note to print when the model is planned at its stored shape; None when --dim is given,
    the runtime is not TFLite Micro, or some symbol is not an input's batch."""
    if dims or not SEMANTICS[semantics].runs_stored_shapes or is_static(model):
        return None
    shapes, _ = dynamic_shapes(model, ())
    if not shapes.is_dynamic:
        return None
    if not all(not s.data_dependent and s.source.startswith("input ") and s.source.endswith(" axis 0")
               for s in shapes.symbols):
        return None
    main = model.main
    if any(d <= 0 for t in main.inputs for d in main.tensors[t].shape):
        return None
    names = ", ".join(s.name for s in shapes.symbols)
    stored = ", ".join(f"{main.tensors[t].name} {list(main.tensors[t].shape)}" for t in main.inputs
                       if main.tensors[t].is_dynamic_shape)
    return (f"dynamic batch ({names}): TFLite Micro runs the stored shape ({stored}), so the plan is "
            f"made for it; give --dim {shapes.symbols[0].name}=MIN..MAX to plan for other batches")
