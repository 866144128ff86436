"""IAM evaluated offline: recorded requests checked against the synthesized stack's policies.

Each role's identity policies come from the one cached synthesis (``tests/support/infra.py``),
resolved as CloudFormation would deploy them into the request's account and region with the
test's bucket and SageMaker role. principalmapper's local policy simulation decides each
authorization (explicit Deny, Allow with wildcards, condition operators, ForAllValues/
ForAnyValue). A pytest plugin: every test's requests made from a Lambda handler, and what
SageMaker then does with the execution role they hand it, must be allowed; a denial fails the
test naming the action, the resource and the role. ``DEPLOYBENCH_IAM_RECORD=<file>`` also writes
every recorded request there as JSON lines.
"""

from __future__ import annotations

import collections
import collections.abc
import functools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.iam_actions import Access, Where, accesses
from tests.support.iam_recording import RECORDER, SAGEMAKER_ROLE_ENV, Request, install
from tests.support.iam_sagemaker import sagemaker_accesses
from tests.support.iam_tags import ResourceTags
from tests.support.infra import Synthesized, policy_statements, synthesize
from workflows.naming import function_name

# principalmapper 1.1.5 imports Mapping/MutableMapping from ``collections`` (removed in Python 3.10);
# the ABCs live in collections.abc, and these aliases are all it needs to import.
for _name in ("Mapping", "MutableMapping"):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

from principalmapper.common import Node, Policy  # noqa: E402
from principalmapper.querying.query_interface import local_check_authorization_full  # noqa: E402

DEFAULT_ACCOUNT = "123456789012"
RECORD_ENV = "DEPLOYBENCH_IAM_RECORD"
SAGEMAKER_ROLE = "SageMaker execution role"


@dataclass(frozen=True)
class Binding:
    """Where the stack is deployed, as one test's requests see it: the account and region, and the
    values its functions' environment variables (bucket, roles, topic, state machines) had."""

    account: str
    region: str
    environment: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, request: Request) -> Binding:
        role = request.sagemaker_role_arn or ""
        return cls(
            account=(role.split(":")[4] if role.count(":") >= 5 else "") or DEFAULT_ACCOUNT,
            region=request.region,
            environment=request.environment,
        )

    @property
    def where(self) -> Where:
        return Where(region=self.region, account=self.account)

    @property
    def sagemaker_role_arn(self) -> str:
        return (
            dict(self.environment).get(SAGEMAKER_ROLE_ENV)
            or f"arn:aws:iam::{self.account}:role/deploybench-sagemaker"
        )


@functools.cache
def environment_references() -> dict[str, str]:
    """A function environment variable for each stack reference it carries (``{"Ref": bucket}`` -> name)."""
    found: dict[str, str] = {}
    for function in synthesize().of_type("AWS::Lambda::Function").values():
        for name, value in function["Properties"].get("Environment", {}).get("Variables", {}).items():
            if isinstance(value, dict):
                found[json.dumps(value, sort_keys=True)] = name
    return found


def sagemaker_role_id(synth: Synthesized) -> str:
    [role] = [
        k
        for k, v in synth.of_type("AWS::IAM::Role").items()
        if "sagemaker.amazonaws.com" in json.dumps(v["Properties"]["AssumeRolePolicyDocument"])
    ]
    return role


def resolve(synth: Synthesized, binding: Binding, value: Any) -> Any:
    """A CloudFormation value as deployed: pseudo parameters, Refs and GetAtts of the stack's resources."""
    if isinstance(value, list):
        return [resolve(synth, binding, v) for v in value]
    if not isinstance(value, dict):
        return value
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(str(resolve(synth, binding, p)) for p in parts)
    variable = environment_references().get(json.dumps(value, sort_keys=True))
    if variable and variable in dict(binding.environment):
        return dict(binding.environment)[variable]
    if "Ref" in value:
        return _ref(synth, binding, value["Ref"])
    if "Fn::GetAtt" in value:
        return _get_att(synth, binding, *value["Fn::GetAtt"])
    return {k: resolve(synth, binding, v) for k, v in value.items()}


def _ref(synth: Synthesized, binding: Binding, name: str) -> str:
    pseudo = {
        "AWS::Partition": "aws",
        "AWS::Region": binding.region,
        "AWS::AccountId": binding.account,
        "AWS::URLSuffix": "amazonaws.com",
    }
    if name in pseudo:
        return pseudo[name]
    resource = synth.resources[name]
    props = resource.get("Properties", {})
    kind = resource["Type"]
    if kind == "AWS::S3::Bucket":
        return f"{name.lower()}-bucket"
    if kind == "AWS::StepFunctions::StateMachine":
        return f"arn:aws:states:{binding.region}:{binding.account}:stateMachine:{props['StateMachineName']}"
    if kind == "AWS::SNS::Topic":
        return f"arn:aws:sns:{binding.region}:{binding.account}:{props.get('TopicName', name)}"
    if kind == "AWS::SQS::Queue":
        return f"https://sqs.{binding.region}.amazonaws.com/{binding.account}/{name}"
    raise AssertionError(f"no deployed value for Ref {name} ({kind})")


