"""One local serving container: its model folder, its server process group, its health and invocations.

A container runs Multi Model Server through the HF inference toolkit in the DLC-like environment
(``launch.py``), or the light server where that stack is unavailable. It starts in its own session
and is stopped by killing its whole process group: the MMS JVM is reparented to init when the
``multi-model-server`` CLI exits, and a Python worker outlives a dead JVM, so waiting on the first
process alone would leave both behind.

Healthy means a real invocation is answered by the model's handler: MMS answers ``/ping`` with
HTTP 200 as soon as its worker processes exist, before ``model_fn`` has run and even when it failed.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import threading
import time
from pathlib import Path

from workflows.container.cpu_stand_in import NOTE, STAND_IN_ENV, serve_on_cpu
from workflows.container.environment import ServingStack
from workflows.local.sagemaker import launch
from workflows.local.sagemaker.container_spec import ContainerSpec
from workflows.local.sagemaker.logs import LogShipper
from workflows.local.sagemaker.memory import MemoryCap, memory_cap_support
from workflows.processes import groups, lifeline
from workflows.processes.guardian import group_members

# A request the serving code answers (or rejects with its own error): either way the handler ran.
PROBE_BODY = json.dumps({"inputs": ["ping"]}).encode()
# SageMaker cuts an invocation the container has not answered after 60 s.
INVOCATION_TIMEOUT_S = 60.0
# MMS answers 503 while no worker is registered and 404 before the model is registered.
NOT_YET_SERVING = {404, 503}
PORT_RANGE = (20000, 32000)


class ContainerFailed(Exception):
    """The container did not become healthy; the message is the endpoint's FailureReason."""


class InvocationTimeout(Exception):
    """The container did not answer within the invocation limit."""


def free_port() -> int:
    """A free 127.0.0.1 port below 32768: MMS 1.1.11 refuses higher ones ("Invalid port number"), and
    the kernel's ephemeral range, which ``bind(0)`` draws from, starts at 32768."""
    for _ in range(200):
        port = random.randint(PORT_RANGE[0], PORT_RANGE[1])
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise ContainerFailed(f"no free port between {PORT_RANGE[0]} and {PORT_RANGE[1]} on 127.0.0.1")


def health_check_failure(spec: ContainerSpec, primary: bool) -> str:
    who = "primary container" if primary else f"container {spec.hostname}"
    return (
        f"The {who} for production variant {spec.variant} did not pass the ping health check. "
        "Please check CloudWatch logs for this endpoint."
    )


