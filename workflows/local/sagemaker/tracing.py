"""Request tracing on the local SageMaker: sampled requests in the local logs' traces group.

An endpoint config with ``TracingConfig.EnableTracing`` makes SageMaker trace ``InitialSamplingPercentage``
of the endpoint's requests into ``/aws/sagemaker/Endpoints/<endpoint>/traces``. The local SageMaker does the
same into its CloudWatch Logs (the one its container logs go to), so ``deploybench diagnose --traces`` reads
a local endpoint as it reads one on AWS. Sampling is by count, not chance (request k is traced when the
running share crosses the next whole one), so a test knows which requests were traced.

AWS documents where traces go and what they hold (the request and response payloads, truncated over
512 KiB), not the layout of a record: each local record says it is local (``source``) and uses the names
``workflows.diagnosis.traces`` reads (``inferenceId``, ``statusCode``, ``latencyMs``, ``request`` and
``response`` with their payloads).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from workflows.naming import endpoint_traces_log_group

if TYPE_CHECKING:
    from types_boto3_logs.type_defs import InputLogEventTypeDef

    from workflows.local.sagemaker.logs import LogShipper

LOCAL_SOURCE = "deploybench-local-sagemaker"
"""Every local trace says where it was written: never mistaken for one SageMaker wrote."""
TRUNCATE_BYTES = 512 * 1024


def _payload(data: bytes) -> str:
    text = data[:TRUNCATE_BYTES].decode("utf-8", "replace")
    return text + ("…[truncated]" if len(data) > TRUNCATE_BYTES else "")


class LocalTracer:
    """Writes the sampled requests of traced endpoints to their traces group (best effort, as serving goes on)."""

    def __init__(self, shipper: LogShipper | None) -> None:
        self.shipper = shipper
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def sampled(self, endpoint: str, config: dict[str, Any]) -> bool:
        """Whether this request of ``endpoint`` is traced under its config's TracingConfig."""
        tracing = config.get("TracingConfig") or {}
        if self.shipper is None or not tracing.get("EnableTracing"):
            return False
        percent = int(tracing.get("InitialSamplingPercentage") or 0)
        with self._lock:
            count = self._counts[endpoint] = self._counts.get(endpoint, 0) + 1
        return (count * percent) // 100 > ((count - 1) * percent) // 100

    def write(
        self,
        endpoint: str,
        *,
        stream: str,
        status: int,
        started: float,
        request: tuple[bytes, str],
        response: tuple[bytes, str],
    ) -> None:
        """One traced request: its status, latency since ``started`` (perf_counter) and both payloads."""
        if self.shipper is None:
            return
        record = {
            "source": LOCAL_SOURCE,
            "endpointName": endpoint,
            "inferenceId": str(uuid.uuid4()),
            "statusCode": status,
            "latencyMs": round((time.perf_counter() - started) * 1000, 3),
            "request": {"contentType": request[1], "payload": _payload(request[0])},
            "response": {"contentType": response[1], "payload": _payload(response[0])},
        }
        event: InputLogEventTypeDef = {"timestamp": int(time.time() * 1000), "message": json.dumps(record)}
        self.shipper.put_events(endpoint_traces_log_group(endpoint), stream, [event])
