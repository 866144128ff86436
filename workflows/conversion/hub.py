"""Hugging Face Hub sources: resolve ``hf://org/name[@revision]`` to a commit, check it, download it.

The Hub is reached with ``huggingface_hub`` at ``HF_ENDPOINT`` (read when called, so a test or a
mirror can point it elsewhere). A private or gated model's token is ``HF_TOKEN`` where it is set,
else the token ``hf auth login`` saved (``HF_TOKEN_PATH``, by default ``$HF_HOME/token``), else the
Secrets Manager secret ``model.token_secret`` names (the functions on AWS). A refused token or no
token (401, 403) is ``ModelSourceInvalid`` naming both fixes; a Hub that cannot be reached (the
network, a proxy, ``HF_ENDPOINT``, ``HF_HUB_OFFLINE``) is ``HubUnreachable``: the spec was fine.
What would fail conversion after a download is refused from the file listing first: no
config.json, no weights, no tokenizer; the architecture is then checked on config.json alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from workflows.conversion.source import SHARD_INDEX, TOKENIZER_FILES, WEIGHT_FILES
from workflows.errors import DeploybenchError, HubUnreachable, ModelSourceInvalid
from workflows.spec.model import HubSource, ModelSpec, hub_source

TOKEN_ENV = "HF_TOKEN"
ENDPOINT_ENV = "HF_ENDPOINT"
OFFLINE_ENV = "HF_HUB_OFFLINE"
TOKEN_PATH_ENV = "HF_TOKEN_PATH"
FUNCTION_VPC_ENV = "DEPLOYBENCH_FUNCTION_VPC"
"""Set on the functions of a stack deployed in a VPC (infra/functions.py): the VPC's id."""
# What conversion reads: config, tokenizer, weights, and the sentence-transformers layout (pooling).
# Other frameworks' weights (TensorFlow, Flax, ONNX, OpenVINO) are never downloaded.
WANTED = (
    "*.json",
    "*.txt",
    "*.model",
    "*.safetensors",
    "pytorch_model*.bin",
    "1_Pooling/*",
)
TOKEN_FIX = (
    f"for a private or gated model export {TOKEN_ENV}=<token> or run `hf auth login` (a token that can read it; "
    "for a gated model, accept its terms on its Hub page first); on AWS set model.token_secret (a Secrets "
    "Manager secret under deploybench/)"
)


@dataclass(frozen=True)
class HubSnapshot:
    """One revision of a Hub model: the commit it resolved to and the files conversion needs."""

    source: HubSource
    commit: str
    files: list[str]

    @property
    def where(self) -> str:
        return f"hf://{self.source.repo}@{self.commit}"


