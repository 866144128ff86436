"""The result JSON, versioned.

Schema 2 (this version) holds, besides the run's state (spec, artifact manifest, deploy, warmup,
plan, errors, teardown): ``measurements`` with every figure of every shape and concurrency
(windows and latency samples included), ``warm_checks``, the client and its policy,
``cloudwatch`` beside the client figures, and ``cost``. Schema 1 results (figures only) still
load for reports; they get no regression verdicts (no samples).
"""

from __future__ import annotations

import json
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from workflows import clock
from workflows.benchmark.cloudwatch import with_cloudwatch_view
from workflows.contracts import PipelineState
from workflows.errors import ResultInvalid
from workflows.images.accelerators import device_of
from workflows.remediation.overrides import HOSTING_FIELD, with_overrides
from workflows.reports.cost import run_cost
from workflows.reports.venue import measured_on

RESULT_SCHEMA_VERSION = 2
READABLE_VERSIONS = {1, 2}


def _version() -> str:
    try:
        return version("deploybench")
    except PackageNotFoundError:
        return "unknown"


def environment(detail: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "deploybench": _version(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_generator": (detail or {}).get("environment"),
    }


PRICED_FIELDS = ("max_concurrency", "provisioned_concurrency", "capacity_reservation")
PARTITION_FIELDS = ("gpu_partition", "partitions_per_gpu")
"""Where the copies ran: a partition of a GPU each (a sweep's partition comparison reads them)."""
"""Settings the cost and the reader of a result need beside the mode and its size."""


def hosting_summary(state: PipelineState) -> dict[str, Any]:
    """The configuration the last attempt deployed: the spec's, with remediation's overrides applied."""
    hosting = with_overrides(state.spec.hosting, state.attempt.overrides).model_dump(mode="json")
    # The mode, its size, and every setting a remediation can change (where the mode has it).
    shown = {"mode", "instance_count", *HOSTING_FIELD.values(), *PRICED_FIELDS, *PARTITION_FIELDS}
    summary = {k: v for k, v in hosting.items() if k in shown and v is not None}
    summary["instance_type"] = state.deploy.instance_type if state.deploy else None
    deployed = state.deploy.effective_hosting if state.deploy else {}
    if deployed.get("model_data_download_timeout_s") is not None:
        # Derived at deploy from the packed artifact where the spec left it empty.
        summary["model_data_download_timeout_s"] = deployed["model_data_download_timeout_s"]
    if state.attempt.overrides.extra_requirements:
        summary["extra_requirements"] = list(state.attempt.overrides.extra_requirements)
    summary["attempts"] = state.attempt.number
    if state.deploy and state.deploy.instance_pools:
        summary.update(served_fleet(state))
    return summary


def served_fleet(state: PipelineState) -> dict[str, Any]:
    """A pooled endpoint's types: the pools by priority, the types that served and how many of each
    (the benchmark's count after measuring, else the wait's at InService), and whether they mixed.
    ``instance_type`` is the type that served when only one did (what the figures and the cost are
    of), else the first pool's, marked as a mixed fleet."""
    assert state.deploy is not None
    fleet = state.benchmark.fleet if state.benchmark else {}
    counts = dict(fleet.get("after") or (state.endpoint.instance_pools if state.endpoint else {}))
    for name, count in (fleet.get("before") or {}).items():
        counts[name] = max(count, counts.get(name, 0))
    served = {name: count for name, count in counts.items() if count > 0}
    summary: dict[str, Any] = {
        "instance_pools": list(state.deploy.instance_pools),
        "served_instance_types": served,
        "mixed_fleet": len(served) > 1,
    }
    if len(served) == 1:
        summary["instance_type"] = next(iter(served))
    if state.deploy.device_models:
        summary["served_pools"] = served_pools(state, served)
    return summary


def served_pools(state: PipelineState, served: dict[str, int]) -> list[dict[str, Any]]:
    """Pools across devices: each pool that served, by priority, with its device, the Model on it and
    the artifact that Model serves (what the figures of that type are of)."""
    assert state.deploy is not None and state.convert is not None and state.pack is not None
    first_device = state.convert.manifest.serving.device
    rows = []
    for priority, name in enumerate(state.deploy.instance_pools, start=1):
        if name not in served:
            continue
        device = device_of(name)
        further = state.pack.for_device(device) if device != first_device else None
        artifact = (
            {
                "onnx_file": further.onnx_file,
                "precision": further.precision,
                "model_data_uri": further.model_data_uri,
            }
            if further
            else {
                "onnx_file": state.convert.manifest.onnx_file,
                "precision": state.convert.manifest.precision,
                "model_data_uri": state.pack.model_data_uri,
            }
        )
        rows.append(
            {
                "priority": priority,
                "instance_type": name,
                "instances": served[name],
                "device": device,
                "model": state.deploy.device_models.get(device, state.deploy.model_names[0]),
                "artifact": artifact,
            }
        )
    return rows


def _lifetime(state: PipelineState, finished_at: str) -> dict[str, Any] | None:
    if state.deploy is None:
        return None
    kept = bool(state.teardown and state.teardown.kept)
    return {
        "start": state.deploy.created_at.isoformat(),
        "end": finished_at,
        "note": "still running (keep_endpoint): billed until deleted"
        if kept
        else "from CreateEndpoint to teardown: provisioning, warmup, measurement and idle included",
    }


def with_cost(result: dict[str, Any]) -> dict[str, Any]:
    result["cost"] = run_cost(result)
    return result


def pipeline_result(
    state: PipelineState,
    status: str,
    *,
    detail: dict[str, Any] | None,
    cloudwatch: dict[str, Any],
    sagemaker_url: str | None = None,
) -> dict[str, Any]:
    """The result of a pipeline run; ``detail`` is the engine's output (None when none was made).

    ``sagemaker_url`` is where the run's SageMaker calls went when not to AWS (the local SageMaker).
    """
    finished_at = clock.now().isoformat()
    data = state.model_dump(mode="json")
    benchmark = state.benchmark
    generator = (detail or {}).get("environment") or {}
    measurements = (detail or {}).get("measurements")
    if measurements is None and benchmark is not None:
        measurements = [s.model_dump(mode="json") for s in benchmark.shapes]
    # On AWS the instance's utilisation comes from CloudWatch, read by now for each measurement's window.
    with_cloudwatch_view(measurements or [], cloudwatch)
    hosting = hosting_summary(state)
    result = {
        "schema_version": RESULT_SCHEMA_VERSION,
        "kind": "pipeline",
        "status": status,
        "finished_at": finished_at,
        "environment": environment(detail),
        "measured_on": measured_on(
            instance_type=hosting["instance_type"] or _named_instance_type(state),
            endpoint_url=benchmark.endpoint_url if benchmark else generator.get("endpoint_url"),
            sagemaker_url=sagemaker_url,
            cpu=generator.get("cpu"),
            gpu_partition=hosting.get("gpu_partition"),
        ),
        **data,
        "hosting": hosting,
        **({"fleet": _fleet_label(hosting)} if hosting.get("instance_pools") else {}),
        "model_source": model_source(state),
        "endpoint_lifetime": _lifetime(state, finished_at),
        "client": {
            "runner": benchmark.runner if benchmark else generator.get("runner"),
            "endpoint_url": benchmark.endpoint_url if benchmark else generator.get("endpoint_url"),
            "policy": (detail or {}).get("policy"),
        },
        "warm_checks": (detail or {}).get("warm_checks", []),
        "measurements": measurements or [],
        "cloudwatch": cloudwatch,
    }
    return with_cost(result)


def _fleet_label(hosting: dict[str, Any]) -> dict[str, Any]:
    """What the figures of a pooled endpoint are of: one type, or a mixture not to be read as a type's."""
    served = hosting.get("served_instance_types") or {}
    listed = ", ".join(f"{name} × {count}" for name, count in served.items()) or "none"
    if hosting.get("mixed_fleet"):
        label = f"MIXED FLEET ({listed}): the figures are a mixture of types, not any one type's"
    else:
        label = f"served by {listed} (instance pools {' then '.join(hosting['instance_pools'])})"
    # Pools across devices: which device's artifact each served type ran.
    artifacts = [
        f"{pool['instance_type']}: {pool['device']} artifact {pool['artifact']['onnx_file']} ({pool['artifact']['precision']})"
        for pool in hosting.get("served_pools") or []
    ]
    if artifacts:
        label += "; " + "; ".join(artifacts)
    return {"served": served, "mixed": bool(hosting.get("mixed_fleet")), "label": label}


def model_source(state: PipelineState) -> dict[str, Any]:
    """The source as the spec named it and, for an hf:// model, the commit that was converted."""
    hub = state.convert.manifest.hub if state.convert else None
    return {"source": state.spec.model.source, **(hub.model_dump(mode="json") if hub else {})}


def _named_instance_type(state: PipelineState) -> str | None:
    """The spec's first instance type, for a run that failed before it deployed one."""
    listed = getattr(state.spec.hosting, "instance_type_fallbacks", None)
    return str(listed[0]) if listed else None


def bench_result(
    output: dict[str, Any],
    *,
    run_id: str,
    benchmark_spec: dict[str, Any],
    hosting: dict[str, Any],
    warmup: dict[str, Any] | None,
    cloudwatch: dict[str, Any],
) -> dict[str, Any]:
    """The result of ``deploybench bench`` against an existing endpoint."""
    result = {
        "schema_version": RESULT_SCHEMA_VERSION,
        "kind": "bench",
        "status": "SUCCEEDED",
        "run_id": run_id,
        "finished_at": clock.now().isoformat(),
        "environment": environment(output),
        "measured_on": measured_on(
            instance_type=hosting.get("instance_type"),
            endpoint_url=output["environment"]["endpoint_url"],
            cpu=output["environment"].get("cpu"),
        ),
        "spec": {"benchmark": benchmark_spec},
        "hosting": hosting,
        "endpoint": {"name": output["endpoint_name"]},
        "endpoint_lifetime": {
            "start": _iso(output["started_at"]),
            "end": _iso(output["ended_at"]),
            "note": "the benchmark's own time on an endpoint that runs anyway",
        },
        "warmup": warmup,
        "client": {
            "runner": output["environment"]["runner"],
            "endpoint_url": output["environment"]["endpoint_url"],
            "policy": output["policy"],
        },
        "warm_checks": output["warm_checks"],
        "measurements": output["measurements"],
        "cloudwatch": cloudwatch,
    }
    return with_cost(result)


def _iso(epoch: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).isoformat()


def load_result(path: Path) -> dict[str, Any]:
    """Read a result file of a known schema version (1 is upgraded in memory).

    Raises:
        ResultInvalid: missing file, not JSON, or unknown schema version.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultInvalid(f"result file {path} does not exist.", fix="pass a result.json path") from None
    except (OSError, ValueError) as error:
        raise ResultInvalid(
            f"result file {path} is not readable JSON: {error}.", fix="pass a result.json"
        ) from None
    if not isinstance(data, dict) or data.get("schema_version") not in READABLE_VERSIONS:
        found = data.get("schema_version") if isinstance(data, dict) else type(data).__name__
        raise ResultInvalid(
            f"result file {path} has schema_version {found!r}; this deploybench reads {sorted(READABLE_VERSIONS)}.",
            fix="pass a result.json written by deploybench",
        )
    if data["schema_version"] == 1:
        data = {
            **data,
            "kind": "pipeline",
            "hosting": {
                "mode": data["spec"]["hosting"].get("mode", "realtime"),
                "instance_type": (data.get("deploy") or {}).get("instance_type"),
                "instance_count": data["spec"]["hosting"].get("instance_count", 1),
            },
            "measurements": (data.get("benchmark") or {}).get("shapes", []),
        }
    data["source"] = str(path)
    return data
