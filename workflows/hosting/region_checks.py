"""Preflight of a spec that names several Regions: each Region, its images, and the router's API.

The gate (``workflows.hosting.gate``) runs these for ``hosting.regions`` of two or more. What they
cannot read without that Region's clients is listed as skipped, never guessed.
"""

from __future__ import annotations

import botocore
import botocore.session

from workflows.contracts import Finding
from workflows.hosting.regions import RegionSettings

REGIONS = "regions"
"""The finding id of a multi-Region spec's problems."""
ROUTER_OPERATIONS = (
    "CreateInferenceRouter",
    "DescribeInferenceRouter",
    "UpdateInferenceRouter",
    "DeleteInferenceRouter",
)


def _blocking(message: str, fix: str, evidence: str) -> Finding:
    return Finding(id=REGIONS, severity="blocking", message=message, fix=fix, evidence=evidence)


def botocore_findings() -> list[Finding]:
    """The installed botocore must know the router operations and CrossRegionTrafficConfig (botocore 1.44)."""
    model = botocore.session.get_session().get_service_model("sagemaker")
    missing = [name for name in ROUTER_OPERATIONS if name not in model.operation_names]
    if "CrossRegionTrafficConfig" not in getattr(model.shape_for("CreateEndpointConfigInput"), "members", {}):
        missing.append("CreateEndpointConfig.CrossRegionTrafficConfig")
    if not missing:
        return []
    return [
        _blocking(
            f"botocore {botocore.__version__} has no {', '.join(missing)}: it cannot create or delete the router.",
            "install the project's lock (make setup): its botocore has the inference router API",
            f"botocore {botocore.__version__}",
        )
    ]


def sagemaker_regions() -> set[str]:
    """The Regions botocore's endpoint data lists for SageMaker, in every partition."""
    session = botocore.session.get_session()
    return {
        region
        for partition in session.get_available_partitions()
        for region in session.get_available_regions("sagemaker", partition_name=partition)
    }


def region_findings(settings: RegionSettings, run_region: str, *, local: bool) -> list[Finding]:
    """The primary is where the run deploys; every Region is one SageMaker serves, in its partition."""
    session = botocore.session.get_session()
    primary = settings.regions[0]
    findings: list[Finding] = []
    if not local and primary != run_region:
        findings.append(
            _blocking(
                f"hosting.regions starts with {primary}, but the run deploys in {run_region}: the router is "
                "created in the primary Region, where the run's state machine runs.",
                f"run in {primary} (AWS_REGION), or list {run_region} first",
                f"regions {settings.regions}, run Region {run_region}",
            )
        )
    offered = sagemaker_regions()
    unknown = [r for r in settings.regions if r not in offered]
    if unknown:
        findings.append(
            _blocking(
                f"botocore's endpoint data lists no SageMaker in {', '.join(unknown)}.",
                "choose Regions SageMaker serves (deploybench doctor prints the installed botocore)",
                f"regions {settings.regions}",
            )
        )
    partitions = {r: session.get_partition_for_region(r) for r in settings.regions if r in offered}
    home = partitions.get(primary)
    apart = [r for r, p in partitions.items() if p != home]
    if home and apart:
        findings.append(
            _blocking(
                f"{', '.join(apart)} are outside the primary's partition ({home}): a router's destinations must "
                "be in its own partition.",
                f"list only Regions of the {home} partition",
                ", ".join(f"{r}: {p}" for r, p in partitions.items()),
            )
        )
    return findings


def skipped_reads(settings: RegionSettings) -> list[str]:
    """What a multi-Region preflight does not read yet, said rather than assumed."""
    return [
        f"F39 account quotas in {', '.join(settings.regions[1:])}: read with that Region's Service Quotas "
        "client, which the gate does not build yet",
        "inference routers offered in "
        + ", ".join(settings.regions)
        + ": botocore's endpoint data lists no Regions for sagemaker-inference-router-runtime; "
        "CreateInferenceRouter answers where they are not",
    ]
