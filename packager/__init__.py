"""tflpack: memory plans for TensorFlow Lite models, proven valid and packaged for devices."""

__version__ = "0.1.0"
