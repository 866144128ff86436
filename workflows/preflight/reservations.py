"""F06 for reserved capacity: the ML reservation a spec names, read before any spend.

``hosting.capacity_reservation`` sends ``CapacityReservationConfig`` with
``capacity-reservations-only``, the one preference botocore's model offers: SageMaker then launches
the endpoint's instances into that reservation or not at all. A reservation of another instance
type, with fewer free instances than the endpoint needs, not yet started, expired, or one a training
plan holds for training jobs only, fails the launch after the conversion and packing were paid for.

botocore's ``MlReservationArn`` pattern takes a resource type of at most 14 characters, so of
SageMaker's reservation ARNs it accepts a training plan's (``training-plan/NAME``), not one of its
reserved capacities' (``reserved-capacity/ID``). The plan is read with DescribeTrainingPlan: its
``TargetResources`` (it must include ``endpoint``), its reserved capacities' instance types, its
state and its free instance count. The read needs ``sagemaker:DescribeTrainingPlan`` on the plan;
when it is refused the check is reported unread, never passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError, EndpointConnectionError

from workflows.aws.clients import error_code
from workflows.contracts import Finding
from workflows.spec.pipeline import RunSpec

RESERVATION_ID = "F06"
TRAINING_PLAN = "training-plan"
ENDPOINT_TARGET = "endpoint"
"""The SageMakerResourceName a training plan lists in TargetResources when it may host endpoints."""
USABLE, NOT_YET = frozenset({"Active"}), frozenset({"Scheduled", "Pending"})


@dataclass(frozen=True)
class Reservation:
    """An ML reservation as SageMaker describes it."""

    arn: str
    kind: str
    status: str
    instance_types: tuple[str, ...]
    total: int
    available: int | None
    targets: tuple[str, ...] | None
    """What the plan reserves for (training-job, hyperpod-cluster, endpoint ...)."""
    starts: str = ""
    ends: str = ""


def kind_of(arn: str) -> str:
    """The ARN's resource type: ``training-plan`` for what SageMaker launches endpoints into."""
    return arn.split(":", 5)[-1].split("/", 1)[0]


def read_reservation(sagemaker: Any, arn: str) -> Reservation:
    """Describe the training plan ``arn`` names.

    Raises:
        ClientError: SageMaker refused (ResourceNotFound, AccessDenied ...).
        ValueError: the ARN names something other than a training plan.
    """
    kind = kind_of(arn)
    if kind != TRAINING_PLAN:
        raise ValueError(f"{arn} names a {kind}, not a training plan")
    plan = sagemaker.describe_training_plan(TrainingPlanName=arn)
    summaries = plan.get("ReservedCapacitySummaries") or []
    return Reservation(
        arn=arn,
        kind=kind,
        status=str(plan.get("Status", "")),
        instance_types=tuple(sorted({str(s["InstanceType"]) for s in summaries if s.get("InstanceType")})),
        total=int(plan.get("TotalInstanceCount") or 0),
        available=plan.get("AvailableInstanceCount"),
        targets=tuple(plan.get("TargetResources") or ()),
        starts=str(plan.get("StartTime") or ""),
        ends=str(plan.get("EndTime") or ""),
    )


def _finding(severity: str, message: str, fix: str, reservation: Reservation) -> Finding:
    free = "unknown" if reservation.available is None else str(reservation.available)
    return Finding(
        id=RESERVATION_ID,
        severity=severity,  # type: ignore[arg-type]
        message=f"capacity reservation {reservation.arn}: {message}",
        fix=fix,
        evidence=(
            f"{reservation.kind} status {reservation.status}, instance types "
            f"{', '.join(reservation.instance_types) or 'none'}, {free} of {reservation.total} instances free"
            + (f", for {', '.join(reservation.targets)}" if reservation.targets is not None else "")
            + (f", {reservation.starts} to {reservation.ends}" if reservation.starts else "")
        ),
    )


