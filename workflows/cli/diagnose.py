"""``deploybench diagnose``: name the catalogued failure behind an endpoint or a pasted log."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from workflows.cli.options import HostingMode, JsonOption, ProfileOption, RegionOption
from workflows.cli.output import OK, UNDIAGNOSED, aws_session, emit, fail, guarded
from workflows.cli.output import out as console
from workflows.contracts import Diagnosis

if TYPE_CHECKING:
    from workflows.diagnosis.evidence import Evidence
    from workflows.diagnosis.intake import Pasted


def _refuse(message: str) -> NoReturn:
    fail(
        message,
        fix=(
            "pass --log FILE with a pasted error, log excerpt or Describe* output, or --endpoint NAME; add the "
            "endpoint's own records with --traces NAME, --events FILE or --cloudtrail NAME"
        ),
    )


def _print_diagnosis(diagnosis: Diagnosis) -> None:
    known = diagnosis.id != "unknown"
    colour = "red" if known else "yellow"
    console.print(f"[bold {colour}]{diagnosis.id}[/] {diagnosis.title}")
    console.print(f"  confidence {diagnosis.confidence:.2f} · action [bold]{diagnosis.action}[/]")
    runner_up = diagnosis.alternatives[0] if diagnosis.alternatives else None
    if runner_up is not None:
        console.print(f"  runner-up {runner_up.id} {runner_up.title} (confidence {runner_up.confidence:.2f})")
    else:
        console.print("  runner-up: none (no other entry matches)")
    if diagnosis.fix:
        console.print(f"  fix: {diagnosis.fix}")
    if diagnosis.details:
        console.print("  details: " + ", ".join(f"{k}={v}" for k, v in diagnosis.details.items()))
    console.print("  evidence:")
    for line in diagnosis.evidence:
        console.print(f"    {line}", markup=False)


@guarded
def diagnose(
    endpoint: Annotated[
        str | None,
        typer.Option(
            metavar="NAME", help="Live endpoint: DescribeEndpoint and its CloudWatch log events (AWS)."
        ),
    ] = None,
    log: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help=(
                "Pasted evidence, any mix: DescribeEndpoint/DescribeInferenceComponent JSON, CloudWatch "
                "lines, a client traceback, a Step Functions error and cause ('-' for stdin)."
            ),
        ),
    ] = None,
    mode: Annotated[
        HostingMode | None,
        typer.Option(
            metavar="MODE",
            help=f"Hosting mode, when the evidence cannot tell: {', '.join(m.value for m in HostingMode)}.",
            case_sensitive=False,
        ),
    ] = None,
    traces: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help=(
                "Endpoint whose traces log group to read (/aws/sagemaker/Endpoints/NAME/traces, written when its "
                "endpoint config has TracingConfig: hosting.tracing): each error response's status, latency and "
                "body (AWS)."
            ),
        ),
    ] = None,
    events: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help=(
                "Capacity events: EventBridge 'SageMaker Endpoint State Change' events (one, a list or JSON lines) "
                "and CloudTrail lookup-events output or trail files, read as the endpoint's observed series "
                "('-' for stdin)."
            ),
        ),
    ] = None,
    cloudtrail: Annotated[
        str | None,
        typer.Option(
            metavar="NAME", help="Endpoint whose SageMaker calls to read from CloudTrail LookupEvents (AWS)."
        ),
    ] = None,
    since_min: Annotated[
        int,
        typer.Option(
            metavar="MINUTES",
            help="--endpoint, --traces, --cloudtrail: read what the last N minutes recorded.",
        ),
    ] = 60,
    catalogue: Annotated[
        list[Path] | None,
        typer.Option(
            metavar="FILE",
            help=(
                "A catalogue of your own (YAML: entries and rules, the packaged schema), added to the "
                "packaged one and to $XDG_CONFIG_HOME/deploybench/catalogue.d/*.yaml; repeatable."
            ),
        ),
    ] = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Name the failure catalogue entry behind a failure, its evidence and its fix; exit 3 when none matches."""
    from workflows.diagnosis import Evidence, evidence_from_endpoint
    from workflows.diagnosis import diagnose as match
    from workflows.diagnosis.paste import evidence_from_paste
    from workflows.diagnosis.user_catalogue import rules_for_cli

    own_records = traces is not None or events is not None or cloudtrail is not None
    if endpoint is not None and log is not None or (endpoint is None and log is None and not own_records):
        _refuse(
            "give exactly one of --endpoint NAME or --log FILE (and any of --traces, --events, --cloudtrail)"
        )
    rules, _ = rules_for_cli(catalogue)
    hosting_mode = mode.value if mode is not None else None
    since = datetime.now(UTC) - timedelta(minutes=since_min)
    evidence = Evidence(hosting_mode=hosting_mode)
    if log is not None:
        pasted = _read_log(log)
        evidence = evidence_from_paste(pasted.text, origin=log.name, hosting_mode=hosting_mode)
        evidence.notes.extend(pasted.notes)
        if not evidence.items and evidence.endpoint is None and not evidence.inference_components:
            _refuse(
                f"{log} holds no evidence (it is empty); paste a log excerpt, an error or a Describe* output"
            )
    elif endpoint is not None:
        evidence = evidence_from_endpoint(
            endpoint, **_aws_clients(region, profile), since=since, hosting_mode=hosting_mode
        )
        if evidence.endpoint is None and not evidence.items and not own_records:
            _refuse(f"nothing to diagnose for endpoint {endpoint}: " + "; ".join(evidence.notes))
    named = endpoint or traces or cloudtrail
    _add_own_records(
        evidence,
        named,
        traces=traces,
        events=events,
        cloudtrail=cloudtrail,
        since=since,
        aws=(region, profile),
    )
    if not evidence.items and evidence.endpoint is None and not evidence.polls:
        _refuse("nothing to diagnose: " + ("; ".join(evidence.notes) or "the sources hold no evidence"))
    diagnosis = match(evidence, rules)

    def human() -> None:
        if evidence.forms:
            console.print("read as: " + ", ".join(evidence.forms), style="dim")
        _print_diagnosis(diagnosis)

    emit(diagnosis.model_dump(mode="json"), as_json=as_json, human=human)
    raise typer.Exit(UNDIAGNOSED if diagnosis.id == "unknown" else OK)