def _get_att(synth: Synthesized, binding: Binding, name: str, attribute: str) -> str:
    resource = synth.resources[name]
    props = resource.get("Properties", {})
    kind = resource["Type"]
    at = f"{binding.region}:{binding.account}"
    if kind == "AWS::IAM::Role" and attribute == "Arn":
        return f"arn:aws:iam::{binding.account}:role/{name}"
    if kind == "AWS::S3::Bucket" and attribute == "Arn":
        return f"arn:aws:s3:::{resolve(synth, binding, {'Ref': name})}"
    if kind == "AWS::Lambda::Function" and attribute == "Arn":
        return f"arn:aws:lambda:{at}:function:{props['FunctionName']}"
    if kind == "AWS::Logs::LogGroup" and attribute == "Arn":
        return f"arn:aws:logs:{at}:log-group:{props.get('LogGroupName', name)}:*"
    if kind == "AWS::KMS::Key" and attribute == "Arn":
        return f"arn:aws:kms:{at}:key/{name.lower()}"
    if kind == "AWS::SQS::Queue" and attribute == "Arn":
        return f"arn:aws:sqs:{at}:{name}"
    if kind == "AWS::SNS::Topic" and attribute == "TopicArn":
        return _ref(synth, binding, name)
    raise AssertionError(f"no deployed value for GetAtt {name}.{attribute} ({kind})")


def role_statements(synth: Synthesized, role: str) -> Iterator[dict[str, Any]]:
    """Every statement of every identity policy of ``role`` (inline policies and AWS::IAM::Policy)."""
    for owner, statement in policy_statements(synth):
        props = synth.props(owner)
        attached = [r.get("Ref") for r in props.get("Roles", [])] if owner != role else [role]
        if role in attached:
            yield statement


def function_role(synth: Synthesized, placeholder: str) -> str:
    name = function_name(placeholder)
    [function] = [
        v for v in synth.of_type("AWS::Lambda::Function").values() if v["Properties"]["FunctionName"] == name
    ]
    return str(function["Properties"]["Role"]["Fn::GetAtt"][0])


@functools.cache
def principal(role: str, binding: Binding) -> Node:
    """The role as principalmapper sees it: its ARN and its resolved identity policies."""
    synth = synthesize()
    arn = (
        binding.sagemaker_role_arn
        if role == sagemaker_role_id(synth)
        else f"arn:aws:iam::{binding.account}:role/{role}"
    )
    document = {
        "Version": "2012-10-17",
        "Statement": resolve(synth, binding, list(role_statements(synth, role))),
    }
    trust = synth.props(role)["AssumeRolePolicyDocument"]
    return Node(
        arn,
        f"AROA{abs(hash(role)) % 10**12:012d}",
        [Policy(arn, role, document)],
        None,
        trust,
        None,
        0,
        False,
        False,
        None,
        False,
        None,
    )


def allowed(node: Node, access: Access) -> bool:
    return bool(local_check_authorization_full(node, access.action, access.resource, dict(access.context)))


@dataclass(frozen=True)
class Denial:
    role: str
    access: Access

    def __str__(self) -> str:
        return f"{self.role} is denied {self.access.describe()} (needed by {self.access.why})"


def denials(requests: list[Request]) -> list[Denial]:
    """Every authorization the requests need that the stack's policies do not give.

    ``requests`` are all a test recorded, in order: those made by no function are not charged to a
    role, but what they create and tag is what later requests act on (``aws:ResourceTag``).
    """
    synth = synthesize()
    found: list[Denial] = []
    # Every request, charged or not (a test's setup creates and tags too), tells what is tagged.
    tags = ResourceTags()
    for request in requests:
        binding = Binding.of(request)
        if request.function is None:
            tags.record(request, binding.where)
            continue
        role = function_role(synth, request.function)
        node = principal(role, binding)
        for access in accesses(request, binding.where):
            access = tags.given(access, request, binding.where)
            if not allowed(node, access):
                found.append(Denial(f"{function_name(request.function)} ({role})", access))
        tags.record(request, binding.where)
        executor, done = sagemaker_accesses(request, binding.where)
        if not done:
            continue
        assert executor == binding.sagemaker_role_arn, (
            f"{request.describe()} hands SageMaker {executor}, not the stack's SageMaker role {binding.sagemaker_role_arn}"
        )
        sagemaker = principal(sagemaker_role_id(synth), binding)
        found += [Denial(f"{SAGEMAKER_ROLE} ({executor})", a) for a in done if not allowed(sagemaker, a)]
    return list({str(d): d for d in found}.values())


def write_record(requests: list[Request], test: str) -> None:
    target = os.environ.get(RECORD_ENV)
    if not target:
        return
    with open(target, "a", encoding="utf-8") as out:
        for request in requests:
            out.write(json.dumps({"test": test, **request.as_json()}) + "\n")


install()


@pytest.fixture(autouse=True)
def iam_contract(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test: every request its handlers made, and what SageMaker did for them, is allowed."""
    RECORDER.take()
    yield
    recorded = RECORDER.take()
    write_record(recorded, request.node.nodeid)
    if not any(r.function is not None for r in recorded):
        return
    found = denials(recorded)
    if found:
        pytest.fail("IAM would refuse:\n" + "\n".join(f"  {d}" for d in found), pytrace=False)
