"""Running inside a locked-down account: the VPC, network isolation and KMS settings of a spec, and the
request fields they become.

The spec fields are mixins (``Secured`` for instance-backed hosting modes, ``JobSecured`` for the
benchmark processing job) so every mode gets the same fields and the same checks; the request fields
are built here and nowhere else: ``model_security`` for CreateModel, ``endpoint_config_security`` for
CreateEndpointConfig, ``processing_security`` for CreateProcessingJob. Shapes (id patterns, list
lengths) are botocore's ``VpcConfig``, ``SubnetId``, ``SecurityGroupId`` and ``KmsKeyId``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator, model_validator

from workflows.models import Strict

# EC2 ids: the prefix, then 8 (older) or 17 hexadecimal digits; botocore's SubnetId and SecurityGroupId
# allow [-0-9a-zA-Z]{0,32}, which every well-formed id satisfies.
SUBNET_ID = re.compile(r"^subnet-([0-9a-f]{8}|[0-9a-f]{17})$")
SECURITY_GROUP_ID = re.compile(r"^sg-([0-9a-f]{8}|[0-9a-f]{17})$")
# botocore's KmsKeyId: [a-zA-Z0-9:/_-]*, at most 2048; SageMaker takes a key id, key ARN, alias name or
# alias ARN.
KMS_KEY = re.compile(
    r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32}|alias/[a-zA-Z0-9/_-]+"
    r"|arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key/[a-zA-Z0-9-]+|alias/[a-zA-Z0-9/_-]+))$"
)
KMS_FORMS = "a key id (1234abcd-...), a key ARN, alias/NAME or an alias ARN"
# botocore: Subnets 1-16, SecurityGroupIds 1-5.
MAX_SUBNETS = 16
MAX_SECURITY_GROUPS = 5
# Nitro instances with local NVMe storage encrypt it in hardware; botocore's documentation of
# CreateEndpointConfig KmsKeyId and of ProcessingClusterConfig VolumeKmsKeyId: a key is refused for
# them. Which SageMaker families have it is derived from botocore's instance-type enums below: a
# family whose attribute letters carry "d" (c5d, m6gd, r7gd, g4dn, p4de), and the families with NVMe
# instance store whose names do not say so (EC2 instance types, "Instance store").
NVME_WITHOUT_D = frozenset(
    {
        "g5",
        "g6",
        "g6e",
        "g7e",
        "p5",
        "p5e",
        "p5en",
        "p6-b200",
        "p6-b300",
        "p6e-gb200",
        "dl1",
        "trn1",
        "trn1n",
        "trn2",
    }
)
_FAMILY = re.compile(r"^([a-z]+)(\d+)([a-z]*)(-[a-z0-9]+)?$")


def family_has_local_storage(family: str) -> bool:
    """Whether a family (``g5``, ``c6gd``) carries NVMe instance store, by its name and NVME_WITHOUT_D."""
    match = _FAMILY.match(family)
    return family in NVME_WITHOUT_D or bool(match and "d" in match.group(3))


def _sagemaker_families() -> set[str]:
    from workflows.spec.enums import ENDPOINT_INSTANCE, PROCESSING_INSTANCE, accepted

    return {t.split(".")[1] for shape in (ENDPOINT_INSTANCE, PROCESSING_INSTANCE) for t in accepted(shape)}


LOCAL_STORAGE_FAMILIES = frozenset(f for f in _sagemaker_families() if family_has_local_storage(f))


class VpcSpec(Strict):
    """Where the containers run: subnets and security groups of the account's VPC (botocore VpcConfig)."""

    subnets: list[str] = Field(
        ...,
        min_length=1,
        max_length=MAX_SUBNETS,
        description="Subnet ids (subnet-0123456789abcdef0), 1-16. More than one instance needs at least two, "
        "in different Availability Zones.",
    )
    security_groups: list[str] = Field(
        ...,
        min_length=1,
        max_length=MAX_SECURITY_GROUPS,
        description="Security group ids (sg-0123456789abcdef0), 1-5; they must allow HTTPS (443) out to the "
        "VPC endpoints of S3 and the SageMaker runtime.",
    )

    @field_validator("subnets")
    @classmethod
    def _subnets(cls, value: list[str]) -> list[str]:
        return _ids(value, SUBNET_ID, "subnet-0123456789abcdef0")

    @field_validator("security_groups")
    @classmethod
    def _groups(cls, value: list[str]) -> list[str]:
        return _ids(value, SECURITY_GROUP_ID, "sg-0123456789abcdef0")

    def request(self) -> dict[str, list[str]]:
        """botocore's ``VpcConfig``."""
        return {"SecurityGroupIds": list(self.security_groups), "Subnets": list(self.subnets)}


def _ids(value: list[str], pattern: re.Pattern[str], example: str) -> list[str]:
    bad = [v for v in value if not pattern.match(v)]
    if bad:
        raise ValueError(
            f"{bad} are not ids of this kind; write each like {example} (the prefix, then 8 or 17 hex digits)"
        )
    repeated = sorted({v for v in value if value.count(v) > 1})
    if repeated:
        raise ValueError(f"ids repeat ({', '.join(repeated)}); list each once")
    return value


def _kms_key(value: str | None) -> str | None:
    if value is not None and not KMS_KEY.match(value):
        raise ValueError(f"'{value}' is not a KMS key; use {KMS_FORMS}")
    return value


