"""``PendingDeploymentSummary``: the deployment in progress, as DescribeEndpoint returns it while an
endpoint is Creating (or Updating), and never once it is InService or Failed.

Each pending variant says which instance type it waits for, how many instances it has of how many
(``CurrentInstanceCount`` of ``DesiredInstanceCount``: 0 until the instances are in service, and 0
for good in a capacity stall, F06) and its ``VariantStatus``. Serverless variants carry their
desired ``ServerlessConfig`` instead of counts.
"""

from __future__ import annotations

from typing import Any

from workflows.local.sagemaker.api import epoch
from workflows.local.sagemaker.state import Endpoint

IN_PROGRESS = {"Creating", "Updating"}


def _variant(endpoint: Endpoint, variant: dict[str, Any], assigned: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "VariantName": variant["VariantName"],
        "DesiredWeight": float(variant.get("InitialVariantWeight", 1.0)),
    }
    if "DeployedImages" in assigned:
        summary["DeployedImages"] = [dict(image) for image in assigned["DeployedImages"]]
    if variant.get("ServerlessConfig"):
        summary["DesiredServerlessConfig"] = dict(variant["ServerlessConfig"])
        return summary
    if variant.get("InstancePools"):
        # Pooled: one count per pool (0 until that pool's instances are in service), no one type.
        summary["InstancePools"] = [dict(pool) for pool in assigned.get("InstancePools") or []] or [
            {"InstanceType": pool["InstanceType"], "CurrentInstanceCount": 0}
            for pool in sorted(variant["InstancePools"], key=lambda p: int(p["Priority"]))
        ]
    else:
        summary["InstanceType"] = variant.get("InstanceType", "")
    summary["CurrentInstanceCount"] = int(assigned.get("CurrentInstanceCount", 0))
    summary["DesiredInstanceCount"] = int(variant.get("InitialInstanceCount", 1))
    summary["VariantStatus"] = [dict(status) for status in assigned.get("VariantStatus") or []] or [
        {"Status": endpoint.status, "StartTime": epoch(endpoint.created)}
    ]
    if variant.get("ManagedInstanceScaling"):
        summary["ManagedInstanceScaling"] = dict(variant["ManagedInstanceScaling"])
    return summary


def pending_deployment_summary(endpoint: Endpoint, config: dict[str, Any] | None) -> dict[str, Any] | None:
    """The summary of the endpoint's deployment in progress; None when nothing is in progress."""
    if endpoint.status not in IN_PROGRESS or config is None:
        return None
    assigned = {v["VariantName"]: v for v in endpoint.variants}
    return {
        "EndpointConfigName": endpoint.config_name,
        "ProductionVariants": [
            _variant(endpoint, variant, assigned.get(variant["VariantName"], {}))
            for variant in config.get("ProductionVariants") or []
        ],
        "StartTime": epoch(endpoint.created),
    }