def token_file(environ: Mapping[str, str]) -> Path:
    """Where ``hf auth login`` saves the token, as huggingface_hub finds it: ``HF_TOKEN_PATH``, else
    ``$HF_HOME/token``, else ``$XDG_CACHE_HOME/huggingface/token``, else ``~/.cache/huggingface/token``."""
    if environ.get(TOKEN_PATH_ENV):
        return Path(environ[TOKEN_PATH_ENV]).expanduser()
    home = environ.get("HF_HOME") or str(Path(environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface")
    return Path(home).expanduser() / "token"


def saved_token(environ: Mapping[str, str]) -> str | None:
    """The token ``hf auth login`` saved, or None."""
    try:
        return token_file(environ).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def hub_token(model: ModelSpec, *, secretsmanager: Any | None, environ: Mapping[str, str]) -> str | None:
    """The token for ``model``'s Hub source: ``HF_TOKEN``, else the token ``hf auth login`` saved, else
    the spec's secret, else None (public).

    Raises:
        ModelSourceInvalid: the secret is named but cannot be read here, naming both ways to give a token.
    """
    if environ.get(TOKEN_ENV):
        return environ[TOKEN_ENV]
    saved = saved_token(environ)
    if saved:
        return saved
    if not model.token_secret:
        return None
    if secretsmanager is None:
        raise ModelSourceInvalid(
            f"model.token_secret {model.token_secret} is read on AWS only, and {TOKEN_ENV} is not set here.",
            fix=f"export {TOKEN_ENV}=<token> for a local run",
        )
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        value = str(secretsmanager.get_secret_value(SecretId=model.token_secret)["SecretString"])
    except (ClientError, BotoCoreError, KeyError) as error:
        raise ModelSourceInvalid(
            f"model.token_secret {model.token_secret} cannot be read: {error}.",
            fix=f"create it (aws secretsmanager create-secret --name {model.token_secret} --secret-string "
            f"<token>) in the run's region, or export {TOKEN_ENV} for a local run",
        ) from None
    try:
        data = json.loads(value)
    except ValueError:
        return value.strip()
    if isinstance(data, dict) and isinstance(data.get(TOKEN_ENV) or data.get("token"), str):
        return str(data.get(TOKEN_ENV) or data.get("token"))
    raise ModelSourceInvalid(
        f"model.token_secret {model.token_secret} holds JSON without a '{TOKEN_ENV}' string.",
        fix=f'store the token itself, or {{"{TOKEN_ENV}": "<token>"}}',
    )


def _hub_error(
    source: HubSource, error: Exception, *, token: str | None, endpoint: str | None, vpc: str | None = None
) -> DeploybenchError:
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"hf://{source.repo}"
    if isinstance(error, RevisionNotFoundError):
        return ModelSourceInvalid(
            f"{where} has no revision {source.revision!r}.",
            fix=f"write hf://{source.repo}@<branch, tag or commit> with one the repo has, or drop '@...' for main",
        )
    refused = "the token given was refused or may not read it" if token else "no token was given"
    status = (
        error.response.status_code
        if isinstance(error, HfHubHTTPError) and error.response is not None
        else None
    )
    if isinstance(error, GatedRepoError):
        return ModelSourceInvalid(
            f"{where} is gated (HTTP {status or 403}): {refused}, or its terms were not accepted.",
            fix=TOKEN_FIX,
        )
    if isinstance(error, RepositoryNotFoundError):
        locally = "" if status in (401, 403) else " (and no local folder has that name)"
        return ModelSourceInvalid(
            f"the Hub does not show {where}{locally}: it does not exist, or it is private or gated and "
            f"{refused} (HTTP {status or 404}).",
            fix=f"check the id; {TOKEN_FIX}",
        )
    if isinstance(error, HfHubHTTPError) and status in (401, 403):
        return ModelSourceInvalid(f"the Hub answered HTTP {status} for {where}: {refused}.", fix=TOKEN_FIX)
    if isinstance(error, HfHubHTTPError) and status is not None and status < 500:
        return ModelSourceInvalid(
            f"the Hub answered HTTP {status} for {where}: {error}",
            fix="check the id and revision, or download the model and pass its folder",
        )
    if isinstance(error, HFValidationError):
        return ModelSourceInvalid(f"{where} is not a Hub id: {error}", fix="write hf://org/name[@revision]")
    if vpc:
        return HubUnreachable(
            f"the Hub cannot be reached for {where}: this function runs in VPC {vpc}, whose subnets do not "
            f"reach the internet (an isolated subnet, or no NAT gateway): {type(error).__name__}: {error}",
            fix="use an S3 source: download the model, upload its folder to S3 and set model.source to "
            "s3://bucket/prefix/; or route the stack's subnets through a NAT gateway",
        )
    # Anything else never got an answer from the Hub: the network, a proxy, HF_ENDPOINT, offline mode,
    # or the Hub's own 5xx. The spec may be fine, so this is not a usage error.
    return HubUnreachable(
        f"the Hugging Face Hub cannot be reached for {where} at {_endpoint_named(endpoint)}: "
        f"{type(error).__name__}: {error}",
        fix=f"check the network (the convert function needs outbound HTTPS) and {ENDPOINT_ENV}; unset "
        f"{OFFLINE_ENV} if it is set; or download the model (`hf download {source.repo} --local-dir DIR`) and "
        "pass its folder",
    )


def _endpoint_named(endpoint: str | None) -> str:
    """The endpoint asked, and whether offline mode is on (huggingface_hub reads it from the process's
    environment), for the error text."""
    import os

    offline = os.environ.get(OFFLINE_ENV, "").strip().upper() in ("1", "ON", "YES", "TRUE")
    return f"{ENDPOINT_ENV}={endpoint or 'https://huggingface.co'}" + (
        f" with {OFFLINE_ENV}=1" if offline else ""
    )


@contextmanager
def hub_online() -> Iterator[None]:
    """huggingface_hub may make requests inside the block, whatever ``HF_HUB_OFFLINE`` says.

    The convert image sets ``HF_HUB_OFFLINE=1`` so that nothing but an ``hf://`` fetch (transformers
    loading a local folder, an S3 source) ever reaches a hub; huggingface_hub reads the flag once, at
    import, into ``constants.HF_HUB_OFFLINE``, and checks that on every request.
    """
    import huggingface_hub.constants as constants

    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = False
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before


def _api(endpoint: str | None, token: str | None) -> Any:
    from huggingface_hub import HfApi

    return HfApi(endpoint=endpoint, token=token or False)


def resolve(
    source: HubSource, *, token: str | None, endpoint: str | None, vpc: str | None = None
) -> HubSnapshot:
    """The commit ``source.revision`` names and the files to download, checked for config, weights, tokenizer.

    Raises:
        ModelSourceInvalid: the repo or revision is unknown, private or gated without a token, or lacks
            what conversion needs.
        HubUnreachable: no answer from the Hub (network, HF_ENDPOINT, HF_HUB_OFFLINE).
    """
    try:
        with hub_online():
            info = _api(endpoint, token).model_info(source.repo, revision=source.revision)
    except Exception as error:  # huggingface_hub and its HTTP client raise many types; each is named
        raise _hub_error(source, error, token=token, endpoint=endpoint, vpc=vpc) from None
    names = [str(sibling.rfilename) for sibling in info.siblings or []]
    snapshot = HubSnapshot(source, str(info.sha), wanted_files(f"hf://{source.repo}@{info.sha}", names))
    return snapshot


def wanted_files(where: str, names: list[str]) -> list[str]:
    """The files of a Hub listing that conversion reads; safetensors weights only, when the repo has them.

    Raises:
        ModelSourceInvalid: no config.json, no weights, or no tokenizer files.
    """
    if "config.json" not in names:
        raise ModelSourceInvalid(
            f"{where} has no config.json, so it is not a transformers model "
            f"(it holds {', '.join(sorted(names)[:6]) or 'no files'}).",
            fix="pick the repo of a transformers encoder (config.json, weights, tokenizer)",
        )
    wanted = [name for name in names if any(fnmatch(name, pattern) for pattern in WANTED)]
    safetensors = any(name.endswith(".safetensors") for name in wanted)
    if safetensors:
        wanted = [name for name in wanted if not name.endswith(".bin")]
    weights = [n for n in wanted if n.endswith((".safetensors", ".bin")) and "/" not in n]
    if not weights and SHARD_INDEX not in wanted:
        raise ModelSourceInvalid(
            f"{where} has no PyTorch weights ({' or '.join(WEIGHT_FILES)}; it holds "
            f"{', '.join(sorted(names)[:8])}).",
            fix="pick a revision with safetensors or PyTorch weights (other frameworks' weights do not convert)",
        )
    if not any(name in names for name in TOKENIZER_FILES):
        raise ModelSourceInvalid(
            f"{where} has no tokenizer files ({', '.join(TOKENIZER_FILES)}).",
            fix="pick a repo that ships its tokenizer, or save model and tokenizer into a folder and pass that",
        )
    return sorted(wanted)


def download(
    snapshot: HubSnapshot, target: Path, *, token: str | None, endpoint: str | None, vpc: str | None = None
) -> Path:
    """Download the snapshot's files at its commit into ``target`` (its cache beside it); returns ``target``.

    Raises:
        ModelSourceInvalid: the download failed, naming why.
    """
    from huggingface_hub import snapshot_download

    try:
        with hub_online():
            snapshot_download(
                snapshot.source.repo,
                revision=snapshot.commit,
                local_dir=str(target),
                cache_dir=str(target.parent / "hub-cache"),
                allow_patterns=snapshot.files,
                token=token or False,
                endpoint=endpoint,
                max_workers=4,
            )
    except Exception as error:  # as in resolve: every failure is named with its fix
        raise _hub_error(snapshot.source, error, token=token, endpoint=endpoint, vpc=vpc) from None
    return target


def fetch_json(
    snapshot: HubSnapshot, name: str, target: Path, *, token: str | None, endpoint: str | None
) -> Any:
    """One small file of the snapshot (config.json, tokenizer_config.json), parsed; {} when absent."""
    from huggingface_hub import hf_hub_download

    if name not in snapshot.files:
        return {}
    try:
        with hub_online():
            path = hf_hub_download(
                snapshot.source.repo,
                name,
                revision=snapshot.commit,
                cache_dir=str(target),
                token=token or False,
                endpoint=endpoint,
            )
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as error:
        raise ModelSourceInvalid(
            f"{name} of {snapshot.where} is not valid JSON: {error}.", fix="re-save the model"
        ) from None
    except Exception as error:  # as in resolve
        raise _hub_error(snapshot.source, error, token=token, endpoint=endpoint) from None


def parse(source: str) -> HubSource:
    """The ``hf://`` source parsed (the spec validated it already)."""
    parsed = hub_source(source)
    if parsed is None:
        raise ValueError(f"{source!r} is not an hf:// source")
    return parsed


def fetch(
    model: ModelSpec, *, secretsmanager: Any | None, workdir: Path, environ: Mapping[str, str]
) -> tuple[Path, HubSnapshot]:
    """Resolve and download ``model.source`` (an ``hf://`` id) under ``workdir``; the folder and its snapshot.

    Raises:
        ModelSourceInvalid: see ``resolve`` and ``download``.
    """
    source = parse(model.source)
    token = hub_token(model, secretsmanager=secretsmanager, environ=environ)
    endpoint = environ.get(ENDPOINT_ENV) or None
    vpc = environ.get(FUNCTION_VPC_ENV) or None
    snapshot = resolve(source, token=token, endpoint=endpoint, vpc=vpc)
    return download(snapshot, workdir / "source", token=token, endpoint=endpoint, vpc=vpc), snapshot


def pin(model: ModelSpec, *, secretsmanager: Any | None, environ: Mapping[str, str]) -> ModelSpec:
    """``model`` with its ``hf://`` revision replaced by the commit it names now (unchanged otherwise).

    ``deploybench run`` pins before it starts an execution, so the checks, the conversion and the
    resource tags all refer to one commit even if the branch moves during the run.
    """
    source = hub_source(model.source)
    if source is None or source.pinned:
        return model
    token = hub_token(model, secretsmanager=secretsmanager, environ=environ)
    snapshot = resolve(
        source,
        token=token,
        endpoint=environ.get(ENDPOINT_ENV) or None,
        vpc=environ.get(FUNCTION_VPC_ENV) or None,
    )
    return model.model_copy(update={"source": snapshot.where})
