"""F39: the account's SageMaker quotas for what a run creates, read before any spend.

A new account's quota for most instance types is 0: CreateEndpoint is then refused with
``ResourceLimitExceeded`` ("The account-level service limit 'ml.g5.xlarge for endpoint usage' is 0
Instances ..."), after the conversion and packing were paid for. Service Quotas names each quota
(``<type> for endpoint usage``, ``<type> for processing job usage``, the serverless concurrency
across all endpoints) and gives its code; the code is found by name with ListServiceQuotas (codes
differ per quota and are never typed here), and the applied value read with GetServiceQuota.

The run's first instance type decides whether it starts: too little quota there blocks. A fallback
without quota warns, and remediation skips it (``workflows/remediation/changes.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError, EndpointConnectionError

from workflows.aws.clients import error_code
from workflows.contracts import Finding
from workflows.spec.pipeline import RunSpec, is_gpu_instance

if TYPE_CHECKING:
    from types_boto3_service_quotas import ServiceQuotasClient

SERVICE_CODE = "sagemaker"
QUOTA_ID = "F39"
SERVERLESS_CONCURRENCY = "Maximum total concurrency that can be allocated across all serverless endpoints"
READ_ERRORS = frozenset(
    {
        "AccessDeniedException",
        "NoSuchResourceException",
        "IllegalArgumentException",
        "ServiceException",
        "TooManyRequestsException",
    }
)
"""ListServiceQuotas' and GetServiceQuota's modelled errors: the quotas are then reported unread."""
# PlanBenchmark's 'auto' runs a processing job past this planned measurement (plan_benchmark.py).
AUTO_JOB_PLANNED_S = 720.0


def endpoint_quota(instance_type: str) -> str:
    """The Service Quotas name of an instance type's endpoint quota."""
    return f"{instance_type} for endpoint usage"


def processing_quota(instance_type: str) -> str:
    """The Service Quotas name of an instance type's processing-job quota."""
    return f"{instance_type} for processing job usage"


@dataclass(frozen=True)
class QuotaNeed:
    """One quota the run draws on: its name, how much it needs, and whether too little blocks."""

    name: str
    needed: int
    unit: str
    blocking: bool
    why: str
    instance_type: str | None = None


@dataclass(frozen=True)
class Quota:
    """A quota as Service Quotas reports it."""

    name: str
    code: str
    value: float


def quota_needs(spec: RunSpec) -> list[QuotaNeed]:
    """What the run creates, as quotas: each instance type's endpoint usage (the first one's blocks,
    fallbacks' warn), serverless concurrency, and the benchmark job's instance when one may run."""
    hosting = spec.hosting
    needs: list[QuotaNeed] = []
    types = list(getattr(hosting, "instance_type_fallbacks", None) or [])
    count = int(getattr(hosting, "instance_count", 1) or 1)
    for position, name in enumerate(types):
        needs.append(
            QuotaNeed(
                endpoint_quota(name),
                count,
                "instances",
                blocking=position == 0,
                why="the endpoint" if position == 0 else f"fallback {name}",
                instance_type=name,
            )
        )
    if hosting.mode == "serverless":
        concurrency = int(getattr(hosting, "max_concurrency", 1))
        needs.append(QuotaNeed(SERVERLESS_CONCURRENCY, concurrency, "", True, "the serverless endpoint"))
    benchmark = spec.benchmark
    job_runs = benchmark.runner == "processing-job" or (
        benchmark.runner == "auto"
        and ((types and is_gpu_instance(types[0])) or benchmark.planned_seconds() > AUTO_JOB_PLANNED_S)
    )
    may_run = benchmark.runner == "auto"
    if job_runs or may_run:
        needs.append(
            QuotaNeed(
                processing_quota(benchmark.job_instance_type),
                1,
                "instances",
                blocking=bool(job_runs),
                why="the benchmark processing job"
                if job_runs
                else "the benchmark processing job (benchmark.runner 'auto' starts one when warmup does not finish)",
                instance_type=benchmark.job_instance_type,
            )
        )
    return needs


