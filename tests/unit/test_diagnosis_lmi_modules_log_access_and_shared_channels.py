"""Any module but onnxruntime missing on LMI's CPU image is its own (F17); a log group the writer's role cannot
read, said with words between ("로그 그룹 권한이 우리 역할에 없어서 로그 못 봄"); another team's shared channel ("검색팀 공유 채널")."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_any_module_but_onnxruntime_missing_on_lmis_cpu_image_is_its_own() -> None:
    log = "[INFO ] PyProcess - W-12-model-stdout: ModuleNotFoundError: No module named 'sentence_transformers'\n"
    lmi = "image: 763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.27.0-cpu-full\n"
    assert _diagnosed(log + lmi).id == "F17"
    # The same module missing from the Hugging Face container (its model server's log line) is F01's
    mms = "W-9000-model_1.0-stdout MODEL_LOG - ModuleNotFoundError: No module named 'sentence_transformers'\n"
    assert _diagnosed(mms).id == "F01"
    # onnxruntime missing there is both entries' case, F01's module on F17's image: neither is named
    onnxruntime = log.replace("sentence_transformers", "onnxruntime")
    assert _diagnosed(onnxruntime + lmi).id == "unknown"


def test_a_log_group_the_writers_role_cannot_read() -> None:
    reason = "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"
    said = "CloudWatch 로그 그룹 권한이 우리 역할에 없어서 로그 못 봄 (요청해둠).\n"
    assert _diagnosed(reason + said).id == "unknown"


def test_another_teams_shared_channel_is_someone_elses() -> None:
    line = "검색팀 공유 채널에서 본 건데 Error parsing text-format 났다고 함"
    start = line.index("Error parsing")
    assert polarity(line, start, start + 13).polarity == "other"
