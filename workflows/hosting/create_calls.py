"""The SageMaker create requests every hosting mode shares, built in one place.

The HF inference DLC's model server environment, a ProductionVariant on instances (timeouts, AMI, capacity
reservation), the endpoint config's MetricsConfig, and the CreateModel, CreateEndpointConfig and
CreateEndpoint calls with the run's role, tags and the hosting's network and key settings; the deploy
template of ``workflows.hosting.base`` and the modes call them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

from workflows import naming
from workflows.aws.clients import aws_errors
from workflows.contracts import DeployRequest
from workflows.hosting.network import endpoint_config_security, model_security
from workflows.hosting.regions import RegionSettings, cross_region_traffic_config
from workflows.hosting.spec_bases import InstanceSettings, ModelServerSettings
from workflows.hosting.tracing import tracing_config
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_sagemaker import SageMakerClient
    from types_boto3_sagemaker.type_defs import ProductionVariantTypeDef, TagTypeDef

VARIANT = "primary"


def model_server_environment(hosting: ModelServerSettings) -> dict[str, str]:
    """Environment of the HF inference DLC's model server (Multi Model Server).

    Without SAGEMAKER_MODEL_SERVER_WORKERS the server starts one worker per vCPU, each with its own
    ONNX session: 1137 MB x 8 workers x 2 containers exhausted 16 GB in the field (F02).
    MMS 1.1.11 reads ``default_response_timeout`` in minutes (ConfigManager multiplies it by 60) and
    ``default_response_timeout_seconds`` as given; the inference toolkit (sagemaker-inference 1.10)
    fills them from SAGEMAKER_MODEL_SERVER_TIMEOUT and SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS. The
    seconds variant wins where the toolkit knows it; the minutes one, rounded up, keeps older
    toolkits from reading 120 s as two hours. The same timeout bounds how long a worker may take to
    load the model.
    """
    seconds = int(hosting.model_server_timeout_s)
    return {
        "SAGEMAKER_MODEL_SERVER_WORKERS": str(hosting.workers),
        "ORT_INTRA_OP_THREADS": str(hosting.ort_intra_op_threads),
        "SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS": str(seconds),
        "SAGEMAKER_MODEL_SERVER_TIMEOUT": str(max(1, math.ceil(seconds / 60))),
    }


def run_tags(request: DeployRequest) -> list[TagTypeDef]:
    return naming.tags(request.run_id, request.spec)


CAPACITY_RESERVATIONS_ONLY = "capacity-reservations-only"
"""The one CapacityReservationPreference botocore's model offers."""


def capacity_reservation_config(hosting: InstanceSettings) -> dict[str, Any]:
    """``CapacityReservationConfig`` for the hosting's ML reservation (F06 for reserved capacity); none
    without one."""
    if not hosting.capacity_reservation:
        return {}
    return {
        "CapacityReservationConfig": {
            "CapacityReservationPreference": CAPACITY_RESERVATIONS_ONLY,
            "MlReservationArn": hosting.capacity_reservation,
        }
    }


def instance_variant(hosting: InstanceSettings, *, instance_type: str, model: str | None) -> dict[str, Any]:
    """A ProductionVariant on instances: the model (none for inference components), the download and
    health check timeouts (they must cover downloading and loading the model, F07), the AMI when asked
    (F20), the capacity reservation when one is named (F06)."""
    variant: dict[str, Any] = {
        "VariantName": VARIANT,
        "InstanceType": instance_type,
        "InitialInstanceCount": hosting.instance_count,
        "ContainerStartupHealthCheckTimeoutInSeconds": hosting.startup_health_check_timeout_s,
    }
    if hosting.model_data_download_timeout_s is not None:
        variant["ModelDataDownloadTimeoutInSeconds"] = hosting.model_data_download_timeout_s
    if model is not None:
        variant["ModelName"] = model
    if hosting.inference_ami_version:
        variant["InferenceAmiVersion"] = hosting.inference_ami_version
    variant.update(capacity_reservation_config(hosting))
    return variant


def create_model(
    sagemaker: SageMakerClient,
    name: str,
    *,
    settings: Settings,
    tags: list[TagTypeDef],
    hosting: Any,
    **spec: Any,
) -> str:
    """CreateModel with the run's role, tags, and the hosting's VPC and network isolation.

    Args:
        hosting: the attempt's hosting settings; its ``vpc`` and ``network_isolation`` (when the mode
            has them) become VpcConfig and EnableNetworkIsolation.
    """
    with aws_errors(f"create model {name}"):
        sagemaker.create_model(
            ModelName=name,
            ExecutionRoleArn=settings.sagemaker_role_arn,
            Tags=tags,
            **model_security(hosting),
            **spec,
        )
    return name


METRIC_PUBLISH_FREQUENCY_S = 10
"""The finest of botocore's MetricPublishFrequencyInSeconds values (10, 30, 60, 120, 180, 240, 300): a
benchmark window of a minute then holds several utilisation points, not one or none."""


def metrics_config(variants: list[dict[str, Any]]) -> dict[str, Any]:
    """``MetricsConfig`` for an endpoint config: enhanced metrics and detailed observability, every 10 s.

    AWS documents enhanced metrics for real-time endpoints (instance, container and GPU dimensions);
    with them on, the 10 s interval applies to the invocation metrics too (ModelLatency), so a
    benchmark window reads its own server-side latency instead of a minute it shares. Detailed
    observability (on by default for configs created after 2026-06-17, off for older ones) also
    scrapes the container's Prometheus ``/metrics`` on port 8080 and publishes per-GPU metrics per
    inference component; it is stated here so a config never depends on that default. A serverless
    variant has no instance to report on, so its config carries none.
    """
    if any("ServerlessConfig" in variant for variant in variants):
        return {}
    return {
        "MetricsConfig": {
            "EnableEnhancedMetrics": True,
            "EnableDetailedObservability": True,
            "MetricPublishFrequencyInSeconds": METRIC_PUBLISH_FREQUENCY_S,
        }
    }


def create_endpoint(
    sagemaker: SageMakerClient,
    *,
    config: str,
    endpoint: str,
    variants: list[dict[str, Any]],
    tags: list[TagTypeDef],
    hosting: Any,
    **extra: Any,
) -> None:
    """The endpoint config (with the hosting's KmsKeyId, MetricsConfig and, when asked, TracingConfig), then
    the endpoint (returns while it is Creating).

    An endpoint config with an ExecutionRoleArn hosts inference components on its own instances, so it
    also carries the hosting's VPC and network isolation.
    """
    security = endpoint_config_security(hosting, hosts_components="ExecutionRoleArn" in extra)
    security.update(metrics_config(variants))
    security.update(tracing_config(hosting, variants=variants, extra=extra))
    if isinstance(hosting, RegionSettings):
        security.update(cross_region_traffic_config(hosting))
    with aws_errors(f"create endpoint config {config}"):
        sagemaker.create_endpoint_config(
            EndpointConfigName=config,
            # Each mode builds its variants as plain dicts from its own spec; the keys are SageMaker's.
            ProductionVariants=cast("list[ProductionVariantTypeDef]", variants),
            Tags=tags,
            **security,
            **extra,
        )
    with aws_errors(f"create endpoint {endpoint}"):
        sagemaker.create_endpoint(EndpointName=endpoint, EndpointConfigName=config, Tags=tags)
