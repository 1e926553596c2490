"""Sizes no device can hold, refused before any work is done.

Plans, the C header and TFLite Micro's `OfflineMemoryAllocation` address the arena with int32
offsets, so no tensor that is planned can be 2 GiB or more; a shape whose byte size is beyond that
is a broken or mis-converted model, and every command says which tensor at once rather than
planning it (or failing late with no name).
"""

from __future__ import annotations

from packager.errors import PackagerError, shown
from packager.model import Model, tensor_bytes

MAX_TENSOR_BYTES = 2**31 - 1  # the largest int32 offset


class AbsurdSize(PackagerError):
    """A tensor's byte size is beyond what any plan of ours can address."""


def human_bytes(n: int) -> str:
    """`4.6 EB` style, decimal units, for sizes far beyond a device."""
    for unit, scale in (("EB", 10**18), ("PB", 10**15), ("TB", 10**12), ("GB", 10**9), ("MB", 10**6)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:,} B"


def check_tensor_sizes(model: Model, source: str) -> None:
    """AbsurdSize naming the first non-constant tensor of MAX_TENSOR_BYTES or more."""
    for sg_index, sg in enumerate(model.subgraphs):
        for t, size in zip(sg.tensors, tensor_bytes(model, sg_index)):  # Tensor.nbytes, once
            if t.is_constant:
                continue
            if size is not None and size > MAX_TENSOR_BYTES:
                shape = "x".join(map(str, t.shape))
                raise AbsurdSize(f"{source}: tensor {t.index} '{shown(t.name)}' of subgraph {sg_index} "
                                 f"({t.type} [{shape}]) needs {size:,} B ({human_bytes(size)}); "
                                 f"a plan can address at most {MAX_TENSOR_BYTES:,} B (int32 offsets)")
