"""Benchmark engine: payloads, a lean signed client, warmup until stable, measurement with floors.

The engine is used by three callers — the benchmark Lambda, the SageMaker processing job
(``artifacts/benchmark_job/``) and ``deploybench bench`` — and is shipped to the job as source,
so the modules in ``JOB_MODULES`` import only the standard library, numpy and botocore.

A domain package: it imports the primitives, ``workflows.aws``, the spec, hosting's client policy and
the janitor's limits; the steps, sweeps, reports, the endpoint benchmark and the job import it.
"""

from __future__ import annotations

# Files the processing job's code input carries (paths relative to the repository root). They are
# the engine and what it imports, nothing else: the job's image has no pydantic or yaml.
JOB_MODULES: tuple[str, ...] = (
    "workflows/__init__.py",
    "workflows/benchmark/texts.py",
    "workflows/backoff.py",
    "workflows/benchmark/__init__.py",
    "workflows/benchmark/policy.py",
    "workflows/benchmark/transport.py",
    "workflows/benchmark/client.py",
    "workflows/benchmark/payloads.py",
    "workflows/benchmark/routed_calls.py",
    "workflows/benchmark/stats.py",
    "workflows/benchmark/sizing.py",
    "workflows/benchmark/warmup.py",
    "workflows/benchmark/server_side.py",
    "workflows/benchmark/measure.py",
    "workflows/benchmark/host.py",
    "workflows/benchmark/engine.py",
)
