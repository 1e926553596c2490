"""Running the real runtimes (TFLite, TFLite Micro) in child processes, so that a crash cannot take the packager down: what they allocate, and whether a model runs in an arena of a given size."""
