"""The stack in a VPC: its functions placed there, the roles' network-interface rights, and the
IAM contract of a VPC spec's model and processing job for the SageMaker role."""

from __future__ import annotations

import functools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import ANY

from infra.network import CONTEXT_SECURITY_GROUP_IDS, CONTEXT_SUBNET_IDS, CONTEXT_VPC_ID, StackNetwork
from tests.support.hosting import BUCKET, ROLE, SETTINGS, request, stubbed
from tests.support.iam import Binding, allowed, denials, principal, sagemaker_role_id
from tests.support.iam_actions import Access, Where
from tests.support.iam_recording import RECORDER, acting_as
from tests.support.iam_sagemaker import sagemaker_accesses
from tests.support.infra import Synthesized, as_list, flat, policy_statements, synthesize
from workflows import clock
from workflows.benchmark.job import processing_job_request
from workflows.contracts import BenchmarkJobRequest, BenchmarkPlan, DeployResult
from workflows.conversion.hub import FUNCTION_VPC_ENV
from workflows.hosting.base import AwsClients
from workflows.hosting.modes import strategy_for
from workflows.spec.pipeline import parse_spec

VPC_ID = "vpc-0123456789abcdef0"
SUBNETS = ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"]
GROUPS = ["sg-0123456789abcdef0"]
CONTEXT = {
    CONTEXT_VPC_ID: VPC_ID,
    CONTEXT_SUBNET_IDS: ",".join(SUBNETS),
    CONTEXT_SECURITY_GROUP_IDS: GROUPS[0],
}
ARN = "arn:aws:sagemaker:us-east-1:123456789012:model/db-run-1-a1-m0"


@functools.cache
def vpc_synth() -> Synthesized:
    """The stack synthesized with the VPC context (cdk-nag runs; a finding would fail it)."""
    from infra.app import build_app
    from infra.constants import STACK_NAME, TEST_SYNTH_ENV

    os.environ[TEST_SYNTH_ENV] = "1"
    outdir = Path(tempfile.mkdtemp(prefix="deploybench-cdk-vpc-"))
    app, stack = build_app(outdir=str(outdir), context=CONTEXT)
    app.synth()
    template = json.loads((outdir / f"{STACK_NAME}.template.json").read_text())
    return Synthesized(outdir, template, list(stack.acknowledgements), {})


def role_statements(synth: Synthesized, role: str) -> list[dict[str, Any]]:
    found = []
    for owner, statement in policy_statements(synth):
        attached = [r.get("Ref") for r in synth.props(owner).get("Roles", [])] if owner != role else [role]
        if role in attached:
            found.append(statement)
    return found


def ec2_grants(statements: list[dict[str, Any]]) -> dict[str, list[tuple[list[str], dict[str, Any]]]]:
    grants: dict[str, list[tuple[list[str], dict[str, Any]]]] = {}
    for s in statements:
        for action in as_list(s["Action"]):
            if action.startswith("ec2:"):
                grants.setdefault(action, []).append(
                    ([flat(r) for r in as_list(s["Resource"])], s.get("Condition", {}))
                )
    return grants


def sagemaker_role(synth: Synthesized) -> str:
    [role] = [
        k
        for k, v in synth.of_type("AWS::IAM::Role").items()
        if "sagemaker.amazonaws.com" in json.dumps(v["Properties"]["AssumeRolePolicyDocument"])
    ]
    return role


def assert_interfaces_scoped_to_the_vpc(grants: dict[str, list[tuple[list[str], dict[str, Any]]]]) -> None:
    [(created_on, condition)] = grants["ec2:CreateNetworkInterface"]
    assert not condition
    assert sorted(r.split(":")[-1] for r in created_on) == sorted(
        [f"subnet/{s}" for s in SUBNETS] + [f"security-group/{g}" for g in GROUPS] + ["network-interface/*"]
    )
    for resources, condition in grants["ec2:DeleteNetworkInterface"]:
        assert [r.split(":")[-1] for r in resources] == ["network-interface/*"]
        assert flat(condition["ArnEquals"]["ec2:Vpc"]).endswith(f":vpc/{VPC_ID}")
    for action in ("ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"):
        assert grants[action] == [(["*"], {})]