def reservation_findings(reservation: Reservation, *, instance_type: str, needed: int) -> list[Finding]:
    """What would keep the endpoint's ``needed`` instances of ``instance_type`` out of the reservation."""
    findings: list[Finding] = []
    if reservation.targets is not None and ENDPOINT_TARGET not in reservation.targets:
        findings.append(
            _finding(
                "blocking",
                f"the training plan reserves capacity for {', '.join(reservation.targets) or 'nothing'}, not "
                "for endpoints: SageMaker would launch no instance into it.",
                "name a training plan created with target resource 'endpoint', or remove "
                "hosting.capacity_reservation to deploy on demand",
                reservation,
            )
        )
    if reservation.instance_types and instance_type not in reservation.instance_types:
        findings.append(
            _finding(
                "blocking",
                f"it holds {', '.join(reservation.instance_types)}, and the endpoint deploys {instance_type}: "
                "capacity-reservations-only launches nothing outside the reservation.",
                f"set hosting.instance_type_fallbacks to [{reservation.instance_types[0]}], or name the "
                f"reservation that holds {instance_type}",
                reservation,
            )
        )
    if reservation.status in NOT_YET:
        findings.append(
            _finding(
                "warning",
                f"it is {reservation.status} (from {reservation.starts or 'its start time'}): an endpoint "
                "created before then gets no instance and stalls in Creating (F06).",
                "start the run once the reservation is Active",
                reservation,
            )
        )
    elif reservation.status not in USABLE:
        findings.append(
            _finding(
                "blocking",
                f"it is {reservation.status or 'in no known state'}: no instance can launch into it.",
                "name an Active reservation, or remove hosting.capacity_reservation to deploy on demand",
                reservation,
            )
        )
    if reservation.available is not None and int(reservation.available) < needed:
        findings.append(
            _finding(
                "blocking",
                f"{reservation.available} of its {reservation.total} instances are free and the endpoint needs "
                f"{needed}.",
                f"lower hosting.instance_count to {max(1, int(reservation.available))}, free instances in the "
                "reservation, or extend it",
                reservation,
            )
        )
    return findings


@dataclass(frozen=True)
class ReservationCheck:
    findings: list[Finding]
    checked: list[str]
    skipped: list[str]


def check_reservation(spec: RunSpec, sagemaker: Any) -> ReservationCheck:
    """F06 for the spec's capacity reservation: read it and check it against the endpoint."""
    hosting = spec.hosting
    arn = getattr(hosting, "capacity_reservation", None)
    if not arn:
        return ReservationCheck([], [], [])
    instance_type = str(hosting.instance_type_fallbacks[0])  # type: ignore[union-attr]
    needed = int(getattr(hosting, "instance_count", 1))
    try:
        reservation = read_reservation(sagemaker, arn)
    except ClientError as error:
        code = error_code(error)
        if code in {"ResourceNotFound", "ValidationException"}:
            return ReservationCheck(
                [
                    Finding(
                        id=RESERVATION_ID,
                        severity="blocking",
                        message=f"capacity reservation {arn}: SageMaker knows no such reservation "
                        f"({code}: {str(error)[:200]}).",
                        fix="check the ARN (aws sagemaker list-training-plans) and its region, or remove "
                        "hosting.capacity_reservation",
                        evidence=code,
                    )
                ],
                [],
                [],
            )
        return ReservationCheck(
            [], [], [f"{RESERVATION_ID} capacity reservation {arn}: not read ({code}: {str(error)[:200]})"]
        )
    except EndpointConnectionError as error:
        return ReservationCheck([], [], [f"{RESERVATION_ID} capacity reservation {arn}: not read ({error})"])
    except ValueError as error:
        return ReservationCheck(
            [
                Finding(
                    id=RESERVATION_ID,
                    severity="blocking",
                    message=f"capacity reservation {error}: CapacityReservationConfig's MlReservationArn "
                    "takes a training plan's ARN.",
                    fix="name the training plan that holds the reservation (arn:...:training-plan/NAME; "
                    "aws sagemaker list-training-plans)",
                    evidence=kind_of(arn),
                )
            ],
            [],
            [],
        )
    findings = reservation_findings(reservation, instance_type=instance_type, needed=needed)
    return ReservationCheck(
        findings,
        [
            f"{RESERVATION_ID} capacity reservation {arn}: {instance_type} x {needed} against its {reservation.kind}"
        ],
        [],
    )
