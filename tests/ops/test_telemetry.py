"""The access log and the Prometheus endpoint of a real server process
(issue 16): after some calls, /metrics has counted them by service, method
and code, open streams are in flight while they are open, and the log has
one structured INFO line per call (sampled: failures always)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from statekeeper_client.v1 import blackboard_pb2, session_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.harness.deadlines import wait_until
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.processes import free_port
from tests.harness.servers import ServerProcess

SESSIONS = "statekeeper.v1.SessionService"
KEY = [("x-api-key", "key-alpha")]


def scrape(port: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of /metrics by (name, labels)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def access_lines(server: ServerProcess) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in server.log().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("logger") == "statekeeper.access_log"]


def some_calls(address: str) -> None:
    with grpc.insecure_channel(address) as channel:
        sessions = SessionServiceStub(channel)  # type: ignore[no-untyped-call]
        sessions.CreateSession(
            session_pb2.CreateSessionRequest(
                session_id="s1", session=session_pb2.Session(user_id="u1", agent_id="a1")
            ),
            metadata=KEY,
        )
        sessions.GetSession(session_pb2.GetSessionRequest(session_id="s1"), metadata=KEY)
        for request, metadata in (
            (session_pb2.GetSessionRequest(session_id="missing"), KEY),
            (session_pb2.GetSessionRequest(session_id="s1"), [("x-api-key", "wrong")]),
        ):
            with pytest.raises(grpc.RpcError):
                sessions.GetSession(request, metadata=metadata)


def test_metrics_count_calls_by_method_and_code(server: tuple[ServerProcess, int]) -> None:
    proc, port = server
    before = scrape(port)
    some_calls(proc.address)
    get = {"grpc_type": "unary", "grpc_service": SESSIONS, "grpc_method": "GetSession"}
    # A call is counted when the server's handler has finished, which can be
    # just after its client got the status: wait until all three are.
    after = wait_until(
        lambda: (
            (samples := scrape(port))
            and value(samples, "grpc_server_handling_seconds_count", **get)
            - value(before, "grpc_server_handling_seconds_count", **get)
            >= 3
            and samples
        ),
        30,
        "three GetSession calls counted",
    )

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("grpc_server_started_total", **get) == 3
    assert moved("grpc_server_handled_total", **get, grpc_code="OK") == 1
    assert moved("grpc_server_handled_total", **get, grpc_code="NOT_FOUND") == 1
    assert moved("grpc_server_handled_total", **get, grpc_code="UNAUTHENTICATED") == 1
    assert moved("grpc_server_handling_seconds_count", **get) == 3
    create = {**get, "grpc_method": "CreateSession"}
    assert moved("grpc_server_handled_total", **create, grpc_code="OK") == 1
    assert moved("statekeeper_rpc_received_bytes_total", **create) > 0
    assert moved("statekeeper_rpc_sent_bytes_total", **create) > 0
    assert value(after, "statekeeper_vector_indexes_startup_done") == 1
    assert value(after, "statekeeper_serving") == 1
    assert value(after, "statekeeper_build_info", version="0.1.0", tier="embedded") == 1


def test_an_open_stream_is_in_flight_until_it_ends(server: tuple[ServerProcess, int]) -> None:
    proc, port = server
    watch = {
        "grpc_type": "server_stream",
        "grpc_service": "statekeeper.v1.BlackboardService",
        "grpc_method": "Watch",
    }
    with grpc.insecure_channel(proc.address) as channel:
        stream = BlackboardServiceStub(channel).Watch(  # type: ignore[no-untyped-call]
            blackboard_pb2.WatchRequest(board="b", prefix=""), metadata=KEY
        )
        next(stream)  # WatchStarted: the server has the stream open
        assert value(scrape(port), "grpc_server_in_flight", **watch) == 1
        stream.cancel()
    wait_until(
        lambda: value(scrape(port), "grpc_server_in_flight", **watch) == 0, 30, "stream closed"
    )
    samples = scrape(port)
    assert value(samples, "grpc_server_handled_total", **watch, grpc_code="CANCELLED") == 1


def test_access_log_has_one_structured_line_per_call(server: tuple[ServerProcess, int]) -> None:
    proc, _ = server
    some_calls(proc.address)
    lines = wait_until(
        lambda: (found := access_lines(proc)) and len(found) >= 4 and found,
        30,
        "four access log lines",
        proc.log_tail,
    )
    assert [(line["rpc_method"], line["grpc_code"]) for line in lines] == [
        (f"/{SESSIONS}/CreateSession", "OK"),
        (f"/{SESSIONS}/GetSession", "OK"),
        (f"/{SESSIONS}/GetSession", "NOT_FOUND"),
        (f"/{SESSIONS}/GetSession", "UNAUTHENTICATED"),
    ]
    created = lines[0]
    assert created["level"] == "INFO"
    assert created["tenant"] == "alpha" and lines[3]["tenant"] == "-"
    assert str(created["peer"]).startswith("ipv4:127.0.0.1:")
    assert int(str(created["bytes_in"])) > 0 and int(str(created["bytes_out"])) > 0
    assert float(str(created["latency_ms"])) > 0
    # Health probes (the harness polls them) are not logged.
    assert all("grpc.health" not in str(line["rpc_method"]) for line in access_lines(proc))


@pytest.mark.parametrize(
    ("args", "logged"),
    [
        (["--access-log-sample-rate", "0"], ["NOT_FOUND", "UNAUTHENTICATED"]),
        (["--access-log=false"], []),
    ],
)
def test_access_log_sampling_and_switch(tmp_path: Path, args: list[str], logged: list[str]) -> None:
    proc = ServerProcess(tmp_path, extra_args=[*key_args(API_KEYS), *args])
    proc.start()
    try:
        some_calls(proc.address)
        # A marker call after the others: once its effect is visible, the
        # lines of the earlier calls would be too.
        with grpc.insecure_channel(proc.address) as channel, pytest.raises(grpc.RpcError):
            SessionServiceStub(channel).GetSession(  # type: ignore[no-untyped-call]
                session_pb2.GetSessionRequest(session_id="marker"), metadata=KEY
            )
    finally:
        proc.stop()
    codes = [line["grpc_code"] for line in access_lines(proc)]
    assert codes == ([*logged, "NOT_FOUND"] if logged else [])


def test_a_taken_metrics_port_is_one_line(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "statekeeper",
                "serve",
                "--data-dir",
                str(tmp_path),
                "--listen",
                f"127.0.0.1:{free_port()}",
                "--metrics-listen",
                f"127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if '"ERROR"' in line]
    assert len(errors) == 1 and f"cannot serve metrics on 127.0.0.1:{port}" in errors[0]
