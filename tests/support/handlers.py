"""Calling a Lambda handler as Lambda does: its event as JSON and a context object (Powertools' test pattern)."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from state_machines import FUNCTIONS
from tests.support.aws import ACCOUNT, REGION
from workflows import clock
from workflows.contracts import (
    ArtifactManifest,
    ConvertResult,
    DeployResult,
    ParityReport,
    PipelineState,
    PreflightResult,
)


@dataclass
class LambdaContext:
    """The context attributes the handlers and Powertools read, as the Powertools docs stub them."""

    function_name: str
    memory_limit_in_mb: int
    invoked_function_arn: str
    timeout_s: int = 60
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_s - (time.monotonic() - self.started)) * 1000))


def context_for(module: ModuleType) -> LambdaContext:
    """The context Lambda hands ``module``'s handler: its function's name, memory and timeout from the table."""
    [row] = [row for row in FUNCTIONS if row.handler == f"{module.__name__}.handler"]
    name = f"deploybench-{module.__name__.rpartition('.')[2].replace('_', '-')}"
    return LambdaContext(
        function_name=name,
        memory_limit_in_mb=row.memory_mb,
        invoked_function_arn=f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}",
        timeout_s=row.timeout_s,
    )


def invoke(module: ModuleType, event: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """Run ``module.handler`` on ``event`` as it arrives from Step Functions (JSON), and return its
    result as Step Functions would store it (JSON round trip)."""
    payload = event.model_dump(mode="json") if isinstance(event, BaseModel) else event
    result = module.handler(json.loads(json.dumps(payload)), context_for(module))
    return dict(json.loads(json.dumps(result)))


def deployed_on(run_id: str, instance_type: str = "ml.c6i.xlarge") -> DeployResult:
    """What DeployEndpoint returned for the run's first attempt (realtime, one model)."""
    return DeployResult(
        endpoint_name=f"db-{run_id}-a1",
        endpoint_config_name=f"db-{run_id}-a1",
        model_names=[f"db-{run_id}-a1-m0"],
        instance_type=instance_type,
        created_at=clock.now(),
    )


MANIFEST = ArtifactManifest(
    task="embedding",
    architecture="BertModel",
    onnx_file="model.onnx",
    inputs=["input_ids"],
    outputs=["embedding"],
    opset=17,
    precision="fp32",
    max_sequence_length=64,
    onnxruntime_version="1.31.1",
    optimization="none",
    parity=ParityReport(texts=1, max_abs_diff=0.0, min_cosine=1.0, tolerance=1e-3, passed=True),
    files=[],
)


def converted(run_id: str, bucket: str) -> ConvertResult:
    """What ConvertToOnnx returned for the run (its staging folder and manifest)."""
    return ConvertResult(staging_uri=f"s3://{bucket}/staging/{run_id}/", manifest=MANIFEST, seconds=1.0)


def deployed_state(handler: ModuleType, run_id: str, instance_types: list[str], **spec: Any) -> PipelineState:
    """The run's state once ``handler`` (the DeployEndpoint handler module, which the calling test
    imports: the steps index of docs/concepts/index.md names it so) created its realtime endpoint in moto."""
    from tests.support.hosting import BUCKET, request

    # moto's CreateEndpointConfig requires InstanceType (it has no InstancePools): one type per endpoint.
    hosting = {"mode": "realtime", "instance_type_fallbacks": instance_types, "capacity": "recreate"}
    deploy_request = request(hosting, **spec)
    deploy_request = deploy_request.model_copy(update={"run_id": run_id})
    return PipelineState(
        run_id=run_id,
        spec=deploy_request.spec,
        convert=converted(run_id, BUCKET),
        pack=deploy_request.pack,
        preflight=PreflightResult(),
        deploy=DeployResult.model_validate(invoke(handler, deploy_request)),
        attempt=deploy_request.attempt,
    )
