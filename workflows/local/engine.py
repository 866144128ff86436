"""The embedded local engine: the real state machines and handlers, with no AWS account.

moto's Step Functions interpreter executes the same definitions CDK deploys; Lambda tasks run
the real handlers in-process (``lambda_seam``); S3, IAM and Step Functions are moto's; SageMaker
is the local SageMaker, reached by the handlers' unchanged boto3 code through
``AWS_ENDPOINT_URL_SAGEMAKER`` / ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME``. Waits are scaled
(``timing``) so a run takes minutes, not hours.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3

from state_machines import FUNCTIONS, START_EXECUTION_SYNC, creation_order, render, state_machine_placeholder
from workflows import clock
from workflows.container.canary import CANARY_ENV
from workflows.container.environment import Announce, announce_to_stderr, cache_root
from workflows.local import children
from workflows.local.events import ExecutionEvents, Rule
from workflows.local.faults import FaultPlan
from workflows.local.lambda_seam import LambdaSeam, RegisteredFunction
from workflows.local.sagemaker.backend import ACCOUNT, LocalSageMaker
from workflows.local.sagemaker.regions import LocalRegions
from workflows.local.sagemaker.server import LocalSageMakerServer
from workflows.local.timing import TimeScale
from workflows.naming import function_name, state_machine_name
from workflows.processes import groups
from workflows.settings import CONVERSION_CACHE_ENV
from workflows.stops.teardown import stopped_event_pattern

if TYPE_CHECKING:
    from types_boto3_iam import IAMClient
    from types_boto3_lambda import LambdaClient

REGION = "us-east-1"
BUCKET = "deploybench-local"
MOTO_CONFIG = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
DEFAULT_TIME_SCALE = 30.0


class LocalEngine:
    """Context manager: everything a local run needs, torn down on exit (no process left behind)."""

    def __init__(
        self,
        *,
        workdir: Path | None = None,
        time_scale: float = DEFAULT_TIME_SCALE,
        fault_plan: FaultPlan | None = None,
        serving: str | None = None,
        announce: Announce = announce_to_stderr,
        run_id: str = "",
    ) -> None:
        self.workdir = (workdir or Path(tempfile.mkdtemp(prefix="deploybench-local-"))).resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.time_scale = time_scale
        self.fault_plan = fault_plan or FaultPlan()
        self.serving = serving
        self.announce = announce
        self.run_id = run_id
        self.reaped: list[groups.Reaped] = []
        self.lambda_log_path = self.workdir / "lambda.log"
        self.state_machine_arns: dict[str, str] = {}
        self.leaked_endpoints: list[str] = []
        self.sagemaker: LocalSageMaker | None = None
        self.regions: LocalRegions | None = None
        self.events: ExecutionEvents | None = None
        self._stack = contextlib.ExitStack()
        self._server: LocalSageMakerServer | None = None

    # --- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> LocalEngine:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def _start(self) -> None:
        from moto import mock_aws

        import lambdas.clients

        # What an earlier run left when it was killed outright (its lifeline should have ended it).
        self.reaped = groups.reap()
        for reaped in self.reaped:
            self.announce(reaped.line())
        groups.set_run(self.run_id, self.workdir.parent)
        self._stack.callback(groups.clear_run)
        clock.reset()
        self._stack.callback(clock.reset)
        self._stack.enter_context(_environment(self._base_environment()))
        self._stack.enter_context(mock_aws(config=MOTO_CONFIG))  # type: ignore[call-overload]
        self._stack.callback(lambdas.clients.clear)
        lambdas.clients.clear()
        self._stack.enter_context(TimeScale(self.time_scale))
        log = self._stack.enter_context(self.lambda_log_path.open("a", encoding="utf-8"))
        functions = {
            function_name(f.placeholder): RegisteredFunction(f.handler, f.memory_mb, f.timeout_s)
            for f in FUNCTIONS
        }
        functions[children.FUNCTION_NAME] = children.REGISTERED
        self._stack.enter_context(LambdaSeam(functions, log=log, account=ACCOUNT, region=REGION))
        self._configure_powertools()
        self._route_interpreter_logs()
        self.sagemaker = self._region_backend(REGION)
        self.regions = LocalRegions(self.sagemaker, self._region_backend)
        # Chosen (and on first use built) now, not by the first endpoint: the run says what serves it.
        stack = self.sagemaker.serving_stack()
        self.announce(f"Local SageMaker endpoints serve with the {stack.describe()}")
        if os.environ.get(CANARY_ENV) != "0":
            # The pre-spend canary needs the real stack's environment; the light server has none.
            # Restored on exit: the engine's choice must not reach code that runs after it in-process.
            self._stack.enter_context(_environment({CANARY_ENV: "1" if stack.kind == "mms" else ""}))
        self._server = self._stack.enter_context(LocalSageMakerServer(self.regions))
        self._stack.callback(self._shutdown_sagemaker)
        self._stack.callback(self._stop_executions)
        os.environ["AWS_ENDPOINT_URL_SAGEMAKER"] = self._server.url
        os.environ["AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME"] = self._server.url
        os.environ["AWS_ENDPOINT_URL_SAGEMAKER_INFERENCE_ROUTER_RUNTIME"] = self._server.url
        self._provision()
        self._route_events()

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _base_environment(self) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            # botocore's default flexible checksum sends every upload aws-chunked with a trailing
            # CRC32, which botocore encodes and moto decodes in Python: 2.5 s of a cache hit's 2.8 s
            # went to re-encoding the 90 MB artifact for staging. moto's S3 is in memory, so no
            # integrity checksum guards anything here; on AWS the handlers keep botocore's default.
            "AWS_REQUEST_CHECKSUM_CALCULATION": "when_required",
            "DEPLOYBENCH_BUCKET": BUCKET,
            "DEPLOYBENCH_SAGEMAKER_ROLE_ARN": f"arn:aws:iam::{ACCOUNT}:role/deploybench-sagemaker",
            # moto's S3 lives as long as one engine: converted artifacts are kept on disk instead.
            CONVERSION_CACHE_ENV: str(local_conversion_cache()),
            "POWERTOOLS_SERVICE_NAME": "deploybench",
            "POWERTOOLS_METRICS_NAMESPACE": "deploybench",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": "INFO",
            # The bundled model is read from site-packages; nothing may reach for a hub.
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "AWS_ENDPOINT_URL_SAGEMAKER": "",
            "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": "",
            "AWS_ENDPOINT_URL_SAGEMAKER_INFERENCE_ROUTER_RUNTIME": "",
        }

    def _region_backend(self, region: str) -> LocalSageMaker:
        """One Region's local SageMaker: the engine's Region under ``endpoints``, another under
        ``regions/<region>``, with its own CloudWatch Logs and the faults planned for it."""
        root = (
            self.workdir / "endpoints"
            if region == REGION
            else self.workdir / "regions" / region / "endpoints"
        )
        return LocalSageMaker(
            region=region,
            s3=self.client("s3"),
            logs=boto3.client("logs", region_name=region),
            root=root,
            fault_plan=self.fault_plan.for_region(region),
            serving=self.serving,
            announce=self.announce,
        )

    def _configure_powertools(self) -> None:
        """Powertools read their settings when ``lambdas.observability`` was first imported, which may
        have been before this engine set its environment: apply the namespace, and point the logger
        (which captured sys.stdout then) at the routed stream."""
        import logging
        import sys

        from lambdas.observability import logger, metrics

        if not metrics.namespace:
            metrics.namespace = os.environ["POWERTOOLS_METRICS_NAMESPACE"]
            self._stack.callback(setattr, metrics, "namespace", None)

        handler = logger.registered_handler
        if not isinstance(handler, logging.StreamHandler):
            return
        if getattr(getattr(handler, "stream", None), "closed", False):
            # Captured from a stream that is gone since (an earlier in-process CLI run's): setStream
            # would flush it and fail, and there is nothing to restore.
            handler.stream = sys.stdout
            return
        previous = handler.setStream(sys.stdout)
        self._stack.callback(handler.setStream, previous)

    def _route_interpreter_logs(self) -> None:
        """moto's interpreter logs every caught failure at ERROR; they belong in the engine log, not the terminal."""
        import logging

        interpreter = logging.getLogger("moto.stepfunctions")
        handler = logging.FileHandler(self.workdir / "interpreter.log", encoding="utf-8")
        interpreter.addHandler(handler)
        propagate, interpreter.propagate = interpreter.propagate, False
        self._stack.callback(setattr, interpreter, "propagate", propagate)
        self._stack.callback(handler.close)
        self._stack.callback(interpreter.removeHandler, handler)

    def _provision(self) -> None:
        iam: IAMClient = self.client("iam")
        role = iam.create_role(
            RoleName="deploybench-local",
            AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}),
        )["Role"]["Arn"]
        self.client("s3").create_bucket(Bucket=BUCKET)
        lam: LambdaClient = self.client("lambda")
        arns = {}
        for function in FUNCTIONS:
            arns[function.placeholder] = lam.create_function(
                FunctionName=function_name(function.placeholder),
                Runtime="python3.11",
                Role=role,
                Handler=function.handler,
                Code={"ZipFile": b"local"},
                Timeout=function.timeout_s,
                MemorySize=function.memory_mb,
            )["FunctionArn"]
        # moto has no startExecution.sync: a local function stands in for it (workflows/local/children.py).
        arns[START_EXECUTION_SYNC] = lam.create_function(
            FunctionName=children.FUNCTION_NAME,
            Runtime="python3.11",
            Role=role,
            Handler=children.REGISTERED.handler_path,
            Code={"ZipFile": b"local"},
            Timeout=900,
        )["FunctionArn"]
        sfn = self.client("stepfunctions")
        # Children first: a machine that starts another has that one's ARN substituted into it.
        for name in creation_order():
            self.state_machine_arns[name] = arns[state_machine_placeholder(name)] = sfn.create_state_machine(
                name=state_machine_name(name), definition=render(name, arns), roleArn=role
            )["stateMachineArn"]

    def _route_events(self) -> None:
        """The stack's stopped-execution rule, locally: a StopExecution tears its run down (events.py).

        Stopped before the engine stops its own executions at exit: those are torn down by the
        local SageMaker's shutdown, not by a teardown racing it."""
        self.events = ExecutionEvents(
            sfn=lambda: self.client("stepfunctions"),
            lam=lambda: self.client("lambda"),
            machines=list(self.state_machine_arns.values()),
            rules=[
                Rule(
                    stopped_event_pattern(list(self.state_machine_arns.values())),
                    function_name("TeardownStoppedExecutionFunctionArn"),
                )
            ],
            account=ACCOUNT,
            region=REGION,
        )
        self.events.start()
        self._stack.callback(self.events.stop)

    def _stop_executions(self) -> None:
        sfn = self.client("stepfunctions")
        for arn in self.state_machine_arns.values():
            for execution in sfn.list_executions(stateMachineArn=arn, statusFilter="RUNNING")["executions"]:
                sfn.stop_execution(executionArn=execution["executionArn"], error="LocalEngineStopped")

    def _shutdown_sagemaker(self) -> None:
        if self.regions is not None:
            self.leaked_endpoints = self.regions.shutdown()

    # --- use -----------------------------------------------------------------------------------

    def client(self, service: str) -> Any:
        # The service is named at run time, so no one client type fits; callers index the answers.
        return boto3.client(service, region_name=REGION)  # type: ignore[call-overload]

    def start_execution(self, machine: str, payload: dict[str, Any], *, name: str | None = None) -> str:
        kwargs: dict[str, Any] = {
            "stateMachineArn": self.state_machine_arns[machine],
            "input": json.dumps(payload),
        }
        if name:
            kwargs["name"] = name
        return str(self.client("stepfunctions").start_execution(**kwargs)["executionArn"])

    def download_results(self, run_id: str, target: Path) -> list[Path]:
        from workflows.aws.storage import download_folder
        from workflows.naming import results_prefix

        return download_folder(self.client("s3"), f"s3://{BUCKET}/{results_prefix(run_id)}", target)


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Any:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def local_conversion_cache() -> Path:
    """Where local runs keep converted artifacts: ``$DEPLOYBENCH_CONVERSION_CACHE`` or the cache root's."""
    return Path(os.environ.get(CONVERSION_CACHE_ENV) or cache_root() / "conversions").expanduser()