def test_given_a_vpc_every_function_runs_in_its_subnets_and_groups() -> None:
    synth = vpc_synth()
    functions = synth.of_type("AWS::Lambda::Function")
    assert functions
    for logical_id, function in functions.items():
        assert function["Properties"]["VpcConfig"] == {"SubnetIds": SUBNETS, "SecurityGroupIds": GROUPS}, (
            logical_id
        )
        # and knows it: a Hub it cannot reach is then named as the VPC's missing NAT (conversion.hub)
        assert function["Properties"]["Environment"]["Variables"][FUNCTION_VPC_ENV] == VPC_ID
        role = function["Properties"]["Role"]["Fn::GetAtt"][0]
        # The roles are the stack's own: Lambda's AWS managed VPC policy is not attached, its rights are inline
        assert "ManagedPolicyArns" not in synth.props(role), role
        grants = ec2_grants(role_statements(synth, role))
        assert_interfaces_scoped_to_the_vpc(grants)
        assert {"ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"} <= set(grants)
    # And cdk-nag found nothing unacknowledged in this synth either
    report = json.loads((synth.outdir / "validation-report.json").read_text())
    assert [v for plugin in report["pluginReports"] for v in plugin.get("violations", [])] == []
    # And each wildcard it acknowledges is a resource in use (a stale one would cover a future wildcard)
    in_use = {flat(r) for _, st in policy_statements(synth) for r in as_list(st["Resource"])}
    wildcards = [
        f.removeprefix("AwsSolutions-IAM5[Resource::").removesuffix("]")
        for f in (a.finding for a in synth.acks)
        if "IAM5[" in f
    ]
    assert any(":network-interface/*" in w for w in wildcards)
    assert [w for w in wildcards if w not in in_use] == []


def test_given_a_vpc_the_sagemaker_role_creates_interfaces_only_there() -> None:
    synth = vpc_synth()
    grants = ec2_grants(role_statements(synth, sagemaker_role(synth)))
    assert_interfaces_scoped_to_the_vpc(grants)
    [(resources, condition)] = grants["ec2:CreateNetworkInterfacePermission"]
    assert condition["ArnEquals"]
    assert {"ec2:DescribeVpcs", "ec2:DescribeDhcpOptions", "ec2:DescribeSecurityGroups"} <= set(grants)


def test_without_a_vpc_the_functions_run_outside_one() -> None:
    functions = synthesize().of_type("AWS::Lambda::Function").values()
    assert functions and all("VpcConfig" not in f["Properties"] for f in functions)
    assert all(FUNCTION_VPC_ENV not in f["Properties"]["Environment"]["Variables"] for f in functions)


@pytest.mark.parametrize(
    ("context", "named"),
    [
        ({CONTEXT_VPC_ID: VPC_ID}, CONTEXT_SUBNET_IDS),
        ({**CONTEXT, CONTEXT_SUBNET_IDS: "subnet-1,subnet-0123456789abcdef0"}, CONTEXT_SUBNET_IDS),
        ({**CONTEXT, CONTEXT_SECURITY_GROUP_IDS: "group-1"}, CONTEXT_SECURITY_GROUP_IDS),
        ({**CONTEXT, CONTEXT_VPC_ID: f"{VPC_ID},{VPC_ID}"}, CONTEXT_VPC_ID),
    ],
)
def test_a_bad_vpc_context_is_refused_naming_the_key_and_the_fix(
    context: dict[str, object], named: str
) -> None:
    with pytest.raises(ValueError, match=named) as refused:
        StackNetwork.from_context(lambda key: context.get(key))
    assert "-c " in str(refused.value) or "Fix" in str(refused.value)


