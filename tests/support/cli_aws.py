"""moto set-ups for the command line's AWS tests: a deployed stack's resources, trivial state machines."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import state_machines
from workflows.naming import OUTPUT_BUCKET, OUTPUT_DEPLOY_PIPELINE_ARN, function_name, state_machine_name

PASS_DEFINITION = json.dumps(
    {"StartAt": "Hello", "States": {"Hello": {"Type": "Pass", "Result": {"ok": True}, "End": True}}}
)
MOTO_CONFIG = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}


def allow_moto_cloudformation() -> None:
    """moto's CloudFormation parser imports its API Gateway models, which import openapi_spec_validator
    at load time (moto's apigateway extra, not installed here). No test touches API Gateway; a module
    with the one name that import asks for lets the CloudFormation backend load."""
    try:
        import openapi_spec_validator  # noqa: F401
    except ImportError:
        names = ("openapi_spec_validator", "openapi_spec_validator.validation", f"{_EXCEPTIONS}")
        for name in names:
            sys.modules.setdefault(name, types.ModuleType(name))
        sys.modules["openapi_spec_validator"].validate = _never_called  # type: ignore[attr-defined]
        sys.modules[_EXCEPTIONS].OpenAPIValidationError = OpenAPIValidationError  # type: ignore[attr-defined]


_EXCEPTIONS = "openapi_spec_validator.validation.exceptions"


class OpenAPIValidationError(Exception):
    """The name moto's API Gateway models import (only API Gateway's ImportRestApi raises it)."""


def _never_called(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("API Gateway's OpenAPI validation is not part of these tests")


def stack_template(*, machines: bool = True, region: str = "eu-west-1") -> dict[str, Any]:
    """The deployed stack's shape as far as the CLI reads it: every function by its fixed name, every
    state machine by its name, and the outputs `run` and `sweep` read.

    moto executes only state machines created through its Step Functions API (its CloudFormation ones
    live in another backend): with ``machines=False`` the template leaves them out and its outputs name
    the ARNs such machines get."""
    role = {"Fn::GetAtt": ["Role", "Arn"]}
    resources: dict[str, Any] = {
        "Role": {
            "Type": "AWS::IAM::Role",
            "Properties": {"RoleName": "deploybench-test", "AssumeRolePolicyDocument": {"Statement": []}},
        },
        "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "deploybench-artifacts-test"}},
    }
    for index, row in enumerate(state_machines.FUNCTIONS):
        resources[f"Function{index}"] = {
            "Type": "AWS::Lambda::Function",
            "Properties": {
                "FunctionName": function_name(row.placeholder),
                "Runtime": "python3.11",
                "Handler": row.handler,
                "Role": role,
                "Code": {"ZipFile": "def handler(event, context):\n    return event\n"},
            },
        }
    for name in state_machines.names() if machines else ():
        resources[f"Machine{name.title().replace('_', '')}"] = {
            "Type": "AWS::StepFunctions::StateMachine",
            "Properties": {
                "StateMachineName": state_machine_name(name),
                "DefinitionString": PASS_DEFINITION,
                "RoleArn": role,
            },
        }
    arn = f"arn:aws:states:{region}:123456789012:stateMachine:"
    pipeline = {"Ref": "MachineDeployPipeline"} if machines else arn + state_machine_name("deploy_pipeline")
    sweep = {"Ref": "MachineBenchmarkSweep"} if machines else arn + state_machine_name("benchmark_sweep")
    return {
        "Resources": resources,
        "Outputs": {
            OUTPUT_DEPLOY_PIPELINE_ARN: {"Value": pipeline},
            "BenchmarkSweepArn": {"Value": sweep},
            OUTPUT_BUCKET: {"Value": {"Ref": "Bucket"}},
        },
    }


def deploy_stack(cloudformation: Any, name: str = "Deploybench", *, machines: bool = True) -> str:
    """Create the stack in the client's region; returns its ARN."""
    allow_moto_cloudformation()
    template = stack_template(machines=machines, region=cloudformation.meta.region_name)
    return str(cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(template))["StackId"])
