"""State-machine path test: a sweep comparing a whole GPU with its partitions on the local engine
(ml.p5.4xlarge, one H100: one copy on the whole GPU against two mig-3g.40gb copies), where every
partition is a copy on the CPU stand-in and every figure says so."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import fast_spec, serving_processes
from workflows.execution.pipeline import follow
from workflows.local.engine import BUCKET, LocalEngine
from workflows.reports.venue import LOCAL_PARTITIONS
from workflows.sweeps.partition_arms import PARTITIONED, WHOLE
from workflows.sweeps.spec import parse_sweep

TIME_SCALE = 200.0
P5 = "ml.p5.4xlarge"


def test_a_local_partition_sweep_runs_both_arms_and_labels_them_as_the_stand_in(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given a sweep of the tiny model on one H100: whole, and as two mig-3g.40gb partitions
    base = fast_spec(tiny_bert, benchmark={"batch_sizes": [1], "sequence_lengths": [16], "concurrency": [2]})
    data = base.model_dump(mode="json", exclude={"name", "hosting"})
    sweep = parse_sweep(
        {
            "name": "mig",
            "base": data,
            "partitions": {"instance_type": P5, "gpu_partition": "mig-3g.40gb", "partitions_per_gpu": 2},
        }
    )
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE, serving="light") as engine:
        sfn, s3 = engine.client("stepfunctions"), engine.client("s3")
        # When the sweep runs (the definition the stack deploys)
        arn = engine.start_execution(
            "benchmark_sweep", {"sweep": sweep.model_dump(mode="json")}, name="mig-1"
        )
        outcome = follow(sfn, arn, poll_s=0.2, timeout_s=600)
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="sweeps/mig/")["Contents"]]
        summary = json.loads(
            s3.get_object(Bucket=BUCKET, Key=next(k for k in keys if k.endswith("/summary.json")))[
                "Body"
            ].read()
        )
        report = s3.get_object(Bucket=BUCKET, Key=next(k for k in keys if k.endswith("/report.md")))["Body"]
        report_text = report.read().decode()
        partitioned_run = summary["runs"][1]["run_id"]
        result = json.loads(
            s3.get_object(Bucket=BUCKET, Key=f"results/{partitioned_run}/result.json")["Body"].read()
        )
        endpoints_left = dict(engine.sagemaker.endpoints) if engine.sagemaker else {"?": None}
    # Then both arms ran as child pipelines and the sweep compared them
    assert outcome.states[:2] == ["PlanSweep", "RunMatrix"]
    assert [r["status"] for r in summary["runs"]] == ["SUCCEEDED", "SUCCEEDED"]
    assert summary["runs"][1]["hosting"]["gpu_partition"] == "mig-3g.40gb"
    # And the comparison holds both arms' figures, labelled as the CPU stand-in, never as a GPU's
    (verdict,) = summary["partitions"]["verdicts"]
    assert summary["partitions"]["stand_in"] == LOCAL_PARTITIONS
    assert verdict["decision"].startswith(f"{LOCAL_PARTITIONS}: ")
    assert (verdict["whole"]["arm"], verdict["partitions"]["arm"]) == (WHOLE, PARTITIONED)
    assert verdict["whole"]["layout"].startswith("1 copy, one per whole GPU")
    assert verdict["partitions"]["layout"].startswith("2 copies, one per mig-3g.40gb partition")
    assert verdict["whole"]["requests_per_s"] > 0 and verdict["partitions"]["requests_per_s"] > 0
    assert f"**{LOCAL_PARTITIONS}.**" in report_text.split("## Whole GPUs or partitions")[1]
    # And the partitioned run's own result says so too
    assert result["measured_on"]["partitions"] == LOCAL_PARTITIONS
    # And nothing is left running
    assert endpoints_left == {}
    assert serving_processes() == []
