"""What each function may do: IAM statements scoped to the project's bucket prefixes, names and tags.

Every action is named (no ``*`` actions). Resources are scoped to ``db-*`` SageMaker resources
(every run resource is named ``db-<run id>-...``; SageMaker ARNs carry the lowercase name), and
SageMaker deletes, updates and stops further to resources tagged as deploybench's
(``infra/ownership.py``), to
the artifact bucket's prefixes, and to the stack's own state machines and topic. ``*`` appears
as a resource only for the actions listed in ``infra.unscopable.UNSCOPABLE``, which AWS does not authorize per
resource (List*, X-Ray writes, CloudWatch metric reads).

Pipeline steps share one profile: they act on one run's resources in turn, and a step that
starts reading one more kind of resource should not need a second place changed. A function
added to FUNCTIONS without an entry in ``PROFILES`` gets that profile; the orchestration and
maintenance functions get narrow ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns

from infra.constants import (
    MODELS_PREFIX,
    PREFIX,
    SOURCES_PREFIX,
    STAGING_PREFIX,
    SWEEPS_PREFIX,
    state_machine_name,
)
from infra.cross_region import CROSS_REGION_KINDS as CROSS_REGION_KINDS
from infra.cross_region import across_regions, region_buckets_of
from infra.encryption import ArtifactKey
from infra.ownership import ROUTER_CLEANUP, SAGEMAKER_CLEANUP, changes, manage, statement
from infra.sagemaker_role import sagemaker_log_arns, traces_log_arns
from infra.scaling_grants import (
    AUTOSCALING_ROLE,
    RUN_ALARMS,
    TARGET_TRACKING_ALARMS,
    janitor_scaling,
    scale_to_zero,
)
from workflows.janitor.cleanup import REPORTS_PREFIX
from workflows.naming import ARTIFACTS_PREFIX, CONVERSIONS_PREFIX, RESULTS_PREFIX
from workflows.spec.model import TOKEN_SECRET_PREFIX

TRACES_RETENTION = ["logs:CreateLogGroup", "logs:TagResource", "logs:PutRetentionPolicy"]
"""CreateLogGroup with tags needs TagResource too (CloudWatch Logs' tagging authorization)."""
SAGEMAKER_KINDS = ("endpoint", "endpoint-config", "model", "inference-component", "processing-job")
SAGEMAKER_LIST = [
    "sagemaker:ListEndpoints",
    "sagemaker:ListEndpointConfigs",
    "sagemaker:ListModels",
    "sagemaker:ListInferenceComponents",
    "sagemaker:ListProcessingJobs",
    # A run across Regions: its router, in the primary Region (no name filter, Resource "*").
    "sagemaker:ListInferenceRouters",
]
# conversions/ is the conversion cache ConvertToOnnx reads and fills (shared by runs, keyed by content).
RUN_PREFIXES_WRITTEN = (STAGING_PREFIX, ARTIFACTS_PREFIX, RESULTS_PREFIX, SOURCES_PREFIX, CONVERSIONS_PREFIX)
RUN_PREFIXES_READ = (*RUN_PREFIXES_WRITTEN, MODELS_PREFIX)


@dataclass(frozen=True)
class Scope:
    """What the statements refer to."""

    stack: Stack
    bucket: s3.IBucket
    sagemaker_role: iam.IRole
    alert_topic: sns.ITopic
    alert_key: kms.IKey
    artifact_key: ArtifactKey | None = None
    """The bucket's key: every function that reads or writes objects uses it (infra/encryption.py)."""

    def sagemaker_arns(
        self, kinds: tuple[str, ...] = SAGEMAKER_KINDS, region: str | None = None
    ) -> list[str]:
        """``db-*`` resources of ``kinds``, in the stack's Region (or ``region``: ``*`` for every Region)."""
        return [
            self.stack.format_arn(
                service="sagemaker", resource=kind, resource_name=f"{PREFIX}-*", region=region
            )
            for kind in kinds
        ]

    def routers(self) -> list[str]:
        """The runs' inference routers (``db-<run id>-router``), in the stack's Region: a run's primary."""
        return self.sagemaker_arns(("inference-router",))

    def objects(self, prefixes: tuple[str, ...]) -> list[str]:
        return [self.bucket.arn_for_objects(f"{prefix}*") for prefix in prefixes]

    def scalable_targets(self) -> str:
        # A scalable target's ARN ends with an id AWS assigns, not with the component's name: the
        # statement is narrowed by the SageMaker namespace and the component dimension instead.
        return self.stack.format_arn(
            service="application-autoscaling", resource="scalable-target", resource_name="*"
        )

    def alarms(self, names: tuple[str, ...] = (RUN_ALARMS, TARGET_TRACKING_ALARMS)) -> list[str]:
        """The run's own alarms (``db-<run id>-...``) and the target-tracking alarms of its components."""
        return [
            self.stack.format_arn(
                service="cloudwatch",
                resource="alarm",
                resource_name=name,
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            )
            for name in names
        ]

    def scaling_policies(self) -> str:
        return self.stack.format_arn(
            service="autoscaling",
            resource="scalingPolicy",
            resource_name="*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )

    def autoscaling_role(self) -> str:
        return self.stack.format_arn(
            service="iam", region="", resource="role", resource_name=AUTOSCALING_ROLE
        )

    def token_secrets(self) -> str:
        """The secrets a spec's ``model.token_secret`` may name (Hub tokens of private models)."""
        return self.stack.format_arn(
            service="secretsmanager",
            resource="secret",
            resource_name=f"{TOKEN_SECRET_PREFIX}*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )

    def state_machine_arn(self, name: str) -> str:
        return self.stack.format_arn(
            service="states",
            resource="stateMachine",
            resource_name=state_machine_name(name),
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )

    def executions_arn(self, name: str) -> str:
        return self.stack.format_arn(
            service="states",
            resource="execution",
            resource_name=f"{state_machine_name(name)}:*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )


RESERVATION_READS = ("sagemaker:DescribeTrainingPlan",)
"""The only SageMaker actions on resources the project does not name: the user's own ML reservation."""


def bucket_access(
    scope: Scope, *, read: tuple[str, ...], write: tuple[str, ...] = ()
) -> list[iam.PolicyStatement]:
    """Listing limited to the prefixes read; object reads and writes on exactly those prefixes."""
    statements = [
        statement(
            ["s3:ListBucket"],
            [scope.bucket.bucket_arn],
            StringLike={"s3:prefix": [f"{p}*" for p in read]},
        ),
        statement(["s3:GetObject", "s3:GetObjectVersion"], scope.objects(read)),
    ]
    if write:
        statements.append(
            statement(["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"], scope.objects(write))
        )
    return statements


def pass_sagemaker_role(scope: Scope) -> iam.PolicyStatement:
    """SageMaker models and processing jobs run as the project's SageMaker role, and only SageMaker may be handed it."""
    return statement(
        ["iam:PassRole"],
        [scope.sagemaker_role.role_arn],
        StringEquals={"iam:PassedToService": "sagemaker.amazonaws.com"},
    )


def pipeline_step(scope: Scope) -> list[iam.PolicyStatement]:
    """Convert, pack, preflight, deploy, place components, warm up, benchmark, tear down, diagnose, report."""
    logs = sagemaker_log_arns(scope.stack)
    return [
        *bucket_access(scope, read=RUN_PREFIXES_READ, write=RUN_PREFIXES_WRITTEN),
        statement(SAGEMAKER_LIST, ["*"]),
        # Creates carry the managed tag; deletes, updates and stops need it on the resource (infra/ownership.py).
        *manage(scope.sagemaker_arns()),
        pass_sagemaker_role(scope),
        # Diagnosis reads the container logs of the endpoint, its inference components and the benchmark job.
        statement(["logs:FilterLogEvents", "logs:GetLogEvents", "logs:DescribeLogStreams"], logs),
        # Deploy gives a traced endpoint's traces group the run's tags and a retention (workflows/hosting/tracing.py).
        statement(TRACES_RETENTION, traces_log_arns(scope.stack)),
        # The benchmark reports the endpoint's ModelLatency / OverheadLatency beside client latency.
        statement(["cloudwatch:GetMetricData", "cloudwatch:GetMetricStatistics"], ["*"]),
        # Teardown's last check: anything tagged with the run's id (workflows/hosting/tagged.py).
        statement(["tag:GetResources"], ["*"]),
        *scale_to_zero(scope),
        *across_regions(scope),
    ]


def teardown_step(scope: Scope) -> list[iam.PolicyStatement]:
    """TeardownEndpoint and the stopped-execution teardown: a pipeline step that also removes a run across
    Regions: its router in the primary Region, and its endpoint resources in the other Regions (any Region a
    spec may name), each only where tagged as deploybench's."""
    return pipeline_step(scope)


def model_source_step(scope: Scope) -> list[iam.PolicyStatement]:
    """CheckSpec and ConvertToOnnx: a pipeline step that also reads a private Hub model's token
    (``model.token_secret``, named under deploybench/)."""
    return [*pipeline_step(scope), statement(["secretsmanager:GetSecretValue"], [scope.token_secrets()])]


def check_spec_step(scope: Scope) -> list[iam.PolicyStatement]:
    """CheckSpec: the model source step's access, the account's SageMaker quotas read before any spend
    (F39): quota codes listed by name, each quota's applied value read; and the capacity reservation a
    spec names (F06)."""
    quotas = scope.stack.format_arn(
        service="servicequotas",
        resource="sagemaker",
        resource_name="*",
        arn_format=ArnFormat.SLASH_RESOURCE_NAME,
    )
    # A spec's hosting.capacity_reservation (a training plan) is read too (F06).
    reservations = [scope.stack.format_arn(service="sagemaker", resource="training-plan", resource_name="*")]
    return [
        *model_source_step(scope),
        statement(["servicequotas:ListServiceQuotas"], ["*"]),
        statement(["servicequotas:GetServiceQuota"], [quotas]),
        statement(list(RESERVATION_READS), reservations),
    ]


def compare_sweep(scope: Scope) -> list[iam.PolicyStatement]:
    return bucket_access(scope, read=("results/", SWEEPS_PREFIX), write=(SWEEPS_PREFIX,))


def prepare_redeploy(scope: Scope) -> list[iam.PolicyStatement]:
    return bucket_access(scope, read=(MODELS_PREFIX,), write=(SOURCES_PREFIX,))


def check_redeploy_queue(scope: Scope) -> list[iam.PolicyStatement]:
    return [
        statement(["states:ListExecutions"], [scope.state_machine_arn("redeploy_pipeline")]),
        statement(["states:DescribeExecution"], [scope.executions_arn("redeploy_pipeline")]),
    ]


def start_redeploy(scope: Scope) -> list[iam.PolicyStatement]:
    return [statement(["states:StartExecution"], [scope.state_machine_arn("redeploy_pipeline")])]


def janitor(scope: Scope) -> list[iam.PolicyStatement]:
    elsewhere = scope.sagemaker_arns(CROSS_REGION_KINDS, region="*")
    routers_elsewhere = scope.sagemaker_arns(("inference-router",), region="*")
    return [
        statement(SAGEMAKER_LIST, ["*"]),
        # The janitor reads any db-* resource's tags, and removes only what is tagged as deploybench's.
        statement(["sagemaker:ListTags"], scope.sagemaker_arns()),
        changes(scope.sagemaker_arns(), SAGEMAKER_CLEANUP),
        # A run across Regions' router, in the stack's Region (its primary), by its tags as the rest.
        statement(["sagemaker:ListTags"], scope.routers()),
        changes(scope.routers(), ROUTER_CLEANUP),
        # The other Regions runs may use (DEPLOYBENCH_JANITOR_REGIONS): what a run across Regions leaves
        # there (endpoints, configs, models, a router) by the same tags, and its staged copy in that Region's
        # bucket (<bucket>-<region>, under staging/ only).
        statement(["sagemaker:ListTags"], [*elsewhere, *routers_elsewhere]),
        changes(elsewhere, SAGEMAKER_CLEANUP),
        changes(routers_elsewhere, ROUTER_CLEANUP),
        statement(["s3:ListBucket"], region_buckets_of(scope.bucket)[:1]),
        statement(["s3:DeleteObject"], region_buckets_of(scope.bucket)[1:]),
        *janitor_scaling(scope),
        *bucket_access(scope, read=(STAGING_PREFIX,), write=(STAGING_PREFIX,)),
        statement(["s3:PutObject"], scope.objects((REPORTS_PREFIX,))),
        statement(["sns:Publish"], [scope.alert_topic.topic_arn]),
        # The topic is encrypted with its own key.
        statement(["kms:GenerateDataKey", "kms:Decrypt"], [scope.alert_key.key_arn]),
    ]


def describe_endpoint(scope: Scope) -> list[iam.PolicyStatement]:
    """DescribeEndpoint creates nothing: it reads the endpoint, and probes a vLLM endpoint's served model (F26)."""
    return [
        statement(
            ["sagemaker:DescribeEndpoint", "sagemaker:InvokeEndpoint"], scope.sagemaker_arns(("endpoint",))
        )
    ]


def planning(scope: Scope) -> list[iam.PolicyStatement]:
    """Pure computation: logs and traces only."""
    return []


PROFILES: dict[str, Callable[[Scope], list[iam.PolicyStatement]]] = {
    "DescribeEndpointFunctionArn": describe_endpoint,
    "PlanSweepFunctionArn": planning,
    "CompareWithBaselineFunctionArn": compare_sweep,
    "ReadUploadedSpecFunctionArn": prepare_redeploy,
    "CheckRedeployQueueFunctionArn": check_redeploy_queue,
    "StartRedeployFunctionArn": start_redeploy,
    "JanitorFunctionArn": janitor,
    "CheckSpecFunctionArn": check_spec_step,
    "TeardownEndpointFunctionArn": teardown_step,
    "TeardownStoppedExecutionFunctionArn": teardown_step,
    "ConvertToOnnxFunctionArn": model_source_step,
}


def function_statements(placeholder: str, scope: Scope) -> list[iam.PolicyStatement]:
    """The statements of the function serving ``placeholder`` (pipeline-step profile unless listed)."""
    return PROFILES.get(placeholder, pipeline_step)(scope)
