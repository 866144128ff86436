"""What SageMaker hands a local container, shared by the container that runs it and the launcher
that builds its command line (``container.py`` and ``launch.py`` both import it from here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ContainerSpec:
    """What SageMaker hands a container: its model data, environment, name and limits."""

    endpoint: str
    variant: str
    hostname: str
    environment: dict[str, str]
    log_path: Path
    memory_mb: int | None = None
    log_group: str = ""
    log_stream: str = ""
    extra_log_lines: list[str] = field(default_factory=list)
    isolated: bool = False
    """EnableNetworkIsolation: no package index is reachable from the container (launch.py)."""
    image: str = ""
    """The container's image URI: its libraries choose the DLC-like environment (dlc_versions)."""
