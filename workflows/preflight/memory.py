"""Memory checks: workers and containers against instance memory (F02, F07), serverless (F14).

One estimate for all three. A container costs a fixed runtime (the model server, Python with
torch and transformers imported, the tokenizer) plus, per worker, a worker process and its own
ONNX session; a session holds the weights plus onnxruntime's arena, about 1.5x the file. The
constants are set so the estimate reproduces the field's three observations:
- 1137 MB mDeBERTa x 8 workers x 2 containers did not fit the 16 GiB of ml.c6i.2xlarge (F02);
- the same model on serverless failed at 2048 MB and worked at 6144 MB (F14);
- one worker per container is what made it fit.
"""

from __future__ import annotations

import math

from workflows.contracts import Finding
from workflows.preflight.instances import Instance

RUNTIME_OVERHEAD_MB = 1536
WORKER_OVERHEAD_MB = 256
SESSION_FACTOR = 1.5
# Above this share of the instance's memory the container starts under pressure: health checks
# time out before the model is loaded (F07), the OS and SageMaker's agents need the rest.
PRESSURE_SHARE = 0.8
SERVERLESS_SIZES_MB = (1024, 2048, 3072, 4096, 5120, 6144)
# Downloading and loading the model must fit the startup health check; 50 MB/s from S3 into the
# container is a conservative rate for one instance, plus a minute to start the server.
DOWNLOAD_MB_PER_S = 50
SERVER_START_S = 60
# ModelDataDownloadTimeoutInSeconds, derived from the artifact: three times its download at that rate
# (a slower volume, an S3 prefix shared with other instances), never below the health check's default,
# never above botocore's maximum.
DOWNLOAD_SAFETY = 3
MIN_DOWNLOAD_TIMEOUT_S = 600
MAX_DOWNLOAD_TIMEOUT_S = 3600


def container_mb(model_mb: float, workers: int) -> float:
    """Estimated resident memory of one serving container."""
    return RUNTIME_OVERHEAD_MB + workers * (WORKER_OVERHEAD_MB + SESSION_FACTOR * model_mb)


def check_instance_memory(
    *, instance: Instance, model_mb: float, workers: int | None, containers: int = 1
) -> list[Finding]:
    """F02 and F07: every container's workers, each with its own ONNX session, on one instance.

    Args:
        instance: the row of the instance table.
        model_mb: the ONNX file's size (what each session loads).
        workers: SAGEMAKER_MODEL_SERVER_WORKERS; None when unset, which starts one per vCPU.
        containers: containers sharing the instance (multi-container endpoints).
    """
    effective = workers if workers is not None else instance.vcpus
    need = containers * container_mb(model_mb, effective)
    single = containers * container_mb(model_mb, 1)
    have = instance.memory_mb

    def figures(count: int, estimate: float) -> str:
        unset = " (unset: one per vCPU)" if workers is None and count == effective else ""
        return (
            f"{model_mb:.0f} MB model x {count} worker(s){unset} x {containers} container(s) ~ "
            f"{estimate / 1024:.1f} GiB estimated vs {instance.memory_gib} GiB on {instance.name}"
        )

    def pressure(id: str, count: int, estimate: float, message: str, fix: str) -> list[Finding]:
        """One finding: blocking when the estimate passes the instance's memory, a warning near it."""
        shown = figures(count, estimate)
        severity = "blocking" if estimate > have else "warning"
        return [Finding(id=id, severity=severity, message=message.format(shown), fix=fix, evidence=shown)]

    if need <= have * PRESSURE_SHARE:
        return []
    if single <= have * PRESSURE_SHARE:
        return pressure(
            "F02",
            effective,
            need,
            "each worker loads its own ONNX session: {}. Workers die after model_fn with 'Worker died' and no "
            "OOM line in CloudWatch.",
            "set SAGEMAKER_MODEL_SERVER_WORKERS=1 (hosting.workers: 1) and ORT_INTRA_OP_THREADS=0 so one "
            "session uses every core",
        )
    return pressure(
        "F07",
        1,
        single,
        "even one worker per container leaves no room: {}. The container would not pass the ping health check.",
        "use an instance type with more memory, or fewer containers per instance",
    )


