"""What every part of the local SageMaker shares: its resources, locks, fault plan and serving stack."""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workflows.container.environment import Announce, ServingStack, announce_to_stderr, resolve_serving_stack
from workflows.local.faults import Fault, FaultPlan
from workflows.local.sagemaker.api import ACCOUNT, ApiError
from workflows.local.sagemaker.container import Container, ContainerFailed
from workflows.local.sagemaker.container_spec import ContainerSpec
from workflows.local.sagemaker.logs import LogShipper
from workflows.local.sagemaker.memory import MemoryCap, remove_tagged_caps
from workflows.local.sagemaker.tracing import LocalTracer

if TYPE_CHECKING:
    from types_boto3_logs import CloudWatchLogsClient
    from types_boto3_s3 import S3Client


@dataclass
class Instance:
    """One instance of a variant (or one copy of an inference component): its containers by hostname."""

    id: str
    containers: dict[str, Container] = field(default_factory=dict)
    memory: MemoryCap | None = None

    def stop(self) -> None:
        """Stop its containers, then drop its memory cap (the kernel keeps a cgroup with processes)."""
        for container in self.containers.values():
            container.stop()
        if self.memory is not None:
            self.memory.remove()


@dataclass
class Endpoint:
    name: str
    arn: str
    config_name: str
    status: str
    created: datetime
    modified: datetime
    kind: str = "single"  # single | direct | serverless | components
    variants: list[dict[str, Any]] = field(default_factory=list)
    failure_reason: str | None = None
    instances: list[Instance] = field(default_factory=list)
    starting: list[Container] = field(default_factory=list)
    cold_start: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    turn: int = 0
    served_type: str | None = None
    """The pool's instance type that came up, for a variant with InstancePools."""

    def instance_type(self, variant: dict[str, Any]) -> str:
        """The type the variant's instances run on: the served pool's, else its InstanceType."""
        return self.served_type or str(variant.get("InstanceType") or "")


class BackendState:
    """Resources and shared machinery; the API mixins (models, endpoints, ...) build on it."""

    def __init__(
        self,
        *,
        region: str,
        s3: S3Client,
        logs: CloudWatchLogsClient | None = None,
        root: Path,
        fault_plan: FaultPlan | None = None,
        serving: str | None = None,
        announce: Announce = announce_to_stderr,
    ) -> None:
        self.region = region
        self.s3 = s3
        self.fault_plan = fault_plan or FaultPlan()
        self.root = root
        self.log_dir = root.parent / "endpoint-logs"
        self.url = ""  # the HTTP front's, once it listens (processing jobs call back through it)
        self.lock = threading.RLock()
        self.models: dict[str, dict[str, Any]] = {}
        self.configs: dict[str, dict[str, Any]] = {}
        self.endpoints: dict[str, Endpoint] = {}
        self.components: dict[str, Any] = {}
        self.jobs: dict[str, Any] = {}
        self.tags: dict[str, list[dict[str, str]]] = {}
        self.shipper = LogShipper(logs) if logs is not None else None
        self.tracer = LocalTracer(self.shipper)
        self.announce = announce
        self._serving = serving
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._triggered: dict[int, int] = {}
        self._containers: list[Container] = []
        # Prefixes this backend's cgroups, so that shutdown can remove any a crash path left behind.
        self.cgroup_tag = uuid.uuid4().hex[:8]

    def arn(self, kind: str, name: str) -> str:
        return f"arn:aws:sagemaker:{self.region}:{ACCOUNT}:{kind}/{name.lower()}"

    def serving_stack(self, image: str | None = None) -> ServingStack:
        """The model server a container of ``image`` runs (resolved once per image's libraries; may
        build that DLC-like environment)."""
        return resolve_serving_stack(self._serving, image=image, announce=self.announce)

    def new_container(self, spec: ContainerSpec, workdir: Path, memory: MemoryCap | None = None) -> Container:
        """A container for ``spec``, remembered so that shutdown stops it whatever state it reached."""
        if self._stopping.is_set():
            raise ContainerFailed("The local SageMaker is shutting down.")
        container = Container(
            spec,
            workdir=workdir,
            stack=self.serving_stack(spec.image or None),
            shipper=self.shipper,
            memory=memory,
            cgroup_tag=self.cgroup_tag,
        )
        with self.lock:
            if self._stopping.is_set():
                raise ContainerFailed("The local SageMaker is shutting down.")
            self._containers.append(container)
        return container

    def stop_every_container(self) -> None:
        with self.lock:
            containers, self._containers = self._containers, []
        for container in containers:
            container.stop()
        remove_tagged_caps(self.cgroup_tag)

    def spawn(self, target: Callable[..., None], *args: Any, name: str) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self.lock:
            self._threads.append(thread)
        thread.start()

    def refuse_denied(self, operation: str, request: dict[str, Any]) -> None:
        """F38: refuse ``operation`` as an organization's service control policy does.

        Raises:
            ApiError: AccessDeniedException with AWS's text, naming the action and the resource.
        """
        fault = next((f for f in self.fault_plan.faults if f.id == "F38" and f.action == operation), None)
        if fault is None or (fault.unless and request.get(fault.unless)):
            return
        if self.planned_fault("F38", None) is None:
            return
        name = next((str(v) for k, v in request.items() if k.endswith("Name")), "*")
        kind = re.sub(
            r"(?<!^)(?=[A-Z])", "-", operation.removeprefix("Create").removeprefix("Delete")
        ).lower()
        raise ApiError(
            "AccessDeniedException",
            f"User: arn:aws:sts::{ACCOUNT}:assumed-role/deploybench-local/run is not authorized to perform: "
            f"sagemaker:{operation} on resource: {self.arn(kind, name)} with an explicit deny in a service "
            "control policy",
        )

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