def read_quotas(client: ServiceQuotasClient, names: Sequence[str]) -> dict[str, Quota]:
    """The named SageMaker quotas: codes by name from ListServiceQuotas, values from GetServiceQuota.

    Names the account's listing does not hold are absent from the result.

    Raises:
        ClientError, BotoCoreError: Service Quotas refused or could not be reached.
    """
    wanted = set(names)
    codes: dict[str, str] = {}
    for page in client.get_paginator("list_service_quotas").paginate(ServiceCode=SERVICE_CODE):
        for quota in page.get("Quotas", []):
            name = quota.get("QuotaName", "")
            if name in wanted and quota.get("QuotaCode"):
                codes[name] = quota["QuotaCode"]
    found: dict[str, Quota] = {}
    for name, code in codes.items():
        applied = client.get_service_quota(ServiceCode=SERVICE_CODE, QuotaCode=code)["Quota"]
        found[name] = Quota(name, code, float(applied.get("Value", 0.0)))
    return found


def increase_command(quota: Quota, desired: int, region: str) -> str:
    """The AWS CLI command that asks for ``desired`` of ``quota``."""
    return (
        f"aws service-quotas request-service-quota-increase --service-code {SERVICE_CODE} "
        f"--quota-code {quota.code} --desired-value {desired} --region {region}"
    )


def _finding(need: QuotaNeed, quota: Quota, region: str) -> Finding:
    unit = f" {need.unit}" if need.unit else ""
    call = "CreateProcessingJob" if "processing job" in need.name else "CreateEndpoint"
    message = (
        f"the account's SageMaker quota '{quota.name}' ({quota.code}) is {quota.value:g}{unit} in {region}; "
        f"{need.why} needs {need.needed}{unit}: {call} would be refused with ResourceLimitExceeded."
    )
    fix = f"request an increase: `{increase_command(quota, need.needed, region)}`"
    if need.blocking and need.instance_type and "endpoint usage" in need.name:
        fix += ", or list first an instance type that has quota in hosting.instance_type_fallbacks"
    return Finding(
        id=QUOTA_ID,
        severity="blocking" if need.blocking else "warning",
        message=message if need.blocking else f"{need.why}: {message}",
        fix=fix,
        evidence=f"Service Quotas {SERVICE_CODE}/{quota.code} '{quota.name}' = {quota.value:g}",
    )


@dataclass(frozen=True)
class QuotaCheck:
    """What the quota check found: findings, each quota's value by name, and what it could not read."""

    findings: list[Finding]
    values: dict[str, float]
    checked: list[str]
    skipped: list[str]


def check_quotas(spec: RunSpec, client: ServiceQuotasClient, *, region: str) -> QuotaCheck:
    """F39 for every quota the run draws on: too little blocks (the first instance type, serverless
    concurrency, a benchmark job that will run) or warns (fallbacks, a job that may run)."""
    needs = quota_needs(spec)
    if not needs:
        return QuotaCheck([], {}, [], [])
    try:
        quotas = read_quotas(client, [n.name for n in needs])
    except (ClientError, EndpointConnectionError) as error:
        # The operations' own errors (botocore's service-quotas model) and an unreachable endpoint are
        # reported; anything else (expired or invalid credentials) is the caller's to report.
        code = error_code(error) if isinstance(error, ClientError) else type(error).__name__
        if isinstance(error, ClientError) and code not in READ_ERRORS:
            raise
        reason = f"{QUOTA_ID} account quotas: Service Quotas could not be read ({code}: {str(error)[:200]})"
        return QuotaCheck([], {}, [], [reason])
    findings = [
        _finding(need, quotas[need.name], region)
        for need in needs
        if need.name in quotas and quotas[need.name].value < need.needed
    ]
    missing = [n.name for n in needs if n.name not in quotas]
    skipped = (
        [
            f"{QUOTA_ID} account quotas: Service Quotas lists no {', '.join(repr(m) for m in missing)} for {SERVICE_CODE}"
        ]
        if missing
        else []
    )
    read = [n.name for n in needs if n.name in quotas]
    checked = [f"{QUOTA_ID} account quotas in {region}: {', '.join(read)}"] if read else []
    values = {name: quota.value for name, quota in quotas.items()}
    findings.sort(key=lambda f: f.severity != "blocking")
    return QuotaCheck(findings, values, checked, skipped)


def has_quota(values: dict[str, float], instance_type: str, count: int = 1) -> bool:
    """False only when the endpoint quota of ``instance_type`` was read and is below ``count``."""
    value = values.get(endpoint_quota(instance_type))
    return value is None or value >= count


def values_of(result: Any) -> dict[str, float]:
    """The quota values a preflight result recorded (none when no quota was read)."""
    return dict(getattr(result, "quotas", None) or {}) if result is not None else {}