def _add_own_records(
    evidence: Evidence,
    named: str | None,
    *,
    traces: str | None,
    events: Path | None,
    cloudtrail: str | None,
    since: datetime,
    aws: tuple[str | None, str | None],
) -> None:
    """The endpoint's own records where the user points to them: its traces, capacity events, CloudTrail.

    ``named``: the endpoint the user named (any option): events of other endpoints in ``events`` are skipped.
    """
    from workflows.diagnosis.capacity_events import add_capacity_events, add_cloudtrail_events
    from workflows.diagnosis.traces import add_trace_events

    if traces is not None:
        add_trace_events(evidence, logs=_aws_clients(*aws)["logs"], endpoint_name=traces, since=since)
    if events is not None:
        pasted = _read_log(events)
        add_capacity_events(evidence, pasted.text, origin=events.name, endpoint_name=named)
    if cloudtrail is not None:
        client = aws_session(*aws).client("cloudtrail")
        add_cloudtrail_events(evidence, cloudtrail=client, endpoint_name=cloudtrail, since=since)


def _read_log(path: Path) -> Pasted:
    from workflows.diagnosis.intake import UnreadablePaste, read_pasted, read_pasted_file

    try:
        if str(path) == "-":
            return read_pasted(sys.stdin.buffer, name="stdin")
        return read_pasted_file(path)
    except UnreadablePaste as error:
        _refuse(f"{error}; paste a log excerpt, an error or a Describe* output")
    except FileNotFoundError:
        _refuse(f"log file {path} does not exist; pass a text file (a CloudWatch export, an error message)")
    except (IsADirectoryError, PermissionError) as error:
        _refuse(f"log file {path} cannot be read: {error}")


def _aws_clients(region: str | None, profile: str | None) -> dict[str, Any]:
    from botocore.config import Config

    config = Config(retries={"mode": "standard", "max_attempts": 5})
    session = aws_session(region, profile)
    return {
        "sagemaker": session.client("sagemaker", config=config),
        "logs": session.client("logs", config=config),
    }