def check_startup_timeout(*, model_mb: float, startup_timeout_s: int, server_timeout_s: int) -> list[Finding]:
    """F07: the health check must cover downloading and loading the model."""
    needed = SERVER_START_S + model_mb / DOWNLOAD_MB_PER_S
    if startup_timeout_s >= needed:
        return []
    return [
        Finding(
            id="F07",
            severity="warning",
            message=f"ContainerStartupHealthCheckTimeoutInSeconds={startup_timeout_s} may not cover downloading "
            f"and loading {model_mb:.0f} MB (~{needed:.0f} s at {DOWNLOAD_MB_PER_S} MB/s plus start-up).",
            fix=f"raise hosting.startup_health_check_timeout_s to at least {math.ceil(needed)} and "
            f"SAGEMAKER_MODEL_SERVER_TIMEOUT (now {server_timeout_s}) with it",
            evidence=f"model {model_mb:.0f} MB, timeout {startup_timeout_s} s",
        )
    ]


def download_estimate_s(artifact_mb: float) -> float:
    """Seconds to download and extract ``artifact_mb`` onto one instance, with the safety factor."""
    return DOWNLOAD_SAFETY * artifact_mb / DOWNLOAD_MB_PER_S


def download_timeout_for(artifact_mb: float) -> int:
    """ModelDataDownloadTimeoutInSeconds for an artifact of ``artifact_mb``: the estimate, clamped to
    600..3600 s."""
    needed = math.ceil(download_estimate_s(artifact_mb))
    return max(MIN_DOWNLOAD_TIMEOUT_S, min(MAX_DOWNLOAD_TIMEOUT_S, needed))


def check_download_timeout(*, artifact_mb: float, timeout_s: int | None) -> list[Finding]:
    """F07: the artifact's download must fit ModelDataDownloadTimeoutInSeconds (at most 3600 s)."""
    needed = download_estimate_s(artifact_mb)
    limit = MAX_DOWNLOAD_TIMEOUT_S if timeout_s is None else timeout_s
    if needed <= limit:
        return []
    evidence = f"artifact {artifact_mb:.0f} MB, ~{needed:.0f} s to download, timeout {limit} s"
    if timeout_s is not None and timeout_s < MAX_DOWNLOAD_TIMEOUT_S:
        fix = (
            f"raise hosting.model_data_download_timeout_s to {min(MAX_DOWNLOAD_TIMEOUT_S, math.ceil(needed))}, "
            "or leave it empty to derive it from the artifact"
        )
    else:
        fix = (
            f"SageMaker allows at most {MAX_DOWNLOAD_TIMEOUT_S} s: make the artifact smaller (convert.precision "
            "int8, one copy of the weights) or serve it from an uncompressed S3 prefix"
        )
    return [
        Finding(
            id="F07",
            severity="warning",
            message=f"ModelDataDownloadTimeoutInSeconds={limit} may not cover downloading and extracting "
            f"{artifact_mb:.0f} MB (~{needed:.0f} s at {DOWNLOAD_MB_PER_S} MB/s, {DOWNLOAD_SAFETY}x margin): "
            "the variant would fail before its health check starts.",
            fix=fix,
            evidence=evidence,
        )
    ]


def serverless_memory_needed(model_mb: float) -> int:
    """The smallest accepted MemorySizeInMB that holds one worker with the model; 0 if none does."""
    need = container_mb(model_mb, 1)
    return next((size for size in SERVERLESS_SIZES_MB if size >= need), 0)


def check_serverless_memory(*, memory_mb: int, model_mb: float) -> list[Finding]:
    """F14: serverless memory against the model (1137 MB failed at 2048, worked at 6144)."""
    if memory_mb not in SERVERLESS_SIZES_MB:
        return [
            Finding(
                id="F14",
                severity="blocking",
                message=f"MemorySizeInMB={memory_mb} is not accepted by SageMaker serverless.",
                fix=f"use one of {', '.join(map(str, SERVERLESS_SIZES_MB))}",
                evidence=str(memory_mb),
            )
        ]
    need = container_mb(model_mb, 1)
    if memory_mb >= need:
        return []
    smallest = serverless_memory_needed(model_mb)
    figures = f"{model_mb:.0f} MB model needs ~{need:.0f} MB with container, runtime and tokenizer; {memory_mb} MB configured"
    return [
        Finding(
            id="F14",
            severity="blocking",
            message=f"serverless memory too small: {figures}. The worker dies while loading ('Worker died', "
            "client ReadTimeoutError) with no OOM line in the logs.",
            fix=(
                f"set the memory to {smallest} MB or more (the field's 1137 MB model failed at 2048 and "
                "worked at 6144)"
                if smallest
                else "the model does not fit the 6144 MB maximum: use a real-time endpoint"
            ),
            evidence=figures,
        )
    ]