class Container:
    """A running (or starting) local serving container."""

    def __init__(
        self,
        spec: ContainerSpec,
        *,
        workdir: Path,
        stack: ServingStack,
        shipper: LogShipper | None = None,
        memory: MemoryCap | None = None,
        cgroup_tag: str = "local",
    ) -> None:
        self.spec = spec
        self.workdir = workdir
        self.stack = stack
        self.shipper = shipper
        self.model_dir = workdir / "ml" / "model"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        # A cap shared with the other containers of its instance (the instance's memory), or its own
        # (serverless MemorySizeInMB), created at launch and removed at stop.
        self.memory: MemoryCap | None = memory
        self._own_memory = False
        self._cgroup_tag = cgroup_tag
        self.tmp: Path | None = None
        self._local = threading.local()
        self._stopped = threading.Event()
        self._lifecycle = threading.Lock()

    @property
    def server_kind(self) -> str:
        return self.stack.kind

    def unpack(self, tarball: Path) -> None:
        """Extract model.tar.gz into the model folder, as SageMaker does into /opt/ml/model."""
        self.model_dir.mkdir(parents=True, exist_ok=True)
        # "r:*" reads gzip and plain tar alike (SageMaker accepts both).
        with tarfile.open(tarball, "r:*") as archive:
            archive.extractall(self.model_dir, filter="data")
        note = serve_on_cpu(self.model_dir)
        if note is not None:
            self.spec.environment[STAND_IN_ENV] = NOTE
            self.spec.extra_log_lines.append(f"deploybench local SageMaker: {note}")

    def log(self, line: str) -> None:
        self.spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.spec.log_path.open("a", encoding="utf-8") as out:
            out.write(line.rstrip("\n") + "\n")

    # --- start ---------------------------------------------------------------------------------

    def launch(self) -> None:
        """Start the server process group (returns at once; see :meth:`wait_healthy`).

        Raises:
            ContainerFailed: the container was stopped before it could start.
        """
        # Under the lifecycle lock: a stop racing a launch either comes first (nothing starts) or
        # after (it kills what started).
        with self._lifecycle:
            if self._stopped.is_set():
                raise ContainerFailed("The container was stopped before it started.")
            self._launch()

    def _launch(self) -> None:
        # The unix socket MMS's workers listen on lives in TMPDIR and must stay under 107 bytes
        # (``AF_UNIX path too long`` otherwise), so the temp dir is short, outside deep work dirs.
        self.tmp = Path(tempfile.mkdtemp(prefix="dbc-", dir="/tmp"))
        self.model_dir.mkdir(parents=True, exist_ok=True)
        self.log(
            f"deploybench local SageMaker: container {self.spec.hostname} of {self.spec.endpoint} "
            f"(variant {self.spec.variant}) serves with the {self.stack.describe()}; port {self.port}"
        )
        for line in self.spec.extra_log_lines:
            self.log(line)
        prefix: list[str] = []
        if self.memory is None and self.spec.memory_mb is not None:
            supported, how = memory_cap_support()
            name = f"{self._cgroup_tag}-{self.spec.endpoint}-{self.spec.hostname}"
            self.memory = MemoryCap.create(name, self.spec.memory_mb) if supported else None
            self._own_memory = self.memory is not None
            if self.memory is None:
                self.log(
                    f"deploybench local SageMaker: MemorySizeInMB {self.spec.memory_mb} is NOT enforced: {how}"
                )
        if self.memory is not None:
            prefix = self.memory.command_prefix()
            self.log(
                f"deploybench local SageMaker: memory capped at {self.memory.limit_mb} MB ({self.memory.path})"
            )
        command, env = launch.command_and_environment(
            self.stack,
            model_dir=self.model_dir,
            workdir=self.workdir,
            tmp=self.tmp,
            port=self.port,
            spec=self.spec,
        )
        # Bound to the engine's life: a SIGKILLed CLI leaves no server running (processes/lifeline.py).
        command, lifeline_fds = lifeline.bound(prefix + command)
        with self.spec.log_path.open("ab") as out:
            self.process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=self.workdir,
                start_new_session=True,
                pass_fds=lifeline_fds,
            )
        groups.record(self.process.pid, what=f"container {self.spec.endpoint}/{self.spec.hostname}")
        if self.shipper is not None and self.spec.log_stream:
            self.shipper.follow(self.spec.log_path, group=self.spec.log_group, stream=self.spec.log_stream)

    def wait_healthy(self, timeout_s: float, *, probe: bool = True, primary: bool = True) -> None:
        """Wait for ``/ping`` and then (``probe``) for a real invocation answered by the handler.

        Raises:
            ContainerFailed: the server exited, or was not healthy within ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        pinged = False
        while time.monotonic() < deadline and not self._stopped.is_set():
            if self.process is None or self.process.poll() is not None:
                code = self.process.returncode if self.process else None
                self.log(f"deploybench local SageMaker: the container's server exited with status {code}")
                break
            if not pinged:
                pinged = self._ping()
                if not pinged:
                    time.sleep(0.25)
                continue
            if not probe:
                return
            status = self._probe(max(1.0, deadline - time.monotonic()))
            if status is not None and status not in NOT_YET_SERVING:
                self.log(
                    f"deploybench local SageMaker: first invocation answered with HTTP {status}: healthy"
                )
                return
            time.sleep(0.5)
        raise ContainerFailed(health_check_failure(self.spec, primary))

    def _ping(self) -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
            try:
                connection.request("GET", "/ping")
                return connection.getresponse().status == 200
            finally:
                connection.close()
        except OSError:
            return False

    def _probe(self, timeout_s: float) -> int | None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout_s)
        try:
            connection.request(
                "POST", "/invocations", body=PROBE_BODY, headers={"Content-Type": "application/json"}
            )
            response = connection.getresponse()
            response.read()
            return response.status
        except (OSError, http.client.HTTPException):
            return None
        finally:
            connection.close()

    def metrics(self) -> str | None:
        """The container's Prometheus exposition (``GET /metrics``); None when it serves none (the
        DLC-like stack's Multi Model Server has no such route)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            connection.request("GET", "/metrics")
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
            return text if response.status == 200 else None
        except (OSError, http.client.HTTPException):
            return None
        finally:
            connection.close()

    # --- serve ---------------------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=INVOCATION_TIMEOUT_S)
            connection.connect()
            # Headers and body leave in separate writes: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms.
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._local.connection = connection
        return connection

    def invoke(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, str]:
        """POST /invocations over a kept-alive connection (one per calling thread).

        Raises:
            InvocationTimeout: no answer within 60 s (SageMaker's limit).
            OSError: the container is not listening.
        """
        for attempt in range(2):
            try:
                connection = self._connection()
                connection.request("POST", "/invocations", body=body, headers=headers)
                response = connection.getresponse()
                return (
                    response.status,
                    response.read(),
                    response.getheader("Content-Type", "application/json"),
                )
            except TimeoutError as error:
                self._drop_connection()
                raise InvocationTimeout(str(error)) from error
            except (http.client.HTTPException, ConnectionError):
                # A kept-alive connection the server closed: retry once on a fresh one.
                self._drop_connection()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _drop_connection(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
        self._local.connection = None

    # --- stop ----------------------------------------------------------------------------------

    def alive(self) -> bool:
        return self.process is not None and bool(group_members(self.process.pid))

    def stop(self) -> None:
        """Kill the container's whole process group, wait until it is empty, and clean up."""
        with self._lifecycle:
            self._stopped.set()
        process = self.process
        if process is not None:
            for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, sig)
                deadline = time.monotonic() + wait_s
                while time.monotonic() < deadline:
                    process.poll()
                    if process.returncode is not None and not group_members(process.pid):
                        break
                    time.sleep(0.1)
                else:
                    continue
                break
            if not group_members(process.pid):
                groups.forget(process.pid)
        if self.memory is not None and self._own_memory:
            # Nothing about the kill goes to the container log: the field saw no OOM line there (F02, F14).
            self.memory.remove()
        if self.shipper is not None:
            self.shipper.unfollow(self.spec.log_path)
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
