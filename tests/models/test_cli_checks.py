"""``deploybench preflight`` and ``deploybench diagnose`` from the command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from tests.conftest import ROOT
from tests.support import field_texts as ft
from tests.support.aws import Aws
from tests.support.diagnosis import create_endpoint, write_logs
from workflows.artifact.tarball import write_tarball
from workflows.cli.app import app

runner = CliRunner()
EXAMPLE = ROOT / "examples" / "minilm-realtime.yaml"


def spec_file(tmp_path: Path, **hosting: Any) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["hosting"].update(hosting)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


# --- preflight ------------------------------------------------------------------------------------


def test_preflight_of_the_example_passes_and_names_the_skipped_checks() -> None:
    # When the example spec is checked without an artifact
    result = runner.invoke(app, ["preflight", str(EXAMPLE)])
    # Then it exits 0, lists what ran, and says which checks need the artifact
    assert result.exit_code == 0, result.output
    assert "No findings" in result.output
    assert "F02/F07 model x workers vs instance memory" in result.output
    assert "needs the artifact (pass --artifact DIR_OR_TARBALL)" in result.output


def test_preflight_with_the_artifact_folder_and_tarball_runs_every_check(
    tiny_artifact: Path, tmp_path: Path
) -> None:
    tarball = tmp_path / "model.tar.gz"
    write_tarball(tiny_artifact, tarball, "fast")
    for artifact in (tiny_artifact, tarball):
        # When checked with the artifact, as JSON
        result = runner.invoke(app, ["preflight", str(EXAMPLE), "--artifact", str(artifact), "--json"])
        # Then no artifact check is skipped and nothing blocks (the account's quotas need AWS
        # credentials, which this machine has not: that check alone says it was skipped)
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        assert report["skipped"] == ["F39 account quotas: no AWS credentials here to read them"]
        assert {"F01/F28", "F03", "F22"} <= {line.split(" ")[0] for line in report["checked"]}
        assert [f for f in report["findings"] if f["severity"] == "blocking"] == []


def test_preflight_reports_all_blocking_findings_and_exits_1(tiny_artifact: Path, tmp_path: Path) -> None:
    # Given an artifact whose requirements lost onnxruntime (so its manifest no longer matches either)
    broken = tmp_path / "artifact"
    shutil.copytree(tiny_artifact, broken)
    (broken / "code" / "requirements.txt").write_text("transformers\n", encoding="utf-8")
    spec = spec_file(tmp_path, instance_type_fallbacks=["ml.c6i.xlarge", "ml.m5d.24xlarge"])
    # When checked
    result = runner.invoke(app, ["preflight", str(spec), "--artifact", str(broken), "--json"])
    # Then both problems are reported together, plus the fallback type the instance table lacks (SageMaker
    # accepts it), and it exits 1
    assert result.exit_code == 1, result.output
    found = {(f["id"], f["severity"]) for f in json.loads(result.output)["findings"]}
    assert {("F01", "blocking"), ("F22", "blocking"), ("instance-type", "warning")} <= found


def test_preflight_refuses_bad_input_with_exit_2(tmp_path: Path) -> None:
    # Then a missing spec and an artifact that is neither a folder nor a tarball are refused clearly
    missing = runner.invoke(app, ["preflight", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a tarball")
    bad = runner.invoke(app, ["preflight", str(EXAMPLE), "--artifact", str(junk)])
    assert bad.exit_code == 2 and "neither an artifact folder nor a tar archive" in bad.output


# --- diagnose --log -------------------------------------------------------------------------------


def test_diagnose_a_log_file_prints_the_entry_its_fix_and_evidence(tmp_path: Path) -> None:
    # Given the field's client error in a file
    log = tmp_path / "error.txt"
    log.write_text(ft.F01_FIELD, encoding="utf-8")
    # When diagnosed
    result = runner.invoke(app, ["diagnose", "--log", str(log)])
    # Then the entry, the action and the quoted evidence are printed
    assert result.exit_code == 0, result.output
    assert "F01 onnxruntime is missing from the container" in result.output
    assert "action add_requirement" in result.output
    assert "No module named 'onnxruntime'" in result.output


def test_diagnose_json_for_scripts_with_the_hosting_mode(tmp_path: Path) -> None:
    # Given the serverless worker deaths in a log export
    log = tmp_path / "endpoint.log"
    log.write_text(ft.in_noise(ft.F14_FIELD_LOG), encoding="utf-8")
    # When diagnosed with and without the mode, as JSON
    plain = json.loads(runner.invoke(app, ["diagnose", "--log", str(log), "--json"]).output)
    serverless = json.loads(
        runner.invoke(app, ["diagnose", "--log", str(log), "--json", "--mode", "serverless"]).output
    )
    # Then the mode decides: without it neither is named and both are the candidates (the log names no
    # instance), with it F14
    assert plain["id"] == "unknown"
    assert {a["id"] for a in plain["alternatives"]} == {"F02", "F14"}
    assert (serverless["id"], serverless["action"]) == ("F14", "next_memory_size")


def test_diagnose_an_unknown_failure_says_unknown(tmp_path: Path) -> None:
    log = tmp_path / "other.txt"
    log.write_text("botocore.exceptions.NoCredentialsError: Unable to locate credentials", encoding="utf-8")
    # When diagnosed
    result = json.loads(runner.invoke(app, ["diagnose", "--log", str(log), "--json"]).output)
    # Then it is unknown, with the line as evidence
    assert (result["id"], result["action"]) == ("unknown", "fail")
    assert any("NoCredentialsError" in line for line in result["evidence"])


def test_diagnose_refuses_bad_input(tmp_path: Path) -> None:
    # Then no source, both sources, or a missing file exit 2 with the reason
    neither = runner.invoke(app, ["diagnose"])
    both = runner.invoke(app, ["diagnose", "--log", "x", "--endpoint", "e"])
    missing = runner.invoke(app, ["diagnose", "--log", str(tmp_path / "nope.log")])
    assert neither.exit_code == both.exit_code == missing.exit_code == 2
    assert "exactly one of --endpoint NAME or --log FILE" in neither.output
    assert "does not exist" in missing.output


def test_diagnose_pasted_evidence_names_its_forms_and_the_candidates(tmp_path: Path) -> None:
    # Given a serverless endpoint config and a client's read timeout pasted into one file
    config = {
        "EndpointConfigName": "sls-cfg",
        "ProductionVariants": [{"VariantName": "AllTraffic", "ServerlessConfig": {"MemorySizeInMB": 2048}}],
    }
    pasted = tmp_path / "pasted.txt"
    pasted.write_text(json.dumps(config) + "\n" + ft.F14_FIELD_CLIENT.replace("...", "sls"), encoding="utf-8")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    # When diagnosed
    result = runner.invoke(app, ["diagnose", "--log", str(pasted)])
    # Then the forms are printed, and no entry is named: a cold start (F15) and a worker dying for memory
    # (F14) leave the client the same timeout, and the candidates say the endpoint's log group decides
    assert result.exit_code == 3, result.output
    assert "read as: describe-endpoint-config, client-traceback" in result.output
    assert "unknown F15 or its cause F14: the evidence does not tell which" in result.output
    assert "[candidate] F14" in result.output and "Worker died" in result.output
    # And an empty file is refused, not diagnosed
    refused = runner.invoke(app, ["diagnose", "--log", str(empty)])
    assert refused.exit_code == 2
    assert "is empty" in refused.output
    # And so is a binary file, named as such, without a traceback
    binary = tmp_path / "model.onnx"
    binary.write_bytes(bytes(range(256)) * 64)
    refused = runner.invoke(app, ["diagnose", "--log", str(binary)])
    assert refused.exit_code == 2
    assert "is a binary file" in refused.output
    assert "Traceback" not in refused.output


# --- diagnose --endpoint ---------------------------------------------------------------------------


def test_diagnose_a_live_endpoint_reads_describe_and_its_logs(aws: Aws) -> None:
    sagemaker, logs = aws.sagemaker, aws.logs
    # Given an InService endpoint whose log group shows onnxruntime missing
    create_endpoint(sagemaker, "nli-prod")
    write_logs(logs, "nli-prod", ["W-9000-model-stdout - ModuleNotFoundError: No module named 'onnxruntime'"])
    # When diagnosed by name
    result = runner.invoke(app, ["diagnose", "--endpoint", "nli-prod", "--region", "us-east-1", "--json"])
    # Then the log line names F01
    assert result.exit_code == 0, result.output
    diagnosis = json.loads(result.output)
    assert (diagnosis["id"], diagnosis["details"]["module"]) == ("F01", "onnxruntime")
    assert any(line.startswith("[logs primary/i-0a1b2c3d]") for line in diagnosis["evidence"])


def test_diagnose_an_endpoint_that_does_not_exist_exits_2(aws: Aws) -> None:
    # When the endpoint is unknown and has no logs
    result = runner.invoke(app, ["diagnose", "--endpoint", "no-such-endpoint", "--region", "us-east-1"])
    # Then it says so
    assert result.exit_code == 2
    assert "does not exist" in result.output
