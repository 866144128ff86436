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

    kms_key_arn: str | None = Field(
        None,
        description=f"The KMS key every object write names (SSE-KMS; {KMS_KEY_ENV}); empty: the bucket's default.",
    )

    @classmethod
    def from_env(cls) -> Settings:
        """Read ``DEPLOYBENCH_BUCKET``, ``DEPLOYBENCH_SAGEMAKER_ROLE_ARN``, ``AWS_REGION``,
        ``AWS_ENDPOINT_URL_SAGEMAKER`` and ``DEPLOYBENCH_KMS_KEY_ARN``."""
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
        )


def kms_key_from_env() -> str | None:
    """The stack's key (``DEPLOYBENCH_KMS_KEY_ARN``), for the handler layer's S3 client."""
    return os.environ.get(KMS_KEY_ENV) or None
