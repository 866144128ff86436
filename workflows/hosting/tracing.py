"""Request tracing: the endpoint's own sample of request and response payloads, in CloudWatch Logs.

``CreateEndpointConfig.TracingConfig`` (botocore 1.44) makes SageMaker trace a share of the inference
requests an endpoint receives (``InitialSamplingPercentage``, 0-100) and send each trace to the log group
``/aws/sagemaker/Endpoints/<endpoint>/traces``; a payload over 512 KiB is truncated there and, when
``LargePayloadDeliveryS3Uri`` is set, delivered whole to S3 (encrypted with ``KmsKeyId``, which needs the
URI). SageMaker does not combine tracing with data capture, serverless variants or multi-model endpoints.

Off unless the spec asks (``hosting.tracing``): the payloads are the users' texts, so the run says in its
plan that tracing is on and where the traces go. ``deploybench diagnose --traces`` reads them back
(``workflows.diagnosis.traces``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from workflows.errors import SpecInvalid
from workflows.hosting.network import KmsKeyId
from workflows.models import Strict

# botocore's TracingConfig.LargePayloadDeliveryS3Uri: (https|s3)://([^/])/?(.*), at most 512 characters.
_PAYLOAD_URI = r"^(https|s3)://([^/])/?(.*)$"
TRUNCATED_AT_KIB = 512
"""SageMaker truncates a traced payload over 512 KiB in the log group (botocore's documentation)."""

RETENTION_DAYS = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)
"""The retentions CloudWatch Logs accepts (botocore's PutRetentionPolicy ``retentionInDays`` documentation)."""

SERVERLESS_REFUSAL = (
    "hosting.tracing cannot be combined with a serverless endpoint: SageMaker's TracingConfig does not "
    "trace serverless variants, data capture or multi-model endpoints. Drop hosting.tracing, or deploy "
    "on instances (mode realtime) to trace requests"
)


class TracingSettings(Strict):
    """``hosting.tracing``: the share of requests SageMaker traces into the endpoint's traces log group."""

    sampling_percent: int = Field(
        ...,
        ge=0,
        le=100,
        description=(
            "TracingConfig.InitialSamplingPercentage: the percentage of inference requests SageMaker traces "
            "(0-100; 0 traces none). Each trace holds the request and response payloads (the users' texts) and "
            "goes to /aws/sagemaker/Endpoints/<endpoint>/traces."
        ),
    )
    large_payload_s3_uri: str | None = Field(
        None,
        max_length=512,
        pattern=_PAYLOAD_URI,
        description=(
            f"TracingConfig.LargePayloadDeliveryS3Uri: where SageMaker delivers a payload over "
            f"{TRUNCATED_AT_KIB} KiB whole (the trace keeps it truncated); empty: only the truncated payload."
        ),
    )
    large_payload_kms_key_id: KmsKeyId = Field(
        None,
        description="TracingConfig.KmsKeyId: the key SageMaker encrypts the payloads it delivers to "
        "large_payload_s3_uri with; needs large_payload_s3_uri.",
    )

    retention_days: int = Field(
        30,
        description=(
            "How long CloudWatch Logs keeps the traces (PutRetentionPolicy on the endpoint's traces group, set at "
            "deploy): one of CloudWatch's retentions, 1 to 3653 days. SageMaker's own groups never expire, and "
            "traces hold the users' texts."
        ),
    )

    @field_validator("retention_days")
    @classmethod
    def _a_cloudwatch_retention(cls, days: int) -> int:
        if days not in RETENTION_DAYS:
            raise ValueError(
                f"retention_days {days} is not a retention CloudWatch Logs accepts: use one of "
                f"{', '.join(map(str, RETENTION_DAYS))}"
            )
        return days

    @model_validator(mode="after")
    def _key_needs_uri(self) -> Any:
        if self.large_payload_kms_key_id and not self.large_payload_s3_uri:
            raise ValueError(
                "large_payload_kms_key_id encrypts the payloads delivered to large_payload_s3_uri, and SageMaker "
                "requires the URI with a key: set large_payload_s3_uri, or drop the key"
            )
        return self


class Traced(Strict):
    """The ``tracing`` field of a hosting mode whose endpoint SageMaker can trace (on instances)."""

    tracing: TracingSettings | None = Field(
        None,
        description=(
            "Trace a share of the endpoint's requests (CreateEndpointConfig TracingConfig): sampled request and "
            "response payloads in /aws/sagemaker/Endpoints/<endpoint>/traces, which `deploybench diagnose "
            "--traces` reads. Empty: off (the default; payloads are the users' texts)."
        ),
    )


def refuse_serverless_tracing(data: Any) -> Any:
    """A ``mode: serverless`` hosting section with ``tracing``: refused with the reason and the fix."""
    if isinstance(data, dict) and data.get("tracing") is not None:
        raise ValueError(SERVERLESS_REFUSAL)
    return data


def tracing_config(hosting: Any, *, variants: list[dict[str, Any]], extra: dict[str, Any]) -> dict[str, Any]:
    """``TracingConfig`` for an endpoint config when the hosting asks for it; none otherwise.

    Raises:
        SpecInvalid: the config would combine tracing with what SageMaker refuses beside it (a serverless
            variant, DataCaptureConfig), caught here before any call.
    """
    settings: TracingSettings | None = getattr(hosting, "tracing", None)
    if settings is None:
        return {}
    if any("ServerlessConfig" in variant for variant in variants):
        raise SpecInvalid(SERVERLESS_REFUSAL)
    if "DataCaptureConfig" in extra:
        raise SpecInvalid(
            "hosting.tracing cannot be combined with data capture (DataCaptureConfig): SageMaker refuses both "
            "on one endpoint config. Drop hosting.tracing, or the data capture"
        )
    config: dict[str, Any] = {
        "EnableTracing": True,
        "InitialSamplingPercentage": settings.sampling_percent,
    }
    if settings.large_payload_s3_uri:
        config["LargePayloadDeliveryS3Uri"] = settings.large_payload_s3_uri
    if settings.large_payload_kms_key_id:
        config["KmsKeyId"] = settings.large_payload_kms_key_id
    return {"TracingConfig": config}


def tracing_line(hosting: Any, group: str) -> str | None:
    """The plan's line for tracing: on, how much, and where the traces go (``group``, the endpoint's traces
    log group, ``workflows.naming.endpoint_traces_log_group``); None when it is off."""
    settings: TracingSettings | None = getattr(hosting, "tracing", None)
    if settings is None:
        return None
    large = (
        f"; payloads over {TRUNCATED_AT_KIB} KiB whole to {settings.large_payload_s3_uri}"
        if settings.large_payload_s3_uri
        else f"; payloads over {TRUNCATED_AT_KIB} KiB truncated"
    )
    return (
        f"request tracing on: {settings.sampling_percent}% of requests, their request and response payloads "
        f"(the users' texts) to CloudWatch Logs {group}, kept {settings.retention_days} days{large}; read them "
        "with `deploybench diagnose --traces`"
    )
