"""Constants stored shorter than their shape: a builtin kernel reads a constant by its shape, so
on such a model the runtime reads past the tensor's data (bytes after it in the file, or beyond),
and its outputs depend on whatever lies there: neither the original nor the packaged model can be
compared run against run. Custom operators (TFLite Micro's DECODE, Vela's ethos-u) read their
constant inputs in their own formats, and sparse constants are stored compressed: both are left
out."""

from __future__ import annotations

from packager.model import Model


def short_constant(model: Model) -> str | None:
    """One line naming the first constant a builtin operator reads past the end of, or None."""
    for sg in model.subgraphs:
        read_by_builtins = {t for op in sg.operators if not op.opcode.is_custom for t in op.inputs}
        for i in sorted(read_by_builtins):
            if i < 0:
                continue
            t = sg.tensors[i]
            needed = t.nbytes
            if not t.has_data or t.sparse or needed is None:
                continue
            stored = model.buffers[t.buffer].size
            if stored < needed:
                shape = "[" + ", ".join(map(str, t.shape)) + "]"
                return (f"constant tensor '{t.name}' stores {stored:,} B but its shape {shape} needs "
                        f"{needed:,} B: a runtime reads past its data")
    return None
