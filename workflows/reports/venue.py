"""Where a result was measured: on AWS, on the named instance type, or locally, on this host's CPU.

A local run's endpoint is a process on the machine that ran the pipeline, so its figures say what
that CPU does with the model; the instance type in its spec only names what the run would have
deployed on AWS (and what its cost is estimated for). Every report, plot and result says which.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from workflows.benchmark.host import cpu_summary, describe_cpu

LOCAL = "local"
AWS = "aws"
LOCAL_PARTITIONS = "local stand-in: partitions are copies on CPU, not MIG slices"
"""What a local run's GPU partitions are: the local SageMaker starts one more copy per partition."""
_LOOPBACK = {"localhost", "::1"}


def is_local_url(url: str | None) -> bool:
    """True for an endpoint on this machine (the local SageMaker serves on 127.0.0.1)."""
    if not url:
        return False
    host = (urlparse(url).hostname or "").lower()
    return host in _LOOPBACK or host.startswith("127.")


def measured_on(
    *,
    instance_type: str | None,
    endpoint_url: str | None,
    sagemaker_url: str | None = None,
    cpu: dict[str, Any] | None = None,
    gpu_partition: str | None = None,
) -> dict[str, Any]:
    """The ``measured_on`` block of a result.

    Args:
        instance_type: what the spec names (or the endpoint runs on).
        endpoint_url: the SageMaker runtime URL the load generator called.
        sagemaker_url: the SageMaker control-plane URL the run used, when known (a failed run has no
            benchmark, but its deploy went to the local SageMaker all the same).
        cpu: the load generator's CPU as it recorded it; read from this machine when None.
        gpu_partition: the partition type each copy asked for, if any: a local run says its
            partitions are copies on the CPU stand-in.
    """
    named = instance_type or "the named instance type"
    if not (is_local_url(endpoint_url) or is_local_url(sagemaker_url)):
        return {"where": AWS, "instance_type": instance_type, "label": f"measured on AWS, on {named}"}
    cpu = cpu or cpu_summary()
    host = host_sharing(cpu, instance_type)
    label = f"LOCAL run on this host ({describe_cpu(cpu)}): not a measurement of {named}"
    partitions = {"partitions": LOCAL_PARTITIONS} if gpu_partition else {}
    return {
        "where": LOCAL,
        "instance_type": instance_type,
        "cpu": cpu,
        "host": host,
        "label": label + (f" ({LOCAL_PARTITIONS}: {gpu_partition})" if gpu_partition else ""),
        **partitions,
    }


def host_sharing(cpu: dict[str, Any], instance_type: str | None) -> dict[str, Any]:
    """How a local run used its host: the cores, shared by load generator and endpoint, against the
    vCPUs the named instance type would have had to itself."""
    from workflows.preflight.instances import instance

    row = instance(instance_type) if instance_type else None
    return {
        "cpus": cpu.get("usable_cpus") or cpu.get("logical_cpus"),
        "shared_by": ["load generator", "endpoint"],
        "named_vcpus": row.vcpus if row else None,
    }


def host_line(measured: dict[str, Any]) -> str | None:
    """``This host's 2 CPUs ran both the load generator and the endpoint; ml.c6i.xlarge has 4 vCPUs
    for the endpoint alone.``; None for a result measured on AWS."""
    if measured.get("where") != LOCAL:
        return None
    host = measured.get("host") or host_sharing(measured.get("cpu") or {}, measured.get("instance_type"))
    cpus = host.get("cpus")
    named, vcpus = measured.get("instance_type") or "the named instance type", host.get("named_vcpus")
    line = (
        f"This host's {cpus if cpus else 'unrecorded number of'} CPUs ran both the load generator and the "
        "endpoint (they compete for the same cores)"
    )
    return line + (f"; {named} would have had {vcpus} vCPUs for the endpoint alone." if vcpus else ".")


def of_result(result: dict[str, Any]) -> dict[str, Any]:
    """A result's ``measured_on``; results written before it existed get it from their endpoint URL."""
    if result.get("measured_on"):
        return dict(result["measured_on"])
    generator = (result.get("environment") or {}).get("load_generator") or {}
    url = (result.get("client") or {}).get("endpoint_url") or generator.get("endpoint_url")
    instance_type = (result.get("hosting") or {}).get("instance_type")
    if not is_local_url(url):
        return measured_on(instance_type=instance_type, endpoint_url=url)
    cpu = generator.get("cpu") or {"model": "CPU not recorded", "logical_cpus": None, "extensions": []}
    return measured_on(instance_type=instance_type, endpoint_url=url, cpu=cpu)


def is_local(result: dict[str, Any]) -> bool:
    return of_result(result)["where"] == LOCAL


def banner(results: list[dict[str, Any]]) -> str | None:
    """The line every plot of these results carries when any of them is local; None when none is."""
    local = [of_result(r) for r in results if is_local(r)]
    if not local:
        return None
    cpus = sorted({describe_cpu(m["cpu"]) for m in local})
    named = sorted({m.get("instance_type") or "?" for m in local})
    which = "LOCAL run" if len(results) == 1 else f"{len(local)} of {len(results)} results LOCAL"
    return f"{which} on {'; '.join(cpus)}: not a measurement of {', '.join(named)}"
