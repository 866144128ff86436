"""Context a paste states in passing, whatever its form: a serverless config, co-hosted containers, an
instance's id, one instance type."""

from __future__ import annotations

import re

from workflows.diagnosis.driver_needs import gpu_types_named
from workflows.diagnosis.evidence import Evidence

# A serverless endpoint's config as each tool writes it: the API's ServerlessConfig and MemorySizeInMB, the
# SageMaker Python SDK's ServerlessInferenceConfig (deploy's serverless_inference_config, memory_size_in_mb),
# Terraform's serverless_config block.
_SERVERLESS_MARK = re.compile(
    r"ServerlessConfig|MemorySizeInMB|ServerlessInferenceConfig|serverless_inference_config|\bserverless_config\b"
    r"|\bmemory_size_in_mb\b|\bmode: ?serverless\b"
)
_COHOST_MARK = re.compile(r"TargetContainerHostname|InferenceExecutionConfig|\"Mode\": ?\"Direct\"")
# An EC2 instance id (17 hex digits since 2016; 8 before), as a log stream or a host names it.
_INSTANCE_ID = re.compile(r"(?<![\w-])i-(?:[0-9a-f]{17}|[0-9a-f]{8})(?![\w-])")
_INSTANCE_TYPE = re.compile(r"(?<![\w.])ml\.[a-z0-9]+\.(?:\d*xlarge|large|medium|small|metal)\b")


def context_from_text(evidence: Evidence, text: str) -> None:
    """Context a text states in passing: a serverless config, co-hosted containers, an instance, one
    instance type."""
    if evidence.hosting_mode is None and _SERVERLESS_MARK.search(text):
        evidence.hosting_mode = "serverless"
    if evidence.container_count is None and _COHOST_MARK.search(text):
        evidence.container_count = 2
    if evidence.instance_id is None and (instance := _INSTANCE_ID.search(text)):
        evidence.instance_id = instance.group()
    types = set(_INSTANCE_TYPE.findall(text))
    # Where none is written with its "ml.", a GPU type written without ("한 g5.xlarge 에"); a bare CPU type is as
    # often the client's machine.
    types = types or gpu_types_named(text)
    if evidence.instance_type is None and len(types) == 1:
        evidence.instance_type = types.pop()
