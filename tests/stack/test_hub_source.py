"""hf:// sources through the real huggingface_hub download code, against a local Hub on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fast_spec
from tests.support.aws import Aws
from tests.support.hub import LocalHub, allow_local_hub, local_hub
from tests.support.iam import Binding, allowed, denials, function_role, principal
from tests.support.iam_actions import Access
from tests.support.iam_recording import RECORDER, acting_as
from tests.support.infra import synthesize
from workflows import naming
from workflows.conversion import hub
from workflows.errors import HubUnreachable, ModelSourceInvalid, SpecInvalid, UnsupportedArchitecture
from workflows.spec.model import ModelSpec
from workflows.spec.model_source import check_model
from workflows.steps.check_spec import pin_source

REPO = "acme/tiny-bert"
TOKEN = "hf_test_token_1234"
SECRET = "deploybench/hf-token"


@pytest.fixture
def served(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[LocalHub, Path]]:
    """The tiny BERT on a local Hub, with files conversion must not fetch (other frameworks, a README)."""
    allow_local_hub(monkeypatch)
    folder = tmp_path / "repo"
    shutil.copytree(tiny_bert, folder)
    (folder / "README.md").write_text("# tiny\n", encoding="utf-8")
    (folder / "tf_model.h5").write_bytes(b"\0" * 64)
    (folder / "onnx").mkdir()
    (folder / "onnx" / "model.onnx").write_bytes(b"\0" * 64)
    with local_hub() as server:
        yield server, folder


def env(server: LocalHub, **extra: str) -> dict[str, str]:
    return {hub.ENDPOINT_ENV: server.url, **extra}


def test_a_hub_source_downloads_the_files_conversion_needs_at_the_commit_its_branch_names(
    served: tuple[LocalHub, Path], tmp_path: Path
) -> None:
    # Given a public repo on the local Hub
    server, folder = served
    commit = server.add(REPO, folder)
    # When the model is fetched through huggingface_hub
    path, snapshot = hub.fetch(
        ModelSpec(source=f"hf://{REPO}"), secretsmanager=None, workdir=tmp_path / "w", environ=env(server)
    )
    # Then the branch resolved to its commit, and the folder holds config, weights and tokenizer
    assert snapshot.commit == commit and snapshot.source.revision == "main"
    assert (path / "config.json").is_file() and (path / "model.safetensors").is_file()
    assert (path / "model.safetensors").read_bytes() == (folder / "model.safetensors").read_bytes()
    # And other frameworks' weights and the README were never requested
    fetched = server.downloaded()
    assert "model.safetensors" in fetched and "tokenizer.json" in fetched
    assert not {"tf_model.h5", "onnx/model.onnx", "README.md"} & set(fetched)


def test_a_private_repo_is_refused_without_a_token_naming_both_ways_to_give_one(
    served: tuple[LocalHub, Path], tmp_path: Path
) -> None:
    server, folder = served
    server.add(REPO, folder, token=TOKEN)
    with pytest.raises(ModelSourceInvalid) as refused:
        hub.fetch(
            ModelSpec(source=f"hf://{REPO}"), secretsmanager=None, workdir=tmp_path, environ=env(server)
        )
    text = refused.value.message + refused.value.fix
    assert f"hf://{REPO}" in text and "no token was given" in text
    assert "HF_TOKEN" in text and "model.token_secret" in text
    # And with HF_TOKEN set, the same call downloads it
    path, _ = hub.fetch(
        ModelSpec(source=f"hf://{REPO}"),
        secretsmanager=None,
        workdir=tmp_path,
        environ=env(server, HF_TOKEN=TOKEN),
    )
    assert (path / "model.safetensors").is_file()


def test_a_wrong_token_and_an_unknown_revision_are_named(served: tuple[LocalHub, Path]) -> None:
    server, folder = served
    server.add(REPO, folder, token=TOKEN)
    wrong = env(server, HF_TOKEN="hf_wrong")
    with pytest.raises(ModelSourceInvalid, match="the token given was refused"):
        check_model(ModelSpec(source=f"hf://{REPO}"), s3=None, environ=wrong)
    with pytest.raises(ModelSourceInvalid, match="has no revision 'v9'") as unknown:
        check_model(ModelSpec(source=f"hf://{REPO}@v9"), s3=None, environ=env(server, HF_TOKEN=TOKEN))
    assert "branch, tag or commit" in unknown.value.fix


@pytest.fixture
def secrets(aws: Aws) -> Any:
    return aws.client("secretsmanager")


def test_on_aws_the_token_comes_from_the_spec_secret_and_the_check_spec_function_may_read_it(
    served: tuple[LocalHub, Path], secrets: Any
) -> None:
    # Given a private repo, its token in Secrets Manager as JSON, and no HF_TOKEN (as in Lambda)
    server, folder = served
    commit = server.add(REPO, folder, token=TOKEN)
    secrets.create_secret(Name=SECRET, SecretString=json.dumps({"HF_TOKEN": TOKEN}))
    model = ModelSpec(source=f"hf://{REPO}", token_secret=SECRET)
    RECORDER.take()
    # When CheckSpec checks the source
    with acting_as("CheckSpecFunctionArn"):
        checked = check_model(model, s3=None, secretsmanager=secrets, environ=env(server))
    # Then it read the secret, listed the repo at its commit and named what it found
    assert checked[0].startswith(f"model source hf://{REPO}@{commit}: BERT encoder")
    # And the function's role is allowed the secret read
    assert [str(d) for d in denials(RECORDER.peek())] == []


def test_only_check_spec_and_convert_may_read_secrets_and_only_under_the_deploybench_prefix() -> None:
    synth = synthesize()
    binding = Binding("123456789012", "us-east-1", ())
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:{}-AbCdEf"
    token, other = (Access("secretsmanager:GetSecretValue", arn.format(name)) for name in (SECRET, "prod/db"))
    convert = principal(function_role(synth, "ConvertToOnnxFunctionArn"), binding)
    assert allowed(convert, token) and not allowed(convert, other)
    teardown = principal(function_role(synth, "TeardownEndpointFunctionArn"), binding)
    assert not allowed(teardown, token)


def test_a_named_secret_without_hf_token_locally_says_to_export_it() -> None:
    model = ModelSpec(source=f"hf://{REPO}", token_secret=SECRET)
    with pytest.raises(ModelSourceInvalid, match="read on AWS only") as refused:
        hub.hub_token(model, secretsmanager=None, environ={})
    assert "export HF_TOKEN" in refused.value.fix


@pytest.mark.parametrize(
    ("remove", "write", "expected"),
    [
        (("model.safetensors",), {}, "has no PyTorch weights"),
        (("tokenizer.json", "vocab.txt"), {}, "has no tokenizer files"),
        (("config.json",), {}, "has no config.json"),
    ],
)
def test_a_source_without_weights_tokenizer_or_config_is_refused_from_the_listing(
    served: tuple[LocalHub, Path], remove: tuple[str, ...], write: dict[str, str], expected: str
) -> None:
    server, folder = served
    for name in remove:
        (folder / name).unlink()
    server.add(REPO, folder)
    with pytest.raises(ModelSourceInvalid, match=expected):
        check_model(ModelSpec(source=f"hf://{REPO}"), s3=None, environ=env(server))
    # And nothing was downloaded to find out
    assert "model.safetensors" not in server.downloaded()


def test_a_decoder_on_the_hub_is_refused_as_not_an_encoder(served: tuple[LocalHub, Path]) -> None:
    server, folder = served
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(
        json.dumps({**config, "model_type": "llama", "architectures": ["LlamaForCausalLM"]})
    )
    server.add(REPO, folder)
    with pytest.raises(UnsupportedArchitecture, match="decoder-only text generator, not an encoder"):
        check_model(ModelSpec(source=f"hf://{REPO}"), s3=None, environ=env(server))


def test_the_cli_pins_a_branch_to_its_commit_and_every_resource_is_tagged_with_it(
    served: tuple[LocalHub, Path],
) -> None:
    server, folder = served
    commit = server.add(REPO, folder)
    spec = fast_spec(f"hf://{REPO}")
    pinned = pin_source(spec, environ=env(server))
    assert pinned.model.source == f"hf://{REPO}@{commit}"
    tags = {t["Key"]: t["Value"] for t in naming.tags("run-1", pinned)}
    assert tags[naming.TAG_MODEL_COMMIT] == f"{REPO}@{commit}"
    # And an unpinned source gets no commit tag (it would not be the commit)
    assert naming.TAG_MODEL_COMMIT not in {t["Key"] for t in naming.tags("run-1", spec)}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"source": "hf://org/na me"}, "is not a Hub id"),
        ({"source": "hf://org/name", "token_secret": "prod/token"}, "name it under 'deploybench/'"),
        ({"source": "bundled", "token_secret": SECRET}, "token_secret is for hf:// sources"),
        (
            {"source": "hf://org/name", "task": "classification", "pooling": "cls"},
            "apply to task 'embedding'",
        ),
    ],
)
def test_malformed_hub_fields_are_refused_naming_the_fix(data: dict[str, str], expected: str) -> None:
    with pytest.raises(SpecInvalid, match=expected):
        fast_spec("bundled", model=data)


def test_deploybench_convert_takes_a_hub_source_and_the_manifest_records_its_commit(
    served: tuple[LocalHub, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from workflows.cli.app import app
    from workflows.conversion.manifest import read_manifest

    # Given a private repo on the local Hub, its token and endpoint in the environment
    server, folder = served
    commit = server.add(REPO, folder, token=TOKEN)
    monkeypatch.setenv(hub.ENDPOINT_ENV, server.url)
    monkeypatch.setenv(hub.TOKEN_ENV, TOKEN)
    # When `deploybench convert hf://...` runs
    out = tmp_path / "artifact"
    result = CliRunner().invoke(app, ["convert", f"hf://{REPO}", "--out", str(out), "--max-length", "64"])
    # Then the artifact was built from the downloaded commit, and says so
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert manifest.hub is not None and manifest.hub.commit == commit and manifest.hub.repo == REPO
    assert "model.safetensors" in server.downloaded()


def test_where_huggingface_hub_is_not_installed_check_spec_leaves_the_hub_check_to_the_convert_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a function without huggingface_hub (the zip functions: only the convert image ships it)
    from workflows.hosting import gate
    from workflows.steps import check_spec as step

    monkeypatch.setattr(gate, "HUB_PACKAGE", "huggingface_hub_not_installed")
    # When CheckSpec checks an hf:// spec
    result = step.check_spec(fast_spec(f"hf://{REPO}"), s3=None)
    # Then it says which check it left to ConvertToOnnx instead of failing on the import
    assert any(f"hf://{REPO}" in s and "ConvertToOnnx checks it" in s for s in result.skipped)


def test_deploybench_convert_takes_a_bare_org_name_as_a_hub_id_and_records_its_commit(
    served: tuple[LocalHub, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from workflows.cli.app import app
    from workflows.conversion.manifest import read_manifest

    # Given a gated repo on the local Hub and its token saved where `hf auth login` saves it (no HF_TOKEN)
    server, folder = served
    commit = server.add(REPO, folder, token=TOKEN)
    monkeypatch.chdir(tmp_path)  # no local folder named acme/tiny-bert
    monkeypatch.setenv(hub.ENDPOINT_ENV, server.url)
    monkeypatch.delenv(hub.TOKEN_ENV, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    (tmp_path / "hf-home").mkdir()
    (tmp_path / "hf-home" / "token").write_text(TOKEN + "\n", encoding="utf-8")
    # When `deploybench convert acme/tiny-bert` runs, as people type Hub ids
    out = tmp_path / "artifact"
    result = CliRunner().invoke(app, ["convert", REPO, "--out", str(out), "--max-length", "64"])
    # Then it went through the Hub: the artifact was built from the downloaded commit and records it
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert manifest.hub is not None and manifest.hub.commit == commit and manifest.hub.repo == REPO
    assert "model.safetensors" in server.downloaded()


def test_a_bare_org_name_is_a_hub_id_unless_it_names_a_local_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert ModelSpec(source="acme/tiny-bert@v1").source == "hf://acme/tiny-bert@v1"
    (tmp_path / "models" / "mine").mkdir(parents=True)
    assert ModelSpec(source="models/mine").source == "models/mine"
    assert ModelSpec(source="./acme/tiny-bert").source == "./acme/tiny-bert"


def test_without_a_token_a_private_repo_names_hf_token_and_hf_auth_login(
    served: tuple[LocalHub, Path], tmp_path: Path
) -> None:
    server, folder = served
    server.add(REPO, folder, token=TOKEN)
    with pytest.raises(ModelSourceInvalid) as refused:
        check_model(ModelSpec(source=REPO), s3=None, environ=env(server, HF_HOME=str(tmp_path / "no-login")))
    assert "no token was given" in refused.value.message and "401" in refused.value.message
    assert "HF_TOKEN" in (refused.value.fix or "") and "hf auth login" in (refused.value.fix or "")


def test_a_hub_that_cannot_be_reached_is_hub_unreachable_exit_1_naming_hf_endpoint_and_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from typer.testing import CliRunner

    from workflows.cli.app import app

    # Given HF_ENDPOINT on a port where nothing listens
    allow_local_hub(monkeypatch)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(hub.ENDPOINT_ENV, f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    # When convert reads a Hub id with --json
    result = CliRunner().invoke(app, ["convert", REPO, "--out", str(tmp_path / "a"), "--json"])
    # Then the error is its own class, a failure of the work (1), not a usage error (2)
    assert result.exit_code == 1, result.output
    error = json.loads(result.stderr.strip().splitlines()[-1])["error"]
    assert error["type"] == "HubUnreachable" and error["exit_code"] == 1
    assert f"127.0.0.1:{port}" in error["message"]
    assert "HF_ENDPOINT" in error["fix"] and "HF_HUB_OFFLINE" in error["fix"]
    assert not (tmp_path / "a").exists()


def image_env() -> dict[str, str]:
    """The ENV of infra/image/Dockerfile, as the convert function's process sees it."""
    text = (Path(__file__).resolve().parents[2] / "infra/image/Dockerfile").read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for block in re.findall(r"^ENV\s+((?:.*\\\n)*.*)$", text, flags=re.MULTILINE):
        for pair in shlex.split(block.replace("\\\n", " ")):
            name, _, value = pair.partition("=")
            found[name] = value
    return found


