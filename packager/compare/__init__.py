"""Comparing with the real runtimes: predict TFLite's arenas from the file, measure them and TFLite Micro's (packager/runtimes/), and set plan, prediction and measurement side by side."""
