"""Endpoints: Creating -> InService / Failed as on AWS, served by local containers.

An endpoint is Creating with no ProductionVariants until an instance is assigned; then its variants
appear (instance counts 0 of N), its containers start; while Creating it also carries
PendingDeploymentSummary (``pending.py``), and it turns InService once every container
answers a real invocation, or Failed with the FailureReason AWS gives. LastModifiedTime moves at each
transition; timestamps come from ``workflows.clock`` so they agree with the engine's simulated waits.

Kinds: ``single`` (one model container), ``direct`` (multi-container, InferenceExecutionConfig
Direct: one server per container, each on its own SAGEMAKER_BIND_TO_PORT), ``serverless`` (InService
without a container; the container starts on the first invocation, capped at MemorySizeInMB),
``components`` (no model: inference components bring their own containers).
"""

from __future__ import annotations

import shutil
import time
from datetime import timedelta
from typing import Any

from workflows import clock
from workflows.local.sagemaker.api import ApiError, already_exists, epoch, not_found, valid_name, validation
from workflows.local.sagemaker.container import Container, ContainerFailed
from workflows.local.sagemaker.models import bind_to_port_error, is_direct, model_containers
from workflows.local.sagemaker.pending import pending_deployment_summary
from workflows.local.sagemaker.startup import InstanceStartup
from workflows.local.sagemaker.state import Endpoint
from workflows.spec.pipeline import is_gpu_instance


def endpoint_kind(config: dict[str, Any], models: dict[str, dict[str, Any]]) -> str:
    variant = config["ProductionVariants"][0]
    if variant.get("ServerlessConfig"):
        return "serverless"
    if not variant.get("ModelName"):
        return "components"
    model = models[variant["ModelName"]]
    if len(model_containers(model)) == 1:
        return "single"
    if is_direct(model):
        return "direct"
    raise validation(
        "The local SageMaker serves multi-container models with InferenceExecutionConfig Mode Direct only; "
        "Serial inference pipelines are not supported locally."
    )


