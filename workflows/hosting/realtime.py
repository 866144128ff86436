"""Real-time endpoint on the Hugging Face inference DLC: model + endpoint config + endpoint."""

from __future__ import annotations

from typing import Any

from workflows import clock, naming
from workflows.aws import aws_errors
from workflows.contracts import DeployRequest, DeployResult
from workflows.images import HF_INFERENCE, image_uri
from workflows.remediation.overrides import with_overrides
from workflows.settings import Settings
from workflows.spec import RealtimeHosting, is_gpu_instance

VARIANT = "primary"


def container_environment(hosting: RealtimeHosting) -> dict[str, str]:
    """Environment of the serving container.

    Without SAGEMAKER_MODEL_SERVER_WORKERS the server starts one worker per vCPU, each with its
    own ONNX session: 1137 MB x 8 workers x 2 containers exhausted 16 GB in the field (F02).
    """
    return {
        "SAGEMAKER_MODEL_SERVER_WORKERS": str(hosting.workers),
        "ORT_INTRA_OP_THREADS": str(hosting.ort_intra_op_threads),
        "SAGEMAKER_MODEL_SERVER_TIMEOUT": str(hosting.model_server_timeout_s),
    }


def instance_type_for(request: DeployRequest) -> str:
    hosting = request.spec.hosting
    return hosting.instance_types[request.attempt.instance_type_index]


def deploy(request: DeployRequest, *, sagemaker: Any, settings: Settings) -> DeployResult:
    """Create model, endpoint config and endpoint; returns as soon as the endpoint is Creating."""
    spec, attempt = request.spec, request.attempt.number
    hosting = with_overrides(spec.hosting, request.attempt.overrides)  # remediation (F02, F20)
    instance_type = instance_type_for(request)
    image = hosting.image or image_uri(
        HF_INFERENCE, gpu=is_gpu_instance(instance_type), region=settings.region
    )
    tags = naming.tags(request.run_id, spec.name, spec.tags)
    model = naming.model_name(request.run_id, attempt)
    config = naming.endpoint_config_name(request.run_id, attempt)
    endpoint = naming.endpoint_name(request.run_id, attempt)
    variant: dict[str, Any] = {
        "VariantName": VARIANT,
        "ModelName": model,
        "InstanceType": instance_type,
        "InitialInstanceCount": hosting.instance_count,
        "ContainerStartupHealthCheckTimeoutInSeconds": hosting.startup_health_check_timeout_s,
    }
    if hosting.inference_ami_version:
        variant["InferenceAmiVersion"] = hosting.inference_ami_version
    with aws_errors(f"create model {model}"):
        sagemaker.create_model(
            ModelName=model,
            PrimaryContainer={
                "Image": image,
                "ModelDataUrl": request.pack.model_data_uri,
                "Environment": container_environment(hosting),
            },
            ExecutionRoleArn=settings.sagemaker_role_arn,
            Tags=tags,
        )
    with aws_errors(f"create endpoint config {config}"):
        sagemaker.create_endpoint_config(EndpointConfigName=config, ProductionVariants=[variant], Tags=tags)
    with aws_errors(f"create endpoint {endpoint}"):
        sagemaker.create_endpoint(EndpointName=endpoint, EndpointConfigName=config, Tags=tags)
    return DeployResult(
        endpoint_name=endpoint,
        endpoint_config_name=config,
        model_names=[model],
        instance_type=instance_type,
        created_at=clock.now(),
    )
