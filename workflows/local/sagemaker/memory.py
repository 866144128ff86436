"""Real memory caps for local containers (serverless ``MemorySizeInMB``), through a cgroup.

A serverless container is killed by the kernel when its processes together exceed the memory size;
MMS then logs ``Worker died`` and retries forever while the client times out (F14). Only a cgroup
reproduces that: ``RLIMIT_AS`` caps virtual address space, not resident memory (torch alone maps
gigabytes it never touches), so it is not offered as a substitute. Where no cgroup can be created,
:func:`memory_cap_support` says so and the endpoint log states that the cap is not applied.

cgroup v2: a child of this process's cgroup with ``memory.max``; cgroup v1: a child in the memory
hierarchy with ``memory.limit_in_bytes``. The container's first process joins the cgroup before it
execs (``sh -c 'echo $$ > cgroup.procs; exec ...'``), so everything it forks is capped too.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _own_cgroup(controller: str | None) -> str | None:
    """This process's cgroup path: the v2 entry (``0::/path``) or the v1 entry for ``controller``."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        hierarchy, controllers, path = line.split(":", 2)
        if controller is None and hierarchy == "0" and controllers == "":
            return path
        if controller is not None and controller in controllers.split(","):
            return path
    return None


def _parent_directory() -> tuple[Path, int] | None:
    """A writable cgroup directory that can take a memory-capped child, and its cgroup version."""
    v1 = CGROUP_ROOT / "memory"
    if (v1 / "memory.limit_in_bytes").exists():
        own = _own_cgroup("memory")
        parent = v1 / own.lstrip("/") if own else v1
        if os.access(parent, os.W_OK) and (parent / "memory.limit_in_bytes").exists():
            return parent, 1
    own = _own_cgroup(None)
    if own is not None and (CGROUP_ROOT / "cgroup.controllers").exists():
        parent = CGROUP_ROOT / own.lstrip("/")
        try:
            enabled = (parent / "cgroup.subtree_control").read_text(encoding="utf-8").split()
            available = (parent / "cgroup.controllers").read_text(encoding="utf-8").split()
        except OSError:
            return None
        # A v2 child gets memory.max only when the parent delegates the memory controller; a
        # parent that holds processes cannot enable it (no internal processes rule), so it must
        # already be enabled.
        if "memory" in enabled and "memory" in available and os.access(parent, os.W_OK):
            return parent, 2
    return None


def memory_cap_support() -> tuple[bool, str]:
    """Whether real memory caps can be applied here, and a sentence saying how or why not."""
    found = _parent_directory()
    if found is None:
        return False, (
            "no writable cgroup with the memory controller on this machine (needs cgroup v2 with memory "
            "delegated to this user, or a writable cgroup v1 memory hierarchy); RLIMIT_AS is not a "
            "substitute (it caps virtual, not resident, memory)"
        )
    parent, version = found
    return True, f"cgroup v{version} under {parent}"


@dataclass
class MemoryCap:
    """One capped cgroup; ``command_prefix`` makes a process join it before it execs."""

    path: Path
    version: int
    limit_mb: int

    @classmethod
    def create(cls, name: str, limit_mb: int) -> MemoryCap | None:
        """A new cgroup capped at ``limit_mb``, or None where caps are not supported."""
        found = _parent_directory()
        if found is None:
            return None
        parent, version = found
        path = parent / f"deploybench-{re.sub(r'[^A-Za-z0-9-]', '-', name)[:40]}-{uuid.uuid4().hex[:6]}"
        path.mkdir()
        limit = str(limit_mb * 1024 * 1024)
        try:
            (path / ("memory.max" if version == 2 else "memory.limit_in_bytes")).write_text(limit)
            if version == 2:
                # No swap either: a serverless container has none, and swapping would hide the kill.
                with contextlib.suppress(OSError):
                    (path / "memory.swap.max").write_text("0")
        except OSError:
            path.rmdir()
            raise
        return cls(path, version, limit_mb)

    def command_prefix(self) -> list[str]:
        return ["/bin/sh", "-c", f'echo $$ > "{self.path / "cgroup.procs"}" && exec "$@"', "memory-capped"]

    def oom_kills(self) -> int:
        """How many processes the kernel killed for exceeding the cap so far."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            text = (self.path / name).read_text(encoding="utf-8")
        except OSError:
            return 0
        match = re.search(r"^oom_kill (\d+)$", text, re.MULTILINE)
        return int(match.group(1)) if match else 0

    def peak_mb(self) -> float | None:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text(encoding="utf-8")) / 1024 / 1024
        except (OSError, ValueError):
            return None

    def remove(self) -> None:
        """Delete the cgroup once its processes are gone (the kernel refuses while any remain)."""
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)


def tagged_caps(tag: str) -> list[Path]:
    """The cgroups named with ``tag`` (one local SageMaker's) that exist now."""
    found = _parent_directory()
    return sorted(found[0].glob(f"deploybench-{tag}-*")) if found is not None else []


def remove_tagged_caps(tag: str) -> list[Path]:
    """Remove this backend's cgroups that are still there and empty; returns those still in use."""
    busy = []
    for path in tagged_caps(tag):
        try:
            path.rmdir()
        except OSError:
            busy.append(path)
    return busy
