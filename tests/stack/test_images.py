"""The image table is the SageMaker SDK's: every image a mode deploys, in every region, is listed there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.infra import Synthesized, synthesize
from workflows.cli.images import deployed_images
from workflows.errors import SpecInvalid
from workflows.hosting.image_choice import image_for
from workflows.hosting.modes import strategies
from workflows.hosting.specs import RealtimeHosting
from workflows.images.sdk import SELECTIONS, TARGET, config_dir, render
from workflows.images.table import (
    HF_INFERENCE,
    VLLM,
    build,
    build_versions,
    image_records,
    image_table,
    image_uri,
    registry_accounts,
    repository_of,
)


def sdk_folder() -> Path:
    folder = config_dir()
    if folder is None:
        pytest.skip("sagemaker-core is not installed (make setup installs it with --no-deps)")
    return folder


def every_deployed_uri() -> list[tuple[str, str, str, str, str]]:
    """(mode, family, device, build, URI) for every mode, device, offered build and region of the table."""
    found = []
    for name, strategy in strategies().items():
        for version in build_versions(strategy.image_family):
            for region in build(strategy.image_family, version)[1]["regions"]:
                for device in strategy.image_devices:
                    uri = image_uri(
                        strategy.image_family, gpu=device == "gpu", region=region, version=version
                    )
                    found.append((name, strategy.image_family, device, version, uri))
    return found


def sdk_registries(folder: Path, config: str, repository: str) -> list[dict[str, str]]:
    """Every ``registries`` map of the SDK's JSON file for builds of ``repository``."""

    def walk(node: Any) -> list[dict[str, str]]:
        if not isinstance(node, dict):
            return []
        here = [node["registries"]] if node.get("repository") == repository and "registries" in node else []
        return here + [r for value in node.values() for r in walk(value)]

    return walk(json.loads((folder / f"{config}.json").read_text(encoding="utf-8")))


def test_the_committed_image_table_is_the_sdk_table_extract() -> None:
    # Given the installed SDK's image_uri_config files
    folder = sdk_folder()
    # Then workflows/data/images.yaml is exactly what the generator makes of them
    assert TARGET.read_text(encoding="utf-8") == render(folder), "run: python -m workflows.images.sdk"


def test_every_image_a_mode_deploys_is_in_the_table_with_its_regions_account() -> None:
    # Given every URI any mode deploys (every device, build and region)
    listed = {(r["repository"], r["tag"]) for r in image_records()}
    deployed = every_deployed_uri()
    assert len(deployed) > 200
    for mode, _, device, version, uri in deployed:
        account, _, _, region = uri.split("/")[0].split(".")[:4]
        # Then repository and tag are a table entry, and the account is the region's registry
        assert (repository_of(uri), uri.rsplit(":", 1)[1]) in listed, (mode, device, version, uri)
        assert image_table()["accounts"][region] == account, uri


def test_every_deployed_account_is_the_sdk_registry_of_that_build_and_region() -> None:
    folder = sdk_folder()
    for _, family, _, _, uri in every_deployed_uri():
        account, _, _, region = uri.split("/")[0].split(".")[:4]
        registries = sdk_registries(folder, SELECTIONS[family].config, repository_of(uri))
        assert any(r.get(region) == account for r in registries), uri


def test_the_field_images_vllm_cu130_and_hf_transformers_5_5_3_by_default() -> None:
    vllm = image_uri(VLLM, gpu=True, region="us-east-1")
    assert vllm.endswith("/vllm:0.26.0-gpu-py312-cu130-ubuntu22.04-sagemaker")
    assert image_uri(HF_INFERENCE, gpu=True, region="us-east-1").endswith(
        "/huggingface-pytorch-inference:2.6.0-transformers5.5.3-gpu-py312-cu124-ubuntu22.04"
    )
    # And an older build is the spec's choice
    older = RealtimeHosting(instance_type_fallbacks=["ml.c6i.xlarge"], image_version="4.51.3")
    assert image_for(HF_INFERENCE, older, "ml.c6i.xlarge", "eu-west-1") == (
        "763104351884.dkr.ecr.eu-west-1.amazonaws.com/huggingface-pytorch-inference:"
        "2.6.0-transformers4.51.3-cpu-py312-ubuntu22.04"
    )


def test_an_unknown_build_names_the_field_the_value_and_the_builds_on_offer() -> None:
    hosting = RealtimeHosting(instance_type_fallbacks=["ml.c6i.xlarge"], image_version="4.0.0")
    with pytest.raises(SpecInvalid) as refused:
        image_for(HF_INFERENCE, hosting, "ml.c6i.xlarge", "us-east-1")
    assert "hosting.image_version '4.0.0'" in refused.value.message
    assert "5.5.3" in (refused.value.fix or "") and "4.51.3" in (refused.value.fix or "")


def test_regions_use_their_own_registry_account_and_partition() -> None:
    assert image_uri(HF_INFERENCE, gpu=False, region="af-south-1").startswith(
        "626614931356.dkr.ecr.af-south-1.amazonaws.com/"
    )
    assert image_uri(HF_INFERENCE, gpu=False, region="cn-north-1").startswith(
        "727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/"
    )
    # A build the SDK does not publish in a region is refused with the regions it is in
    with pytest.raises(SpecInvalid, match="not published in cn-north-1"):
        image_uri(VLLM, gpu=True, region="cn-north-1")


def test_a_cuda_image_is_refused_on_neuron_instances() -> None:
    hosting = RealtimeHosting(instance_type_fallbacks=["ml.inf2.xlarge"])
    with pytest.raises(SpecInvalid, match="ml.inf2.xlarge carries neuron accelerators, not CUDA GPUs"):
        image_for(HF_INFERENCE, hosting, "ml.inf2.xlarge", "us-east-1")


def test_the_images_command_lists_uris_as_strings_per_mode_and_device() -> None:
    found = deployed_images("us-east-1")
    assert set(found["modes"]) == set(strategies())
    assert set(found["modes"]["vllm"]) == {"gpu"} and set(found["modes"]["serverless"]) == {"cpu"}
    uris = [row["default"] for devices in found["modes"].values() for row in devices.values()]
    assert all(isinstance(u, str) and ".dkr.ecr.us-east-1.amazonaws.com/" in u for u in uris)
    json.dumps(found)


@pytest.fixture(scope="module")
def synth() -> Synthesized:
    return synthesize()


def test_the_sagemaker_role_may_pull_from_every_regions_registry_account(synth: Synthesized) -> None:
    # Given the SageMaker execution role's statements in the synthesized template
    pulls = [
        json.dumps(statement["Resource"])
        for policy in synth.of_type("AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if "ecr:BatchGetImage" in statement["Action"]
        and ":763104351884:" in json.dumps(statement["Resource"])
    ]
    assert len(pulls) == 1
    # Then every registry account of the table (one per region) is a pullable repository owner
    for account in registry_accounts():
        assert f":{account}:repository/*" in pulls[0], account
