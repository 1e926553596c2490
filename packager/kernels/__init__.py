"""The runtimes' kernels as data: the scratch and temporary buffers each kernel of TFLite and TFLite Micro asks for."""
