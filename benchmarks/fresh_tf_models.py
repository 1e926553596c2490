"""Fresh TF-converted models for `compare`: Keras applications in float, int8, float16 and
dynamic-range form, recurrent layers as WHILE loops and fused LSTMs, a dilated TCN, dilated
CONV_2D, CONV_3D, a token transformer, gather/scatter, several signatures, dynamic batch and
sequence.

    python -m benchmarks.fresh_tf_models OUT_FOLDER [--only NAME ...]

Needs TensorFlow (CPU; 2.15 was used), which the project itself never needs: install it in a
separate environment and run this script there with the repository on PYTHONPATH. Weights are
random (weights=None: nothing is downloaded), seeded, so a run writes the same models; the
quantized forms come from the converter (int8 with a representative dataset of seeded random
inputs). The files are written to OUT_FOLDER, outside the repository; then
`python -m benchmarks.tflite_unseen OUT_FOLDER` and `tflpack compare OUT_FOLDER` measure them
(docs/compare.md, "Fresh TF-converted models").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

SIZE = 96  # Keras applications at 96x96: small enough to convert and measure in seconds


def _tf():
    import tensorflow as tf  # only when run: tests and the package never need TensorFlow
    return tf


def _representative(shapes, dtypes=None):
    import numpy as np
    rng = np.random.default_rng(0)

    def data():
        for _ in range(4):
            yield [rng.random(s, dtype=np.float32) if (dtypes is None or d == "f") else
                   rng.integers(0, 50, s).astype(np.int32)
                   for s, d in zip(shapes, dtypes or ["f"] * len(shapes))]
    return data


def convert(model_or_converter, form: str = "float", shapes=None, dtypes=None) -> bytes:
    """Convert a Keras model (or a ready converter) in one of the forms: float, int8, fp16,
    dynamic (dynamic-range: int8 weights, float activations)."""
    tf = _tf()
    converter = (model_or_converter if isinstance(model_or_converter, tf.lite.TFLiteConverter)
                 else tf.lite.TFLiteConverter.from_keras_model(model_or_converter))
    if form == "int8":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = _representative(shapes, dtypes)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
    elif form == "fp16":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.target_spec.supported_types = [tf.float16]
    elif form == "dynamic":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    return converter.convert()


def keras_app(name: str):
    tf = _tf()
    apps = tf.keras.applications
    build = {"mobilenet_v2": lambda: apps.MobileNetV2(input_shape=(SIZE, SIZE, 3), weights=None,
                                                      alpha=0.35),
             "mobilenet_v3_small": lambda: apps.MobileNetV3Small(input_shape=(SIZE, SIZE, 3),
                                                                 weights=None, minimalistic=False),
             "densenet121": lambda: apps.DenseNet121(input_shape=(SIZE, SIZE, 3), weights=None),
             "resnet50": lambda: apps.ResNet50(input_shape=(SIZE, SIZE, 3), weights=None),
             "efficientnet_b0": lambda: apps.EfficientNetB0(input_shape=(SIZE, SIZE, 3),
                                                            weights=None)}[name]
    return build()


def gru_while():
    tf = _tf()
    x = tf.keras.Input((16, 8), batch_size=1)
    y = tf.keras.layers.GRU(32)(x)
    return tf.keras.Model(x, tf.keras.layers.Dense(4)(y))


def simple_rnn_while():
    tf = _tf()
    x = tf.keras.Input((16, 8), batch_size=1)
    y = tf.keras.layers.SimpleRNN(32, return_sequences=True)(x)
    y = tf.keras.layers.SimpleRNN(16)(y)
    return tf.keras.Model(x, tf.keras.layers.Dense(4)(y))


def lstm():
    tf = _tf()
    # Gate matrices of 64 x 32 and 32 x 64 weights: the converter leaves matrices under 1,024
    # elements in float in dynamic-range form, so these are large enough to be quantized.
    x = tf.keras.Input((20, 32), batch_size=1)
    y = tf.keras.layers.LSTM(64, return_sequences=True)(x)
    y = tf.keras.layers.LSTM(32)(y)
    return tf.keras.Model(x, tf.keras.layers.Dense(5)(y))


def bidirectional_lstm():
    tf = _tf()
    x = tf.keras.Input((20, 12), batch_size=1)
    y = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(24, return_sequences=True))(x)
    y = tf.keras.layers.GlobalAveragePooling1D()(y)
    return tf.keras.Model(x, tf.keras.layers.Dense(5)(y))


def tcn():
    """Causal dilated 1-d convolutions with residuals (a temporal convolutional network)."""
    tf = _tf()
    x = tf.keras.Input((128, 8), batch_size=1)
    y = tf.keras.layers.Conv1D(32, 1)(x)
    for rate in (1, 2, 4, 8):
        z = tf.keras.layers.Conv1D(32, 3, padding="causal", dilation_rate=rate,
                                   activation="relu")(y)
        z = tf.keras.layers.Conv1D(32, 3, padding="causal", dilation_rate=rate)(z)
        y = tf.keras.layers.ReLU()(tf.keras.layers.Add()([y, z]))
    y = tf.keras.layers.GlobalAveragePooling1D()(y)
    return tf.keras.Model(x, tf.keras.layers.Dense(6)(y))


def dilated_conv2d():
    """2-d convolutions with dilation 2 (DeepLab's atrous blocks): CONV_2D with dilation factors."""
    tf = _tf()
    x = tf.keras.Input((32, 32, 8), batch_size=1)
    y = x
    for filters in (16, 16, 24):
        y = tf.keras.layers.Conv2D(filters, 3, padding="same", dilation_rate=2,
                                   activation="relu")(y)
    y = tf.keras.layers.GlobalAveragePooling2D()(y)
    return tf.keras.Model(x, tf.keras.layers.Dense(4)(y))


def conv3d():
    tf = _tf()
    x = tf.keras.Input((8, 24, 24, 3), batch_size=1)
    y = tf.keras.layers.Conv3D(16, 3, padding="same", activation="relu")(x)
    # A strided CONV_3D where a pooling layer would be: MAX_POOL_3D is no TFLite builtin.
    y = tf.keras.layers.Conv3D(32, 3, strides=2, activation="relu")(y)
    y = tf.keras.layers.GlobalAveragePooling3D()(y)
    return tf.keras.Model(x, tf.keras.layers.Dense(4)(y))


def dense_mlp():
    tf = _tf()
    x = tf.keras.Input((256,), batch_size=4)
    y = tf.keras.layers.Dense(512, activation="relu")(x)
    y = tf.keras.layers.Dense(512, activation="relu")(y)
    return tf.keras.Model(x, tf.keras.layers.Dense(10)(y))


def transformer():
    """Token ids in, an embedding, one encoder block (multi-head attention, layer norm, MLP)."""
    tf = _tf()
    ids = tf.keras.Input((32,), batch_size=1, dtype="int32")
    h = tf.keras.layers.Embedding(1000, 64)(ids)
    a = tf.keras.layers.MultiHeadAttention(num_heads=4, key_dim=16)(h, h)
    h = tf.keras.layers.LayerNormalization()(h + a)
    m = tf.keras.layers.Dense(128, activation="gelu")(h)
    h = tf.keras.layers.LayerNormalization()(h + tf.keras.layers.Dense(64)(m))
    h = tf.keras.layers.GlobalAveragePooling1D()(h)
    return tf.keras.Model(ids, tf.keras.layers.Dense(3)(h))


def _from_functions(functions, module):
    tf = _tf()
    return tf.lite.TFLiteConverter.from_concrete_functions(functions, module)


def gather_scatter():
    tf = _tf()

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([64, 16], tf.float32),
                                      tf.TensorSpec([10], tf.int32)])
        def run(self, table, ids):
            rows = tf.gather(table, ids)  # [10, 16]
            summed = tf.math.unsorted_segment_sum(rows, ids % 4, num_segments=4)
            scattered = tf.scatter_nd(tf.reshape(ids % 8, [10, 1]), rows, [8, 16])
            return {"summed": summed * 2.0, "scattered": scattered + 1.0}

    m = M()
    return _from_functions([m.run.get_concrete_function()], m)


