"""The refusal corpus: bad specs, models and artifacts, each refused by the real CLI before any spend.

Every case runs ``workflows.cli.main`` as a user would, and checks the exit code, that the message
names what is wrong (the field, the value, what is accepted, the fix) with no traceback, that it
took under 10 s, and that nothing was created: no result folder (the local engine never started),
no child process, and for the S3 case no execution and no upload.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from state_machines.error_names import error_names
from tests.support import bad_inputs as bad
from tests.support.aws import Aws
from workflows.cli import main

REFUSED = 2  # bad input
BLOCKED = 1  # a blocking preflight finding
LIMIT_S = 10.0


@dataclass(frozen=True)
class Case:
    id: str
    spec: str
    says: tuple[str, ...]
    model: Callable[[Path], Path] | None = None
    """Builds the model folder the spec's ``{model}`` names."""
    code: int = REFUSED
    """The exit code: 2 for a spec or input error, 1 for a spec preflight blocks (documented codes)."""


MULTI = "name: x\nhosting:\n  mode: multi-container\n  instance_type_fallbacks: [ml.c6i.xlarge]\n"
SPECS = [
    Case("malformed-yaml", "name: [x\nhosting: {", ("is not valid YAML", "Fix: fix the YAML syntax")),
    Case("empty-file", "", ("is empty", "Fix: write a spec")),
    Case("yaml-list", "- name: x\n- hosting: {}\n", ("must be a mapping", "got a list", "Fix:")),
    Case("misspelt-top-field", "name: x\nhostng: {}\n", ("hostng: unknown field", "did you mean 'hosting'")),
    Case(
        "misspelt-nested-field",
        "name: x\nhosting:\n  instance_type: ml.c6i.xlarge\n",
        ("instance_type: unknown field", "did you mean 'instance_type_fallbacks'", "'ml.c6i.xlarge'"),
    ),
    Case(
        "misspelt-model-field",
        "name: x\nmodel: {max_seq_length: 128}\n",
        ("model.max_seq_length: unknown field", "did you mean 'max_sequence_length'"),
    ),
    Case("unknown-field", "name: x\ncolour: red\n", ("colour: unknown field", "remove it", "(got 'red')")),
    Case(
        "wrong-type-int",
        "name: x\nmodel: {max_sequence_length: long}\n",
        ("model.max_sequence_length", "valid integer", "(got 'long')", "Fix: Tokens kept per text"),
    ),
    Case(
        "wrong-type-list",
        "name: x\nbenchmark: {batch_sizes: eight}\n",
        ("benchmark.batch_sizes", "valid list", "(got 'eight')"),
    ),
    Case(
        "negative-size",
        "name: x\nbenchmark: {batch_sizes: [-1, 8]}\n",
        ("benchmark.batch_sizes", "between 1 and 1024", "(got [-1, 8])"),
    ),
    Case(
        "zero-duration",
        "name: x\nbenchmark: {min_duration_s: 0}\n",
        ("benchmark.min_duration_s", "greater than 0", "(got 0)", "Fix: Measure each shape"),
    ),
    Case(
        "negative-duration",
        "name: x\nwait: {timeout_min: -5}\n",
        ("wait.timeout_min", "greater than or equal to 1", "(got -5)"),
    ),
    Case(
        "zero-instances",
        "name: x\nhosting: {instance_count: 0}\n",
        ("hosting.instance_count:", "greater than or equal to 1", "(got 0)"),
    ),
    Case(
        "empty-instance-types",
        "name: x\nhosting: {instance_type_fallbacks: []}\n",
        ("hosting.instance_type_fallbacks:", "at least 1 item", "(got [])"),
    ),
    Case(
        "empty-concurrency",
        "name: x\nbenchmark: {concurrency: []}\n",
        ("benchmark.concurrency", "at least 1 item", "(got [])"),
    ),
    Case(
        "duplicate-model-names",
        MULTI + "  models: [{name: aux}, {name: aux}]\n",
        ("hosting.models:", "names repeat: ['aux']", "give each its own name"),
    ),
    Case(
        "duplicate-instance-types",
        "name: x\nhosting: {instance_type_fallbacks: [ml.c6i.xlarge, ml.c6i.xlarge]}\n",
        ("instance types repeat (ml.c6i.xlarge)", "list each fallback once"),
    ),
    Case(
        "duplicate-batch-sizes",
        "name: x\nbenchmark: {batch_sizes: [8, 8]}\n",
        ("benchmark.batch_sizes", "values repeat (8)"),
    ),
    Case(
        "instance-type-typo",
        "name: x\nhosting: {instance_type_fallbacks: [ml.c6i.xlargee]}\n",
        (
            "hosting.instance_type_fallbacks[0]: 'ml.c6i.xlargee' is not accepted by SageMaker for endpoints",
            "did you mean 'ml.c6i.xlarge'?",
        ),
    ),
    Case(
        "processing-instance-type",
        "name: x\nbenchmark: {job_instance_type: ml.inf2.xlarge}\n",
        (
            "benchmark.job_instance_type",
            "not accepted by SageMaker for processing jobs",
            "ProcessingInstanceType",
        ),
    ),
    Case(
        "ami-version-typo",
        "name: x\nhosting: {inference_ami_version: al2023-ami-sagemaker-inference-gpu-4}\n",
        ("inference_ami_version", "did you mean 'al2023-ami-sagemaker-inference-gpu-4-1'"),
    ),
    Case(
        "serverless-memory",
        "name: x\nhosting: {mode: serverless, memory_size_mb: 1500}\n",
        ("hosting.memory_size_mb:", "1500 MB is not accepted", "1024, 2048"),
    ),
    Case(
        "serverless-concurrency",
        "name: x\nhosting: {mode: serverless, max_concurrency: 500}\n",
        ("hosting.max_concurrency:", "less than or equal to 200", "(got 500)"),
    ),
    Case(
        "component-cpu-cores",
        "name: x\nhosting: {mode: inference-component, cpu_cores: 0.1}\n",
        ("hosting.cpu_cores:", "greater than or equal to 0.25", "(got 0.1)"),
    ),
    Case(
        "mode-typo",
        "name: x\nhosting: {mode: realtme}\n",
        ("hosting.mode: 'realtme' is not one of realtime, multi-container", "did you mean 'realtime'?"),
    ),
    Case(
        "task-typo",
        "name: x\nmodel: {task: embeddings}\n",
        (
            "model.task: 'embeddings' is not one of embedding, classification, reranking",
            "did you mean 'embedding'?",
        ),
    ),
    Case(
        "precision-typo",
        "name: x\nconvert: {precision: fp31}\n",
        ("convert.precision: 'fp31' is not one of fp32, int8, fp16", "did you mean 'fp32'?"),
    ),
    Case(
        "runner-typo",
        "name: x\nbenchmark: {runner: lamda}\n",
        ("benchmark.runner: 'lamda' is not one of", "did you mean 'lambda'?"),
    ),
    Case(
        "workers-in-yaml-terms",
        "name: x\nhosting: {workers: 0}\n",
        ("hosting.workers: Input should be greater than or equal to 1", "(got 0)"),
    ),
    Case(
        "fp16-on-cpu",
        "name: x\nconvert: {precision: fp16}\n",
        ("convert.precision: fp16 is refused for CPU targets", "(got convert.precision: 'fp16')"),
    ),
    Case(
        "durations-out-of-order",
        "name: x\nbenchmark: {min_duration_s: 30, max_duration_s: 10}\n",
        ("max_duration_s must be at least min_duration_s", "(got min_duration_s: 30, max_duration_s: 10)"),
    ),
    Case("bad-name", "name: My Run\n", ("name:", "lowercase letters, digits and single dashes", "'My Run'")),
    Case("aws-tag", "name: x\ntags: {'aws:owner': me}\n", ("tags", "may not start with 'aws:'")),
    Case(
        "poll-order",
        "name: x\nwait: {poll_initial_s: 300, poll_max_s: 60}\n",
        ("poll_initial_s 300 exceeds poll_max_s 60",),
    ),
    Case(
        "gs-source",
        "name: x\nmodel: {source: 'gs://bucket/model/'}\n",
        ("model.source", "gs:// sources are not supported", "'bundled', a local folder path, s3://", "hf://"),
    ),
    Case(
        "hf-source-malformed",
        "name: x\nmodel: {source: 'hf://sentence-transformers/all MiniLM'}\n",
        ("model.source", "is not a Hub id", "hf://org/name@revision"),
    ),
    Case(
        "f04-gpu-direct",
        "name: x\nhosting:\n  mode: multi-container\n  instance_type_fallbacks: [ml.g5.xlarge]\n  models: [{name: aux}]\n",
        ("PreflightBlocked", "before anything was converted", "F04 (blocking)", "use a CPU instance"),
        code=1,
    ),
    Case(
        "sequence-past-bundled-limit",
        "name: x\nmodel: {max_sequence_length: 4096}\n",
        ("model.max_sequence_length 4096", "512 tokens", "max_position_embeddings 512", "Fix: set"),
    ),
    Case(
        "sequence-past-padding-offset",
        "name: x\nmodel: {source: '{model}', max_sequence_length: 514}\n",
        ("514 exceeds", "512 tokens", "padding offset 2", "set model.max_sequence_length to 512 or less"),
        lambda root: bad.model_folder(root, config=bad.XLM_ROBERTA_CONFIG, tokenizer_config={}),
    ),
    Case(
        "sequence-past-tokenizer",
        "name: x\nmodel: {source: '{model}', max_sequence_length: 300}\n",
        ("300 exceeds", "256 tokens", "model_max_length 256"),
        lambda root: bad.model_folder(root, tokenizer_config={"model_max_length": 256}),
    ),
    Case(
        "missing-folder",
        "name: x\nmodel: {source: '{model}/absent'}\n",
        ("ModelSourceInvalid", "absent is not a folder", "Fix: point model.source"),
        lambda root: root,
    ),
    Case(
        "truncated-safetensors",
        "name: x\nmodel: {source: '{model}'}\n",
        ("model.safetensors is truncated", "F22", "download or save the model again"),
        lambda root: bad.model_folder(root, weights=bad.safetensors_bytes()[:-5]),
    ),
    Case(
        "empty-safetensors",
        "name: x\nmodel: {source: '{model}'}\n",
        ("model.safetensors is truncated", "0 bytes"),
        lambda root: bad.model_folder(root, weights=b""),
    ),
    Case(
        "missing-tokenizer",
        "name: x\nmodel: {source: '{model}'}\n",
        ("has no tokenizer files", "tokenizer.save_pretrained"),
        lambda root: bad.model_folder(root, tokenizer=False),
    ),
    Case(
        "config-without-model-type",
        "name: x\nmodel: {source: '{model}'}\n",
        ("has no model_type", "save_pretrained"),
        lambda root: bad.model_folder(root, config={"architectures": ["BertModel"], "hidden_size": 32}),
    ),
    Case(
        "decoder-only",
        "name: x\nmodel: {source: '{model}'}\n",
        ("UnsupportedArchitecture", "GPT2LMHeadModel", "decoder-only", "use an encoder"),
        lambda root: bad.model_folder(root, config=bad.DECODER_CONFIG),
    ),
    Case(
        "vision-model",
        "name: x\nmodel: {source: '{model}'}\n",
        ("UnsupportedArchitecture", "ViTModel", "a vision model"),
        lambda root: bad.model_folder(root, config=bad.VISION_CONFIG),
    ),
    Case(
        "s3-source-locally",
        "name: x\nmodel: {source: 's3://some-bucket/models/minilm/'}\n",
        ("s3://some-bucket/models/minilm/ is in S3", "run on AWS without --local"),
    ),
]


