"""TFLite Micro's own custom ops (registered under a custom code, not the Signal library):
CIRCULAR_BUFFER and TFLite_Detection_PostProcess. Their persistent buffers, scratch requests and
the tensors their Prepare holds as temporaries.

Sources (facts, not code): tensorflow/lite/micro/kernels/circular_buffer*.cc and
detection_postprocess.cc of the tflite-micro sources; checked on the fixtures of
fixtures/tflm_kernels.py against the pinned wheel.
"""

from __future__ import annotations

from packager.model import Model, Operator

CIRCULAR_BUFFER = "CIRCULAR_BUFFER"
DETECTION_POSTPROCESS = "TFLite_Detection_PostProcess"
NAMES = frozenset({CIRCULAR_BUFFER, DETECTION_POSTPROCESS})
DECODE = "TFLM_DECODE"  # compressed tensors: its persistent memory in tflm_decode.py; no scratch

# OpDataCircularBuffer: two ints (cycles_until_run, cycles_max), taken in Init.
_CIRCULAR_BUFFER_OPDATA = 2 * 4
# detection_postprocess.cc's OpData, 4-byte members only (the same on every target): six
# int/float fields, a bool (padded to 4), a CenterSizeEncoding (four floats), eleven scratch
# indexes, three TfLiteQuantizationParams (a float and an int32 each). Taken in Init.
_DETECTION_POSTPROCESS_OPDATA = 6 * 4 + 4 + 4 * 4 + 11 * 4 + 3 * 8


def persistent_buffers(op: Operator) -> list[int] | None:
    if op.name == CIRCULAR_BUFFER:
        return [_CIRCULAR_BUFFER_OPDATA]
    if op.name == DETECTION_POSTPROCESS:
        return [_DETECTION_POSTPROCESS_OPDATA]
    return None


def scratch_requests(model: Model, s: int, op: Operator) -> list[int] | None:
    """Bytes of each scratch buffer the op's Prepare requests, in order; None when unknown."""
    if op.name == CIRCULAR_BUFFER:
        return []
    if op.name == DECODE:  # no scratch; a decode type not modelled keeps the op unmodelled
        from packager.kernels import tflm_decode
        return None if tflm_decode.unmodelled_types(model, s, op) else []
    if op.name != DETECTION_POSTPROCESS:
        return None
    from packager.kernels.tflm_signal import custom_options
    options = custom_options(model, s, op)
    max_detections, num_classes = options.get("max_detections"), options.get("num_classes")
    if not isinstance(max_detections, int) or not isinstance(num_classes, int) or len(op.inputs) < 2:
        return None
    sg = model.subgraphs[s]
    boxes, scores = sg.tensors[op.inputs[0]].shape, sg.tensors[op.inputs[1]].shape
    if len(boxes) != 3 or len(scores) != 3:
        return None
    n = boxes[1]
    return [
        n,  # active candidates (one byte each)
        n * 4 * 4,  # decoded boxes
        scores[1] * scores[2] * 4,  # scores
        n * 4, n * 4,  # score buffer, kept scores
        max_detections * n * 4, max_detections * n * 4,  # scores after NMS, sorted values
        n * 4,  # kept indices
        max_detections * n * 4,  # sorted indices
        max(num_classes, max_detections) * n * 4,  # buffer
        min(n, max_detections) * n * 4,  # selected
    ]


def prepare_temp_positions(op: Operator) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(inputs, outputs) by position that the op's Prepare holds as temporaries, when fewer
    than all: TFLite_Detection_PostProcess takes its three inputs and none of its outputs."""
    if op.name == DETECTION_POSTPROCESS:
        return (0, 1, 2), ()
    return None