def signatures():
    """Three signatures of different sizes in one model (tf.Module -> SavedModel)."""
    tf = _tf()

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.w1 = tf.Variable(tf.random.stateless_normal([64, 256], seed=[1, 1]))
            self.w2 = tf.Variable(tf.random.stateless_normal([256, 64], seed=[1, 2]))

        @tf.function(input_signature=[tf.TensorSpec([8, 64], tf.float32)])
        def encode(self, x):
            return {"h": tf.nn.relu(tf.matmul(x, self.w1))}

        @tf.function(input_signature=[tf.TensorSpec([8, 256], tf.float32)])
        def decode(self, h):
            return {"y": tf.matmul(h, self.w2)}

        @tf.function(input_signature=[tf.TensorSpec([8, 64], tf.float32)])
        def roundtrip(self, x):
            return {"y": tf.matmul(tf.nn.relu(tf.matmul(x, self.w1)), self.w2) + x}

    m = M()
    with tempfile.TemporaryDirectory() as saved:
        tf.saved_model.save(m, saved, signatures={"encode": m.encode, "decode": m.decode,
                                                  "roundtrip": m.roundtrip})
        return tf.lite.TFLiteConverter.from_saved_model(
            saved, signature_keys=["encode", "decode", "roundtrip"]).convert()


