"""Live output: a retry and a caught failure read as such; only a failure that ends the run is a failure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from workflows.execution.pipeline import Follower

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def history(*kinds: tuple[str, str]) -> list[dict[str, Any]]:
    events = []
    for number, (kind, name) in enumerate(kinds, start=1):
        at = T0 + timedelta(seconds=10 * number)
        if kind.endswith(("Entered", "Exited")):
            detail = {
                "stateEnteredEventDetails" if kind.endswith("Entered") else "stateExitedEventDetails": {
                    "name": name
                }
            }
        elif kind.endswith("Failed") and not kind.startswith("Execution"):
            detail = {
                "lambdaFunctionFailedEventDetails": {"error": "ResourceBusy", "cause": "still Creating"}
            }
        else:
            detail = {}
        events.append({"id": number, "type": kind, "timestamp": at, **detail})
    return events


def test_retries_then_success_show_retry_marks_and_no_failure() -> None:
    # Given a teardown that fails twice with ResourceBusy and then succeeds (the definition's Retry)
    events = history(
        ("TaskStateEntered", "TeardownEndpoint"),
        ("LambdaFunctionScheduled", ""),
        ("LambdaFunctionFailed", ""),
        ("LambdaFunctionScheduled", ""),
        ("LambdaFunctionFailed", ""),
        ("LambdaFunctionScheduled", ""),
        ("LambdaFunctionSucceeded", ""),
        ("TaskStateExited", "TeardownEndpoint"),
        ("ExecutionSucceeded", ""),
    )
    # When the follower reads it
    follower = Follower()
    seen = follower.feed(events) + follower.flush()
    # Then it reads as two retries and a state that succeeded
    assert [(e.kind, e.attempt) for e in seen] == [("entered", 0), ("retry", 1), ("retry", 2), ("exited", 0)]
    assert seen[1].detail.startswith("ResourceBusy")


def test_a_caught_failure_is_caught_and_an_uncaught_one_is_failed() -> None:
    caught = Follower().feed(
        history(
            ("TaskStateEntered", "WaitForEndpoint"),
            ("LambdaFunctionScheduled", ""),
            ("LambdaFunctionFailed", ""),
            ("TaskStateExited", "WaitForEndpoint"),
            ("TaskStateEntered", "RemediateCapacity"),
        )
    )
    assert [e.kind for e in caught] == ["entered", "caught", "entered"]
    assert caught[1].detail.startswith("ResourceBusy") and caught[1].seconds == pytest.approx(30.0)
    follower = Follower()
    failed = follower.feed(
        history(
            ("TaskStateEntered", "DeployEndpoint"),
            ("LambdaFunctionScheduled", ""),
            ("LambdaFunctionFailed", ""),
            ("ExecutionFailed", ""),
        )
    )
    assert [e.kind for e in failed] == ["entered", "failed"] and follower.flush() == []


def test_the_live_line_of_a_retry_has_no_failure_mark(capsys: pytest.CaptureFixture[str]) -> None:
    from workflows.cli.executions import print_event
    from workflows.execution.pipeline import StateEvent

    print_event(StateEvent("retry", "TeardownEndpoint", T0, None, "ResourceBusy: [busy]", 3))
    print_event(StateEvent("caught", "WaitForEndpoint", T0, 110.6, "CapacityStall: x"))
    text = capsys.readouterr().out
    assert "↻ TeardownEndpoint: retry 3 after ResourceBusy [busy]" in text
    assert "↪ WaitForEndpoint: CapacityStall after 110.6 s, caught" in text
    assert "✗" not in text and "failed" not in text
