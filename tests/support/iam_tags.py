"""The tags each resource carries when a request acts on it: IAM's ``aws:ResourceTag/<key>`` values.

IAM gives every action on an existing resource that resource's tags as condition keys. The
evaluator learns them from the test's own recorded requests, in the order they were made: a
SageMaker Create* and a CloudWatch PutMetricAlarm with Tags, AddTags and TagResource add tags,
DeleteTags and UntagResource remove them, a Delete* that succeeded forgets the resource. A resource the test never
tagged through a recorded request carries no tags, as an untagged resource does on AWS, so a
statement that needs the managed tag denies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.support.iam_actions import SAGEMAKER_CREATES, Access, Where
from tests.support.iam_recording import Request

RESOURCE_TAG = "aws:ResourceTag/"
# The SageMaker deletes that end a resource (a stopped processing job keeps its record and tags).
SAGEMAKER_DELETES = {
    "DeleteModel": ("model", "ModelName"),
    "DeleteEndpointConfig": ("endpoint-config", "EndpointConfigName"),
    "DeleteEndpoint": ("endpoint", "EndpointName"),
    "DeleteInferenceComponent": ("inference-component", "InferenceComponentName"),
    "DeleteInferenceRouter": ("inference-router", "InferenceRouterName"),
}
CREATE_NAMES = {
    "model": "ModelName",
    "endpoint-config": "EndpointConfigName",
    "endpoint": "EndpointName",
    "inference-component": "InferenceComponentName",
    "processing-job": "ProcessingJobName",
    "inference-router": "InferenceRouterName",
}


def _key(arn: str) -> str:
    # SageMaker ARNs carry the name in lowercase whatever case the caller gave it.
    return arn.lower() if ":sagemaker:" in arn else arn


def _pairs(tags: Any) -> dict[str, str]:
    return {str(t["Key"]): str(t.get("Value", "")) for t in tags or []}


@dataclass
class ResourceTags:
    """What each resource ARN is tagged with, as of the last request ``record`` was given."""

    by_arn: dict[str, dict[str, str]] = field(default_factory=dict)

    def of(self, arn: str) -> dict[str, str]:
        return dict(self.by_arn.get(_key(arn), {}))

    def tag(self, arn: str, tags: dict[str, str]) -> None:
        self.by_arn.setdefault(_key(arn), {}).update(tags)

    def untag(self, arn: str, keys: list[str]) -> None:
        for key in keys:
            self.by_arn.get(_key(arn), {}).pop(key, None)

    def created(self, request: Request, where: Where) -> str | None:
        """The ARN ``request`` creates (a SageMaker Create* or a CloudWatch alarm), if it creates one."""
        p = request.params
        if request.service == "sagemaker" and request.operation in SAGEMAKER_CREATES:
            kind = SAGEMAKER_CREATES[request.operation]
            return where.sagemaker(kind, str(p[CREATE_NAMES[kind]]))
        if request.service == "cloudwatch" and request.operation == "PutMetricAlarm":
            return where.alarm(str(p["AlarmName"]))
        return None

    def given(self, access: Access, request: Request, where: Where) -> Access:
        """``access`` with the tags its resource carries, as IAM evaluates it.

        A create's own resource does not exist yet: its authorizations see only the request's tags.
        """
        created = self.created(request, where)
        if created is not None and _key(created) == _key(access.resource):
            return access
        tags = self.of(access.resource)
        if not tags:
            return access
        context = {**access.context, **{f"{RESOURCE_TAG}{k}": v for k, v in tags.items()}}
        return Access(access.action, access.resource, context, why=access.why)

    def record(self, request: Request, where: Where) -> None:
        """Apply what ``request`` does to the tags of the resource it acts on (nothing, if it failed:
        a delete refused while the endpoint is still Creating leaves it, and its tags, in place)."""
        if request.failed:
            return
        p, op = request.params, request.operation
        created = self.created(request, where)
        if created is not None:
            if request.service == "sagemaker":
                self.by_arn.pop(_key(created), None)
            self.tag(created, _pairs(p.get("Tags")))
        elif request.service == "sagemaker" and op == "AddTags":
            self.tag(str(p["ResourceArn"]), _pairs(p.get("Tags")))
        elif request.service == "sagemaker" and op == "DeleteTags":
            self.untag(str(p["ResourceArn"]), [str(k) for k in p.get("TagKeys", [])])
        elif request.service == "sagemaker" and op in SAGEMAKER_DELETES:
            kind, name = SAGEMAKER_DELETES[op]
            self.by_arn.pop(_key(where.sagemaker(kind, str(p[name]))), None)
        elif request.service == "cloudwatch" and op == "TagResource":
            self.tag(str(p["ResourceARN"]), _pairs(p.get("Tags")))
        elif request.service == "cloudwatch" and op == "UntagResource":
            self.untag(str(p["ResourceARN"]), [str(k) for k in p.get("TagKeys", [])])
        elif request.service == "cloudwatch" and op == "DeleteAlarms":
            for name in p.get("AlarmNames", []):
                self.by_arn.pop(_key(where.alarm(str(name))), None)