def dynamic_batch():
    tf = _tf()
    x = tf.keras.Input((32, 32, 3))  # batch None: shape_signature -1
    y = tf.keras.layers.Conv2D(8, 3, strides=2, activation="relu")(x)
    y = tf.keras.layers.GlobalAveragePooling2D()(y)
    return tf.keras.Model(x, tf.keras.layers.Dense(4)(y))


def dynamic_sequence():
    tf = _tf()

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(tf.random.stateless_normal([16, 24], seed=[1, 2]))

        @tf.function(input_signature=[tf.TensorSpec([1, None, 16], tf.float32)])
        def run(self, x):
            h = tf.nn.tanh(tf.einsum("bti,io->bto", x, self.w))
            return tf.reduce_max(h, axis=1)

    m = M()
    return _from_functions([m.run.get_concrete_function()], m)


def _keras(build, form="float", shapes=None, dtypes=None):
    return lambda: convert(build(), form, shapes, dtypes)


def _app(name, form):
    return lambda: convert(keras_app(name), form, [(1, SIZE, SIZE, 3)])


MODELS = {
    **{f"{n}_{f}": _app(n, f) for n in ("mobilenet_v2", "mobilenet_v3_small")
       for f in ("float", "int8", "fp16", "dynamic")},
    "densenet121_float": _app("densenet121", "float"),
    "densenet121_dynamic": _app("densenet121", "dynamic"),
    "resnet50_float": _app("resnet50", "float"),
    "resnet50_int8": _app("resnet50", "int8"),
    "efficientnet_b0_float": _app("efficientnet_b0", "float"),
    "efficientnet_b0_fp16": _app("efficientnet_b0", "fp16"),
    "gru_while": _keras(gru_while),
    "simple_rnn_while": _keras(simple_rnn_while),
    "lstm_float": _keras(lstm),
    "lstm_dynamic": _keras(lstm, "dynamic"),
    "bidirectional_lstm": _keras(bidirectional_lstm),
    "tcn_float": _keras(tcn),
    "tcn_int8": _keras(tcn, "int8", [(1, 128, 8)]),
    "dilated_conv2d_float": _keras(dilated_conv2d),
    "dilated_conv2d_int8": _keras(dilated_conv2d, "int8", [(1, 32, 32, 8)]),
    "conv3d_float": _keras(conv3d),
    "dense_dynamic": _keras(dense_mlp, "dynamic"),
    "transformer_tokens": _keras(transformer),
    "gather_scatter": lambda: convert(gather_scatter()),
    "signatures": signatures,
    "dynamic_batch": _keras(dynamic_batch),
    "dynamic_sequence": lambda: convert(dynamic_sequence()),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the .tflite files (created)")
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS), default=None)
    args = parser.parse_args(argv)
    names = args.only or list(MODELS)
    args.out.mkdir(parents=True, exist_ok=True)
    if len(names) > 1:
        # One process per model: a tf.function traced after other models' Keras sessions can
        # fail to convert, and a fresh process gives every model the same start.
        failed = [n for n in names if subprocess.run(
            [sys.executable, "-m", "benchmarks.fresh_tf_models", str(args.out), "--only", n]
        ).returncode != 0]
        return 1 if failed else 0
    tf = _tf()
    name = names[0]
    tf.keras.utils.set_random_seed(0)
    try:
        data = MODELS[name]()
    except Exception as e:  # a converter failure costs this model's file only
        print(f"{name}: not converted: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
              file=sys.stderr)
        return 1
    (args.out / f"{name}.tflite").write_bytes(data)
    print(f"{name}.tflite {len(data):,} B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
