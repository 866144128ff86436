"""A field's value with a person's words after it; a setup the writer has no access to; Korean hearsay; Triton's
bare file name; DJL Serving's own lines; a quoted error keeps its heading, and a shell comment is no heading; "action
없음" and another team's issue settle; a --query's numbers by their keys; a request table's "req" column; a table's
latency column per batch; a component that placed no copy beside others counted on its endpoint."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import hidden_by_samples
from workflows.diagnosis.machine_lines import is_machine_line
from workflows.diagnosis.outline import headings
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_fields_value_with_a_persons_words_after_it_is_a_persons_line() -> None:
    assert not is_machine_line(
        "MemorySizeInMB=6144 (the model is 30 MB, so memory is not it, no Worker died)."
    )
    assert is_machine_line("MemorySizeInMB=6144")
    assert is_machine_line("MaxConcurrency=5 (default)")
    text = "\n".join(
        [
            'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.'
            'us-east-1.amazonaws.com/endpoints/emb-sls/invocations"',
            "serverless endpoint, the second call answered in 0.1 s",
            "MemorySizeInMB=6144 (the model is 30 MB, so memory is not it, no Worker died).",
        ]
    )
    assert _diagnosed(text).id == "F15"


def test_a_setup_the_writer_has_no_access_to_leaves_the_first_call_open() -> None:
    text = "\n".join(
        [
            'step 1 FAILED: botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.'
            'sagemaker.eu-west-1.amazonaws.com/endpoints/rr/invocations"',
            "step 2 OK 40ms",
            "The endpoint comes from another stack; I don't have access to its config.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_korean_hearsay_is_someone_elses_report() -> None:
    line = "803 에러가 난다던데 드라이버 때문인가"
    assert polarity(line, 0, 3).polarity == "other"
    text = "optimum 은 transformers 5 와 충돌한다길래 (optimum-onnx 가 transformers<4.58 요구) 변환용 venv 를 따로 씀. 설치 성공."
    assert _diagnosed(text).id != "F28"


def test_tritons_bare_file_name_and_the_file_under_another_name_is_f23() -> None:
    text = "\n".join(
        [
            "tree: bge/config.pbtxt, bge/1/bge-small-en.onnx",
            "E0102 10:00:01.100 1 model_lifecycle.cc:638] failed to load 'bge' version 1: Invalid argument: unable "
            "to find 'model.onnx' for model 'bge', searched: /opt/ml/model/bge/1",
        ]
    )
    assert _diagnosed(text).id == "F23"


def test_djl_servings_own_lines_name_lmi() -> None:
    text = "\n".join(
        [
            "first invoke took 38.0s, then 30ms, 29ms",
            "11:00:01 INFO ModelServer Initialize BOTH server with: EpollServerSocketChannel.",
            "11:20:40 INFO PyProcess Start process: 19000 - retry: 0",
        ]
    )
    assert _diagnosed(text).id == "F18"


def test_a_quoted_error_keeps_its_heading_and_a_shell_comment_is_no_heading() -> None:
    text = "\n".join(
        [
            "1. 지난달 이슈 후속",
            " - 아래 에러로 배포가 막혔던 건은 quota 증설로 종결.",
            "   > An error occurred (ResourceLimitExceeded) when calling the CreateEndpoint operation: The account-level"
            " service limit 'ml.g5.2xlarge for endpoint usage' is 0 Instances, with current utilization of 0 Instances"
            " and a request delta of 1 Instances.",
            "2. 이번 주",
            " - 전부 InService",
        ]
    )
    assert _diagnosed(text).id != "F39"
    comments = ["# checked before: IAM is fine, and", "# the other team says capacity is fine.", "Error: x"]
    assert headings(comments) == ["", "", ""]
    assert headings(["# Deploy log", "Error: x"]) == ["", "# Deploy log"]


def test_action_none_and_another_named_teams_issue_settle() -> None:
    slack = "\n".join(
        [
            "> An error occurred (ResourceLimitExceeded) when calling the CreateTrainingJob operation: The account-level"
            " service limit 'ml.p4d.24xlarge for training job usage' is 0 Instances, with current utilization of 0"
            " Instances and a request delta of 1 Instances.",
            "그건 research 팀 training job. 우리 쪽 action 없음",
        ]
    )
    assert _diagnosed(slack).id == "unknown"
    report = (
        'The infra team\'s issue "Olive OrtTransformersOptimization hangs for 19 min" does not apply to us; '
        "we never ran Olive."
    )
    assert _diagnosed(report).id != "F34"


def test_a_querys_numbers_are_read_by_their_keys() -> None:
    text = "\n".join(
        [
            "$ aws sagemaker describe-endpoint --endpoint-name e --query 'ProductionVariants[0].ManagedInstanceScaling'",
            '{"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": 2}',
            "$ aws application-autoscaling describe-scalable-targets --service-namespace sagemaker",
            '{"ScalableTargets": []}',
            "traffic has been 0 all night and the instance is still up",
        ]
    )
    assert _diagnosed(text).id == "F11"


def test_a_request_tables_req_column_numbers_its_calls() -> None:
    text = "\n".join(
        [
            "LMI endpoint (djl-inference image)",
            "req  latency_ms  status",
            "1    8740   200",
            "2    22     200",
        ]
    )
    assert _diagnosed(text).id == "F18"


def test_a_tables_latency_column_per_batch() -> None:
    lines = [
        "| inputs | b=1 p50 | b=16 p50 |",
        "|---|---|---|",
        "| samples (avg 40 tok) | 11.0 ms | 15.0 ms |",
        "| padded to 512 | 12.5 ms | 88.0 ms |",
    ]
    found = hidden_by_samples(lines)
    assert found is not None and found[0].batch == 16 and found[1].ms == 88.0


def test_a_component_that_placed_no_copy_beside_components_counted_leaves_memory_open() -> None:
    text = "\n".join(
        [
            "> Failed to deploy inference component ic-e5: SageMaker was able to deploy 0 out of 1 requested copies.",
            "The g5 endpoint already hosts two components; what they hold, I don't know yet.",
        ]
    )
    assert _diagnosed(text).id == "unknown"
