"""NVIDIA Triton on SageMaker: the ONNX artifact served from a generated model repository.

Before the first AWS call the repository is planned and checked (F19 config syntax with the real
ModelConfig protobuf, F23 backend file names, F22 complete weights) and, on GPU, the image's CUDA
is matched with the instance's driver: without ``inference_ami_version`` the oldest AMI that runs
the image's CUDA is chosen (Triton 26.05, CUDA 13.2, failed with error 803 on the default AMI and
ran on al2023-ami-sagemaker-inference-gpu-4-1 in forward compatibility: F20); an AMI given in the
spec that is too old is refused.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from workflows.aws.clients import split_s3_uri
from workflows.contracts import DeployRequest, Finding
from workflows.errors import ArtifactIncomplete
from workflows.hosting.base import AwsClients, InstanceMode, Planned
from workflows.hosting.checks import DOWNLOAD_TIMEOUT, INSTANCE_TYPES, each_instance_type
from workflows.hosting.image_choice import image_for
from workflows.hosting.pools import POOLS
from workflows.hosting.specs import TritonHosting
from workflows.hosting.staging import (
    StagedFile,
    engine_uri,
    read_manifest,
    staging_uri,
    uncompressed_model_data,
    write_prefix,
)
from workflows.hosting.triton_repository import TOKENIZER_WHEEL, check_plan, default_model, plan_repository
from workflows.images.accelerators import is_gpu_instance
from workflows.images.table import TRITON, image_cuda
from workflows.preflight.containers import check_cuda_driver, minimum_ami
from workflows.preflight.context import PreflightContext
from workflows.preflight.findings import refuse_blocking
from workflows.preflight.isolation import ISOLATION
from workflows.preflight.registry import Check
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

ENGINE = "triton"

_image = partial(image_for, TRITON)


def ami_for(image: str, instance_type: str, requested: str | None) -> tuple[str | None, list[Finding]]:
    """The InferenceAmiVersion to use and the F20 findings: the spec's, else the minimum for the
    image's CUDA on a GPU instance (None on CPU, or when the table knows no CUDA for the image)."""
    if not is_gpu_instance(instance_type):
        return requested, []
    cuda = image_cuda(image)
    chosen = requested
    if chosen is None and cuda is not None:
        ami = minimum_ami(cuda)
        chosen = ami.name if ami else None
    return chosen, check_cuda_driver(instance_type=instance_type, image=image, ami_version=chosen)


def _repository(context: PreflightContext, hosting: TritonHosting) -> list[Finding]:
    assert context.artifact is not None
    gpu = is_gpu_instance(hosting.instance_type_fallbacks[0])
    return check_plan(plan_repository(context.artifact.manifest, hosting, gpu=gpu))


def _driver(context: PreflightContext, hosting: TritonHosting) -> list[Finding]:
    return each_instance_type(
        hosting.instance_type_fallbacks,
        lambda name: ami_for(_image(hosting, name, context.region), name, hosting.inference_ami_version)[1],
    )


def _require_staged(s3: S3Client, uri: str) -> None:
    """Stop before any write when pack did not stage ``uri`` (an artifact packed for another mode)."""
    bucket, key = split_s3_uri(uri)
    try:
        s3.head_object(Bucket=bucket, Key=key)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
            raise
        raise ArtifactIncomplete(
            f"{uri} is missing: the tokenizer ensemble's python backend needs the tokenizers wheel, "
            "which the Triton image does not ship.",
            fix="pack the artifact again with this spec (pack stages the wheel for Triton), or set "
            "hosting.tokenizer_ensemble: false to serve token ids",
        ) from None


class TritonMode(InstanceMode[TritonHosting]):
    mode = "triton"
    spec_type = TritonHosting
    image_family = TRITON
    local_blocker = (
        "the local SageMaker serves only the HF inference DLC contract; Triton needs its own server "
        "image (and a GPU for KIND_GPU), and this machine runs no Docker"
    )
    checks = (
        INSTANCE_TYPES,
        DOWNLOAD_TIMEOUT,
        POOLS,
        Check(
            "config.pbtxt parses, backend file names, complete weights",
            ("F19", "F23", "F22"),
            _repository,
            ("artifact",),
        ),
        Check("image CUDA vs the AMI's driver (minimum AMI chosen when unset)", ("F20",), _driver),
        ISOLATION,
    )

    def plan(
        self,
        request: DeployRequest,
        hosting: TritonHosting,
        instance_type: str,
        *,
        clients: AwsClients,
        settings: Settings,
    ) -> Planned[TritonHosting]:
        """Plan and check the model repository, choose the AMI (F20), and write the repository."""
        gpu = is_gpu_instance(instance_type)
        image = _image(hosting, instance_type, settings.region)
        ami, findings = ami_for(image, instance_type, hosting.inference_ami_version)
        s3 = clients.need("s3")
        manifest = read_manifest(s3, settings.bucket, request.run_id)
        planned = plan_repository(manifest, hosting, gpu=gpu)
        refuse_blocking(findings + check_plan(planned), mode=self.mode)
        repository = engine_uri(settings.bucket, request.run_id, request.attempt.number, ENGINE)
        staging = staging_uri(settings.bucket, request.run_id)
        if hosting.tokenizer_ensemble:
            _require_staged(s3, staging + TOKENIZER_WHEEL)
        write_prefix(
            s3,
            repository,
            [
                StagedFile(p.path, text=p.text, source=None if p.source is None else staging + p.source)
                for p in planned
            ],
        )
        container = {
            "Image": image,
            "ModelDataSource": uncompressed_model_data(repository),
            "Environment": {"SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": default_model(hosting)},
        }
        return Planned(
            hosting.model_copy(update={"inference_ami_version": ami}),
            models=[{"PrimaryContainer": container}],
            recorded={"staging_uris": [repository]},
        )


STRATEGY = TritonMode()
