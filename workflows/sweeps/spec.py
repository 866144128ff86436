"""The sweep specification: a base run spec, a matrix of variations, and how regressions are called.

A sweep is YAML (``examples/sweep-nightly.yaml``). Every matrix combination is expanded and
validated as a complete ``RunSpec`` when the sweep is loaded, so a bad combination is refused
with its coordinates before any run starts.
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from workflows.errors import SpecInvalid
from workflows.hosting.renames import DEPRECATED_INSTANCE_TYPES
from workflows.models import Strict
from workflows.spec.errors import EACH_LINE_FIX
from workflows.spec.pipeline import RunSpec, explain, parse_spec
from workflows.sweeps.partition_arms import PartitionComparison, hosting_arms, key_suffix

# Run ids are ``<sweep id>-<index>``; a 20-character name keeps them within the 45 characters a
# single run's id may take, so every SageMaker name stays under 63.
MAX_NAME = 20
# Each run holds an endpoint for minutes; a Map's history grows by ~10 events per run (25,000 max).
MAX_RUNS = 50


def _one_empty() -> list[dict[str, Any]]:
    """One entry that changes nothing: the axis keeps the base's value."""
    return [{}]


class Matrix(Strict):
    models: list[dict[str, Any]] = Field(
        default_factory=_one_empty,
        min_length=1,
        description="One entry per model: fields of the run spec's `model` (e.g. {source: s3://bucket/minilm/}).",
    )
    hosting: list[dict[str, Any]] = Field(
        default_factory=_one_empty,
        min_length=1,
        description="One entry per hosting mode: fields of the run spec's `hosting` (e.g. {mode: realtime}).",
    )
    instance_types: list[str] = Field(
        default_factory=list,
        description="Each becomes the run's only instance type; empty keeps each hosting entry's own.",
    )
    shapes: list[dict[str, Any]] = Field(
        default_factory=_one_empty,
        min_length=1,
        description=(
            "One entry per group of shapes measured on one endpoint: fields of the run spec's `benchmark` "
            "(batch_sizes, sequence_lengths, concurrency, ...)."
        ),
    )


# Keys of the fixed-percentage comparison sweeps used before verdicts became noise-aware.
_RETIRED_KEYS = ("p50_pct", "p99_pct", "throughput_pct", "min_requests")


