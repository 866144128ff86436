"""``deploybench images``: every image URI each hosting mode deploys, per device, in one region."""

from __future__ import annotations

from typing import Any

from workflows.cli.options import JsonOption, ProfileOption, RegionOption
from workflows.cli.output import aws_session, emit, fail, guarded, print_table, session_region
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


@guarded
def images(
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print every image URI each hosting mode deploys in REGION, per device (from workflows/data/images.yaml)."""
    chosen = session_region(aws_session(region, profile))
    try:
        registry_account(chosen)
    except SpecInvalid as error:
        fail(f"--region {chosen}: {error.message}", fix=error.fix or "pass a region the image table lists")
    found = deployed_images(chosen)

    def human() -> None:
        from rich.table import Table

        table = Table(
            title=f"Images deployed in {chosen} ({found['source']}; hosting.image_version picks a build)"
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
                table.add_row(mode, device, row["default"] or f"not published in {chosen}", others)
        table.add_row("benchmark job", "cpu", found["benchmark_job"] or f"not published in {chosen}", "")
        print_table(table)

    emit(found, as_json=as_json, human=human)
