"""Every process a test starts: spawned through here, in a process group of
its own, logged to a file, and stopped however the test ends.

`spawn` records each process until it has been reaped; `leftovers()` lists
those still alive, which the root conftest checks (and kills) at the end of
the session, and an atexit hook kills whatever a crashed run left behind.
Stopping is SIGTERM to the group, then SIGKILL when the (load-scaled) grace
period runs out, so no stop waits forever and no stop leaves a process.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests.harness.deadlines import scaled

REPO = Path(__file__).resolve().parents[2]
LOG_TAIL_LINES = 80

_running: dict[int, subprocess.Popen[bytes]] = {}


def free_port() -> int:
    """A port free now (another process may still take it before we bind:
    ServerProcess retries on a fresh port when that happens)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def python_module(module: str, *args: str) -> list[str]:
    """The command that runs `python -m module args` with this interpreter."""
    return [sys.executable, "-m", module, *args]


def spawn(
    command: list[str], log_path: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Starts `command` from the repository root, stdout and stderr appended
    to `log_path`, in a new session (its own process group, so stopping it
    also stops anything it started, and a Ctrl-C meant for pytest does not
    kill it before the fixture can)."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    full_env = {**os.environ, "PYTHONPATH": path, **(env or {})}
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=full_env,
            start_new_session=True,
        )
    _running[process.pid] = process
    return process


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def _reaped(process: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    _running.pop(process.pid, None)
    return True


def kill(process: subprocess.Popen[bytes]) -> None:
    """kill -9 of the whole group: no chance to flush or clean up."""
    _signal_group(process, signal.SIGKILL)
    if not _reaped(process, scaled(10)):
        raise RuntimeError(f"process {process.pid} survived SIGKILL")


def terminate(process: subprocess.Popen[bytes], grace_seconds: float = 30.0) -> int | None:
    """SIGTERM, then SIGKILL when it has not exited within the scaled grace
    period. Returns the exit code of a clean exit, None if it had to be killed."""
    if process.poll() is not None:
        _running.pop(process.pid, None)
        return process.returncode
    _signal_group(process, signal.SIGTERM)
    if _reaped(process, scaled(grace_seconds)):
        return process.returncode
    kill(process)
    return None


def leftovers() -> list[subprocess.Popen[bytes]]:
    """Processes spawned here that are still running."""
    for pid, process in list(_running.items()):
        if process.poll() is not None:
            del _running[pid]
    return list(_running.values())


def kill_leftovers() -> list[str]:
    """Kills every process still running; returns their command lines."""
    killed = []
    for process in leftovers():
        killed.append(" ".join(str(arg) for arg in process.args))  # type: ignore[union-attr]
        kill(process)
    return killed


def log_tail(path: Path | None, lines: int = LOG_TAIL_LINES) -> str:
    """The last `lines` lines of a log file, for failure messages."""
    if path is None or not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace").splitlines()
    return f"--- last {min(lines, len(text))} lines of {path} ---\n" + "\n".join(text[-lines:])


atexit.register(kill_leftovers)
