"""Deployment settings the handlers read from their environment.

Only the handler layer builds a ``Settings`` (``Settings.from_env()``); the logic in
``workflows`` receives it as an argument.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field

from workflows.errors import SpecInvalid

KMS_KEY_ENV = "DEPLOYBENCH_KMS_KEY_ARN"
"""The stack's KMS key, set on every function: every object written is encrypted with it."""


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    bucket: str = Field(description="Bucket for staging folders, model artifacts and results.")
    sagemaker_role_arn: str = Field(description="Execution role that SageMaker models assume.")
    region: str = "us-east-1"
    sagemaker_endpoint_url: str | None = Field(
        None,
        description=(
            "Where SageMaker calls go when not to AWS (AWS_ENDPOINT_URL_SAGEMAKER): the local SageMaker "
            "on 127.0.0.1 makes every figure of the run a local one."
        ),
    )
    conversion_cache: str | None = Field(
        None,
        description=(
            "Where ConvertToOnnx keeps converted artifacts by content (DEPLOYBENCH_CONVERSION_CACHE): a "
            "local folder or an s3:// prefix; unset or 'off' converts every time."
        ),
    )
    conversion_cache_max_gib: float = Field(
        20.0, gt=0, description="Size bound of the conversion cache (DEPLOYBENCH_CONVERSION_CACHE_MAX_GIB)."
    )
    conversion_cache_max_age_days: float = Field(
        30.0,
        gt=0,
        description="Entries unused this long are removed (DEPLOYBENCH_CONVERSION_CACHE_MAX_AGE_DAYS).",
    )

    kms_key_arn: str | None = Field(
        None,
        description=f"The KMS key every object write names (SSE-KMS; {KMS_KEY_ENV}); empty: the bucket's default.",
    )

    @classmethod
    def from_env(cls) -> Settings:
        """Read ``DEPLOYBENCH_BUCKET``, ``DEPLOYBENCH_SAGEMAKER_ROLE_ARN``, ``AWS_REGION``,
        ``AWS_ENDPOINT_URL_SAGEMAKER``, ``DEPLOYBENCH_KMS_KEY_ARN`` and the ``DEPLOYBENCH_CONVERSION_CACHE*`` bounds."""
        missing = [
            name
            for name in ("DEPLOYBENCH_BUCKET", "DEPLOYBENCH_SAGEMAKER_ROLE_ARN")
            if not os.environ.get(name)
        ]
        if missing:
            raise SpecInvalid(
                f"environment variables {', '.join(missing)} are not set.",
                fix="deploy the stack with CDK (it sets them on every function) or run with --local",
            )
        return cls(
            bucket=os.environ["DEPLOYBENCH_BUCKET"],
            sagemaker_role_arn=os.environ["DEPLOYBENCH_SAGEMAKER_ROLE_ARN"],
            region=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
            sagemaker_endpoint_url=os.environ.get("AWS_ENDPOINT_URL_SAGEMAKER") or None,
            kms_key_arn=os.environ.get(KMS_KEY_ENV) or None,
            conversion_cache=_cache_location(os.environ.get(CONVERSION_CACHE_ENV)),
            conversion_cache_max_gib=_positive(CONVERSION_CACHE_MAX_GIB_ENV, 20.0),
            conversion_cache_max_age_days=_positive(CONVERSION_CACHE_MAX_AGE_ENV, 30.0),
        )


def kms_key_from_env() -> str | None:
    """The stack's key (``DEPLOYBENCH_KMS_KEY_ARN``), for the handler layer's S3 client."""
    return os.environ.get(KMS_KEY_ENV) or None


CONVERSION_CACHE_ENV = "DEPLOYBENCH_CONVERSION_CACHE"
CONVERSION_CACHE_MAX_GIB_ENV = "DEPLOYBENCH_CONVERSION_CACHE_MAX_GIB"
CONVERSION_CACHE_MAX_AGE_ENV = "DEPLOYBENCH_CONVERSION_CACHE_MAX_AGE_DAYS"


def _cache_location(value: str | None) -> str | None:
    if not value or value.strip().lower() in ("off", "none", "0", "false"):
        return None
    return value.strip()


def _positive(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise SpecInvalid(
            f"environment variable {name}={raw!r} is not a positive number.",
            fix=f"set {name} to a number above 0 (default {default:g}), or unset it",
        )
    return value