def test_the_vpc_context_takes_lists_or_comma_separated_ids() -> None:
    listed_context: dict[str, object] = {**CONTEXT, CONTEXT_SUBNET_IDS: SUBNETS}
    listed = StackNetwork.from_context(lambda key: listed_context.get(key))
    assert (
        listed
        == StackNetwork(VPC_ID, tuple(SUBNETS), tuple(GROUPS))
        == StackNetwork.from_context(lambda key: CONTEXT.get(key))
    )
    assert StackNetwork.from_context(lambda key: None) is None


def job_request() -> BenchmarkJobRequest:
    spec = parse_spec({"name": "secure", "hosting": {"vpc": {"subnets": SUBNETS, "security_groups": GROUPS}}})
    plan = BenchmarkPlan(runner="processing-job", reason="test", planned_s=60.0, job_name="db-run-1-bench",
                         job_instance_type="ml.c5.xlarge")  # fmt: skip
    deploy = DeployResult(endpoint_name="db-run-1-a1", endpoint_config_name="db-run-1-a1", model_names=["m"],
                          instance_type="ml.c6i.xlarge", created_at=clock.now())  # fmt: skip
    return BenchmarkJobRequest(run_id="run-1", spec=spec, deploy=deploy, plan=plan)


def test_a_vpc_specs_model_and_processing_job_are_allowed_for_the_sagemaker_role(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the deployment settings CDK gives every function, and a real-time spec in a VPC
    monkeypatch.setenv("DEPLOYBENCH_BUCKET", BUCKET)
    monkeypatch.setenv("DEPLOYBENCH_SAGEMAKER_ROLE_ARN", ROLE)
    vpc = {"subnets": SUBNETS, "security_groups": GROUPS}
    with stubbed("sagemaker") as (sagemaker, stub):
        stub.add_response("create_model", {"ModelArn": ARN})
        stub.add_response("create_endpoint_config", {"EndpointConfigArn": ARN})
        stub.add_response("create_endpoint", {"EndpointArn": ARN})
        stub.add_response("create_processing_job", {"ProcessingJobArn": ARN}, {"ProcessingJobName": ANY, **{
            k: ANY for k in processing_job_request(job_request(), settings=SETTINGS) if k != "ProcessingJobName"}})  # fmt: skip
        # When Deploy creates the model and StartBenchmarkJob the job in the VPC
        with acting_as("DeployEndpointFunctionArn"):
            strategy_for("realtime").deploy(
                request({"vpc": vpc}), clients=AwsClients(sagemaker=sagemaker), settings=SETTINGS
            )
        with acting_as("StartBenchmarkJobFunctionArn"):
            sagemaker.create_processing_job(**processing_job_request(job_request(), settings=SETTINGS))
    # Then SageMaker creates the interfaces in those subnets and groups as the execution role
    where = Where("us-east-1", "123456789012")
    handed = {
        (r.operation, a.action, a.resource.rsplit(":", 1)[-1])
        for r in RECORDER.peek()
        for a in sagemaker_accesses(r, where)[1]
        if a.action.startswith("ec2:")
    }
    for operation in ("CreateModel", "CreateProcessingJob"):
        for resource in (f"subnet/{SUBNETS[1]}", f"security-group/{GROUPS[0]}"):
            assert (operation, "ec2:CreateNetworkInterface", resource) in handed
        assert (operation, "ec2:DescribeDhcpOptions", "*") in handed
    # And the synthesized SageMaker role allows all of it (and the functions their calls)
    assert [str(d) for d in denials(RECORDER.peek())] == []
    # But no subnet of another account
    role = principal(sagemaker_role_id(synthesize()), Binding("123456789012", "us-east-1", ()))
    elsewhere = f"arn:aws:ec2:us-east-1:210987654321:subnet/{SUBNETS[0]}"
    assert not allowed(role, Access("ec2:CreateNetworkInterface", elsewhere))
    assert allowed(
        role, Access("ec2:CreateNetworkInterface", elsewhere.replace("210987654321", "123456789012"))
    )
