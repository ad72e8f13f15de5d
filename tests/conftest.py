"""Shared by every suite: the fake clock, and the check that the session
leaves no process behind.

Servers for tests start through tests.harness, which records every process
it spawns; at the end of the session any still running is killed and the
session fails, naming them. Direct children of pytest started some other way
are killed and reported the same way, so a leak cannot hide behind a plain
Popen.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from tests.fakes.clock import FakeClock
from tests.harness import processes


@pytest.fixture
def clock() -> FakeClock:
    """Test time that only moves when told to."""
    return FakeClock()


# Helpers multiprocessing keeps for the life of the interpreter, by design.
INTERPRETER_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def live_children(pid: int) -> dict[int, str]:
    """Pid and command line of each running (not zombie) child of `pid`, other
    than interpreter helpers (Linux /proc; nothing where there is none)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):  # exited meanwhile
            continue
        state, parent = fields[0], int(fields[1])
        command = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
        if parent == pid and state != "Z" and not any(h in command for h in INTERPRETER_HELPERS):
            found[int(stat.parent.name)] = command
    return found


def kill_strays(strays: dict[int, str]) -> None:
    for pid in strays:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    killed = processes.kill_leftovers()
    strays = live_children(os.getpid())
    if not killed and not strays:
        return
    lines = [f"killed, left running by a test: {command}" for command in killed]
    lines += [f"killed, started outside tests.harness: {command}" for command in strays.values()]
    kill_strays(strays)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.section("processes left behind", sep="!", red=True)
        for line in lines:
            reporter.line(line, red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
