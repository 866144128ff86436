"""``deploybench images``: every image URI each hosting mode deploys, per device, in one region."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from workflows.errors import SpecInvalid
from workflows.images.table import HF_INFERENCE, build_versions, image_table, image_uri, registry_account

DEVICES = ("cpu", "gpu")


def _uri(family: str, device: str, region: str, version: str) -> str | None:
    try:
        return image_uri(family, gpu=device == "gpu", region=region, version=version)
    except SpecInvalid:
        return None


def deployed_images(region: str) -> dict[str, Any]:
    """Per mode and device: the default URI and every selectable build's URI (None where the SDK's
    table does not publish that build in ``region``); a device the mode does not deploy is absent."""
    from workflows.hosting.modes import strategies

    modes: dict[str, dict[str, Any]] = {}
    for name, strategy in strategies().items():
        family, versions = strategy.image_family, build_versions(strategy.image_family)
        modes[name] = {}
        for device in strategy.image_devices:
            builds = {v: _uri(family, device, region, v) for v in versions}
            modes[name][device] = {"family": family, "default": builds[versions[0]], "builds": builds}
    return {
        "region": region,
        "source": image_table()["source"],
        "modes": modes,
        # Without benchmark.job_image, the GPU benchmark's processing job runs the HF CPU image.
        "benchmark_job": _uri(HF_INFERENCE, "cpu", region, build_versions(HF_INFERENCE)[0]),
    }


def images(
    region: Annotated[
        str, typer.Option("--region", help="AWS region whose registry URIs to print.")
    ] = "us-east-1",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (URIs as strings).")] = False,
) -> None:
    """Print every image URI each hosting mode deploys, per device (from workflows/data/images.yaml)."""
    try:
        registry_account(region)
    except SpecInvalid as error:
        typer.echo(f"SpecInvalid: {error}", err=True)
        raise typer.Exit(2) from error
    found = deployed_images(region)
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"Images deployed in {region} ({found['source']}; hosting.image_version picks a build)"
    )
    for column in ("mode", "device", "image (default)", "other builds"):
        table.add_column(column, overflow="fold")
    for mode, devices in found["modes"].items():
        for device in DEVICES:
            row = devices.get(device)
            if row is None:
                table.add_row(mode, device, "not deployed on this device (hosting.image to override)", "")
                continue
            others = ", ".join(v for v in row["builds"] if row["builds"][v] != row["default"]) or "-"
            table.add_row(mode, device, row["default"] or f"not published in {region}", others)
    table.add_row("benchmark job", "cpu", found["benchmark_job"] or f"not published in {region}", "")
    Console(highlight=False, soft_wrap=True).print(table)
