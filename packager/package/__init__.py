"""Packaging: build the sidecar plan and the device files, check them against the model, write them atomically, and load them back."""
