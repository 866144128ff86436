"""Deploy step: create the hosting mode's resources and return at once (the wait loop follows)."""

from __future__ import annotations

from typing import Any

from workflows.contracts import DeployRequest, DeployResult
from workflows.hosting import realtime
from workflows.settings import Settings


def deploy(request: DeployRequest, *, sagemaker: Any, settings: Settings) -> DeployResult:
    return realtime.deploy(request, sagemaker=sagemaker, settings=settings)
