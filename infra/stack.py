"""The ``Deploybench`` stack: constructs composed, outputs the CLI reads, tags."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import CfnOutput, Environment, Stack, Tags
from constructs import Construct

from infra import nag
from infra.constants import (
    DEFAULT_JANITOR_SCHEDULE,
    DEFAULT_SWEEP_FILE,
    DEFAULT_SWEEP_SCHEDULE,
    OUTPUT_ALERT_TOPIC_ARN,
    OUTPUT_ARTIFACT_KEY_ARN,
    OUTPUT_BENCHMARK_SWEEP_ARN,
    OUTPUT_BUCKET,
    OUTPUT_DASHBOARD,
    OUTPUT_DEPLOY_PIPELINE_ARN,
    OUTPUT_REDEPLOY_PIPELINE_ARN,
    STACK_TAGS,
)
from infra.encryption import ArtifactKey
from infra.functions import Functions
from infra.monitoring import AlertTopic, Monitoring
from infra.network import StackNetwork
from infra.orchestration import StateMachines
from infra.permissions import Scope
from infra.sagemaker_role import SageMakerExecution
from infra.storage import ArtifactBucket
from infra.triggers import Triggers
from workflows.janitor.cleanup import REGIONS_ENV, TOPIC_ENV


@dataclass(frozen=True)
class StackSettings:
    """What a deployment may change (CDK context, see cdk.json)."""

    sweep_file: str = DEFAULT_SWEEP_FILE
    sweep_schedule: str = DEFAULT_SWEEP_SCHEDULE
    sweep_enabled: bool = True
    janitor_schedule: str = DEFAULT_JANITOR_SCHEDULE
    janitor_regions: tuple[str, ...] = ()
    """The Regions runs may use (hosting.regions): the janitor sweeps each besides the stack's (empty: its own)."""
    alert_email: str | None = None
    kms_key_arn: str | None = None
    """An existing KMS key for the bucket and everything written (empty: the stack creates one)."""
    network: StackNetwork | None = None
    """The VPC the functions run in and the only one the SageMaker role may use (infra/network.py)."""


class DeploybenchStack(Stack):
    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, env: Environment | None = None
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="deploybench: deploy, benchmark and tear down encoders on SageMaker",
            env=env,
        )
        encryption = ArtifactKey(self, "Encryption", key_arn=settings.kms_key_arn)
        storage = ArtifactBucket(self, "Artifacts", key=encryption.key)
        sagemaker = SageMakerExecution(self, "SageMaker", bucket=storage.bucket, network=settings.network)
        encryption.grant_use(sagemaker.role)
        alerts = AlertTopic(self, "Alerts", email=settings.alert_email)
        access = Scope(
            stack=self,
            bucket=storage.bucket,
            sagemaker_role=sagemaker.role,
            alert_topic=alerts.topic,
            alert_key=alerts.key,
            artifact_key=encryption,
        )
        functions = Functions(self, "Functions", access=access, network=settings.network)
        janitor = functions.by_placeholder["JanitorFunctionArn"]
        janitor.add_environment(TOPIC_ENV, alerts.topic.topic_arn)
        if settings.janitor_regions:
            janitor.add_environment(REGIONS_ENV, ",".join(settings.janitor_regions))
        machines = StateMachines(
            self, "StateMachines", functions=dict(functions.by_placeholder), sagemaker_role=sagemaker.role
        )
        triggers = Triggers(
            self,
            "Triggers",
            bucket=storage.bucket,
            sweep=machines.by_name["benchmark_sweep"],
            redeploy=machines.by_name["redeploy_pipeline"],
            start_redeploy=functions.by_placeholder["StartRedeployFunctionArn"],
            janitor=janitor,
            sweep_file=settings.sweep_file,
            sweep_schedule=settings.sweep_schedule,
            sweep_enabled=settings.sweep_enabled,
            janitor_schedule=settings.janitor_schedule,
            stoppable=list(machines.by_name.values()),
            teardown_stopped=functions.by_placeholder["TeardownStoppedExecutionFunctionArn"],
        )
        monitoring = Monitoring(
            self,
            "Monitoring",
            topic=alerts.topic,
            machines=machines.by_name,
            functions=functions.by_placeholder,
            janitor=janitor,
            dead_letters=triggers.dead_letters,
        )
        outputs = {
            OUTPUT_DEPLOY_PIPELINE_ARN: machines.by_name["deploy_pipeline"].state_machine_arn,
            OUTPUT_BENCHMARK_SWEEP_ARN: machines.by_name["benchmark_sweep"].state_machine_arn,
            OUTPUT_REDEPLOY_PIPELINE_ARN: machines.by_name["redeploy_pipeline"].state_machine_arn,
            OUTPUT_BUCKET: storage.bucket.bucket_name,
            OUTPUT_ALERT_TOPIC_ARN: alerts.topic.topic_arn,
            OUTPUT_DASHBOARD: monitoring.dashboard.dashboard_name,
            # The key to name in hosting.kms_key_id and benchmark.job_kms_key_id: its roles may use it.
            OUTPUT_ARTIFACT_KEY_ARN: encryption.key.key_arn,
        }
        for name, value in outputs.items():
            CfnOutput(self, name, value=value)
        for key, value in STACK_TAGS.items():
            Tags.of(self).add(key, value)
        self.acknowledgements = nag.acknowledge(
            self,
            storage=storage,
            functions=functions,
            machines=machines,
            sagemaker=sagemaker,
            triggers=triggers,
            network=settings.network,
        )
