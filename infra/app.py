"""The CDK app (``cdk.json``: ``.venv/bin/python -m infra.app``).

``build_app()`` is what tests synthesize (``app.synth()``, no CDK CLI, no Node packages beyond
the jsii runtime the Python library brings); cdk-nag's AwsSolutions checks run on every synth,
and an unacknowledged finding is an error that stops ``cdk deploy``.
"""

from __future__ import annotations

import os
import sys

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.bundling import test_synth
from infra.constants import (
    CONTEXT_ALERT_EMAIL,
    CONTEXT_JANITOR_REGIONS,
    CONTEXT_JANITOR_SCHEDULE,
    CONTEXT_KMS_KEY_ARN,
    CONTEXT_SWEEP_ENABLED,
    CONTEXT_SWEEP_FILE,
    CONTEXT_SWEEP_SCHEDULE,
    STACK_NAME,
    TEST_SYNTH_ENV,
)
from infra.network import StackNetwork
from infra.stack import DeploybenchStack, StackSettings

# Feature flags this app relies on (set here so tests and `cdk synth` agree).
FEATURE_FLAGS = {
    # Access logs are delivered under a bucket policy, not the LogDeliveryWrite ACL (ACLs are disabled).
    "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": True,
}


def _flag(value: object, default: bool) -> bool:
    if value is None:
        return default
    return str(value).lower() in {"1", "true", "yes"}


def _regions(value: object) -> tuple[str, ...]:
    """A list, or a comma-separated string (``cdk deploy -c deploybench:janitorRegions=us-east-1,us-west-2``)."""
    named = value.split(",") if isinstance(value, str) else list(value or [])  # type: ignore[call-overload]
    return tuple(str(region).strip() for region in named if str(region).strip())


def settings_from(app: cdk.App) -> StackSettings:
    node = app.node
    defaults = StackSettings()
    return StackSettings(
        sweep_file=node.try_get_context(CONTEXT_SWEEP_FILE) or defaults.sweep_file,
        sweep_schedule=node.try_get_context(CONTEXT_SWEEP_SCHEDULE) or defaults.sweep_schedule,
        sweep_enabled=_flag(node.try_get_context(CONTEXT_SWEEP_ENABLED), defaults.sweep_enabled),
        janitor_schedule=node.try_get_context(CONTEXT_JANITOR_SCHEDULE) or defaults.janitor_schedule,
        janitor_regions=_regions(node.try_get_context(CONTEXT_JANITOR_REGIONS)),
        alert_email=node.try_get_context(CONTEXT_ALERT_EMAIL) or None,
        kms_key_arn=node.try_get_context(CONTEXT_KMS_KEY_ARN) or None,
        network=StackNetwork.from_context(node.try_get_context),
    )


def build_app(
    outdir: str | None = None, context: dict[str, object] | None = None
) -> tuple[cdk.App, DeploybenchStack]:
    """The app with its one stack and the AwsSolutions checks (run at synth)."""
    app = cdk.App(outdir=outdir, context={**FEATURE_FLAGS, **(context or {})})
    stack = DeploybenchStack(
        app,
        STACK_NAME,
        settings=settings_from(app),
        env=cdk.Environment(
            account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")
        ),
    )
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
    return app, stack


def main() -> None:
    if test_synth():
        sys.exit(
            f"{TEST_SYNTH_ENV}=1 is set: the function asset would lack its dependencies. "
            f"Unset it to synthesize or deploy."
        )
    app, _ = build_app()
    app.synth()


if __name__ == "__main__":
    main()
