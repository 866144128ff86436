"""``deploybench convert``: the convert (and pack) steps from the command line, without AWS."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from workflows.cli.options import JsonOption, ProfileOption, RegionOption
from workflows.cli.output import RESULTS_DIR, aws_session, emit, guarded, out, print_table
from workflows.contracts import ArtifactManifest
from workflows.spec.pipeline import RunSpec

SPEC_SUFFIXES = (".yaml", ".yml")


def spec_for(source_or_spec: str, overrides: dict[str, dict[str, Any]]) -> RunSpec:
    """A run spec from a YAML file, or a default one around a model source; flags override it.

    Raises:
        SpecInvalid: the file does not validate, or a flag's value is refused (e.g. fp16).
    """
    from workflows.spec.pipeline import load_spec, parse_spec

    if source_or_spec.endswith(SPEC_SUFFIXES) and Path(source_or_spec).is_file():
        data = load_spec(source_or_spec).model_dump(mode="json")
        origin = f"spec file {source_or_spec} with the options given"
    else:
        # Nothing is measured here: natural lengths only, so that any --max-length validates.
        data = {
            "name": "convert",
            "model": {"source": source_or_spec},
            "benchmark": {"sequence_lengths": ["natural"]},
        }
        origin = "the spec built from the options given"
    for section, values in overrides.items():
        data[section] = {**data.get(section, {}), **{k: v for k, v in values.items() if v is not None}}
    return parse_spec(data, origin=origin)


def tarball_path(out: Path, compression: str) -> Path:
    """Beside the artifact folder: ``DIR.tar.gz`` (or ``DIR.tar`` uncompressed)."""
    return out.with_name(out.name + (".tar" if compression == "none" else ".tar.gz"))


def default_out(source_or_spec: str, spec: RunSpec) -> Path:
    """``deploybench-results/artifacts/<spec name or model folder name>``."""
    if source_or_spec.endswith(SPEC_SUFFIXES):
        return RESULTS_DIR / "artifacts" / spec.name
    return RESULTS_DIR / "artifacts" / (Path(source_or_spec.rstrip("/")).name or "model")


def _print_manifest(manifest: ArtifactManifest, folder: Path) -> None:
    from rich.table import Table

    console = out

    entry = next(f for f in manifest.files if f.path == manifest.onnx_file)
    table = Table(title=f"Artifact {folder}", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    rows = [
        ("model", f"{manifest.architecture} ({manifest.task})"),
        ("serves", f"{manifest.onnx_file}, {manifest.precision}, {entry.size_bytes / 2**20:.1f} MB"),
        ("sha256", entry.sha256),
        ("inputs → outputs", f"{', '.join(manifest.inputs)} → {', '.join(manifest.outputs)}"),
        ("optimization", manifest.optimization),
        (
            "parity (fp32 vs PyTorch)",
            f"max |diff| {manifest.parity.max_abs_diff:.1e}, min cosine {manifest.parity.min_cosine:.6f} "
            f"on {manifest.parity.texts} texts",
        ),
    ]
    if manifest.quantization:
        rows.append(("INT8 guard (F29)", manifest.quantization.diagnosis))
    for name, value in rows:
        table.add_row(name, escape(value))
    print_table(table)
    for warning in manifest.warnings:
        console.print(f"[yellow]warning[/]: {escape(warning)}")


@guarded
def convert(
    source_or_spec: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE_OR_SPEC",
            help=(
                "A model folder, 'bundled', s3://bucket/prefix/, a Hub id (hf://org/name[@revision], or "
                "org/name[@revision]; HF_TOKEN or `hf auth login` for private and gated models), or a YAML "
                "run spec."
            ),
        ),
    ],
    artifact_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Artifact folder to create (must not hold files); default deploybench-results/artifacts/<name>.",
            show_default=False,
        ),
    ] = None,
    task: Annotated[str | None, typer.Option(help="embedding, classification or reranking.")] = None,
    precision: Annotated[str | None, typer.Option(help="fp32 or int8 (fp16 is refused on CPU).")] = None,
    optimize: Annotated[str | None, typer.Option(help="auto, fused or none.")] = None,
    max_length: Annotated[int | None, typer.Option(help="Tokens kept per text.")] = None,
    pack: Annotated[
        bool, typer.Option("--pack", help="Also write the model.tar.gz SageMaker takes, beside --out.")
    ] = False,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Convert a model to a verified ONNX artifact folder (and, with --pack, its tarball)."""
    from workflows.artifact.tarball import write_tarball
    from workflows.contracts import StepRequest
    from workflows.conversion.build import build_artifact, fetch_source
    from workflows.conversion.manifest import verify_artifact

    spec = spec_for(
        source_or_spec,
        {
            "model": {"task": task, "max_sequence_length": max_length},
            "convert": {"precision": precision, "optimize": optimize},
        },
    )
    folder = artifact_dir or default_out(source_or_spec, spec)
    with tempfile.TemporaryDirectory(prefix="deploybench-convert-") as scratch:
        s3 = None
        if spec.model.source.startswith("s3://"):
            s3 = aws_session(region, profile).client("s3")
        source, hub = fetch_source(spec.model, s3=s3, workdir=Path(scratch))  # hf://: HF_TOKEN, HF_ENDPOINT
        request = StepRequest(run_id="convert", spec=spec)
        manifest = build_artifact(request, source=source, out=folder, scratch=Path(scratch) / "work", hub=hub)
    tarball = None
    if pack:
        verify_artifact(folder)
        tarball = tarball_path(folder, spec.pack.compression)
        write_tarball(folder, tarball, spec.pack.compression)

    def human() -> None:
        _print_manifest(manifest, folder)
        if tarball is not None:
            out.print(f"wrote {tarball} ({tarball.stat().st_size / 2**20:.1f} MB)")

    result = {
        "artifact_dir": str(folder),
        "tarball": str(tarball) if tarball else None,
        "manifest": manifest.model_dump(mode="json"),
    }
    emit(result, as_json=as_json, human=human)