def child_processes() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def refuse(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, float]:
    """Run the CLI; its exit code, everything it printed, and how long it took."""
    started = time.monotonic()
    with pytest.raises(SystemExit) as exited:
        main(argv)
    seconds = time.monotonic() - started
    out = capsys.readouterr()
    return int(exited.value.code or 0), out.out + out.err, seconds


def assert_refused_well(code: int, text: str, seconds: float, expected: int, says: tuple[str, ...]) -> None:
    assert code == expected, text
    for fragment in says:
        assert fragment in text, f"{fragment!r} not in:\n{text}"
    assert "Traceback" not in text
    assert seconds < LIMIT_S, f"took {seconds:.1f} s"


@pytest.mark.parametrize("case", SPECS, ids=lambda c: c.id)
def test_a_bad_spec_or_model_is_refused_before_anything_starts(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a spec (and a model folder) that would fail
    model = case.model(tmp_path / "model") if case.model else tmp_path
    spec = bad.write_spec(tmp_path / "spec.yaml", case.spec.replace("{model}", str(model)))
    results = tmp_path / "results"
    before = child_processes()
    # When it is run on the local engine
    code, text, seconds = refuse(["run", str(spec), "--local", "--results-dir", str(results)], capsys)
    # Then it is refused, named, fast, and nothing was created or started
    assert_refused_well(code, text, seconds, case.code, case.says)
    assert not results.exists()
    assert child_processes() <= before
    # And the text is the YAML's own: no union tag in a path, no whole spec pasted, no empty example
    assert not re.search(r"hosting\.(realtime|serverless|multi-container|inference-component)\.", text), text
    assert "'name': 'x'" not in text and "e.g. ." not in text and "expected tags" not in text
    # And under --json the same refusal is one error object whose fix is never null
    code, json_text, _ = refuse(
        ["run", str(spec), "--local", "--results-dir", str(results), "--json"], capsys
    )
    error = json.loads(json_text.strip().splitlines()[-1])["error"]
    assert error["exit_code"] == code == case.code and error["type"] in error_names()
    assert isinstance(error["fix"], str) and error["fix"]
    assert not results.exists()


@pytest.mark.parametrize("case", SPECS, ids=lambda c: c.id)
def test_preflight_refuses_each_bad_spec_with_the_words_run_refuses_it_with(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a spec (and a model folder) that `run --local` refuses
    model = case.model(tmp_path / "model") if case.model else tmp_path
    spec = bad.write_spec(tmp_path / "spec.yaml", case.spec.replace("{model}", str(model)))
    run_code, run_text, _ = refuse(
        ["run", str(spec), "--local", "--results-dir", str(tmp_path / "r")], capsys
    )
    # When preflight checks it for the same target
    code, text, seconds = refuse(
        ["preflight", str(spec), "--local", *(["--json"] if run_code == BLOCKED else [])], capsys
    )
    # Then it refuses it with the same exit code and the same words, before anything starts
    assert_refused_well(code, text if run_code == REFUSED else run_text, seconds, case.code, case.says)
    assert code == run_code
    if code == REFUSED:
        assert text == run_text
    else:
        blocking = [f for f in json.loads(text)["findings"] if f["blocking"]]
        assert blocking
        for finding in blocking:
            assert f"{finding['id']} (blocking): {finding['message']} Fix: {finding['fix']}" in run_text
    assert not (tmp_path / "r").exists()


def test_an_unknown_region_is_refused_by_preflight_and_run_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], aws: Aws
) -> None:
    # Given a valid spec and a region botocore's endpoint data does not know
    spec = bad.write_spec(tmp_path / "spec.yaml", "name: x\n")
    results = tmp_path / "results"
    # When preflight and run are given it
    code, text, seconds = refuse(["preflight", str(spec), "--region", "xx-fake-1"], capsys)
    run_code, run_text, _ = refuse(
        ["run", str(spec), "--region", "xx-fake-1", "--results-dir", str(results)], capsys
    )
    # Then both refuse it as a usage error, with the same words, naming the region and the fix
    says = ("region 'xx-fake-1' is not a region where SageMaker is offered", "eu-west-1", "AWS_REGION")
    assert_refused_well(code, text, seconds, REFUSED, says)
    assert (run_code, run_text) == (code, text)
    assert not results.exists()


def test_an_empty_s3_prefix_is_refused_before_an_execution_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], aws: Aws
) -> None:
    # Given a deployed pipeline and a model prefix with no objects
    s3, sfn = aws.s3, aws.sfn
    for bucket in ("artifacts", "models"):
        s3.create_bucket(Bucket=bucket)
    arn = sfn.create_state_machine(
        name="deploy",
        definition='{"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}',
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]
    spec = bad.write_spec(tmp_path / "spec.yaml", "name: x\nmodel: {source: 's3://models/minilm/v2/'}\n")
    # When it is run on AWS
    argv = ["run", str(spec), "--state-machine-arn", arn, "--bucket", "artifacts"]
    code, text, seconds = refuse([*argv, "--results-dir", str(tmp_path / "results")], capsys)
    # Then it is refused before any execution starts or anything is uploaded
    assert_refused_well(code, text, seconds, REFUSED, ("s3://models/minilm/v2/ holds no objects", "upload"))
    assert sfn.list_executions(stateMachineArn=arn)["executions"] == []
    assert "Contents" not in s3.list_objects_v2(Bucket="artifacts")
    assert not (tmp_path / "results").exists()
