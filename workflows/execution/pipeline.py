"""Start a pipeline execution, follow it state by state, and collect its results.

The same follower serves both engines: it reads ``GetExecutionHistory`` from AWS Step Functions
or from the local engine's moto interpreter.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workflows.aws.storage import download_folder, upload_folder
from workflows.contracts import PipelineState
from workflows.errors import RunInterrupted, SpecInvalid
from workflows.naming import results_prefix

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_stepfunctions import SFNClient

if TYPE_CHECKING:
    from workflows.local.faults import FaultPlan

TERMINAL = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}


@dataclass(frozen=True)
class StateEvent:
    kind: str  # entered | exited | retry (failed, tried again) | caught (exited after a failure) | failed
    state: str
    at: datetime
    seconds: float | None = None
    detail: str = ""
    attempt: int = 0
    """retry: which retry this is (1 for the first)."""


@dataclass
class ExecutionOutcome:
    status: str
    execution_arn: str
    output: dict[str, Any] | None
    error: str | None
    cause: str | None
    states: list[str] = field(default_factory=list)
    results: list[Path] = field(default_factory=list)
    wall_s: float = 0.0


def _history(sfn: SFNClient, arn: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"executionArn": arn, "maxResults": 1000}
    while True:
        page = sfn.get_execution_history(**kwargs)
        events.extend(dict(event) for event in page["events"])
        if not page.get("nextToken"):
            return events
        kwargs["nextToken"] = page["nextToken"]


def _detail(event: dict[str, Any]) -> dict[str, Any]:
    return next((v for k, v in event.items() if k.endswith("EventDetails") and isinstance(v, dict)), {})


class Follower:
    """Turns new history events into ``StateEvent``s with durations.

    A task's failure is held until the history says what became of it: the task scheduled again is
    a ``retry`` (the definition's Retry), the state exited is ``caught`` (its Catch), and only the
    execution ending with it is ``failed``. So a run that recovers never shows a failure mark.
    """

    def __init__(self) -> None:
        self.seen = 0
        self.entered: dict[str, datetime] = {}
        self.current: str | None = None
        self.states: list[str] = []
        self.failed: set[str] = set()
        self.pending: StateEvent | None = None
        self.retries: dict[str, int] = {}
        self.pools_line = ""

    def flush(self) -> list[StateEvent]:
        """The failure still held when the execution ended: it failed the execution."""
        held, self.pending = self.pending, None
        return [held] if held else []

    def feed(self, events: list[dict[str, Any]]) -> list[StateEvent]:
        out: list[StateEvent] = []
        for event in events:
            if event["id"] <= self.seen:
                continue
            self.seen = event["id"]
            kind, at, detail = event["type"], event["timestamp"], _detail(event)
            if kind.endswith("StateEntered"):
                out += self.flush()
                name = detail["name"]
                self.entered[name], self.current = at, name
                self.failed.discard(name)
                self.retries.pop(name, None)
                self.states.append(name)
                out.append(StateEvent("entered", name, at))
            elif kind.endswith("StateExited"):
                name = detail["name"]
                started = self.entered.get(name, at)
                held, self.pending = self.pending, None
                if name in self.failed:
                    out.append(
                        StateEvent(
                            "caught", name, at, (at - started).total_seconds(), held.detail if held else ""
                        )
                    )
                else:
                    out.append(
                        StateEvent(
                            "exited", name, at, (at - started).total_seconds(), self._exit_detail(detail)
                        )
                    )
            elif kind in {"TaskScheduled", "LambdaFunctionScheduled"} and self.pending is not None:
                held, self.pending = self.pending, None
                self.failed.discard(held.state)  # tried again: the state has not failed (yet)
                self.retries[held.state] = self.retries.get(held.state, 0) + 1
                out.append(
                    StateEvent("retry", held.state, held.at, None, held.detail, self.retries[held.state])
                )
            elif kind in {"TaskFailed", "LambdaFunctionFailed"} and self.current:
                out += self.flush()
                self.failed.add(self.current)
                self.pending = StateEvent(
                    "failed", self.current, at, None, f"{detail.get('error')}: {detail.get('cause', '')}"
                )
            elif kind in {"ExecutionFailed", "ExecutionTimedOut", "ExecutionAborted"}:
                out += self.flush()
        return out

    def _exit_detail(self, detail: dict[str, Any]) -> str:
        """What a state's exit adds to its line: the instance pools' counts, or the benchmark's plan."""
        pools = self._pools(detail)
        if pools or detail.get("name") != "PlanBenchmark":
            return pools
        try:
            output = json.loads(detail.get("output") or "{}")
        except ValueError:
            return ""
        plan = output.get("benchmark_plan") if isinstance(output, dict) else None
        lines = (plan or {}).get("lines") if isinstance(plan, dict) else None
        return "\n".join(f"plan: {line}" for line in lines or [])

    def _pools(self, detail: dict[str, Any]) -> str:
        """The instance pools' counts when a state's output changed them (SageMaker's own fallback)."""
        try:
            output = json.loads(detail.get("output") or "{}")
        except ValueError:
            return ""
        endpoint = output.get("endpoint") if isinstance(output, dict) else None
        line = str((endpoint or {}).get("pools_line") or "") if isinstance(endpoint, dict) else ""
        if not line or line == self.pools_line:
            return ""
        self.pools_line = line
        return f"instance pools: {line}"


def follow(
    sfn: SFNClient,
    execution_arn: str,
    *,
    on_event: Callable[[StateEvent], None] = lambda event: None,
    poll_s: float = 0.5,
    timeout_s: float | None = None,
    on_poll: Callable[[], None] = lambda: None,
) -> ExecutionOutcome:
    """Poll until the execution ends (or ``timeout_s`` passes: then the outcome is RUNNING).

    ``on_poll`` runs after each poll's events are printed (a sweep follows its children there)."""
    follower = Follower()
    started = time.monotonic()
    while True:
        description = sfn.describe_execution(executionArn=execution_arn)
        for event in follower.feed(_history(sfn, execution_arn)):
            on_event(event)
        on_poll()
        status = description["status"]
        if status in TERMINAL:
            for event in follower.flush():
                on_event(event)
            break
        if timeout_s is not None and time.monotonic() - started > timeout_s:
            break
        time.sleep(poll_s)
    output = json.loads(description["output"]) if description.get("output") else None
    return ExecutionOutcome(
        status=status,
        execution_arn=execution_arn,
        output=output,
        error=description.get("error"),
        cause=description.get("cause"),
        states=follower.states,
        wall_s=round(time.monotonic() - started, 1),
    )


@dataclass
class Interruption:
    """What a stopped local run left: where it stopped, what was torn down, where its results are."""

    signal_name: str
    exit_code: int
    run_id: str
    state: str | None
    """The state the execution was in (None: stopped before its first state)."""
    execution_arn: str | None
    torn_down: list[str]
    results: Path
    result_file: Path | None = None

    def line(self) -> str:
        where = f"in {self.state}" if self.state else "before the first state"
        removed = "; ".join(self.torn_down) if self.torn_down else "nothing had been created"
        result = f" ({self.result_file.name} says INTERRUPTED)" if self.result_file else ""
        return (
            f"Interrupted by {self.signal_name} {where}: torn down: {removed}. "
            f"Partial results: {self.results}/{result}"
        )


def last_state(sfn: SFNClient, execution_arn: str) -> tuple[str | None, dict[str, Any] | None]:
    """The state the execution was last in, and the last execution state (``PipelineState``) seen."""
    name: str | None = None
    payload: dict[str, Any] | None = None
    for event in _history(sfn, execution_arn):
        detail = _detail(event)
        if event["type"].endswith("StateEntered"):
            name = detail.get("name", name)
        for key in ("input", "output"):
            text = detail.get(key)
            if not isinstance(text, str):
                continue
            try:
                candidate = json.loads(text)
            except ValueError:
                continue
            if isinstance(candidate, dict) and "run_id" in candidate and "spec" in candidate:
                payload = candidate
    return name, payload


def write_interrupted_result(state: PipelineState, interruption: Interruption) -> Path:
    """``result.json`` of a stopped run: status INTERRUPTED, the state it stopped in, no figures."""
    from workflows.reports.files import RESULT_FILE
    from workflows.reports.result import pipeline_result

    result = pipeline_result(
        state,
        "INTERRUPTED",
        detail=None,
        cloudwatch={"available": False, "reason": "the run was interrupted", "shapes": []},
    )
    result["interrupted"] = {
        "signal": interruption.signal_name,
        "state": interruption.state,
        "execution_arn": interruption.execution_arn,
        "torn_down": interruption.torn_down,
        "complete": False,
    }
    interruption.results.mkdir(parents=True, exist_ok=True)
    path = interruption.results / RESULT_FILE
    path.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def run_local(
    state: PipelineState,
    *,
    results_dir: Path,
    time_scale: float,
    fault_plan: FaultPlan | None = None,
    on_event: Callable[[StateEvent], None] = lambda event: None,
) -> tuple[ExecutionOutcome, list[str]]:
    """Run the deploy pipeline on the local engine; returns the outcome and any leaked endpoints.

    SIGINT, SIGTERM and SIGHUP stop the execution and tear down what it created, as the engine's
    exit does; ``result.json`` then says INTERRUPTED with the state the run was in.

    Raises:
        NotServableLocally: the hosting mode needs what the local engine lacks (before anything starts).
        RunInterrupted: a signal stopped the run; its ``interruption`` says what was torn down.
    """
    from workflows.hosting.modes import refuse_unservable_locally
    from workflows.local.engine import LocalEngine
    from workflows.local.interrupts import signals_raise
    from workflows.processes import groups

    refuse_unservable_locally(state.spec.hosting.mode)
    target = results_dir / state.run_id
    stopped: RunInterrupted | None = None
    where: tuple[str | None, dict[str, Any] | None] = (None, None)
    arn: str | None = None
    with signals_raise() as guard:
        engine = LocalEngine(
            workdir=target / "engine", time_scale=time_scale, fault_plan=fault_plan, run_id=state.run_id
        )
        try:
            with engine:
                try:
                    arn = engine.start_execution(
                        "deploy_pipeline", state.model_dump(mode="json"), name=state.run_id
                    )
                    outcome = follow(engine.client("stepfunctions"), arn, on_event=on_event)
                    outcome.results = engine.download_results(state.run_id, target)
                except RunInterrupted as error:
                    guard.hold()
                    stopped = error
                    if arn is not None:
                        where = last_state(engine.client("stepfunctions"), arn)
                    engine.download_results(state.run_id, target)
                finally:
                    # Teardown (the engine's exit) runs to its end, whatever arrives meanwhile.
                    guard.hold()
                    running = groups.owned()
        except RunInterrupted as error:  # while the engine started: it closed what it had started
            stopped = error
            running = groups.owned()
    if stopped is None:
        return outcome, engine.leaked_endpoints
    name, payload = where
    last = PipelineState.model_validate(payload) if payload else state
    torn_down = [f"execution {state.run_id} stopped"] if arn else []
    torn_down += [f"endpoint {endpoint} deleted" for endpoint in engine.leaked_endpoints]
    left = [g for g in running if groups.members(g)]
    torn_down.append(
        f"{len(running) - len(left)} process group(s) ended"
        + (f", {len(left)} still running: {left}" if left else "")
    )
    interruption = Interruption(
        signal_name=stopped.signal_name,
        exit_code=128 + stopped.signum,
        run_id=state.run_id,
        state=name,
        execution_arn=arn,
        torn_down=torn_down,
        results=target,
    )
    interruption.result_file = write_interrupted_result(last, interruption)
    stopped.interruption = interruption
    raise stopped


def prepare_aws_source(state: PipelineState, *, s3: S3Client, bucket: str) -> PipelineState:
    """A local model folder is uploaded so the convert function can read it; other sources pass as they are."""
    source = state.spec.model.source
    if source == "bundled" or source.startswith(("s3://", "hf://")):
        return state
    folder = Path(source).expanduser()
    if not folder.is_dir():
        raise SpecInvalid(
            f"model.source {source} is not a folder on this machine.",
            fix="pass a model folder or an s3:// prefix",
        )
    uri = f"s3://{bucket}/sources/{state.run_id}/"
    upload_folder(s3, folder, uri)
    spec = state.spec.model_copy(update={"model": state.spec.model.model_copy(update={"source": uri})})
    return state.model_copy(update={"spec": spec})


def run_aws(
    state: PipelineState,
    *,
    sfn: SFNClient,
    s3: S3Client,
    state_machine_arn: str,
    bucket: str,
    results_dir: Path,
    on_event: Callable[[StateEvent], None] = lambda event: None,
    on_start: Callable[[str], None] = lambda execution_arn: None,
) -> ExecutionOutcome:
    """Start the deploy pipeline on AWS Step Functions, follow it, download its results.

    ``on_start`` receives the execution's ARN as soon as it is started (before the first state)."""
    state = prepare_aws_source(state, s3=s3, bucket=bucket)
    arn = sfn.start_execution(
        stateMachineArn=state_machine_arn, name=state.run_id, input=state.model_dump_json()
    )["executionArn"]
    on_start(arn)
    outcome = follow(sfn, arn, on_event=on_event, poll_s=3.0)
    outcome.results = download_folder(
        s3, f"s3://{bucket}/{results_prefix(state.run_id)}", results_dir / state.run_id
    )
    return outcome
