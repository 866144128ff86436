"""Bound process groups end with their owner (even on SIGKILL); recorded ones whose owner is gone are reaped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from workflows.errors import RunInterrupted
from workflows.local.interrupts import signals_raise
from workflows.processes import groups, lifeline
from workflows.processes.guardian import group_members

ROOT = Path(__file__).resolve().parents[2]
# An owner process: it starts one bound group (a shell with a background child, as MMS leaves a
# JVM) from a thread that exits at once, prints the group id, and then only sleeps.
OWNER = textwrap.dedent(
    """
    import subprocess, sys, threading, time
    from workflows.processes import lifeline
    started = []
    def start():
        command, fds = lifeline.bound(["/bin/sh", "-c", "sleep 120 & sleep 120"])
        started.append(subprocess.Popen(command, start_new_session=True, pass_fds=fds))
    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    print(started[0].pid, flush=True)
    time.sleep(120)
    """
)


def _wait_until(predicate: Callable[[], object], deadline_s: float) -> bool:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


@pytest.fixture
def owner() -> Iterator[tuple[subprocess.Popen[str], int]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    pgid = int(process.stdout.readline())
    assert _wait_until(lambda: len(group_members(pgid)) >= 3, 10), "guardian, shell and sleeps"
    yield process, pgid
    process.kill()
    process.wait()
    if group_members(pgid):
        os.killpg(pgid, signal.SIGKILL)


def test_a_bound_group_outlives_the_thread_that_started_it_while_its_owner_lives(owner):
    # Given an owner whose starting thread has exited (PR_SET_PDEATHSIG would have fired here)
    process, pgid = owner
    # When a second passes
    time.sleep(1.0)
    # Then the group still runs
    assert process.poll() is None
    assert len(group_members(pgid)) >= 3


def test_a_bound_group_dies_with_its_owner_on_sigkill(owner):
    # Given a running bound group, background child included
    process, pgid = owner
    # When its owner is killed outright
    process.send_signal(signal.SIGKILL)
    process.wait()
    # Then every process of the group is gone within seconds
    assert _wait_until(lambda: not group_members(pgid), 5), group_members(pgid)


def test_the_guardian_ends_as_its_command_did():
    # Given commands that exit 3 and that die of SIGKILL
    for script, expected in (("exit 3", 3), ("kill -9 $$", -signal.SIGKILL)):
        command, fds = lifeline.bound(["/bin/sh", "-c", script])
        # When they run under the guardian
        code = subprocess.Popen(command, start_new_session=True, pass_fds=fds).wait(timeout=30)
        # Then the caller reads the command's own status
        assert code == expected, script


def test_the_guardian_kills_what_its_command_left_in_the_group():
    # Given a command that leaves a background child behind when it exits
    command, fds = lifeline.bound(["/bin/sh", "-c", "sleep 120 & exit 0"])
    process = subprocess.Popen(command, start_new_session=True, pass_fds=fds)
    # When it ends
    assert process.wait(timeout=30) == 0
    # Then nothing of its group is left
    assert _wait_until(lambda: not group_members(process.pid), 5)


def _dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def test_a_recorded_group_whose_owner_is_gone_is_reaped_and_said(tmp_path, monkeypatch):
    # Given a running group recorded by an owner that no longer exists (its guardian killed too)
    monkeypatch.setenv("DEPLOYBENCH_CACHE_DIR", str(tmp_path))
    leftover = subprocess.Popen(["/bin/sh", "-c", "sleep 120 & sleep 120"], start_new_session=True)
    assert _wait_until(lambda: len(group_members(leftover.pid)) == 3, 5)
    groups.set_run("run-1", tmp_path / "results" / "run-1")
    path = groups.record(leftover.pid, what="container ep/primary")
    body = json.loads(path.read_text())
    path.write_text(json.dumps({**body, "owner_pid": _dead_pid()}))
    # And a group this process still owns
    mine = subprocess.Popen(["sleep", "120"], start_new_session=True)
    groups.record(mine.pid, what="processing job live")
    try:
        # When the janitor lists, then reaps
        listed = groups.reap(dry_run=True)
        reaped = groups.reap()
        # Then the dry run killed nothing, the reap killed the whole group and says so
        assert [r.pgid for r in listed] == [leftover.pid] and len(listed[0].processes) == 3
        assert [r.pgid for r in reaped] == [leftover.pid]
        assert "reaped process group" in reaped[0].line() and "run-1" in reaped[0].line()
        leftover.wait(timeout=5)
        assert _wait_until(lambda: not group_members(leftover.pid), 5)
        # And the owned group is untouched, its record kept; the reaped record is gone
        assert mine.poll() is None
        assert groups.owned() == [mine.pid]
        assert groups.reap() == []
    finally:
        groups.clear_run()
        mine.kill()
        mine.wait()
        groups.forget(mine.pid)
        if group_members(leftover.pid):
            os.killpg(leftover.pid, signal.SIGKILL)


def test_sigterm_and_sighup_raise_like_ctrl_c_and_a_second_signal_does_not_cut_teardown():
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        # Given a run inside the handlers
        with pytest.raises(RunInterrupted) as raised, signals_raise() as guard:
            # When the signal arrives
            os.kill(os.getpid(), signum)
            time.sleep(1.0)
        # Then it is raised as an interruption with its exit code's signal
        assert raised.value.signum == signum
        assert guard.received == [signum]
    # Given teardown under way
    with signals_raise() as guard:
        guard.hold()
        # When another signal arrives
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)
    # Then it is noted, not raised; and the default handler is back afterwards
    assert guard.received == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


WATCHING_OWNER = textwrap.dedent(
    """
    import os, subprocess, sys, time
    from workflows.processes import lifeline
    code = "from workflows.processes import lifeline; lifeline.watch_from_environment(); import time; time.sleep(120)"
    env, fds = lifeline.child_environment(dict(os.environ))
    child = subprocess.Popen([sys.executable, "-c", code], env=env, pass_fds=fds, start_new_session=True)
    print(child.pid, flush=True)
    time.sleep(120)
    """
)


def test_a_child_that_watches_its_lifeline_dies_with_its_owner_on_sigkill() -> None:
    # Given a deploybench child (as the bounded conversion pass) watching its owner's lifeline, no thread
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    owner = subprocess.Popen(
        [sys.executable, "-c", WATCHING_OWNER], stdout=subprocess.PIPE, text=True, env=env
    )
    assert owner.stdout is not None
    child = int(owner.stdout.readline())
    try:
        time.sleep(1.0)
        assert group_members(child) == [child]
        # When the owner is killed outright
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        # Then the child is gone within seconds
        assert _wait_until(lambda: not group_members(child), 5), group_members(child)
    finally:
        owner.kill()
        owner.wait()
        if group_members(child):
            os.killpg(child, signal.SIGKILL)


def test_a_watching_child_leaves_the_guardians_lifeline_blocking() -> None:
    # Given a bound group, and then a deploybench child that watches the same lifeline
    command, fds = lifeline.bound(["sleep", "120"])
    guarded = subprocess.Popen(command, start_new_session=True, pass_fds=fds)
    env, child_fds = lifeline.child_environment(dict(os.environ, PYTHONPATH=str(ROOT)))
    code = "from workflows.processes import lifeline; lifeline.watch_from_environment()"
    try:
        # When the child sets up its watch and exits
        subprocess.run([sys.executable, "-c", code], env=env, pass_fds=child_fds, check=True, timeout=60)
        time.sleep(0.5)
        # Then the guardian's group runs on (its watch did not mistake the change for its owner's end)
        assert guarded.poll() is None
        assert len(group_members(guarded.pid)) == 2
    finally:
        os.killpg(guarded.pid, signal.SIGKILL)
        guarded.wait()
