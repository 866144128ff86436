"""Models and endpoint configs: create, describe, delete, list, with SageMaker's validation."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partialmethod
from typing import Any

from workflows import clock
from workflows.images.table import image_records, repository_of
from workflows.local.sagemaker.api import (
    ApiError,
    already_exists,
    constraint,
    epoch,
    not_found,
    valid_name,
    validation,
)
from workflows.local.sagemaker.state import BackendState


def _check_tracing(body: dict[str, Any]) -> None:
    """SageMaker traces no serverless variant and no config with data capture (TracingConfig's rules)."""
    if not (body.get("TracingConfig") or {}).get("EnableTracing"):
        return
    if any("ServerlessConfig" in variant for variant in body.get("ProductionVariants") or []):
        raise validation("TracingConfig cannot be combined with a serverless variant.")
    if body.get("DataCaptureConfig"):
        raise validation("TracingConfig cannot be combined with DataCaptureConfig.")


@dataclass(frozen=True)
class RecordTable:
    """Where the backend keeps one kind of plain record (a model, an endpoint config) and its API names."""

    attribute: str
    label: str
    arn_kind: str
    name_key: str
    arn_key: str
    list_key: str


MODELS = RecordTable("models", "model", "model", "ModelName", "ModelArn", "Models")
CONFIGS = RecordTable(
    "configs",
    "endpoint configuration",
    "endpoint-config",
    "EndpointConfigName",
    "EndpointConfigArn",
    "EndpointConfigs",
)

SERVERLESS_MEMORY_MB = (1024, 2048, 3072, 4096, 5120, 6144)
MAX_CONTAINERS = 15


def model_containers(model: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's containers; each multi-container one carries its ContainerHostname."""
    if model.get("PrimaryContainer"):
        return [{**model["PrimaryContainer"], "ContainerHostname": "primary"}]
    return [
        {**c, "ContainerHostname": c.get("ContainerHostname") or f"container-{i + 1}"}
        for i, c in enumerate(model.get("Containers") or [])
    ]


def is_direct(model: dict[str, Any]) -> bool:
    return (model.get("InferenceExecutionConfig") or {}).get("Mode") == "Direct"


def lacks_bind_to_port(image: str) -> bool:
    """Whether an image is not known to carry ``accept-bind-to-port=true`` (the image table's labels)."""
    repository = repository_of(image)
    for entry in image_records():
        if entry.get("repository") == repository:
            return not (entry.get("labels") or {}).get("accept-bind-to-port")
    return True


def bind_to_port_error(model: dict[str, Any]) -> ApiError | None:
    """F05: a multi-container model whose image lacks the label (field text)."""
    if len(model_containers(model)) < 2:
        return None
    for container in model_containers(model):
        if lacks_bind_to_port(str(container.get("Image", ""))):
            return validation(
                f"Your Ecr Image {container.get('Image')} does not contain required accept-bind-to-port=true "
                "Docker label(s)."
            )
    return None


class RecordsApi(BackendState):
    """What models and endpoint configs share: a plain record by name, its ARN tagged."""

    def _record(self, table: RecordTable, name: str) -> dict[str, Any]:
        record: dict[str, Any] | None = getattr(self, table.attribute).get(name)
        if record is None:
            raise not_found(table.label, self.arn(table.arn_kind, name))
        return record

    def describe_record(self, table: RecordTable, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._record(table, body[table.name_key]))

    def delete_record(self, table: RecordTable, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            record = self._record(table, body[table.name_key])
            del getattr(self, table.attribute)[body[table.name_key]]
            self.tags.pop(record[table.arn_key], None)
        return {}

    def list_records(self, table: RecordTable, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            items = [
                {table.name_key: n, table.arn_key: r[table.arn_key], "CreationTime": r["CreationTime"]}
                for n, r in sorted(getattr(self, table.attribute).items())
                if body.get("NameContains", "") in n
            ]
        return {table.list_key: items}


class ModelsApi(RecordsApi):
    # --- models --------------------------------------------------------------------------------

    def create_model(self, body: dict[str, Any]) -> dict[str, Any]:
        name = valid_name(body, "ModelName")
        if not body.get("PrimaryContainer") and not body.get("Containers"):
            raise validation("Either PrimaryContainer or Containers must be specified.")
        if len(body.get("Containers") or []) > MAX_CONTAINERS:
            raise constraint(
                len(body["Containers"]), "containers", "Member must have length less than or equal to 15"
            )
        if is_direct(body) and not body.get("Containers"):
            raise validation(
                "InferenceExecutionConfig Mode Direct requires Containers, not PrimaryContainer."
            )
        if self.planned_fault_applies("F05", None):
            error = bind_to_port_error(body)
            if error is not None and self.planned_fault("F05", None):
                raise error
        with self.lock:
            if name in self.models:
                raise already_exists("model", self.arn("model", name))
            self.models[name] = {
                "EnableNetworkIsolation": False,  # DescribeModel always has it
                **{k: v for k, v in body.items() if k != "Tags"},
                "ModelArn": self.arn("model", name),
                "CreationTime": epoch(clock.now()),
            }
            self.tags[self.arn("model", name)] = list(body.get("Tags") or [])
        return {"ModelArn": self.arn("model", name)}

    def planned_fault_applies(self, fault_id: str, instance_type: str | None) -> bool:
        return self.fault_plan.find(fault_id, instance_type) is not None

    def _model(self, name: str) -> dict[str, Any]:
        return self._record(MODELS, name)

    describe_model = partialmethod(RecordsApi.describe_record, MODELS)
    delete_model = partialmethod(RecordsApi.delete_record, MODELS)
    list_models = partialmethod(RecordsApi.list_records, MODELS)

    # --- endpoint configs ----------------------------------------------------------------------

    def create_endpoint_config(self, body: dict[str, Any]) -> dict[str, Any]:
        name = valid_name(body, "EndpointConfigName")
        variants = body.get("ProductionVariants") or []
        if not variants:
            raise constraint("[]", "productionVariants", "Member must have length greater than or equal to 1")
        for index, variant in enumerate(variants, start=1):
            self._check_variant(variant, index)
        _check_tracing(body)
        with self.lock:
            if name in self.configs:
                raise already_exists("endpoint configuration", self.arn("endpoint-config", name))
            self.configs[name] = {
                **{k: v for k, v in body.items() if k != "Tags"},
                "EndpointConfigArn": self.arn("endpoint-config", name),
                "CreationTime": epoch(clock.now()),
            }
            self.tags[self.arn("endpoint-config", name)] = list(body.get("Tags") or [])
        return {"EndpointConfigArn": self.arn("endpoint-config", name)}

    def _check_pools(self, variant: dict[str, Any], member: str) -> None:
        """InstancePools: each type and priority once, an override model that exists, the provision
        timeout in range (the shape's own limits are botocore's, checked by the client)."""
        pools = list(variant["InstancePools"])
        types = [pool.get("InstanceType") for pool in pools]
        priorities = [pool.get("Priority") for pool in pools]
        if len(set(types)) < len(types) or len(set(priorities)) < len(priorities):
            raise validation(f"{member}: each InstancePools entry needs its own InstanceType and Priority.")
        for pool in pools:
            override = pool.get("ModelNameOverride")
            if override and override not in self.models:
                raise not_found("model", self.arn("model", str(override)))
        timeout = variant.get("VariantInstanceProvisionTimeoutInSeconds")
        if timeout is not None and not 300 <= timeout <= 3600:
            raise constraint(
                timeout,
                f"{member}.variantInstanceProvisionTimeoutInSeconds",
                "Member must have value between 300 and 3600",
            )

    def _check_variant(self, variant: dict[str, Any], index: int) -> None:
        member = f"productionVariants.{index}.member"
        valid_name(variant, "VariantName")
        model = variant.get("ModelName")
        if model is not None and model not in self.models:
            raise not_found("model", self.arn("model", str(model)))
        serverless = variant.get("ServerlessConfig")
        if serverless is not None:
            check_serverless(serverless, member)
            if model is None:
                raise validation("A serverless production variant needs a ModelName.")
            return
        pools = variant.get("InstancePools")
        if pools:
            self._check_pools(variant, member)
        elif not variant.get("InstanceType"):
            raise validation(
                f"{member}: InstanceType or InstancePools is required for a variant without ServerlessConfig."
            )
        count = variant.get("InitialInstanceCount")
        if not isinstance(count, int) or count < 1:
            raise constraint(
                count, f"{member}.initialInstanceCount", "Member must have value greater than or equal to 1"
            )
        for field in ("ContainerStartupHealthCheckTimeoutInSeconds", "ModelDataDownloadTimeoutInSeconds"):
            timeout = variant.get(field)
            if timeout is not None and not 60 <= timeout <= 3600:
                rule = "greater than or equal to 60" if timeout < 60 else "less than or equal to 3600"
                raise constraint(
                    timeout, f"{member}.{field[0].lower()}{field[1:]}", f"Member must have value {rule}"
                )

    def _config(self, name: str) -> dict[str, Any]:
        return self._record(CONFIGS, name)

    describe_endpoint_config = partialmethod(RecordsApi.describe_record, CONFIGS)
    delete_endpoint_config = partialmethod(RecordsApi.delete_record, CONFIGS)
    list_endpoint_configs = partialmethod(RecordsApi.list_records, CONFIGS)


def check_serverless(config: dict[str, Any], member: str) -> None:
    """MemorySizeInMB: 1024..6144 in 1 GB steps; MaxConcurrency: 1..200 (the API's limits)."""
    memory = config.get("MemorySizeInMB")
    path = f"{member}.serverlessConfig.memorySizeInMB"
    if not isinstance(memory, int):
        raise validation(f"{path}: MemorySizeInMB is required.")
    if memory < 1024:
        raise constraint(memory, path, "Member must have value greater than or equal to 1024")
    if memory > 6144:
        raise constraint(memory, path, "Member must have value less than or equal to 6144")
    if memory not in SERVERLESS_MEMORY_MB:
        raise validation(
            f"Serverless endpoint memory size {memory} MB is not supported. Valid values are in 1 GB increments: "
            "1024 MB, 2048 MB, 3072 MB, 4096 MB, 5120 MB, or 6144 MB."
        )
    concurrency = config.get("MaxConcurrency")
    path = f"{member}.serverlessConfig.maxConcurrency"
    if not isinstance(concurrency, int) or concurrency < 1:
        raise constraint(concurrency, path, "Member must have value greater than or equal to 1")
    if concurrency > 200:
        raise constraint(concurrency, path, "Member must have value less than or equal to 200")
    provisioned = config.get("ProvisionedConcurrency")
    if provisioned is None:
        return
    path = f"{member}.serverlessConfig.provisionedConcurrency"
    if not isinstance(provisioned, int) or provisioned < 1:
        raise constraint(provisioned, path, "Member must have value greater than or equal to 1")
    if provisioned > 200:
        raise constraint(provisioned, path, "Member must have value less than or equal to 200")
    if provisioned > concurrency:
        raise validation(
            f"ProvisionedConcurrency ({provisioned}) must be less than or equal to MaxConcurrency ({concurrency})."
        )
