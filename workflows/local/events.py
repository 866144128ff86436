"""The local engine's EventBridge for Step Functions: status changes routed to the stack's rule targets.

moto's interpreter emits no events. The router watches the engine's executions (a thread polling
ListExecutions) and, for each execution that changes from RUNNING to another status, builds the
"Step Functions Execution Status Change" event AWS sends (``source``, ``detail-type``,
``detail`` with the execution's ARN, machine, name, status and input) and delivers it to every
rule whose pattern matches, by invoking the rule's function through the local Lambda (the real
handler, in-process). The rule is the stack's: the same pattern (``stopped_event_pattern``) and the
same function (TeardownStoppedExecution), so a StopExecution of a local run tears it down as on AWS.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from workflows.stops.teardown import DETAIL_TYPE

POLL_S = 0.2


def matches(pattern: Any, event: Any) -> bool:
    """EventBridge's matching for the patterns used here: a list is "any of these values", a dict nests."""
    if isinstance(pattern, dict):
        return isinstance(event, dict) and all(
            k in event and matches(v, event[k]) for k, v in pattern.items()
        )
    if isinstance(pattern, list):
        return any(matches(value, event) for value in pattern)
    return bool(pattern == event)


@dataclass(frozen=True)
class Rule:
    pattern: dict[str, Any]
    function_name: str


@dataclass
class Delivery:
    """One event delivered to one rule's function, with what the function answered."""

    event: dict[str, Any]
    function_name: str
    response: dict[str, Any] | None = None
    error: str | None = None


@dataclass
class ExecutionEvents:
    """Polls the executions of ``machines`` and delivers their status changes to ``rules``."""

    sfn: Callable[[], Any]
    lam: Callable[[], Any]
    machines: list[str]
    rules: list[Rule]
    account: str
    region: str
    deliveries: list[Delivery] = field(default_factory=list)
    _seen: dict[str, str] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, daemon=True, name="local-eventbridge")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def wait_for(self, predicate: Callable[[list[Delivery]], bool], timeout_s: float) -> bool:
        """Block until ``predicate(deliveries)`` holds, or ``timeout_s`` passes."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self.deliveries), timeout=timeout_s)

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                self.poll()
            except Exception as error:  # noqa: BLE001 - the router must outlive one bad poll (moto mid-shutdown)
                self.deliveries.append(Delivery({}, "", error=f"{type(error).__name__}: {error}"))

    def poll(self) -> None:
        sfn = self.sfn()
        for machine in self.machines:
            for summary in sfn.list_executions(stateMachineArn=machine)["executions"]:
                arn, status = summary["executionArn"], summary["status"]
                before = self._seen.get(arn)
                self._seen[arn] = status
                if before != "RUNNING" or status == "RUNNING":
                    continue
                self._deliver(self._event(sfn.describe_execution(executionArn=arn)))

    def _event(self, execution: dict[str, Any]) -> dict[str, Any]:
        def epoch_ms(value: Any) -> int | None:
            return int(value.timestamp() * 1000) if isinstance(value, datetime) else None

        return {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": DETAIL_TYPE,
            "source": "aws.states",
            "account": self.account,
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "region": self.region,
            "resources": [execution["executionArn"]],
            "detail": {
                "executionArn": execution["executionArn"],
                "stateMachineArn": execution["stateMachineArn"],
                "name": execution["name"],
                "status": execution["status"],
                "startDate": epoch_ms(execution.get("startDate")),
                "stopDate": epoch_ms(execution.get("stopDate")),
                "input": execution.get("input"),
                "output": execution.get("output"),
            },
        }

    def _deliver(self, event: dict[str, Any]) -> None:
        for rule in self.rules:
            if not matches(rule.pattern, event):
                continue
            delivery = Delivery(event, rule.function_name)
            answer = self.lam().invoke(FunctionName=rule.function_name, Payload=json.dumps(event).encode())
            body = answer["Payload"].read().decode("utf-8")
            if answer.get("FunctionError"):
                delivery.error = body
            else:
                delivery.response = json.loads(body) if body else None
            with self._changed:
                self.deliveries.append(delivery)
                self._changed.notify_all()
