"""CheckSpec: the checks on the spec alone, before anything is converted, packed or created.

The pipeline's first state, so that a run started from the console, by EventBridge or by an S3
upload is refused as early as one started from the CLI, which runs the same function before it
starts an execution. It validates the spec (a malformed one is ``SpecInvalid`` naming each field,
not a parser traceback), checks the model source without converting it
(``workflows.spec.model_source``) and runs every preflight check that needs neither the
artifact nor the model size (F04 Direct mode on GPU, F05, F08, F09, F11, F12, F20, F26...): a
blocking finding is ``PreflightBlocked`` before the convert step spends a minute or a container
Lambda's ten.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workflows.contracts import PreflightResult, StepRequest
from workflows.conversion import hub
from workflows.errors import PreflightBlocked, SpecInvalid
from workflows.hosting.gate import GateClients, gate
from workflows.preflight.findings import describe_findings
from workflows.preflight.gate import LOCAL_REGION
from workflows.spec.model import HUB_SCHEME
from workflows.spec.pipeline import RunSpec, parse_spec

ROUTED_MODES = ("realtime",)
"""Modes whose attempt may move to another Region: one model from the packed artifact, no components or
scaling (what deploy stages and teardown removes in the other Region)."""

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_service_quotas import ServiceQuotasClient


def spec_request(event: Any) -> StepRequest:
    """The step's request from the raw execution input.

    Raises:
        SpecInvalid: the input has no spec, or the spec does not validate (each field named).
    """
    if not isinstance(event, Mapping) or "spec" not in event:
        raise SpecInvalid(
            'the execution input has no \'spec\' (expected {"run_id": ..., "spec": {...}}).',
            fix="start the execution with the input `deploybench input SPEC` prints",
        )
    spec = parse_spec(event["spec"], origin="the execution input's spec")
    return StepRequest(run_id=str(event.get("run_id") or ""), spec=spec)


def check_spec(
    spec: RunSpec,
    *,
    s3: S3Client | None,
    region: str = LOCAL_REGION,
    secretsmanager: Any | None = None,
    quotas: ServiceQuotasClient | None = None,
    local: bool = False,
    sagemaker: Any | None = None,
) -> PreflightResult:
    """Check ``spec`` before any work: the gate (``workflows.hosting.gate``), and stop on a blocking finding.

    Args:
        spec: the validated run spec.
        s3: an S3 client for an ``s3://`` model source; None where S3 cannot be read (the local
            engine's is its own), which refuses such a source.
        region: where the run deploys (image URIs by region).
        secretsmanager: a Secrets Manager client where ``model.token_secret`` is to be read (AWS).
        quotas: a Service Quotas client where the account's quotas are to be read (AWS, F39).
        local: the run goes to the local engine.
        sagemaker: a SageMaker client where ``hosting.capacity_reservation`` is to be read (AWS, F06).

    Returns:
        What was checked, the warnings found and the quotas read.

    Raises:
        NotServableLocally, ModelSourceInvalid, UnsupportedArchitecture, SpecInvalid: the model cannot
            be converted or served as the spec asks, or not where it is asked.
        PreflightBlocked: a blocking finding, listing every one, then the warnings.
    """
    regions = getattr(spec.hosting, "regions", None) or []
    if len(regions) > 1 and spec.hosting.mode not in ROUTED_MODES:
        raise SpecInvalid(
            f"hosting.regions names {len(regions)} Regions: a run moves to the next Region (F06 past the last "
            f"instance type) in the {', '.join(ROUTED_MODES)} mode only so far, not {spec.hosting.mode}.",
            fix="run with one Region (drop hosting.regions or leave the primary); preflight checks the rest",
        )
    clients = GateClients(
        s3=s3,
        secretsmanager=secretsmanager,
        quotas=quotas,
        quotas_skipped="" if quotas else "the local SageMaker has no account quotas",
        sagemaker=sagemaker,
    )
    result = gate(spec, region=region, local=local, clients=clients)
    blocking = [f for f in result.findings if f.severity == "blocking"]
    if blocking:
        warnings = [f for f in result.findings if f.severity == "warning"]
        raise PreflightBlocked(
            "preflight found problems that would fail on AWS, before anything was converted:\n"
            + describe_findings(blocking)
            + (f"\nwarnings:\n{describe_findings(warnings)}" if warnings else "")
        )
    return result


def gate_clients(spec: RunSpec, session: Any) -> GateClients:
    """What the gate reads with on AWS, from the session of ``deploybench run`` or ``preflight``: S3 for
    an ``s3://`` source, Secrets Manager for a token secret, Service Quotas when credentials resolve."""
    s3 = session.client("s3") if spec.model.source.startswith("s3://") else None
    secrets = session.client("secretsmanager") if spec.model.token_secret else None
    if session.get_credentials() is None:
        return GateClients(
            s3=s3, secretsmanager=secrets, quotas_skipped="no AWS credentials here to read them"
        )
    reserved = getattr(spec.hosting, "capacity_reservation", None)
    return GateClients(
        s3=s3,
        secretsmanager=secrets,
        quotas=session.client("service-quotas"),
        sagemaker=session.client("sagemaker") if reserved else None,
    )


def check_before_start(spec: RunSpec, *, local: bool, session: Any = None) -> PreflightResult:
    """What ``deploybench run`` checks before it starts an execution: the gate, as CheckSpec runs it,
    so a refused spec creates nothing at all.

    Raises:
        NotServableLocally, ModelSourceInvalid, UnsupportedArchitecture, SpecInvalid, PreflightBlocked.

    Args:
        spec: the parsed run spec.
        local: the run goes to the local engine.
        session: the boto3 session of an AWS run (its region and credentials); the default one when None.
    """
    if local:
        return check_spec(spec, s3=None, local=True)
    if session is None:
        import boto3

        session = boto3.session.Session()
    clients = gate_clients(spec, session)
    return check_spec(
        spec,
        s3=clients.s3,
        region=session.region_name or LOCAL_REGION,
        secretsmanager=clients.secretsmanager,
        quotas=clients.quotas,
    )


def pin_source(spec: RunSpec, *, session: Any = None, environ: Mapping[str, str] = os.environ) -> RunSpec:
    """``spec`` with an ``hf://`` source's branch or tag replaced by the commit it names now.

    ``deploybench run`` starts the execution with the pinned spec: CheckSpec, the conversion and
    every resource tag (``deploybench:model-commit``) then refer to the same weights.

    Args:
        spec: the checked run spec.
        session: the boto3 session of an AWS run, to read ``model.token_secret`` when HF_TOKEN is unset.
        environ: where HF_TOKEN and HF_ENDPOINT are read.
    """
    if not spec.model.source.startswith(HUB_SCHEME):
        return spec
    secrets = session.client("secretsmanager") if session is not None and spec.model.token_secret else None
    model = hub.pin(spec.model, secretsmanager=secrets, environ=environ)
    return spec.model_copy(update={"model": model})