class EndpointsApi(InstanceStartup):
    def create_endpoint(self, body: dict[str, Any]) -> dict[str, Any]:
        name = valid_name(body, "EndpointName")
        config = self._config(body.get("EndpointConfigName", ""))
        for variant in config["ProductionVariants"]:
            if variant.get("ModelName") and variant["ModelName"] not in self.models:
                raise not_found("model", self.arn("model", variant["ModelName"]))
        kind = endpoint_kind(config, self.models)
        self._quota_fault(config)
        self._placement_faults(kind, config)
        now = clock.now()
        with self.lock:
            if name in self.endpoints:
                raise already_exists("endpoint", self.arn("endpoint", name))
            endpoint = Endpoint(
                name, self.arn("endpoint", name), config["EndpointConfigName"], "Creating", now, now, kind
            )
            self.endpoints[name] = endpoint
            self.tags[endpoint.arn] = list(body.get("Tags") or [])
        self.spawn(self._bring_up, endpoint, config, name=f"endpoint-{name}")
        return {"EndpointArn": endpoint.arn}

    def _quota_fault(self, config: dict[str, Any]) -> None:
        """F39: the account's endpoint quota of the instance type is 0, when planned (AWS's text)."""
        for variant in config["ProductionVariants"]:
            instance_type = variant.get("InstanceType")
            if instance_type and self.planned_fault("F39", instance_type):
                wanted = int(variant.get("InitialInstanceCount") or 1)
                raise ApiError(
                    "ResourceLimitExceeded",
                    f"The account-level service limit '{instance_type} for endpoint usage' is 0 Instances, "
                    f"with current utilization of 0 Instances and a request delta of {wanted} Instances. "
                    "Please use AWS Service Quotas to request an increase for this quota. If AWS Service "
                    "Quotas is not available, contact AWS support to request an increase for this quota.",
                )

    def _placement_faults(self, kind: str, config: dict[str, Any]) -> None:
        """F04 (GPU in Direct mode) and F05 (image without accept-bind-to-port), when planned."""
        if kind != "direct":
            return
        variant = config["ProductionVariants"][0]
        instance_type = variant.get("InstanceType", "")
        if is_gpu_instance(instance_type) and self.planned_fault("F04", instance_type):
            raise validation(
                f"Instance type {instance_type} is not supported for a Model using Direct InferenceExecutionMode"
            )
        fault = self.fault_plan.find("F05", instance_type)
        if fault is not None and fault.instance_types:  # unfiltered F05 already fired at CreateModel
            error = bind_to_port_error(self.models[variant["ModelName"]])
            if error is not None and self.planned_fault("F05", instance_type):
                raise error

    # --- bring-up ------------------------------------------------------------------------------

    def _stall(self, endpoint: Endpoint, stall_minutes: float) -> None:
        """F06: no instance is ever assigned; Failed with an empty reason after the stall (for pools:
        after their provision timeout, when it comes first)."""
        with self.lock:
            endpoint.modified = endpoint.created + timedelta(seconds=1)
        deadline = endpoint.created + timedelta(minutes=stall_minutes)
        while clock.now() < deadline and not self._stopping.is_set():
            time.sleep(0.05)
        with self.lock:
            if endpoint.status == "Creating":
                endpoint.status, endpoint.failure_reason, endpoint.modified = "Failed", "", clock.now()

    def _assign_instances(
        self, endpoint: Endpoint, variant: dict[str, Any], pools: list[dict[str, Any]] | None = None
    ) -> None:
        summary: dict[str, Any] = {
            "VariantName": variant["VariantName"],
            "CurrentWeight": 1.0,
            "DesiredWeight": 1.0,
        }
        model = self.models.get(variant.get("ModelName") or "")
        if model is not None:
            resolved = epoch(clock.now())
            summary["DeployedImages"] = [
                {
                    "SpecifiedImage": c.get("Image", ""),
                    "ResolvedImage": c.get("Image", ""),
                    "ResolutionTime": resolved,
                }
                for c in model_containers(model)
            ]
        if endpoint.kind == "serverless":
            summary["CurrentServerlessConfig"] = dict(variant["ServerlessConfig"])
            summary["DesiredServerlessConfig"] = dict(variant["ServerlessConfig"])
        else:
            summary["CurrentInstanceCount"] = 0
            summary["DesiredInstanceCount"] = variant.get("InitialInstanceCount", 1)
            summary["VariantStatus"] = [{"Status": "Creating", "StartTime": epoch(clock.now())}]
            if variant.get("ManagedInstanceScaling"):
                summary["ManagedInstanceScaling"] = dict(variant["ManagedInstanceScaling"])
            if pools:
                summary["InstancePools"] = [
                    {"InstanceType": pool["InstanceType"], "CurrentInstanceCount": 0}
                    for pool in sorted(pools, key=lambda p: int(p["Priority"]))
                ]
        with self.lock:
            endpoint.variants = [summary]
            endpoint.modified = clock.now()

    def _walk_pools(self, endpoint: Endpoint, variant: dict[str, Any]) -> tuple[dict[str, Any] | None, float]:
        """SageMaker's pool fallback: the first pool by priority whose type has capacity (no planned
        F06) serves, as a variant on that type and its model (ModelNameOverride); None when every
        pool is out of capacity, with the minutes until the provision timeout gives up."""
        stall_minutes = float("inf")
        for pool in sorted(variant["InstancePools"], key=lambda p: int(p["Priority"])):
            stall = self.planned_fault("F06", pool["InstanceType"])
            if stall is None:
                served = {k: v for k, v in variant.items() if k != "InstancePools"}
                served["InstanceType"] = pool["InstanceType"]
                served["ModelName"] = pool.get("ModelNameOverride") or variant.get("ModelName")
                if served["ModelName"] is None:
                    served.pop("ModelName")
                with self.lock:
                    endpoint.served_type = pool["InstanceType"]
                return served, 0.0
            stall_minutes = min(stall_minutes, stall.stall_minutes)
        timeout = variant.get("VariantInstanceProvisionTimeoutInSeconds")
        return None, min(stall_minutes, timeout / 60) if timeout else stall_minutes

    def _bring_up(self, endpoint: Endpoint, config: dict[str, Any]) -> None:
        variant = config["ProductionVariants"][0]
        if variant.get("InstancePools"):
            served, stall_minutes = self._walk_pools(endpoint, variant)
            if served is None:
                self._stall(endpoint, stall_minutes)
                return
            variant = served
        else:
            stall = self.planned_fault("F06", variant.get("InstanceType"))
            if stall is not None:
                self._stall(endpoint, stall.stall_minutes)
                return
        self._assign_instances(endpoint, variant, config["ProductionVariants"][0].get("InstancePools"))
        try:
            if endpoint.kind == "serverless" and (variant["ServerlessConfig"].get("ProvisionedConcurrency")):
                # Provisioned concurrency: the container is started before the endpoint is InService,
                # so the first request finds it warm.
                with clock.real_work():
                    self.start_serverless(endpoint)
            if endpoint.kind in {"single", "direct"}:
                notes = self._cuda_driver_fault(endpoint, variant)
                # Starting containers is real work: the engine's clock must not skip through it.
                with clock.real_work():
                    instances = self._start_instances(endpoint, variant, notes)
                with self.lock:
                    endpoint.instances = instances
        except (ContainerFailed, ApiError) as error:
            with self.lock:
                endpoint.status, endpoint.failure_reason, endpoint.modified = (
                    "Failed",
                    str(error),
                    clock.now(),
                )
                endpoint.variants[0].pop("VariantStatus", None)
            return
        with self.lock:
            if endpoint.status != "Creating":  # shut down while starting
                return
            summary = endpoint.variants[0]
            if "DesiredInstanceCount" in summary:
                summary["CurrentInstanceCount"] = summary["DesiredInstanceCount"]
                summary.pop("VariantStatus", None)
                for pool in summary.get("InstancePools") or []:
                    if pool["InstanceType"] == endpoint.served_type:
                        pool["CurrentInstanceCount"] = summary["DesiredInstanceCount"]
            endpoint.status, endpoint.modified = "InService", clock.now()

    def start_serverless(self, endpoint: Endpoint) -> None:
        """Start a serverless endpoint's container now, as a cold call would (the runtime does).

        Raises:
            ApiError: the container did not start.
        """
        raise NotImplementedError("the runtime starts serverless containers")

    # --- describe, delete, list ----------------------------------------------------------------

    def _endpoint(self, name: str) -> Endpoint:
        endpoint = self.endpoints.get(name)
        if endpoint is None:
            raise not_found("endpoint", self.arn("endpoint", name))
        return endpoint

    def describe_endpoint(self, body: dict[str, Any]) -> dict[str, Any]:
        endpoint = self._endpoint(body["EndpointName"])
        with self.lock:
            result: dict[str, Any] = {
                "EndpointName": endpoint.name,
                "EndpointArn": endpoint.arn,
                "EndpointConfigName": endpoint.config_name,
                "EndpointStatus": endpoint.status,
                "CreationTime": epoch(endpoint.created),
                "LastModifiedTime": epoch(endpoint.modified),
            }
            if endpoint.variants:
                result["ProductionVariants"] = [dict(v) for v in endpoint.variants]
            pending = pending_deployment_summary(endpoint, self.configs.get(endpoint.config_name))
            if pending is not None:
                result["PendingDeploymentSummary"] = pending
            if endpoint.failure_reason is not None:
                result["FailureReason"] = endpoint.failure_reason
        return result

    def delete_endpoint(self, body: dict[str, Any]) -> dict[str, Any]:
        endpoint = self._endpoint(body["EndpointName"])
        with self.lock:
            if endpoint.status in {"Creating", "Updating"}:
                raise validation(f'Cannot delete in-progress endpoint "{endpoint.arn}".')
            attached = sorted(n for n, c in self.components.items() if c.endpoint == endpoint.name)
            if attached:
                raise validation(
                    f"Endpoint {endpoint.name} has inference components {attached}; delete them before the endpoint."
                )
            endpoint.status, endpoint.modified = "Deleting", clock.now()
        self._remove(endpoint)
        return {}

    def _remove(self, endpoint: Endpoint) -> None:
        with self.lock:
            starting, placed = list(endpoint.starting), list(endpoint.instances)
        for container in starting:
            container.stop()
        for instance in placed:
            instance.stop()
        with self.lock:
            self.endpoints.pop(endpoint.name, None)
            self.tags.pop(endpoint.arn, None)
        shutil.rmtree(self.root / endpoint.name, ignore_errors=True)

    def list_endpoints(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            items = [
                {
                    "EndpointName": e.name,
                    "EndpointArn": e.arn,
                    "CreationTime": epoch(e.created),
                    "LastModifiedTime": epoch(e.modified),
                    "EndpointStatus": e.status,
                }
                for n, e in sorted(self.endpoints.items())
                if body.get("NameContains", "") in n and body.get("StatusEquals", e.status) == e.status
            ]
        return {"Endpoints": items}

    def endpoint_containers(self, endpoint: Endpoint) -> list[Container]:
        with self.lock:
            return [c for i in endpoint.instances for c in i.containers.values()]
