"""What IAM authorizes for each AWS request: its actions, resource ARNs and request condition keys.

From the Service Authorization Reference of each service, for the operations the project calls:
``accesses`` maps one recorded request to what its caller's role must be allowed, and
``sagemaker_accesses`` to what SageMaker then does as the execution role the request names
(list and read each S3 input, write each output, pull each image, write each log group). An
operation without a rule here fails the contract test, so a new call cannot go unchecked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.iam_recording import Request

# botocore's service name -> IAM's service prefix (where they differ, the prefix is IAM's).
IAM_PREFIX = {
    "sagemaker-runtime": "sagemaker",
    "sagemaker-inference-router-runtime": "sagemaker",
    "resourcegroupstaggingapi": "tag",
    "stepfunctions": "states",
    "service-quotas": "servicequotas",
}
AUTOSCALING_SERVICE = "sagemaker.application-autoscaling.amazonaws.com"
AUTOSCALING_ROLE = (
    f"aws-service-role/{AUTOSCALING_SERVICE}/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"
)
# The SageMaker Describe/Delete/Update/Stop calls name their resource with one parameter.
SAGEMAKER_NAMES = {
    "ModelName": "model",
    "EndpointConfigName": "endpoint-config",
    "EndpointName": "endpoint",
    "InferenceComponentName": "inference-component",
    "ProcessingJobName": "processing-job",
    "InferenceRouterName": "inference-router",
}
SAGEMAKER_CREATES = {
    "CreateModel": "model",
    "CreateEndpointConfig": "endpoint-config",
    "CreateEndpoint": "endpoint",
    "CreateInferenceComponent": "inference-component",
    "CreateProcessingJob": "processing-job",
    "CreateInferenceRouter": "inference-router",
}
# Operations authorized only with Resource "*".
UNSCOPED = {
    "sagemaker": {
        "ListEndpoints",
        "ListEndpointConfigs",
        "ListModels",
        "ListInferenceComponents",
        "ListProcessingJobs",
        # The router security page's example policy grants it on Resource "*".
        "ListInferenceRouters",
    },
    "cloudwatch": {"GetMetricData", "GetMetricStatistics"},
    "application-autoscaling": {"DescribeScalableTargets", "DescribeScalingPolicies"},
    "resourcegroupstaggingapi": {"GetResources"},
    "logs": {"DescribeLogGroups"},
    "service-quotas": {"ListServiceQuotas"},
}
# Calls no IAM policy governs.
UNAUTHORIZED = {("sts", "GetCallerIdentity")}


@dataclass(frozen=True)
class Access:
    """One IAM authorization: the action, the resource ARN and the request's condition keys."""

    action: str
    resource: str
    context: dict[str, Any] = field(default_factory=dict)
    why: str = ""

    def describe(self) -> str:
        keys = f" with {self.context}" if self.context else ""
        return f"{self.action} on {self.resource}{keys}"


@dataclass(frozen=True)
class Where:
    region: str
    account: str

    def arn(self, service: str, resource: str, *, region: bool = True, account: bool = True) -> str:
        return (
            f"arn:aws:{service}:{self.region if region else ''}:{self.account if account else ''}:{resource}"
        )

    def sagemaker(self, kind: str, name: str) -> str:
        # SageMaker ARNs carry the resource name in lowercase.
        return self.arn("sagemaker", f"{kind}/{name.lower()}")

    def alarm(self, name: str) -> str:
        return self.arn("cloudwatch", f"alarm:{name}")

    def log_group(self, group: str) -> list[str]:
        # CloudWatch Logs documents log-group ARNs both with and without the trailing ":*": a policy
        # must allow both forms to be safe for every Logs action.
        return [self.arn("logs", f"log-group:{group}"), self.arn("logs", f"log-group:{group}:*")]


def s3_object(bucket: str, key: str) -> str:
    return f"arn:aws:s3:::{bucket}/{key}"


