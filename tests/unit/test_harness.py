"""The test harness itself: a server that never gets ready is killed and
reported with its log, stops never wait forever, deadlines stretch with
load, and the session can see what is still running."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.harness import backends, deadlines, processes
from tests.harness.inproc import in_process_statekeeper, settings_for
from tests.harness.servers import ManagedProcess, ServerExitedError


@dataclass
class Script(ManagedProcess):
    """A stand-in server: `python -c CODE`, ready when it wrote `ready`."""

    code: str = ""

    def command(self) -> list[str]:
        return [sys.executable, "-c", self.code]

    def is_ready(self) -> bool:
        return (self.data_dir / "ready").exists()


def test_a_server_that_exits_early_is_reported_with_its_log(tmp_path: Path) -> None:
    server = Script(tmp_path, code="print('bad flag --frobnicate'); raise SystemExit(2)")
    with pytest.raises(ServerExitedError) as failed:
        server.start()
    assert "exited early (2)" in str(failed.value)
    assert "bad flag --frobnicate" in str(failed.value)
    assert server.process not in processes.leftovers()


def test_a_server_that_never_gets_ready_is_killed_and_reported(tmp_path: Path) -> None:
    code = "import time; print('stuck in startup', flush=True); time.sleep(600)"
    server = Script(tmp_path, code=code, start_seconds=0.5)
    with pytest.raises(TimeoutError) as failed:
        server.start()
    assert "stuck in startup" in str(failed.value)
    assert server.process is not None and server.process.poll() is not None
    assert server.process not in processes.leftovers()


def test_a_server_that_ignores_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    code = (
        "import pathlib, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
        f" pathlib.Path({str(tmp_path / 'ready')!r}).touch(); time.sleep(600)"
    )
    server = Script(tmp_path, code=code)
    server.start()
    assert server.alive() and server.process in processes.leftovers()
    server.stop(grace=0.2)
    assert not server.alive()
    assert server.process is not None and server.process.returncode == -9
    (tmp_path / "ready").unlink()  # ready again only once SIGTERM is ignored
    server.start()
    with pytest.raises(TimeoutError):  # terminate() insists on a clean exit
        server.terminate(timeout=0.2)
    assert not server.alive()


def test_a_clean_exit_on_sigterm_returns_its_code(tmp_path: Path) -> None:
    code = (
        f"import pathlib, time; pathlib.Path({str(tmp_path / 'ready')!r}).touch(); time.sleep(600)"
    )
    server = Script(tmp_path, code=code)
    server.start()
    assert server.terminate() == -15  # the default SIGTERM action
    assert server.process not in processes.leftovers()


def test_leftovers_are_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "_running", {})  # only this test's processes
    process = processes.spawn(
        [sys.executable, "-c", "import time; time.sleep(600)"], tmp_path / "log"
    )
    assert process in processes.leftovers()
    killed = processes.kill_leftovers()
    assert any("time.sleep(600)" in command for command in killed)
    assert process.poll() is not None and process not in processes.leftovers()


def test_deadlines_stretch_with_load_and_the_factor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (16.0, 0.0, 0.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert deadlines.scaled(10) == pytest.approx(80)
    monkeypatch.setenv(deadlines.FACTOR_ENV, "2")
    assert deadlines.scaled(10) == pytest.approx(160)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.0, 0.0))
    assert deadlines.scaled(10) == pytest.approx(20)  # never shorter than the base


def test_wait_until_fails_with_what_it_waited_for_and_the_details() -> None:
    with pytest.raises(TimeoutError) as failed:
        deadlines.wait_until(lambda: None, 0.1, "the replica to catch up", lambda: "log tail")
    assert "the replica to catch up" in str(failed.value) and "log tail" in str(failed.value)
    assert deadlines.wait_until(lambda: 42, 0.1, "an answer") == 42


@pytest.mark.parametrize("backend", backends.BACKENDS)
def test_the_whole_server_runs_in_process_on_each_backend(tmp_path: Path, backend: str) -> None:
    with backends.backend(backend, kind="inproc") as where:
        settings = settings_for(tmp_path, where, {"key-alpha": "alpha"})
        with (
            in_process_statekeeper(settings) as server,
            grpc.insecure_channel(server.address) as channel,
        ):
            health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            sessions = SessionServiceStub(channel)  # type: ignore[no-untyped-call]
            sessions.CreateSession(
                pb.CreateSessionRequest(session_id="s", session=pb.Session(user_id="u")),
                metadata=[("x-api-key", "key-alpha")],
            )
            got = sessions.GetSession(
                pb.GetSessionRequest(session_id="s"), metadata=[("x-api-key", "key-alpha")]
            )
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert got.session.user_id == "u"


LEAKY_TESTS = """
import subprocess
import sys

from tests.harness import processes

SLEEP = [sys.executable, "-c", "import time; time.sleep(600)", "MARK"]


def test_forgets_a_harness_process(tmp_path):
    processes.spawn(SLEEP, tmp_path / "log")


def test_forgets_a_plain_popen():
    subprocess.Popen(SLEEP)
"""


def test_a_session_that_leaves_processes_behind_fails_and_kills_them(tmp_path: Path) -> None:
    mark = f"leak-{uuid.uuid4().hex}"  # names this test's processes only
    (tmp_path / "test_leaky.py").write_text(LEAKY_TESTS.replace("MARK", mark))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    session = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", str(tmp_path)],
        cwd=processes.REPO,
        env={**os.environ, "PYTHONPATH": str(processes.REPO)},
        capture_output=True,
        text=True,
        timeout=deadlines.scaled(120),
    )
    assert session.returncode == pytest.ExitCode.TESTS_FAILED, session.stdout
    assert "2 passed" in session.stdout
    assert "killed, left running by a test" in session.stdout
    assert "killed, started outside tests.harness" in session.stdout
    assert not [command for command in running_commands() if mark in command]


def running_commands() -> list[str]:
    commands = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            commands.append(cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
    return commands
