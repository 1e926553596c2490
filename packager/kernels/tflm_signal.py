"""The Signal library's custom ops (audio front ends) in TFLite Micro: their persistent buffers and
scratch requests, from the op's custom options (a FlexBuffer map) and tensor types.

Sources: signal/micro/kernels/*.cc and signal/src (struct layouts, kiss_fftr's state size) of the
tflite-micro sources; checked on audio_preprocessor_int8 (18 persistent allocations, 3,896 B
requested on the 64-bit wheel).
"""

from __future__ import annotations

from functools import lru_cache

from flatbuffers import flexbuffers

from packager.model import Model, Operator

_KISS_MAXFACTORS = 32


def custom_options(model: Model, s: int, op: Operator) -> dict:
    """The op's custom options as a dict; {} when it has none or they do not parse."""
    raw = _options(model.raw, s, op.index)
    if not raw:
        return {}
    try:
        value = flexbuffers.Loads(raw)
    except Exception:  # not a FlexBuffer: the kernel would reject it too
        return {}
    return value if isinstance(value, dict) else {}


@lru_cache(maxsize=64)
def _options(raw: bytes, s: int, index: int) -> bytes:
    from schemas.tflite.Model import Model as FbModel
    op = FbModel.GetRootAs(raw, 0).Subgraphs(s).Operators(index)
    if op.CustomOptionsIsNone():
        return b""
    return op.CustomOptionsAsNumpy().tobytes()


def _element(type_name: str) -> int:
    return {"INT16": 2, "INT32": 4, "FLOAT32": 4}.get(type_name, 0)


def kiss_fftr_state(fft_length: int, element: int, pointer: int) -> int:
    """Bytes of kiss_fftr's state for a real FFT of `fft_length` (kiss_fftr_alloc): the fftr
    state (three pointers), the complex FFT of half the length (nfft, inverse, the factor table
    and its twiddles) and 3/2 of the half length of super-twiddles and buffer."""
    half = fft_length // 2
    cpx = 2 * element
    sub = 4 + 4 + 4 * 2 * _KISS_MAXFACTORS + cpx * half  # kiss_fft_state ends in twiddles[1]
    sub = -(-sub // 4) * 4
    return 3 * pointer + sub + cpx * (half * 3 // 2)


def persistent_buffers(model: Model, s: int, op: Operator, target) -> list[int] | None:
    p = target.pointer
    sg = model.subgraphs[s]
    name = op.name
    if name == "SignalWindow":
        return [8]
    if name in ("SignalFftAutoScale", "SignalFilterBankSquareRoot"):
        return []
    if name == "SignalEnergy":
        return [8]
    if name == "SignalPCAN":
        return [4]
    if name == "SignalFilterBankLog":
        return [8]
    options = custom_options(model, s, op)
    if name == "SignalRfft":
        element = _element(sg.tensors[op.inputs[0]].type)
        fft_length = options.get("fft_length")
        if not element or not isinstance(fft_length, int):
            return None
        params = -(-20 // p) * p + p + (-(-4 // p) * p) + p  # 5 x int32, T*, int, int8*
        return [params, kiss_fftr_state(fft_length, element, p)]
    if name == "SignalFilterBank":
        channels = options.get("num_channels")
        if not isinstance(channels, int):
            return None
        config = -(-4 // p) * p + 5 * p + 8  # num_channels, five pointers, two int32
        return [config + p, 8 * (channels + 1)]
    if name == "SignalFilterBankSpectralSubtraction":
        channels = options.get("num_channels")
        if not isinstance(channels, int):
            return None
        config = 36  # eight uint32 fields and a bool
        return [-(-config // p) * p + p + p, 4 * channels]
    return None


def scratch_requests(model: Model, s: int, op: Operator) -> list[int] | None:
    if op.name == "SignalRfft":
        fft_length = custom_options(model, s, op).get("fft_length")
        element = _element(model.subgraphs[s].tensors[op.inputs[0]].type)
        return [fft_length * element] if isinstance(fft_length, int) and element else None
    if op.name.startswith("Signal"):
        return []
    return None
