"""The local SageMaker's Regions: one backend per Region, chosen by the Region a request is signed for.

boto3 clients are per Region: a client made with ``region_name="us-west-2"`` signs its requests with
that Region in SigV4's credential scope (``Credential=<key>/<date>/us-west-2/sagemaker/aws4_request``).
One local server reached through ``AWS_ENDPOINT_URL_SAGEMAKER`` therefore serves every Region, each
with its own models, endpoint configs, endpoints, tags and fault plan (a fault may name the Regions it
applies to), and the inference routers over all of them (``routers``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

from workflows.local.sagemaker.backend import LocalSageMaker
from workflows.local.sagemaker.routers import LocalRouters

_SCOPE = re.compile(r"Credential=[^/,]+/\d{8}/([a-z0-9-]+)/")


def signed_region(authorization: str | None, default: str) -> str:
    """The Region of a SigV4-signed request's credential scope (its Authorization header); ``default``
    for an unsigned one."""
    match = _SCOPE.search(authorization or "")
    return match.group(1) if match else default


class LocalRegions:
    """The primary Region's backend (the engine's) and the others', each built on its first request.

    Args:
        primary: the engine's own backend; its Region is where an unsigned request goes.
        build: makes the backend of another Region.
    """

    def __init__(self, primary: LocalSageMaker, build: Callable[[str], LocalSageMaker]) -> None:
        self.primary = primary
        self._build = build
        self._lock = threading.Lock()
        self.backends: dict[str, LocalSageMaker] = {primary.region: primary}
        self.routers = LocalRouters(self.backend)

    def backend(self, region: str) -> LocalSageMaker:
        with self._lock:
            found = self.backends.get(region)
            if found is None:
                found = self.backends[region] = self._build(region)
                found.url = self.primary.url
            return found

    def for_request(self, authorization: str | None) -> LocalSageMaker:
        """The backend of the Region a request's Authorization header is signed for."""
        return self.backend(signed_region(authorization, self.primary.region))

    def running_containers(self) -> list[str]:
        """Every Region's endpoints (and components) with a server process alive, as ``region/name``
        outside the primary Region."""
        with self._lock:
            backends = list(self.backends.values())
        return sorted(
            name if b is self.primary else f"{b.region}/{name}"
            for b in backends
            for name in b.running_containers()
        )

    def shutdown(self) -> list[str]:
        """Stop every Region's containers; the endpoints and routers left behind (``region/name`` outside
        the primary Region)."""
        with self._lock:
            backends = list(self.backends.values())
        left = [
            f"inference-router/{name}" if b is self.primary else f"{b.region}/inference-router/{name}"
            for b in backends
            for name in self.routers.names(b.region)
        ]
        for b in backends:
            left += [name if b is self.primary else f"{b.region}/{name}" for name in b.shutdown()]
        return left
