"""What SageMaker itself does as the execution role when a handler's request makes it act: pull the
image, read the artifact, write the logs, and (for a VPC) create network interfaces."""

from __future__ import annotations

from typing import Any

from tests.support.iam_actions import Access, Where, s3_object, split_s3
from tests.support.iam_recording import Request
from workflows.naming import PROCESSING_JOB_LOG_GROUP, component_log_group, endpoint_log_group


def image_pull(image: str) -> list[Access]:
    """Pulling an ECR image: a token (no resource), then the repository's manifest and layers."""
    host, _, path = image.partition("/")
    if ".dkr.ecr." not in host:
        return []
    account, region = host.split(".")[0], host.split(".")[3]
    repository = path.split("@")[0].split(":")[0]
    arn = f"arn:aws:ecr:{region}:{account}:repository/{repository}"
    return [Access("ecr:GetAuthorizationToken", "*")] + [
        Access(action, arn)
        for action in ("ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability")
    ]


def s3_read(uri: str, data_type: str = "S3Object") -> list[Access]:
    """Reading an S3 input: an S3Prefix is listed, then each object under it is read."""
    bucket, key = split_s3(uri)
    if data_type == "S3Prefix":
        return [
            Access("s3:ListBucket", f"arn:aws:s3:::{bucket}", {"s3:prefix": key}),
            Access("s3:GetObject", s3_object(bucket, f"{key}model.file")),
        ]
    return [Access("s3:GetObject", s3_object(bucket, key))]


def log_writes(where: Where, group: str, stream: str) -> list[Access]:
    return [Access("logs:CreateLogGroup", arn) for arn in where.log_group(group)] + [
        Access(action, where.arn("logs", f"log-group:{group}:log-stream:{stream}"))
        for action in ("logs:CreateLogStream", "logs:PutLogEvents")
    ]


def kms_key_arn(where: Where, key: str) -> str:
    """A KmsKeyId as the ARN IAM evaluates (an id or alias is in the caller's account and region)."""
    return (
        key if key.startswith("arn:") else where.arn("kms", key if key.startswith("alias/") else f"key/{key}")
    )


def processing_key_use(where: Where, params: dict[str, Any]) -> list[Access]:
    """A processing job's customer keys, used as its role (CreateProcessingJob: "the KMS key policy must
    grant permission to the IAM role that you specify"): the volume's key is granted to the instance
    (kms:CreateGrant for an AWS resource) and used to encrypt it; the outputs' key encrypts the uploads."""
    found: list[Access] = []
    volume = ((params.get("ProcessingResources") or {}).get("ClusterConfig") or {}).get("VolumeKmsKeyId")
    if volume:
        arn = kms_key_arn(where, str(volume))
        found += [
            Access("kms:CreateGrant", arn, {"kms:GrantIsForAWSResource": "true"}),
            Access("kms:GenerateDataKey", arn),
            Access("kms:Decrypt", arn),
        ]
    output = (params.get("ProcessingOutputConfig") or {}).get("KmsKeyId")
    if output:
        arn = kms_key_arn(where, str(output))
        found += [Access("kms:GenerateDataKey", arn), Access("kms:Decrypt", arn)]
    return found


def _container(container: dict[str, Any]) -> list[Access]:
    granted = image_pull(str(container.get("Image", "")))
    if container.get("ModelDataUrl"):
        granted += s3_read(str(container["ModelDataUrl"]))
    source = (container.get("ModelDataSource") or {}).get("S3DataSource")
    if source:
        granted += s3_read(str(source["S3Uri"]), str(source["S3DataType"]))
    return granted


def sagemaker_accesses(request: Request, where: Where) -> tuple[str | None, list[Access]]:
    """The execution role a Create request hands SageMaker, and what SageMaker does with it."""
    p, op = request.params, request.operation
    if request.service != "sagemaker":
        return None, []
    why = f"SageMaker, for {request.describe()}"
    granted: list[Access] = []
    # Endpoints and components run as their models' role: the one the deployment settings name.
    role = p.get("ExecutionRoleArn") or p.get("RoleArn") or request.sagemaker_role_arn
    if op == "CreateModel":
        for container in [p.get("PrimaryContainer") or {}, *p.get("Containers", [])]:
            granted += _container(container)
    elif op == "CreateEndpoint":
        granted += log_writes(where, endpoint_log_group(p["EndpointName"]), "AllTraffic/i-0123456789abcdef0")
    elif op == "CreateInferenceComponent":
        container = (p.get("Specification") or {}).get("Container") or {}
        granted += image_pull(str(container.get("Image", "")))
        if container.get("ArtifactUrl"):
            granted += s3_read(str(container["ArtifactUrl"]))
        name = p["InferenceComponentName"]
        granted += log_writes(where, component_log_group(name), f"{name}/i-0123456789abcdef0")
    elif op == "CreateProcessingJob":
        granted += image_pull(str(p["AppSpecification"]["ImageUri"]))
        for item in p.get("ProcessingInputs", []):
            if "S3Input" in item:
                granted += s3_read(item["S3Input"]["S3Uri"], item["S3Input"]["S3DataType"])
        for output in (p.get("ProcessingOutputConfig") or {}).get("Outputs", []):
            bucket, key = split_s3(output["S3Output"]["S3Uri"])
            granted.append(Access("s3:PutObject", s3_object(bucket, f"{key.rstrip('/')}/benchmark.json")))
        name = p["ProcessingJobName"]
        granted += log_writes(where, PROCESSING_JOB_LOG_GROUP, f"{name}/algo-1-1700000000")
        granted += processing_key_use(where, p)
    # Imported here: that module builds on this one's Access and Where.
    from tests.support.iam_network import interface_accesses

    granted += interface_accesses(op, p, where)
    return (str(role) if role else None), [Access(a.action, a.resource, a.context, why=why) for a in granted]
