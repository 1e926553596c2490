"""Comparing with the real runtimes: run TFLite and TFLite Micro in child processes, predict their arenas from the file, and set the two side by side."""
