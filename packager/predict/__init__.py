"""Predictions of what the real runtimes allocate, from the model file alone."""
