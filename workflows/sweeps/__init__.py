"""Benchmark sweeps: a matrix of runs, each a deploy pipeline, compared with the previous sweep."""