KmsKeyId = Annotated[str | None, AfterValidator(_kms_key)]
"""A customer key field: None, or one of KMS_FORMS (checked where the spec is read, before any call)."""


def has_local_storage(instance_type: str) -> bool:
    """Whether the instance type's family carries local NVMe storage (no KmsKeyId accepted)."""
    parts = instance_type.split(".")
    return len(parts) == 3 and parts[1] in LOCAL_STORAGE_FAMILIES


class Secured(Strict):
    """VPC, network isolation and the storage volume's key of an instance-backed hosting mode."""

    vpc: VpcSpec | None = Field(
        None,
        description="CreateModel VpcConfig: run the containers in these subnets and security groups. The "
        "subnets need a route to S3 (a gateway endpoint or NAT) to download the model; empty: SageMaker's "
        "own network.",
    )
    network_isolation: bool = Field(
        False,
        description="CreateModel EnableNetworkIsolation: the container reaches no network at all, so it cannot "
        "pip install code/requirements.txt; pack vendors the wheels into code/wheels/ (F37).",
    )
    kms_key_id: KmsKeyId = Field(
        None,
        description=f"CreateEndpointConfig KmsKeyId: the customer key of the instances' storage volume ({KMS_FORMS}). "
        "Instance types with local NVMe storage (ml.g5, ml.g4dn, ml.c5d, ...) refuse it.",
    )

    @model_validator(mode="after")
    def _placement(self) -> Any:
        count = int(getattr(self, "instance_count", 1))
        if self.vpc is not None and count > 1 and len(self.vpc.subnets) < 2:
            raise ValueError(
                f"instance_count {count} with one subnet: SageMaker spreads instances over Availability Zones "
                "and needs at least two subnets in different zones; list a second subnet or use one instance"
            )
        if self.kms_key_id:
            types = [str(t) for t in getattr(self, "instance_type_fallbacks", [])]
            local = [t for t in types if has_local_storage(t)]
            if local:
                raise ValueError(
                    f"kms_key_id is set but {local} carry local NVMe storage, which SageMaker encrypts in "
                    "hardware and for which CreateEndpointConfig refuses a KmsKeyId; drop kms_key_id or use "
                    "instance types without local storage, such as ml.c6i or ml.m6i"
                )
        return self


class JobSecured(Strict):
    """VPC and keys of the benchmark processing job (CreateProcessingJob)."""

    job_vpc: VpcSpec | None = Field(
        None,
        description="CreateProcessingJob NetworkConfig.VpcConfig of the benchmark job; it needs a route to S3 "
        "and to the SageMaker runtime (an interface endpoint) to reach the endpoint. Empty: hosting.vpc "
        "when set, else SageMaker's own network.",
    )
    job_kms_key_id: KmsKeyId = Field(
        None,
        description=f"The customer key of the benchmark job's volume (VolumeKmsKeyId) and outputs "
        f"(ProcessingOutputConfig.KmsKeyId): {KMS_FORMS}.",
    )

    @model_validator(mode="after")
    def _volume_key(self) -> Any:
        job_type = str(getattr(self, "job_instance_type", ""))
        if self.job_kms_key_id and has_local_storage(job_type):
            raise ValueError(
                f"job_kms_key_id is set but job_instance_type {job_type} carries local NVMe storage, which "
                "SageMaker encrypts in hardware and for which CreateProcessingJob refuses a VolumeKmsKeyId; "
                "drop job_kms_key_id or use a job instance type without local storage, such as ml.c5.xlarge"
            )
        return self


def model_security(hosting: Any) -> dict[str, Any]:
    """CreateModel's VpcConfig and EnableNetworkIsolation (nothing for a mode without them)."""
    fields: dict[str, Any] = {}
    vpc = getattr(hosting, "vpc", None)
    if vpc is not None:
        fields["VpcConfig"] = vpc.request()
    if getattr(hosting, "network_isolation", False):
        fields["EnableNetworkIsolation"] = True
    return fields


def endpoint_config_security(hosting: Any, *, hosts_components: bool) -> dict[str, Any]:
    """CreateEndpointConfig's KmsKeyId; with inference components the instances are the endpoint's, so
    its config carries the VPC and the isolation as well."""
    fields: dict[str, Any] = {}
    key = getattr(hosting, "kms_key_id", None)
    if key:
        fields["KmsKeyId"] = key
    if hosts_components:
        fields.update(model_security(hosting))
    return fields


def processing_security(spec: Any) -> dict[str, Any]:
    """The benchmark job's NetworkConfig, VolumeKmsKeyId and output KmsKeyId, from ``spec`` (a RunSpec).

    Returns:
        ``{"NetworkConfig": ..., "VolumeKmsKeyId": ..., "OutputKmsKeyId": ...}``, each only when set.
    """
    benchmark = spec.benchmark
    vpc = benchmark.job_vpc or getattr(spec.hosting, "vpc", None)
    fields: dict[str, Any] = {}
    if vpc is not None:
        fields["NetworkConfig"] = {"VpcConfig": vpc.request()}
    if benchmark.job_kms_key_id:
        fields["VolumeKmsKeyId"] = benchmark.job_kms_key_id
        fields["OutputKmsKeyId"] = benchmark.job_kms_key_id
    return fields