def split_s3(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


def tag_context(tags: list[dict[str, str]] | None, prefix: str = "aws") -> dict[str, Any]:
    if not tags:
        return {}
    context: dict[str, Any] = {f"{prefix}:RequestTag/{t['Key']}": t["Value"] for t in tags}
    context[f"{prefix}:TagKeys"] = [t["Key"] for t in tags]
    return context


def _sse_kms(params: dict[str, Any]) -> list[Access]:
    """S3 asks KMS for a data key as the caller when a write names a key (SSE-KMS)."""
    key = params.get("SSEKMSKeyId")
    return [Access("kms:GenerateDataKey", str(key), why="SSE-KMS write")] if key else []


def _s3(request: Request, where: Where) -> list[Access]:
    p, op = request.params, request.operation
    bucket = str(p.get("Bucket", ""))
    if op in ("ListObjectsV2", "ListObjects"):
        context: dict[str, Any] = {"s3:prefix": p["Prefix"]} if "Prefix" in p else {}
        if "Delimiter" in p:
            context["s3:delimiter"] = p["Delimiter"]
        return [Access("s3:ListBucket", f"arn:aws:s3:::{bucket}", context)]
    if op == "HeadBucket":
        return [Access("s3:ListBucket", f"arn:aws:s3:::{bucket}")]
    if op == "CreateBucket":
        return [Access("s3:CreateBucket", f"arn:aws:s3:::{bucket}")]
    if op in ("GetObject", "HeadObject"):
        action = "s3:GetObjectVersion" if p.get("VersionId") else "s3:GetObject"
        return [Access(action, s3_object(bucket, p["Key"]))]
    if op in ("PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload"):
        return [Access("s3:PutObject", s3_object(bucket, p["Key"])), *_sse_kms(p)]
    if op == "AbortMultipartUpload":
        return [Access("s3:AbortMultipartUpload", s3_object(bucket, p["Key"]))]
    if op in ("CopyObject", "UploadPartCopy"):
        source = p["CopySource"]
        if isinstance(source, str):
            source_bucket, source_key = source.lstrip("/").split("/", 1)
        else:
            source_bucket, source_key = source["Bucket"], source["Key"]
        return [
            Access("s3:PutObject", s3_object(bucket, p["Key"])),
            Access("s3:GetObject", s3_object(source_bucket, source_key)),
            *_sse_kms(p),
        ]
    if op == "DeleteObject":
        return [Access("s3:DeleteObject", s3_object(bucket, p["Key"]))]
    if op == "DeleteObjects":
        return [Access("s3:DeleteObject", s3_object(bucket, o["Key"])) for o in p["Delete"]["Objects"]]
    raise LookupError


def _pass_role(role: str | None) -> list[Access]:
    if not role:
        return []
    return [Access("iam:PassRole", role, {"iam:PassedToService": "sagemaker.amazonaws.com"})]


def _sagemaker(request: Request, where: Where) -> list[Access]:
    p, op = request.params, request.operation
    action = f"sagemaker:{op}"
    if op in ("AddTags", "ListTags", "DeleteTags"):
        return [Access(action, str(p["ResourceArn"]), tag_context(p.get("Tags")))]
    if op == "InvokeEndpoint":
        # With InferenceComponentName IAM authorizes the component as well as the endpoint (the
        # Service Authorization Reference lists both resource types for InvokeEndpoint).
        invoked = [Access(action, where.sagemaker("endpoint", p["EndpointName"]))]
        if p.get("InferenceComponentName"):
            invoked.append(
                Access(action, where.sagemaker("inference-component", p["InferenceComponentName"]))
            )
        return invoked
    if op == "DescribeTrainingPlan":
        plan = str(p["TrainingPlanName"])
        return [Access(action, plan if plan.startswith("arn:") else where.sagemaker("training-plan", plan))]
    names = [(SAGEMAKER_NAMES[k], str(v)) for k, v in p.items() if k in SAGEMAKER_NAMES]
    if op in SAGEMAKER_CREATES:
        kind = SAGEMAKER_CREATES[op]
        name = next(value for k, value in names if k == kind)
        arn = where.sagemaker(kind, name)
        granted = [Access(action, arn, tag_context(p.get("Tags")))]
        # Tags given on create are authorized as AddTags too.
        if p.get("Tags"):
            granted.append(Access("sagemaker:AddTags", arn, tag_context(p.get("Tags"))))
        return granted + _pass_role(p.get("ExecutionRoleArn") or p.get("RoleArn"))
    if not names:
        raise LookupError
    # The first name parameter is the resource acted on (UpdateEndpoint's config is read, not changed).
    kind, name = names[0]
    return [Access(action, where.sagemaker(kind, name))]


def _logs(request: Request, where: Where) -> list[Access]:
    p, op = request.params, request.operation
    if op in ("FilterLogEvents", "GetLogEvents", "DescribeLogStreams", "CreateLogStream", "PutLogEvents"):
        return [Access(f"logs:{op}", arn) for arn in where.log_group(p["logGroupName"])]
    if op == "CreateLogGroup":
        # A create with tags is authorized for TagResource as well.
        actions = ["logs:CreateLogGroup", *(["logs:TagResource"] if p.get("tags") else [])]
        return [Access(action, arn) for action in actions for arn in where.log_group(p["logGroupName"])]
    if op == "PutRetentionPolicy":
        return [Access("logs:PutRetentionPolicy", arn) for arn in where.log_group(p["logGroupName"])]
    raise LookupError


def _target_tracking_alarms(where: Where, resource_id: str, policy: str) -> list[Access]:
    """What Application Auto Scaling does to a target-tracking policy's alarms, with the caller's rights."""
    policy_arn = where.arn(
        "autoscaling",
        f"scalingPolicy:00000000-0000-0000-0000-000000000000:resource/sagemaker/{resource_id}:policyName/{policy}",
    )
    alarms = [
        where.alarm(f"TargetTracking-{resource_id}-{side}-00000000-0000-0000-0000-000000000000")
        for side in ("AlarmHigh", "AlarmLow")
    ]
    granted = [
        Access("cloudwatch:PutMetricAlarm", a, {"cloudwatch:AlarmActions": [policy_arn]}) for a in alarms
    ]
    return granted + _alarm_cleanup(alarms)


def _alarm_cleanup(alarms: list[str]) -> list[Access]:
    return [
        Access(action, a)
        for a in alarms
        for action in ("cloudwatch:DescribeAlarms", "cloudwatch:DeleteAlarms")
    ]


def _application_autoscaling(request: Request, where: Where) -> list[Access]:
    p, op = request.params, request.operation
    target = where.arn("application-autoscaling", "scalable-target/0123456789abcdef0123456789abcdef")
    context = {
        "application-autoscaling:service-namespace": p["ServiceNamespace"],
        "application-autoscaling:scalable-dimension": p["ScalableDimension"],
    }
    granted = [Access(f"application-autoscaling:{op}", target, context)]
    resource_id = str(p["ResourceId"])
    tracking_alarms = [
        where.alarm(f"TargetTracking-{resource_id}-{side}-00000000-0000-0000-0000-000000000000")
        for side in ("AlarmHigh", "AlarmLow")
    ]
    if op == "RegisterScalableTarget":
        granted.append(
            Access(
                "iam:CreateServiceLinkedRole",
                where.arn("iam", f"role/{AUTOSCALING_ROLE}", region=False),
                {"iam:AWSServiceName": AUTOSCALING_SERVICE},
            )
        )
    elif op == "PutScalingPolicy" and p.get("PolicyType") == "TargetTrackingScaling":
        granted += _target_tracking_alarms(where, resource_id, str(p["PolicyName"]))
    elif op in ("DeleteScalingPolicy", "DeregisterScalableTarget"):
        # Deleting a policy (or the target, with its policies) deletes their target-tracking alarms.
        granted += _alarm_cleanup(tracking_alarms)
    return granted


def _cloudwatch(request: Request, where: Where) -> list[Access]:
    p, op = request.params, request.operation
    if op == "PutMetricAlarm":
        context = {"cloudwatch:AlarmActions": list(p.get("AlarmActions", [])), **tag_context(p.get("Tags"))}
        arn = where.alarm(p["AlarmName"])
        granted = [Access("cloudwatch:PutMetricAlarm", arn, context)]
        if p.get("Tags"):
            granted.append(Access("cloudwatch:TagResource", arn, tag_context(p.get("Tags"))))
        return granted
    if op in ("DescribeAlarms", "DeleteAlarms"):
        names = p.get("AlarmNames") or [f"{p.get('AlarmNamePrefix', '')}*"]
        return [Access(f"cloudwatch:{op}", where.alarm(n)) for n in names]
    raise LookupError


def _stepfunctions(request: Request, where: Where) -> list[Access]:
    p, op = request.params, request.operation
    arn = p.get("stateMachineArn") or p.get("executionArn")
    if arn is None:
        raise LookupError
    return [Access(f"states:{op}", str(arn))]


def _sns(request: Request, where: Where) -> list[Access]:
    if request.operation != "Publish":
        raise LookupError
    return [Access("sns:Publish", str(request.params["TopicArn"]))]


def _secretsmanager(request: Request, where: Where) -> list[Access]:
    if request.operation != "GetSecretValue":
        raise LookupError
    secret = str(request.params["SecretId"])
    # A secret's ARN ends with a random 6-character suffix after its name; IAM matches the whole ARN.
    arn = secret if secret.startswith("arn:") else where.arn("secretsmanager", f"secret:{secret}-AbCdEf")
    return [Access("secretsmanager:GetSecretValue", arn)]


def _service_quotas(request: Request, where: Where) -> list[Access]:
    # GetServiceQuota is authorized on the quota: arn:<partition>:servicequotas:<region>:<account>:<service>/<code>.
    if request.operation != "GetServiceQuota":
        raise LookupError
    p = request.params
    return [
        Access(
            "servicequotas:GetServiceQuota",
            where.arn("servicequotas", f"{p['ServiceCode']}/{p['QuotaCode']}"),
        )
    ]


RULES: dict[str, Callable[[Request, Where], list[Access]]] = {
    "s3": _s3,
    "sagemaker": _sagemaker,
    "sagemaker-runtime": _sagemaker,
    "sagemaker-inference-router-runtime": _sagemaker,
    "logs": _logs,
    "application-autoscaling": _application_autoscaling,
    "cloudwatch": _cloudwatch,
    "stepfunctions": _stepfunctions,
    "sns": _sns,
    "secretsmanager": _secretsmanager,
    "service-quotas": _service_quotas,
}


def accesses(request: Request, where: Where) -> list[Access]:
    """What the caller's role must be allowed for ``request``.

    Raises:
        AssertionError: the operation has no rule here (naming it, so a rule is added).
    """
    if (request.service, request.operation) in UNAUTHORIZED:
        return []
    prefix = IAM_PREFIX.get(request.service, request.service)
    if request.operation in UNSCOPED.get(request.service, set()):
        return [Access(f"{prefix}:{request.operation}", "*")]
    try:
        return [
            Access(a.action, a.resource, a.context, why=request.describe())
            for a in RULES[request.service](request, where)
        ]
    except (KeyError, LookupError):
        raise AssertionError(
            f"no IAM rule for {request.service}.{request.operation} (called by {request.function}); add one "
            "to tests/support/iam_actions.py from the service's Service Authorization Reference"
        ) from None
