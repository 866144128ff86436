"""The local SageMaker: the control-plane subset the handlers use, and InvokeEndpoint.

One class composed of one part per concern — models and endpoint configs (``models``), endpoints
(``endpoints``), inference components (``components``), processing jobs (``processing``), tags
(``tags``) and the runtime (``runtime``) — over shared state (``state``). The HTTP front
(``server``) calls its methods by operation name; endpoints are served by local containers
(``container``) running the DLC's stack where it can (``workflows.container.environment``).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from workflows.container.environment import Announce, announce_to_stderr
from workflows.local.faults import FaultPlan
from workflows.local.sagemaker.api import ACCOUNT, ApiError
from workflows.local.sagemaker.processing import ProcessingJobsApi
from workflows.local.sagemaker.runtime import Invocation, RuntimeApi
from workflows.local.sagemaker.tags import TagsApi

if TYPE_CHECKING:
    from types_boto3_logs import CloudWatchLogsClient
    from types_boto3_s3 import S3Client

__all__ = ["ACCOUNT", "ApiError", "Invocation", "LocalSageMaker"]


class LocalSageMaker(RuntimeApi, ProcessingJobsApi, TagsApi):
    """In-memory SageMaker resources; endpoints are served by local containers.

    Args:
        region: the region in ARNs.
        s3: an S3 client (model data and processing job inputs/outputs).
        logs: a CloudWatch Logs client: container output goes to /aws/sagemaker/Endpoints/<name>.
        root: work folder (containers under it, their log files in ``<root>/../endpoint-logs``).
        fault_plan: field failures to reproduce on demand.
        serving: ``auto`` | ``mms`` | ``light`` (see ``workflows.container.environment.resolve_serving_stack``).
    """

    def __init__(
        self,
        *,
        region: str,
        s3: S3Client,
        logs: CloudWatchLogsClient | None = None,
        root: Path | None = None,
        fault_plan: FaultPlan | None = None,
        serving: str | None = None,
        announce: Announce = announce_to_stderr,
    ) -> None:
        super().__init__(
            region=region,
            s3=s3,
            logs=logs,
            root=root or Path(tempfile.mkdtemp(prefix="deploybench-sagemaker-")),
            fault_plan=fault_plan,
            serving=serving,
            announce=announce,
        )

    def running_containers(self) -> list[str]:
        """Endpoints (and inference components) with a server process still alive."""
        with self.lock:
            owners = [
                (e.name, c)
                for e in self.endpoints.values()
                for i in e.instances
                for c in i.containers.values()
            ]
            owners += [
                (n, c) for n, ic in self.components.items() for i in ic.copies for c in i.containers.values()
            ]
        return sorted({name for name, container in owners if container.alive()})

    def shutdown(self) -> list[str]:
        """Stop every container and job still running; returns the endpoints that were left behind."""
        self._stopping.set()
        with self.lock:
            left = sorted(self.endpoints)
            components = list(self.components.values())
            endpoints = list(self.endpoints.values())
        for component in components:
            for copy in component.copies:
                for container in copy.containers.values():
                    container.stop()
        self.components.clear()
        for endpoint in endpoints:
            with self.lock:
                endpoint.status = "Deleting"
            self._remove(endpoint)
        self.stop_all_jobs()
        for thread in list(self._threads):
            thread.join(timeout=30)
        self.stop_every_container()
        if self.shipper is not None:
            self.shipper.close()
        shutil.rmtree(self.root, ignore_errors=True)
        return left
