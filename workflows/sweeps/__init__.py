"""Benchmark sweeps: a matrix of runs, each a deploy pipeline, compared with the previous sweep.

Above the reports: it imports the reports, benchmark figures, hosting prices and the contracts; the
PlanSweep and CompareSweep handlers and the CLI import it. It never imports redeploy or readiness.
"""
