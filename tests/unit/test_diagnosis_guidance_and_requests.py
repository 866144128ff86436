"""A checklist or a runbook names failures to prevent, and so do "avoids", "expect" and Korean's -ㄹ 수 있다; LMI or
TensorRT named as a possibility leaves a first-call timeout open; an HTTP request a shell ran is read with the line it
printed; a code fence ends a sentence; a GPU named in passing, a backend's file under another name, a Markdown
timeline, optimum's choice among several graphs and a first "invoke" are each read."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(line: str, mention: str) -> str:
    start = line.index(mention)
    return polarity(line, start, start + len(mention)).polarity


def test_a_checklist_names_what_to_prevent_not_what_happened() -> None:
    text = "\n".join(
        [
            "## NLI endpoint pre-deploy checklist",
            "- [ ] requirements.txt pins onnxruntime (else `No module named 'onnxruntime'` on the first call)",
            "- [ ] one worker per GPU: look at CloudWatch for 'Worker died' during the first hour",
            "- [ ] Service Quotas: ResourceLimitExceeded for ml.g6.xlarge endpoint usage",
        ]
    )
    assert _diagnosed(text).id == "unknown"
    # The same lines under an incident's heading report what happened.
    incident = text.replace(
        "## NLI endpoint pre-deploy checklist", "## Incident 2291: deploy failed at 10:02"
    )
    assert _diagnosed(incident.replace("- [ ] ", "- ")).id != "unknown"


def test_a_checked_box_is_a_list_item_under_its_heading() -> None:
    text = "\n".join(
        [
            "Triton g6 rollout checklist (v2)",
            "[x] InferenceAmiVersion pinned to the 4-1 AMI",
            "[x] error 803 with 26.x images: the AMI's driver is 580",
        ]
    )
    assert _diagnosed(text).id != "F20"


def test_what_is_avoided_expected_or_watched_for_is_supposed() -> None:
    assert (
        _reading("pinning the AMI avoids CUDA error 803 on 26.x images", "CUDA error 803") == "hypothetical"
    )
    assert _reading(
        "during the drill, expect ResourceLimitExceeded on the second create", "ResourceLimitExceeded"
    ) == ("hypothetical")
    assert _reading("watch for Worker died after the scale-out", "Worker died") == "hypothetical"
    assert _reading("Worker died at 10:02 on the new endpoint", "Worker died") == "affirmed"


def test_a_korean_possibility_supposes() -> None:
    line = '점검 중에는 "Inference Component has no capacity to process this request" 에러가 뜰 수 있습니다'
    assert _reading(line, "Inference Component has no capacity to process this request") == "hypothetical"
    assert _reading('방금 "Worker died" 에러가 떴습니다', "Worker died") == "affirmed"


def test_lmi_or_tensorrt_named_as_a_possibility_leaves_a_first_call_timeout_open() -> None:
    timeout = (
        'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.us-east-1'
        '.amazonaws.com/endpoints/emb/invocations"'
    )
    assert _diagnosed(f"{timeout}\nthe first call after the endpoint sat idle overnight").id == "F15"
    text = (
        f"{timeout}\nthe first call only; not sure if this deploy went out as the lmi variant or the trt one"
    )
    found = _diagnosed(text)
    assert found.id == "unknown"
    candidates = " ".join(
        line for line in found.evidence if line.startswith(("[candidate]", "[alternative]"))
    )
    assert "F18" in candidates or "F18" in found.title


def test_an_http_request_a_shell_ran_is_read_with_what_it_printed() -> None:
    text = "\n".join(
        [
            '$ curl -s -w \'%{http_code}\\n\' -o /dev/null localhost:8000/score -d \'{"text_1":"x","text_2":"y"}\'',
            "404",
            '$ curl -s localhost:8000/classify -d \'{"input":"x"}\' | head -c 40',
            '{"id":"classify-1","object":"list"',
        ]
    )
    found = _diagnosed(text)
    assert found.id == "F27"
    assert any("POST localhost:8000/score answered: 404" in line for line in found.evidence)
    # A 404 printed after a request to another route says nothing of /score.
    other = text.replace("localhost:8000/score", "localhost:8000/rerank")
    assert _diagnosed(other).id != "F27"


def test_a_code_fence_ends_the_sentence_before_it() -> None:
    text = "\n".join(
        [
            "```curl -s -X POST localhost:8000/score -d '{}'",
            "Not Found",
            "```",
            "is this the same bug as the tokenizer one?",
        ]
    )
    assert _diagnosed(text).id == "F27"


def test_a_gpu_named_in_passing_tells_the_endpoint_runs_on_one() -> None:
    text = "\n".join(
        [
            "batch test on the L40S endpoint, HF DLC zero-shot pipeline",
            "- single input: p50 15 ms",
            '- {"inputs": [<32 texts>]} without parameters: p50 496 ms',
        ]
    )
    assert _diagnosed(text).id == "F31"
    assert _diagnosed(text.replace("the L40S endpoint", "the endpoint")).id != "F31"


def test_a_backends_file_under_another_name_is_the_file_name_not_a_missing_file() -> None:
    log = "E1102 09:00:01 1 model_lifecycle.cc:654] failed to load 'bge' version 1: unable to find '/models/bge/1/model.onnx'"
    assert _diagnosed(f"repo: bge/config.pbtxt, bge/1/bge-small-en.onnx (130 MB)\n{log}").id == "F23"
    assert _diagnosed(f"repo: bge/config.pbtxt, bge/1/ (empty after the copy)\n{log}").id != "F23"


def test_a_markdown_timeline_of_a_scale_in() -> None:
    text = "\n".join(
        [
            "| time | event | copies | instances |",
            "|---|---|---|---|",
            "| 09:00:00 | traffic stop | 1 | 1 |",
            "| 09:15:30 | copies → 0 | 0 | 1 |",
            "| 09:29:10 | instances → 0 | 0 | 0 |",
        ]
    )
    assert _diagnosed(text).id == "F13"
    korean = "\n".join(
        ["11:00:00 부하 중지", "11:16:20 CurrentCopyCount 1 → 0", "11:30:05 CurrentInstanceCount 1 → 0"]
    )
    assert _diagnosed(korean).id == "F13"


def test_optimums_choice_among_several_graphs_is_the_file_fallback() -> None:
    text = (
        "Too many ONNX model files were found in /opt/ml/model/model.onnx ,/opt/ml/model/model_quantized.onnx. "
        "specify which one to load by using the `file_name` and/or the `subfolder` arguments. "
        "Loading the file model.onnx in the subfolder /opt/ml/model."
    )
    assert _diagnosed(text).id == "F30"


def test_a_first_invoke_in_seconds_then_milliseconds_on_lmi() -> None:
    assert _diagnosed("LMI (djl-inference) endpoint: 첫 invoke 가 41초 걸림. 두 번째부터 22ms").id == "F18"