def test_convert_reaches_the_hub_in_the_images_environment_and_stays_offline_otherwise(
    served: tuple[LocalHub, Path], tmp_path: Path
) -> None:
    # Given a private repo on the local Hub, and the convert image's ENV (HF_HUB_OFFLINE=1 among it)
    server, folder = served
    commit = server.add(REPO, folder, token=TOKEN)
    environment = image_env()
    assert environment["HF_HUB_OFFLINE"] == "1"
    # (the task root is this checkout here, not /var/task; the flag and the rest are the image's)
    environment |= {
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "PATH": os.environ["PATH"],
        "HF_HOME": str(tmp_path / "hf-home"),
        hub.ENDPOINT_ENV: server.url,
        hub.TOKEN_ENV: TOKEN,
    }
    probe = (
        "import json, sys; from pathlib import Path\n"
        "import huggingface_hub.constants as c\n"
        "from workflows.conversion import hub\n"
        "from workflows.spec.model import ModelSpec\n"
        "offline_before = c.HF_HUB_OFFLINE\n"
        f"path, snapshot = hub.fetch(ModelSpec(source='hf://{REPO}'), secretsmanager=None, "
        f"workdir=Path({str(tmp_path / 'w')!r}), environ=__import__('os').environ)\n"
        "print(json.dumps([offline_before, snapshot.commit, (path / 'config.json').is_file(), c.HF_HUB_OFFLINE]))\n"
    )
    # When ConvertToOnnx's fetch runs in a fresh interpreter with that environment
    completed = subprocess.run(
        [sys.executable, "-c", probe], env=environment, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    offline_before, fetched, has_config, offline_after = json.loads(completed.stdout.strip().splitlines()[-1])
    # Then the hf:// source is downloaded at its commit (HF_ENDPOINT and HF_TOKEN honoured)...
    assert (fetched, has_config) == (commit, True)
    # ...and the process stays offline outside the Hub fetch (S3 sources, transformers' loads)
    assert offline_before is True and offline_after is True


def test_an_unreachable_hub_in_the_stacks_vpc_says_to_use_an_s3_source(tmp_path: Path) -> None:
    # Given the convert function in the stack's VPC, whose subnets have no route to the internet
    # (a closed local port stands for the Hub it cannot reach)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    environ = {hub.ENDPOINT_ENV: f"http://127.0.0.1:{port}", hub.FUNCTION_VPC_ENV: "vpc-0123456789abcdef0"}
    # When it fetches an hf:// source
    with pytest.raises(HubUnreachable) as refused:
        hub.fetch(ModelSpec(source=f"hf://{REPO}"), secretsmanager=None, workdir=tmp_path, environ=environ)
    # Then the error names the VPC, why, and the S3 source to use instead
    assert "runs in VPC vpc-0123456789abcdef0, whose subnets do not reach the internet" in str(refused.value)
    assert refused.value.fix.startswith("use an S3 source")  # type: ignore[attr-defined]
