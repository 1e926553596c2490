"""The real runtimes, measured in child processes (optional dependencies: the `runtimes` extra)."""
