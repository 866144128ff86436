"""An endpoint's instances started: each container's spec (log file, log stream, environment), its model
data downloaded and unpacked as SageMaker does, the instance's memory as one cap its containers share
(F02), every container launched at once and waited healthy; and F20, a GPU variant's driver error at start.
"""

from __future__ import annotations

import time
from typing import Any

from workflows.local.sagemaker.container import Container, ContainerFailed
from workflows.local.sagemaker.container_spec import ContainerSpec
from workflows.local.sagemaker.instances import memory_mb
from workflows.local.sagemaker.logs import ENDPOINT_LOG_GROUP, instance_id
from workflows.local.sagemaker.memory import MemoryCap, memory_cap_support
from workflows.local.sagemaker.models import ModelsApi, model_containers
from workflows.local.sagemaker.state import Endpoint, Instance
from workflows.spec.pipeline import is_gpu_instance

DEFAULT_HEALTH_CHECK_TIMEOUT_S = 600.0
# The field's text of a container whose CUDA is newer than the inference AMI's driver (F20).
CUDA_803 = "System has unsupported display driver / cuda driver combination (error 803)"
CUDA_FORWARD_COMPAT = "NOTE: CUDA Forward Compatibility mode ENABLED."


class InstanceStartup(ModelsApi):
    def _cuda_driver_fault(self, endpoint: Endpoint, variant: dict[str, Any]) -> list[str]:
        """F20: a GPU variant without InferenceAmiVersion gets the default AMI's older driver and its
        containers exit at start; with a newer AMI they log forward compatibility (lines returned).

        Raises:
            ContainerFailed: the planned driver error.
        """
        instance_type = variant.get("InstanceType", "")
        if not is_gpu_instance(instance_type) or self.fault_plan.find("F20", instance_type) is None:
            return []
        if variant.get("InferenceAmiVersion"):
            return [CUDA_FORWARD_COMPAT]
        if self.planned_fault("F20", instance_type) is None:
            return []
        specs = self._container_specs(endpoint, variant, 0)
        for spec in specs:
            spec.log_path.parent.mkdir(parents=True, exist_ok=True)
            with spec.log_path.open("a", encoding="utf-8") as log:
                log.write(
                    f"deploybench local SageMaker: fault plan F20 on {instance_type}: the container exits at start\n"
                )
                log.write(CUDA_803 + "\n")
            if self.shipper is not None:
                self.shipper.follow(spec.log_path, group=spec.log_group, stream=spec.log_stream)
                self.shipper.unfollow(spec.log_path)
        raise ContainerFailed(
            f"The primary container for production variant {variant['VariantName']} did not pass the ping health "
            "check. Please check CloudWatch logs for this endpoint."
        )

    def _container_specs(
        self, endpoint: Endpoint, variant: dict[str, Any], index: int
    ) -> list[ContainerSpec]:
        model = self.models[variant["ModelName"]]
        count = variant.get("InitialInstanceCount", 1)
        node = instance_id(endpoint.name, variant["VariantName"], str(index))
        specs = []
        for container in model_containers(model):
            hostname = container["ContainerHostname"]
            stem = (
                endpoint.name
                + (f"-{hostname}" if endpoint.kind == "direct" else "")
                + (f"-{index + 1}" if count > 1 else "")
            )
            stream = f"{variant['VariantName']}/{node}" + (
                f"/{hostname}" if endpoint.kind == "direct" else ""
            )
            specs.append(
                ContainerSpec(
                    endpoint=endpoint.name,
                    variant=variant["VariantName"],
                    hostname=hostname,
                    environment={str(k): str(v) for k, v in (container.get("Environment") or {}).items()},
                    isolated=bool(model.get("EnableNetworkIsolation")),
                    log_path=self.log_dir / f"{stem}.log",
                    log_group=ENDPOINT_LOG_GROUP.format(name=endpoint.name),
                    log_stream=stream,
                    image=str(container.get("Image", "")),
                )
            )
        return specs

    def _start_instances(
        self, endpoint: Endpoint, variant: dict[str, Any], notes: list[str]
    ) -> list[Instance]:
        """Start every container of every instance at once, then wait for each to be healthy."""
        model = self.models[variant["ModelName"]]
        definitions = {c["ContainerHostname"]: c for c in model_containers(model)}
        timeout = float(
            variant.get("ContainerStartupHealthCheckTimeoutInSeconds") or DEFAULT_HEALTH_CHECK_TIMEOUT_S
        )
        deadline = time.monotonic() + timeout
        instances: list[Instance] = []
        try:
            for index in range(variant.get("InitialInstanceCount", 1)):
                instance = Instance(instance_id(endpoint.name, variant["VariantName"], str(index)))
                instances.append(instance)
                instance.memory, note = self._instance_memory(endpoint, variant, index)
                for spec in self._container_specs(endpoint, variant, index):
                    spec.extra_log_lines.extend([*notes, note])
                    workdir = self.root / endpoint.name / f"{index}-{spec.hostname}"
                    container = self.new_container(spec, workdir, instance.memory)
                    with self.lock:
                        endpoint.starting.append(container)
                    instance.containers[spec.hostname] = container
                    self.place_model_data(container, definitions[spec.hostname])
                    container.launch()
            for instance in instances:
                for container in instance.containers.values():
                    if self._stopping.is_set():
                        raise ContainerFailed(
                            "The local SageMaker shut down while the endpoint was starting."
                        )
                    container.wait_healthy(deadline - time.monotonic(), primary=endpoint.kind == "single")
        except ContainerFailed:
            for instance in instances:
                instance.stop()
            raise
        finally:
            with self.lock:
                endpoint.starting = []
        return instances

    def place_model_data(self, container: Container, definition: dict[str, Any]) -> None:
        """Download the container's model.tar.gz from S3 and unpack it as SageMaker does.

        Raises:
            ContainerFailed: the model data cannot be downloaded or unpacked.
        """
        url = definition.get("ModelDataUrl") or (
            ((definition.get("ModelDataSource") or {}).get("S3DataSource") or {}).get("S3Uri")
        )
        if not url:
            return
        if not str(url).startswith("s3://"):
            raise ContainerFailed(f"ModelDataUrl {url} is not an S3 URI.")
        bucket, _, key = str(url)[5:].partition("/")
        container.workdir.mkdir(parents=True, exist_ok=True)
        tarball = container.workdir / "model.tar.gz"
        try:
            self.s3.download_file(bucket, key, str(tarball))
            container.unpack(tarball)
        except Exception as error:  # noqa: BLE001 - S3 and tar errors alike become the FailureReason
            raise ContainerFailed(
                f'Failed to extract model data archive from URL "{url}": {error}'
            ) from error
        finally:
            tarball.unlink(missing_ok=True)

    def _instance_memory(
        self, endpoint: Endpoint, variant: dict[str, Any], index: int
    ) -> tuple[MemoryCap | None, str]:
        """The instance's memory as one cap shared by its containers (F02), and a log line saying so."""
        instance_type = variant.get("InstanceType", "")
        limit = memory_mb(instance_type)
        supported, how = memory_cap_support()
        if limit is None or not supported:
            why = how if limit is not None else f"{instance_type} is not in the instance table"
            return None, f"deploybench local SageMaker: the instance's memory is NOT capped: {why}"
        cap = MemoryCap.create(f"{self.cgroup_tag}-{endpoint.name}-{index}", limit)
        return (
            cap,
            f"deploybench local SageMaker: instance {instance_type} memory, {limit} MB, caps its containers",
        )
