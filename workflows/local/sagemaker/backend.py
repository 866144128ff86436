"""The local SageMaker's control plane: models, endpoint configs, endpoints, and InvokeEndpoint.

State transitions follow AWS: an endpoint is Creating with no ProductionVariants until an
instance is assigned, then its variants appear, then it turns InService once the container
answers its health check, or Failed with a FailureReason. LastModifiedTime moves at each
transition; timestamps come from ``workflows.clock`` so they agree with simulated waits.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from workflows import clock
from workflows.local.faults import Fault, FaultPlan
from workflows.local.sagemaker.container import Container, ContainerFailed

ACCOUNT = "123456789012"
_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


class ApiError(Exception):
    """An error answered the way SageMaker answers it (code, message, HTTP status)."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def _epoch(moment: datetime) -> float:
    return moment.timestamp()


@dataclass
class Endpoint:
    name: str
    arn: str
    config_name: str
    status: str
    created: datetime
    modified: datetime
    tags: list[dict[str, str]]
    variants: list[dict[str, Any]] = field(default_factory=list)
    failure_reason: str | None = None
    container: Container | None = None


class LocalSageMaker:
    """In-memory SageMaker resources; endpoints are served by local containers."""

    def __init__(
        self, *, region: str, s3: Any, root: Path | None = None, fault_plan: FaultPlan | None = None
    ) -> None:
        self.region = region
        self.s3 = s3
        self.fault_plan = fault_plan or FaultPlan()
        self._triggered: dict[int, int] = {}
        self._stopping = threading.Event()
        self.root = root or Path(tempfile.mkdtemp(prefix="deploybench-sagemaker-"))
        self.models: dict[str, dict[str, Any]] = {}
        self.configs: dict[str, dict[str, Any]] = {}
        self.endpoints: dict[str, Endpoint] = {}
        self.lock = threading.RLock()
        self._threads: list[threading.Thread] = []

    def arn(self, kind: str, name: str) -> str:
        return f"arn:aws:sagemaker:{self.region}:{ACCOUNT}:{kind}/{name.lower()}"

    # --- models --------------------------------------------------------------------------------

    def create_model(self, body: dict[str, Any]) -> dict[str, Any]:
        name = _valid_name(body, "ModelName")
        container = body.get("PrimaryContainer") or (body.get("Containers") or [None])[0]
        if container is None:
            raise ApiError("ValidationException", "Either PrimaryContainer or Containers must be specified.")
        with self.lock:
            if name in self.models:
                raise ApiError(
                    "ValidationException",
                    f'Cannot create already existing model "{self.arn("model", name)}".',
                )
            self.models[name] = {
                **body,
                "ModelArn": self.arn("model", name),
                "CreationTime": _epoch(clock.now()),
            }
        return {"ModelArn": self.arn("model", name)}

    def describe_model(self, body: dict[str, Any]) -> dict[str, Any]:
        model = self.models.get(body["ModelName"])
        if model is None:
            raise ApiError(
                "ValidationException", f'Could not find model "{self.arn("model", body["ModelName"])}".'
            )
        return {k: v for k, v in model.items() if k != "Tags"}

    def delete_model(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            if self.models.pop(body["ModelName"], None) is None:
                raise ApiError(
                    "ValidationException", f'Could not find model "{self.arn("model", body["ModelName"])}".'
                )
        return {}

    def list_models(self, body: dict[str, Any]) -> dict[str, Any]:
        items = [
            {"ModelName": n, "ModelArn": m["ModelArn"], "CreationTime": m["CreationTime"]}
            for n, m in sorted(self.models.items())
            if body.get("NameContains", "") in n
        ]
        return {"Models": items}

    # --- endpoint configs ----------------------------------------------------------------------

    def create_endpoint_config(self, body: dict[str, Any]) -> dict[str, Any]:
        name = _valid_name(body, "EndpointConfigName")
        variants = body.get("ProductionVariants") or []
        if not variants:
            raise ApiError("ValidationException", "ProductionVariants must contain at least one variant.")
        for variant in variants:
            if variant.get("ModelName") not in self.models:
                raise ApiError(
                    "ValidationException",
                    f'Could not find model "{self.arn("model", str(variant.get("ModelName")))}".',
                )
        with self.lock:
            if name in self.configs:
                raise ApiError(
                    "ValidationException",
                    f'Cannot create already existing endpoint configuration "{self.arn("endpoint-config", name)}".',
                )
            self.configs[name] = {
                **body,
                "EndpointConfigArn": self.arn("endpoint-config", name),
                "CreationTime": _epoch(clock.now()),
            }
        return {"EndpointConfigArn": self.arn("endpoint-config", name)}

    def describe_endpoint_config(self, body: dict[str, Any]) -> dict[str, Any]:
        config = self.configs.get(body["EndpointConfigName"])
        if config is None:
            raise ApiError(
                "ValidationException",
                f'Could not find endpoint configuration "{self.arn("endpoint-config", body["EndpointConfigName"])}".',
            )
        return {k: v for k, v in config.items() if k != "Tags"}

    def delete_endpoint_config(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            if self.configs.pop(body["EndpointConfigName"], None) is None:
                raise ApiError(
                    "ValidationException",
                    f'Could not find endpoint configuration "{self.arn("endpoint-config", body["EndpointConfigName"])}".',
                )
        return {}

    def list_endpoint_configs(self, body: dict[str, Any]) -> dict[str, Any]:
        items = [
            {
                "EndpointConfigName": n,
                "EndpointConfigArn": c["EndpointConfigArn"],
                "CreationTime": c["CreationTime"],
            }
            for n, c in sorted(self.configs.items())
            if body.get("NameContains", "") in n
        ]
        return {"EndpointConfigs": items}

    # --- endpoints -----------------------------------------------------------------------------

    def create_endpoint(self, body: dict[str, Any]) -> dict[str, Any]:
        name = _valid_name(body, "EndpointName")
        config_name = body.get("EndpointConfigName", "")
        if config_name not in self.configs:
            raise ApiError(
                "ValidationException",
                f'Could not find endpoint configuration "{self.arn("endpoint-config", config_name)}".',
            )
        now = clock.now()
        with self.lock:
            if name in self.endpoints:
                raise ApiError(
                    "ValidationException",
                    f'Cannot create already existing endpoint "{self.arn("endpoint", name)}".',
                )
            endpoint = Endpoint(
                name, self.arn("endpoint", name), config_name, "Creating", now, now, body.get("Tags", [])
            )
            self.endpoints[name] = endpoint
        thread = threading.Thread(
            target=self._bring_up,
            args=(endpoint, self.configs[config_name]),
            name=f"endpoint-{name}",
            daemon=True,
        )
        self._threads.append(thread)
        thread.start()
        return {"EndpointArn": endpoint.arn}

    def planned_fault(self, fault_id: str, instance_type: str | None) -> Fault | None:
        """The planned fault that fires now (counting ``times``), if any."""
        fault = self.fault_plan.find(fault_id, instance_type)
        if fault is None:
            return None
        key = self.fault_plan.faults.index(fault)
        with self.lock:
            fired = self._triggered.get(key, 0)
            if fault.times is not None and fired >= fault.times:
                return None
            self._triggered[key] = fired + 1
        return fault

    def _stall(self, endpoint: Endpoint, fault: Fault) -> None:
        """F06: no instance is ever assigned; Failed with an empty reason after the stall."""
        with self.lock:
            endpoint.modified = endpoint.created + timedelta(seconds=1)
        deadline = endpoint.created + timedelta(minutes=fault.stall_minutes)
        while clock.now() < deadline and not self._stopping.is_set():
            time.sleep(0.05)
        with self.lock:
            if endpoint.status == "Creating":
                endpoint.status, endpoint.failure_reason, endpoint.modified = "Failed", "", clock.now()

    def _bring_up(self, endpoint: Endpoint, config: dict[str, Any]) -> None:
        variant = config["ProductionVariants"][0]
        stall = self.planned_fault("F06", variant.get("InstanceType"))
        if stall is not None:
            self._stall(endpoint, stall)
            return
        model = self.models.get(variant["ModelName"])
        with self.lock:
            endpoint.variants = [
                {
                    "VariantName": variant.get("VariantName", "primary"),
                    "CurrentWeight": 1.0,
                    "DesiredWeight": 1.0,
                    "CurrentInstanceCount": 0,
                    "DesiredInstanceCount": variant.get("InitialInstanceCount", 1),
                }
            ]
            endpoint.modified = clock.now()
        try:
            if model is None:
                raise ContainerFailed(f'Could not find model "{self.arn("model", variant["ModelName"])}".')
            container = self._start_container(endpoint, model, variant)
        except ContainerFailed as error:
            with self.lock:
                endpoint.status, endpoint.failure_reason, endpoint.modified = (
                    "Failed",
                    str(error),
                    clock.now(),
                )
            return
        with self.lock:
            endpoint.container = container
            if endpoint.status != "Creating":  # deleted while starting
                container.stop()
                return
            endpoint.variants[0]["CurrentInstanceCount"] = endpoint.variants[0]["DesiredInstanceCount"]
            endpoint.status, endpoint.modified = "InService", clock.now()

    def _start_container(
        self, endpoint: Endpoint, model: dict[str, Any], variant: dict[str, Any]
    ) -> Container:
        primary = model.get("PrimaryContainer") or model["Containers"][0]
        workdir = self.root / endpoint.name
        workdir.mkdir(parents=True, exist_ok=True)
        log_path = self.root.parent / "endpoint-logs" / f"{endpoint.name}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        container = Container(
            name=endpoint.name,
            workdir=workdir,
            environment=dict(primary.get("Environment") or {}),
            log_path=log_path,
        )
        data_url = primary.get("ModelDataUrl")
        if data_url:
            tarball = workdir / "model.tar.gz"
            bucket, _, key = data_url[5:].partition("/")
            try:
                self.s3.download_file(bucket, key, str(tarball))
            except Exception as error:
                raise ContainerFailed(f"Failed to download model data from {data_url}: {error}") from error
            container.unpack(tarball)
            tarball.unlink()
        timeout = float(variant.get("ContainerStartupHealthCheckTimeoutInSeconds") or 600)
        endpoint.container = container
        container.start(health_timeout_s=timeout)
        return container

    def describe_endpoint(self, body: dict[str, Any]) -> dict[str, Any]:
        endpoint = self._endpoint(body["EndpointName"])
        with self.lock:
            result: dict[str, Any] = {
                "EndpointName": endpoint.name,
                "EndpointArn": endpoint.arn,
                "EndpointConfigName": endpoint.config_name,
                "EndpointStatus": endpoint.status,
                "CreationTime": _epoch(endpoint.created),
                "LastModifiedTime": _epoch(endpoint.modified),
            }
            if endpoint.variants:
                result["ProductionVariants"] = [dict(v) for v in endpoint.variants]
            if endpoint.failure_reason is not None:
                result["FailureReason"] = endpoint.failure_reason
        return result

    def _endpoint(self, name: str) -> Endpoint:
        endpoint = self.endpoints.get(name)
        if endpoint is None:
            raise ApiError("ValidationException", f'Could not find endpoint "{self.arn("endpoint", name)}".')
        return endpoint

    def delete_endpoint(self, body: dict[str, Any]) -> dict[str, Any]:
        endpoint = self._endpoint(body["EndpointName"])
        with self.lock:
            if endpoint.status in {"Creating", "Updating"}:
                raise ApiError("ValidationException", f'Cannot delete in-progress endpoint "{endpoint.arn}".')
            endpoint.status, endpoint.modified = "Deleting", clock.now()
        self._remove(endpoint)
        return {}

    def _remove(self, endpoint: Endpoint) -> None:
        if endpoint.container is not None:
            endpoint.container.stop()
        with self.lock:
            self.endpoints.pop(endpoint.name, None)
        shutil.rmtree(self.root / endpoint.name, ignore_errors=True)

    def list_endpoints(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            items = [
                {
                    "EndpointName": e.name,
                    "EndpointArn": e.arn,
                    "CreationTime": _epoch(e.created),
                    "LastModifiedTime": _epoch(e.modified),
                    "EndpointStatus": e.status,
                }
                for n, e in sorted(self.endpoints.items())
                if body.get("NameContains", "") in n
            ]
        return {"Endpoints": items}

    # --- data plane ----------------------------------------------------------------------------

    def invoke_endpoint(self, name: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, str]:
        endpoint = self.endpoints.get(name)
        if endpoint is None:
            raise ApiError("ValidationError", f"Endpoint {name} of account {ACCOUNT} not found.")
        if endpoint.status != "InService" or endpoint.container is None:
            raise ApiError(
                "ValidationError",
                f"Endpoint {name} of account {ACCOUNT} is not in service (status {endpoint.status}).",
            )
        try:
            status, output, content_type = endpoint.container.invoke(body, headers)
        except OSError as error:
            raise ApiError(
                "ModelError", f'Received server error (500) from primary with message "{error}".', 424
            ) from error
        if status >= 400:
            kind = "client" if status < 500 else "server"
            log_url = (
                f"https://{self.region}.console.aws.amazon.com/cloudwatch/home?region={self.region}#logEventViewer:"
                f"group=/aws/sagemaker/Endpoints/{name} in account {ACCOUNT}"
            )
            message = output.decode("utf-8", "replace")
            raise ApiError(
                "ModelError",
                f'Received {kind} error ({status}) from primary with message "{message}". See {log_url} for more information.',
                424,
            )
        return status, output, content_type

    # --- lifecycle -----------------------------------------------------------------------------

    def running_containers(self) -> list[str]:
        with self.lock:
            return [
                e.name for e in self.endpoints.values() if e.container is not None and e.container.alive()
            ]

    def shutdown(self) -> list[str]:
        """Stop every container still running; returns the endpoints that were left behind."""
        self._stopping.set()
        left = sorted(self.endpoints)
        for endpoint in list(self.endpoints.values()):
            with self.lock:
                endpoint.status = "Deleting"
            self._remove(endpoint)
        for thread in self._threads:
            thread.join(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)
        return left


def _valid_name(body: dict[str, Any], key: str) -> str:
    name = body.get(key)
    if not isinstance(name, str) or not _NAME.match(name):
        raise ApiError(
            "ValidationException",
            f"1 validation error detected: Value '{name}' at '{key[0].lower() + key[1:]}' failed to satisfy constraint: "
            "Member must satisfy regular expression pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}",
        )
    return name
