"""An alert raised as an exercise ("[TEST] game day", tags test or gameday) settles what it names; "simulate X" supposes
X; container logs that are gone and "no idea whether" leave a failed ping open; a Korean scale-in's stop time inside
its words and its zero's time before the zero ("14:31 에야 0 됐어요") time it; a predict_fn that calls model.run per
input is F31."""

from __future__ import annotations

import json

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity

PING = "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _opsgenie(message: str, tags: list[str]) -> str:
    alert = {"message": message, "tags": tags, "description": "sandbox only", "priority": "P5"}
    return json.dumps({"action": "Create", "alert": alert, "source": {"name": "api"}})


def test_an_alert_raised_as_an_exercise_names_nothing() -> None:
    quota = "ResourceLimitExceeded on CreateEndpoint for ml.g5.xlarge"
    assert _diagnosed(_opsgenie(f"[TEST] {quota}", [])).id == "unknown"
    assert _diagnosed(_opsgenie(quota, ["gameday", "sagemaker"])).id == "unknown"
    # The same alert, not an exercise, is the quota.
    assert _diagnosed(_opsgenie(quota, ["sagemaker"])).id == "F39"


def test_simulating_an_error_supposes_it() -> None:
    line = "next week we simulate ResourceLimitExceeded in the sandbox"
    start = line.index("ResourceLimitExceeded")
    assert polarity(line, start, start + 21).polarity == "hypothetical"


def test_logs_gone_or_no_idea_whether_leave_a_failed_ping_open() -> None:
    assert _diagnosed(PING + "retention was set to 1 day, so the container logs are gone.\n").id == "unknown"
    text = PING + "Worker died.\nml.m5.large, 2 containers. no idea whether memory or a crash at start.\n"
    assert _diagnosed(text).id == "unknown"


def test_a_korean_scale_in_timed_inside_its_words_and_before_the_zero() -> None:
    text = "트래픽 09:00 에 끊겼는데 copy 가 09:33 에야 0 됐어요. target tracking 은 동작함.\n"
    assert _diagnosed(text).id == "F13"


def test_a_predict_fn_calling_model_run_per_input_is_f31() -> None:
    text = (
        "```python\ndef predict_fn(data, model):\n    out = []\n    for text in data['inputs']:\n"
        "        out.append(model.run(None, dict(tok(text, return_tensors='np')))[0])\n    return out\n```\n"
        "Batch of 32 takes 32x a single call on our CPU endpoint.\n"
    )
    assert _diagnosed(text).id == "F31"
