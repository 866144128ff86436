"""One synthesis of the CDK app per test session (it costs ~20 s and ~0.5 GB), shared by the infra tests.

Synthesized with ``DEPLOYBENCH_TEST_SYNTH=1``: the zip asset holds the handler code without its
dependencies, so nothing is downloaded. The cdk-nag AwsSolutions plugin runs as in ``cdk synth``:
an unacknowledged finding would fail the synthesis itself.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The jsii runtime prints a banner for an end-of-life Node major (the value lists the majors to silence).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

FAKE_ACCOUNT = "123456789012"
FAKE_REGION = "us-east-1"


@dataclass(frozen=True)
class Synthesized:
    outdir: Path
    template: dict[str, Any]
    acks: list[Any]
    metadata: dict[str, Any]

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return dict(self.template["Resources"])

    def of_type(self, kind: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == kind}

    def props(self, logical_id: str) -> dict[str, Any]:
        return dict(self.resources[logical_id].get("Properties", {}))


@functools.cache
def synthesize() -> Synthesized:
    from infra.app import build_app
    from infra.constants import STACK_NAME, TEST_SYNTH_ENV

    os.environ[TEST_SYNTH_ENV] = "1"
    outdir = Path(tempfile.mkdtemp(prefix="deploybench-cdk-"))
    atexit.register(shutil.rmtree, outdir, True)
    app, stack = build_app(outdir=str(outdir))
    app.synth()
    return Synthesized(
        outdir=outdir,
        template=json.loads((outdir / f"{STACK_NAME}.template.json").read_text()),
        acks=list(stack.acknowledgements),
        metadata=json.loads((outdir / f"{STACK_NAME}.metadata.json").read_text()),
    )


def fake_arn(synth: Synthesized, value: Any) -> str:
    """What CloudFormation would put for a substitution value, with a fixed account and region."""
    if isinstance(value, str):
        return value
    if "Fn::GetAtt" in value:
        logical_id, attribute = value["Fn::GetAtt"]
        resource = synth.resources[logical_id]
        assert resource["Type"] == "AWS::Lambda::Function" and attribute == "Arn", value
        return (
            f"arn:aws:lambda:{FAKE_REGION}:{FAKE_ACCOUNT}:function:{resource['Properties']['FunctionName']}"
        )
    if "Ref" in value:
        resource = synth.resources[value["Ref"]]
        assert resource["Type"] == "AWS::StepFunctions::StateMachine", value
        name = resource["Properties"]["StateMachineName"]
        return f"arn:aws:states:{FAKE_REGION}:{FAKE_ACCOUNT}:stateMachine:{name}"
    raise AssertionError(f"unexpected substitution {value!r}")


def resolved_definition(synth: Synthesized, logical_id: str) -> str:
    """The state machine's DefinitionString after CloudFormation's DefinitionSubstitutions."""
    props = synth.props(logical_id)
    text = props["DefinitionString"]
    assert isinstance(text, str), "the definition is a plain string; only its placeholders are substituted"
    for key, value in props.get("DefinitionSubstitutions", {}).items():
        text = text.replace(f"${{{key}}}", fake_arn(synth, value))
    return text


def policy_statements(synth: Synthesized) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every statement of every IAM policy (inline and attached), with its owner's logical id."""
    for logical_id, resource in synth.resources.items():
        props = resource.get("Properties", {})
        # A role's policy that outgrows IAM's inline size limit continues in AWS::IAM::ManagedPolicy
        # resources (CDK's "OverflowPolicy"), attached to the role the same way.
        if resource["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            for statement in props["PolicyDocument"]["Statement"]:
                yield logical_id, statement
        if resource["Type"] == "AWS::IAM::Role":
            for policy in props.get("Policies", []):
                for statement in policy["PolicyDocument"]["Statement"]:
                    yield logical_id, statement


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def flat(value: Any) -> str:
    """A CloudFormation value as one string: ``{"Ref": "X"}`` -> ``<X>``, GetAtt -> ``<X.Attr>``, joins joined."""
    if isinstance(value, str):
        return value
    if "Ref" in value:
        return f"<{value['Ref']}>"
    if "Fn::GetAtt" in value:
        return f"<{'.'.join(value['Fn::GetAtt'])}>"
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(flat(part) for part in parts)
    if "Fn::Sub" in value and isinstance(value["Fn::Sub"], str):
        return str(value["Fn::Sub"]).replace("${", "<").replace("}", ">")
    raise AssertionError(f"unexpected value {value!r}")
