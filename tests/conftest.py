"""Shared by every suite: the fake clock, and the check that the session
leaves no process behind.

Servers for tests start through tests.harness, which records every process
it spawns; at the end of the session any still running is killed and the
session fails, naming them. Direct children of pytest started some other way
are reported the same way, so a leak cannot hide behind a plain Popen.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.clock import FakeClock
from tests.harness import processes


@pytest.fixture
def clock() -> FakeClock:
    """Test time that only moves when told to."""
    return FakeClock()


def live_children(pid: int) -> list[str]:
    """Command lines of the running (not zombie) children of `pid` (Linux /proc;
    nothing where there is none)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):  # exited meanwhile
            continue
        state, parent = fields[0], int(fields[1])
        if parent == pid and state != "Z":
            found.append(cmdline.replace(b"\0", b" ").decode(errors="replace").strip())
    return found


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    killed = processes.kill_leftovers()
    strays = live_children(os.getpid())
    if not killed and not strays:
        return
    lines = [f"killed, left running by a test: {command}" for command in killed]
    lines += [f"still running, started outside tests.harness: {command}" for command in strays]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.section("processes left behind", sep="!", red=True)
        for line in lines:
            reporter.line(line, red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
