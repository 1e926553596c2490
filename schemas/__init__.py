"""Schemas of the formats the packager reads and writes, and the code generated from them."""
