"""Benchmarks: plain scripts that print tables (bench.py: the paper's tables; bench_scale.py: time
against graph size)."""
