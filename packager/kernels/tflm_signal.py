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
    if name == "SignalStacker":
        return _stacker(options, p)
    if name == "SignalFramer":
        return _framer(sg, op, options, p)
    if name == "SignalDelay":
        return _delay(sg, op, options, p)
    if name == "SignalOverlapAdd":
        return _overlap_add(sg, op, options, p)
    if name == "SignalRfft":
        element = _element(sg.tensors[op.inputs[0]].type)
        fft_length = options.get("fft_length")
        if not element or not isinstance(fft_length, int):
            return None
        params = -(-20 // p) * p + p + (-(-4 // p) * p) + p  # 5 x int32, T*, int, int8*
        return [params, kiss_fftr_state(fft_length, element, p)]
    if name == "SignalIrfft":
        return _irfft(options, p)
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


def circular_buffer_state(capacity: int, pointer: int) -> int:
    """CircularBufferGetNeededMemory: the CircularBuffer struct (capacity, read and write as
    size_t, two int32, an int16 pointer) and twice the capacity of int16 elements."""
    return 3 * pointer + 8 + pointer + 2 * 2 * capacity


def _stacker(options: dict, p: int) -> list[int] | None:
    keys = ("num_channels", "stacker_left_context", "stacker_right_context", "stacker_step")
    if not all(isinstance(options.get(k), int) for k in keys):
        return None
    capacity = options["num_channels"] * (options["stacker_left_context"]
                                          + options["stacker_right_context"] + 1)
    params = 16 + 2 * p + p + 2 * p  # four int32, two size_t, a bool (padded), two pointers
    return [params, circular_buffer_state(capacity, p)]


def _framer(sg, op, options: dict, p: int) -> list[int] | None:
    """Init: the params (four int32, a bool, two pointers); Prepare: a state pointer and a
    circular-buffer pointer per outer row, then each row's circular buffer."""
    size, step = options.get("frame_size"), options.get("frame_step")
    shape = sg.tensors[op.inputs[0]].shape
    if not isinstance(size, int) or not isinstance(step, int) or step <= 0 or not shape:
        return None
    outer = 1
    for d in shape[:-1]:
        outer *= d
    capacity = (size + step - 1) // step * step
    params = -(-(16 + 1) // p) * p + 2 * p
    return [params, outer * p, outer * p] + [circular_buffer_state(capacity, p)] * outer


def _delay(sg, op, options: dict, p: int) -> list[int] | None:
    """Init: the params (three int32, two pointers); Prepare: a state pointer and a
    circular-buffer pointer per outer row, then each row's circular buffer of the frame and the
    delay."""
    delay, shape = options.get("delay_length"), sg.tensors[op.inputs[0]].shape
    if not isinstance(delay, int) or not shape:
        return None
    outer = 1
    for d in shape[:-1]:
        outer *= d
    params = -(-12 // p) * p + 2 * p
    return [params, outer * p, outer * p] + [circular_buffer_state(shape[-1] + delay, p)] * outer


def _overlap_add(sg, op, options: dict, p: int) -> list[int] | None:
    """Init: the params (five int32, a pointer); Prepare: a state pointer per outer row, then
    each row's state of one frame in the options' type T (int16 or float32)."""
    element = {7: 2, 0: 4}.get(options.get("T"))
    shape = sg.tensors[op.inputs[0]].shape
    if element is None or not isinstance(options.get("frame_step"), int) or len(shape) < 2:
        return None
    outer = 1
    for d in shape[:-2]:
        outer *= d
    params = -(-20 // p) * p + p
    return [params, outer * p] + [shape[-1] * element] * outer


# The options' T (a TensorType) -> the element of kiss_fft's scalar: int16, int32, float32.
_IRFFT_SCALAR = {7: 2, 2: 4, 0: 4}


def _irfft(options: dict, p: int) -> list[int] | None:
    """irfft.cc, Init: the params (four int32, a TfLiteType, an int8 pointer) and the state
    IrfftXGetNeededMemory gives: kiss_fftr's inverse state, which for float32 follows an
    IrfftFloatState (an int32 and a pointer). Prepare asks for nothing."""
    t, fft_length = options.get("T"), options.get("fft_length")
    element = _IRFFT_SCALAR.get(t)
    if element is None or not isinstance(fft_length, int) or fft_length <= 0:
        return None
    params = -(-20 // p) * p + p
    state = kiss_fftr_state(fft_length, element, p)
    if t == 0:
        state += -(-4 // p) * p + p
    return [params, state]


def init_buffer_count(op: Operator, buffers: list[int]) -> int:
    """SignalFramer, SignalDelay and SignalOverlapAdd take their params in Init and the rest in
    Prepare; the other Signal ops take everything in Init."""
    if op.name in ("SignalFramer", "SignalDelay", "SignalOverlapAdd"):
        return min(1, len(buffers))
    return len(buffers)


def scratch_requests(model: Model, s: int, op: Operator) -> list[int] | None:
    if op.name == "SignalRfft":
        fft_length = custom_options(model, s, op).get("fft_length")
        element = _element(model.subgraphs[s].tensors[op.inputs[0]].type)
        return [fft_length * element] if isinstance(fft_length, int) and element else None
    if op.name.startswith("Signal"):
        return []
    return None