class RegressionPolicy(Strict):
    """How a sweep is judged against its baseline: ``workflows.reports.compare`` (a bootstrap
    interval of the median's change against each run's window-to-window noise; too few samples
    or an unstable run gives no verdict), with a floor of practical significance on top."""

    min_change_pct: float = Field(
        5.0,
        ge=0,
        le=100,
        description=(
            "A latency or throughput change smaller than this % is never called a regression (or an "
            "improvement), however significant statistically; 0 leaves the noise floor alone to decide."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, value: Any) -> Any:
        retired = [k for k in _RETIRED_KEYS if isinstance(value, dict) and k in value]
        if retired:
            raise ValueError(
                f"{', '.join(retired)} no longer apply: verdicts are noise-aware (latency samples and "
                "windows of each run's result.json); remove them and set min_change_pct instead"
            )
        return value


class RecommendPolicy(Strict):
    """How the sweep report picks an instance type and mode: the cheapest per 1M inferences among
    the runs whose p99 meets the target at the batch size served (``workflows/sweeps/recommend.py``)."""

    p99_ms: float = Field(
        ...,
        gt=0,
        le=600_000,
        description="Latency target: a run qualifies only where its p99 is at most this.",
    )
    batch_size: int = Field(
        1, ge=1, le=4096, description="Batch size the service sends (one of the sweep's batch_sizes)."
    )
    sequence_length: int | Literal["natural"] | None = Field(
        None,
        description=(
            "Sequence length to judge on; empty: every measured one must meet the target, and the "
            "costliest counts."
        ),
    )


class SweepSpec(Strict):
    """A benchmark sweep: every combination of the matrix is one deploy pipeline run."""

    name: str = Field(
        ...,
        min_length=1,
        max_length=MAX_NAME,
        description="Short lowercase name; runs, reports and the baseline are kept under it.",
    )
    base: dict[str, Any] = Field(
        default_factory=dict, description="Run spec fields shared by every run (everything but `name`)."
    )
    matrix: Matrix = Field(default_factory=Matrix)
    regression: RegressionPolicy = Field(default_factory=RegressionPolicy)
    recommend: RecommendPolicy | None = Field(
        None,
        description=(
            "Rank the runs by cost per 1M inferences under a latency target, e.g. "
            "{p99_ms: 100, batch_size: 8}; empty: no recommendation."
        ),
    )
    partitions: PartitionComparison | None = Field(
        None,
        description=(
            "Compare whole GPUs with their partitions on one MIG-capable type at the same price, e.g. "
            "{instance_type: ml.p4d.24xlarge, gpu_partition: mig-1g.5gb}: the two arms are the sweep's "
            "hosting (leave matrix.hosting and matrix.instance_types out); empty: no comparison."
        ),
    )

    @field_validator("base")
    @classmethod
    def _base(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "name" in value:
            raise ValueError("base.name is set from the sweep's name; remove it")
        return value


class SweepItem(Strict):
    index: int
    key: str = Field(description="Stable identity across sweeps: model, mode, instance types and shapes.")
    spec: RunSpec


def _merged(sweep: SweepSpec, model: dict[str, Any], hosting: dict[str, Any], shapes: dict[str, Any]) -> Any:
    data = copy.deepcopy(sweep.base)
    data["name"] = sweep.name
    for field, override in (("model", model), ("hosting", hosting), ("benchmark", shapes)):
        data[field] = {**data.get(field, {}), **override}
    return data


def item_key(spec: RunSpec) -> str:
    """What a run measures, as one readable line; two sweeps compare runs with the same key."""
    hosting = spec.hosting
    bench = spec.benchmark
    shapes = (
        f"b={','.join(map(str, bench.batch_sizes))} seq={','.join(map(str, bench.sequence_lengths))} "
        f"c={','.join(map(str, bench.concurrency))}"
    )
    # Serverless has no instance type: its memory size is where it runs, and provisioned
    # concurrency (kept warm) is another run than on demand.
    where = getattr(hosting, "instance_type_fallbacks", None) or [
        f"{getattr(hosting, 'memory_size_mb', '?')} MB"
    ]
    provisioned = getattr(hosting, "provisioned_concurrency", None)
    kept = f" · {provisioned} provisioned" if provisioned else ""
    return f"{spec.model.source} · {hosting.mode} · {','.join(where)}{kept}{key_suffix(hosting)} · {shapes}"


def _hosting_axis(sweep: SweepSpec) -> tuple[list[dict[str, Any]], list[str | None]]:
    """The hosting entries and instance types crossed: the matrix's, or the partition comparison's arms."""
    matrix = sweep.matrix
    if sweep.partitions is None:
        return list(matrix.hosting), list(matrix.instance_types) or [None]
    if matrix.hosting != [{}] or matrix.instance_types:
        raise SpecInvalid(
            f"sweep {sweep.name}: partitions sets the hosting of its two arms, so matrix.hosting and "
            "matrix.instance_types cannot be set beside it.",
            fix="move the hosting fields both arms share into base.hosting and drop matrix.hosting and "
            "matrix.instance_types, or drop partitions",
        )
    return [hosting for _, hosting in hosting_arms(sweep.partitions)], [None]


def expand(sweep: SweepSpec) -> list[SweepItem]:
    """Every matrix combination as a validated run spec.

    Raises:
        SpecInvalid: a combination does not validate (named by its index and coordinates), two
            combinations are the same run, or the matrix exceeds ``MAX_RUNS``.
    """
    matrix = sweep.matrix
    hosting_entries, instance_types = _hosting_axis(sweep)
    combinations = list(itertools.product(matrix.models, hosting_entries, instance_types, matrix.shapes))
    if len(combinations) > MAX_RUNS:
        raise SpecInvalid(
            f"sweep {sweep.name} expands to {len(combinations)} runs; at most {MAX_RUNS} are allowed.",
            fix="split it into several sweeps or drop matrix entries",
        )
    items: list[SweepItem] = []
    seen: dict[str, int] = {}
    for index, (model, hosting, instance_type, shapes) in enumerate(combinations):
        hosting_entry = hosting
        if instance_type:
            # The matrix's type replaces the entry's list, under either of its names.
            kept = {k: v for k, v in hosting.items() if k != DEPRECATED_INSTANCE_TYPES}
            hosting_entry = {**kept, "instance_type_fallbacks": [instance_type]}
        try:
            spec = parse_spec(
                _merged(sweep, model, hosting_entry, shapes), origin=f"sweep {sweep.name} run {index}"
            )
        except SpecInvalid as error:
            coordinates = f"model={model}, hosting={hosting}, instance_type={instance_type}, shapes={shapes}"
            raise SpecInvalid(f"{error.message}\n  (matrix entry {coordinates})") from None
        key = item_key(spec)
        if key in seen:
            raise SpecInvalid(
                f"sweep {sweep.name}: runs {seen[key]} and {index} are the same run ({key}).",
                fix="remove the duplicate matrix entry",
            )
        seen[key] = index
        items.append(SweepItem(index=index, key=key, spec=spec))
    _check_recommend(sweep, items)
    return items


def _check_recommend(sweep: SweepSpec, items: list[SweepItem]) -> None:
    """A recommendation (or a partition comparison) at a batch size or sequence length that no run
    measures can never be made."""
    judged = [("recommend", sweep.recommend), ("partitions", sweep.partitions)]
    for field, policy in judged:
        if policy is None:
            continue
        batches = sorted({b for item in items for b in item.spec.benchmark.batch_sizes})
        if policy.batch_size not in batches:
            raise SpecInvalid(
                f"sweep {sweep.name}: {field}.batch_size {policy.batch_size} is not measured by any run "
                f"(batch sizes measured: {batches}).",
                fix=f"set {field}.batch_size to one of {batches}, or add it to the matrix shapes' batch_sizes",
            )
        lengths = sorted({str(q) for item in items for q in item.spec.benchmark.sequence_lengths})
        if policy.sequence_length is not None and str(policy.sequence_length) not in lengths:
            raise SpecInvalid(
                f"sweep {sweep.name}: {field}.sequence_length {policy.sequence_length!r} is not measured by "
                f"any run (sequence lengths measured: {lengths}).",
                fix=f"set {field}.sequence_length to one of {lengths}, or leave it out to judge on all",
            )


def parse_sweep(data: Any, *, origin: str = "sweep") -> SweepSpec:
    """Validate a sweep mapping and every run it expands to.

    Raises:
        SpecInvalid: naming every bad field, or the matrix entry that does not make a valid run.
    """
    if not isinstance(data, dict):
        raise SpecInvalid(
            f"{origin} must be a mapping of fields, got {type(data).__name__}.",
            fix="start from examples/sweep-nightly.yaml",
        )
    try:
        sweep = SweepSpec.model_validate(data)
    except ValidationError as error:
        raise SpecInvalid(f"{origin} is invalid:\n{explain(error, SweepSpec)}", fix=EACH_LINE_FIX) from None
    expand(sweep)
    return sweep


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a YAML sweep file.

    Raises:
        SpecInvalid: when the file is missing, is not YAML, or does not validate.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecInvalid(f"sweep file {path} does not exist.", fix="pass the path of a YAML sweep") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SpecInvalid(
            f"sweep file {path} cannot be read: {error}.", fix="pass a readable YAML file"
        ) from None
    except yaml.YAMLError as error:
        raise SpecInvalid(
            f"sweep file {path} is not valid YAML: {error}", fix="fix the YAML syntax"
        ) from None
    return parse_sweep(data, origin=f"sweep file {path}")
