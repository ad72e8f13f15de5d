"""The state metrics of issue 16 on a real server process: open blackboard
watches, store call latencies by store and method, vector index sizes, the
sweeper's last run, the bus queue depths by state (sampled from the
store), Redis errors counted while the cache is unreachable, and the
blackboard feed's lag between two production replicas."""

from __future__ import annotations

import json
import re
import threading
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from statekeeper_client.v1 import (
    blackboard_pb2,
    common_pb2,
    memory_pb2,
    message_pb2,
    session_pb2,
)
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from statekeeper_client.v1.memory_pb2_grpc import MemoryServiceStub
from statekeeper_client.v1.message_pb2_grpc import MessageServiceStub
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.harness.backends import production
from tests.harness.deadlines import scaled, wait_until
from tests.harness.processes import REPO, free_port
from tests.harness.servers import ServerProcess
from tests.ops.test_telemetry import scrape, value

DIMENSION = 8
SWEEPERS = ("sessions", "bus", "blackboard_expiry", "checkpoints")


def serve(data_dir: Path, *extra: str) -> tuple[ServerProcess, int]:
    port = free_port()
    server = ServerProcess(
        data_dir,
        extra_args=[
            "--metrics-listen",
            f"127.0.0.1:{port}",
            "--metrics-sample-interval-seconds",
            "0.2",
            "--sweep-interval-seconds",
            "0.2",
            *extra,
        ],
    )
    server.start()
    return server, port


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[tuple[ServerProcess, int]]:
    server, port = serve(tmp_path)
    try:
        yield server, port
    finally:
        server.stop()


Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape_until(port: int, ready: Callable[[Samples], bool], what: str) -> Samples:
    """The first scrape for which `ready` holds (load-scaled wait)."""

    def attempt() -> Samples | None:
        samples = scrape(port)
        return samples if ready(samples) else None

    return wait_until(attempt, scaled(30), what)


def open_watch(channel: grpc.Channel) -> tuple[threading.Event, threading.Thread]:
    """A Watch kept open on a thread until the returned event is set."""
    stop = threading.Event()
    stream = BlackboardServiceStub(channel).Watch(blackboard_pb2.WatchRequest(board="b"))

    def run() -> None:
        try:
            for _ in stream:
                if stop.is_set():
                    break
        except grpc.RpcError:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    stop_and_cancel = threading.Event()

    def closer() -> None:
        stop_and_cancel.wait()
        stream.cancel()

    threading.Thread(target=closer, daemon=True).start()
    return stop_and_cancel, thread


def test_watchers_store_latency_indexes_sweeper_and_bus_depths(
    embedded: tuple[ServerProcess, int],
) -> None:
    server, port = embedded
    with grpc.insecure_channel(server.address) as channel:
        SessionServiceStub(channel).CreateSession(
            session_pb2.CreateSessionRequest(
                session_id="s1", session=session_pb2.Session(user_id="u1")
            )
        )
        memory = MemoryServiceStub(channel)
        for seed in range(5):
            memory.RecordEpisode(
                memory_pb2.RecordEpisodeRequest(
                    user_id="u1",
                    user_message=f"q{seed}",
                    assistant_response=f"a{seed}",
                    embedding=[1.0 if i == seed else 0.0 for i in range(DIMENSION)],
                )
            )
        memory.Recall(
            memory_pb2.RecallRequest(
                user_id="u1", query_vector=memory_pb2.QueryVector(values=[1.0] * DIMENSION)
            )
        )
        bus = MessageServiceStub(channel)
        for number in range(3):
            bus.SendMessage(
                message_pb2.SendMessageRequest(
                    to_agent="worker",
                    payload=common_pb2.Payload(data=b"x"),
                    request_id=f"m{number}",
                )
            )
        bus.PullMessages(message_pb2.PullMessagesRequest(agent_id="worker", max_messages=1))
        cancel, thread = open_watch(channel)
        try:
            watching = scrape_until(
                port,
                lambda s: value(s, "statekeeper_blackboard_watchers") == 1,
                "one open watch counted",
            )
            samples = scrape_until(
                port,
                lambda s: value(s, "statekeeper_bus_messages", state="ready") == 2,
                "the bus depths sampled",
            )
        finally:
            cancel.set()
            thread.join(timeout=scaled(10))
        wait_until(
            lambda: value(scrape(port), "statekeeper_blackboard_watchers") == 0,
            scaled(30),
            "the closed watch uncounted",
        )
        # Every background sweeper has run (the bus sweeps each second).
        samples = scrape_until(
            port,
            lambda s: all(
                ("statekeeper_sweeper_last_run_age_seconds", frozenset({("sweeper", name)})) in s
                for name in SWEEPERS
            ),
            "every sweeper's first run",
        )
    assert value(watching, "statekeeper_blackboard_watchers") == 1
    assert value(samples, "statekeeper_bus_messages", state="in_flight") == 1
    assert value(samples, "statekeeper_bus_messages", state="dead") == 0
    assert value(samples, "statekeeper_vector_index_vectors") == 5
    assert value(samples, "statekeeper_vector_index_tombstones") == 0
    for sweeper in SWEEPERS:
        age = samples[
            ("statekeeper_sweeper_last_run_age_seconds", frozenset({("sweeper", sweeper)}))
        ]
        assert 0 <= age < scaled(30), sweeper
    timed = {
        dict(labels)["store"]
        for (name, labels), count in samples.items()
        if name == "statekeeper_store_seconds_count" and count > 0
    }
    assert {"sessions", "memory", "bus"} <= timed, timed
    created = value(
        samples, "statekeeper_store_seconds_count", store="sessions", method="create_session"
    )
    assert created == 1


def test_redis_errors_are_counted_while_the_cache_is_unreachable(tmp_path: Path) -> None:
    """A production server whose Redis does not answer serves from
    PostgreSQL and counts the failed Redis calls."""
    with production("metrics") as where:
        closed = f"redis://127.0.0.1:{free_port()}/0"
        server, port = serve(
            tmp_path,
            "--postgres-dsn",
            where.postgres_dsn,
            "--redis-url",
            closed,
            "--migrate-on-start",
            "--workers",
            "1",
        )
        try:
            with grpc.insecure_channel(server.address) as channel:
                sessions = SessionServiceStub(channel)
                sessions.CreateSession(
                    session_pb2.CreateSessionRequest(
                        session_id="s1", session=session_pb2.Session(user_id="u1")
                    )
                )
                sessions.GetSession(session_pb2.GetSessionRequest(session_id="s1"))
            samples = scrape(port)
        finally:
            server.stop()
    redis_errors = sum(
        count
        for (name, labels), count in samples.items()
        if name == "statekeeper_store_errors_total" and dict(labels)["system"] == "redis"
    )
    assert redis_errors >= 1
    assert not any(
        dict(labels).get("system") == "postgresql"
        for (name, labels), _ in samples.items()
        if name == "statekeeper_store_errors_total"
    )


def test_feed_lag_between_two_production_replicas(tmp_path: Path) -> None:
    """A put on one replica reaches a watch on the other through the Redis
    feed; the receiving replica observes the lag."""
    with production("lag") as where:
        args = (
            "--postgres-dsn",
            where.postgres_dsn,
            "--redis-url",
            where.redis_url,
            "--redis-key-prefix",
            where.redis_prefix,
            "--migrate-on-start",
            "--workers",
            "1",
        )
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        writer, _ = serve(tmp_path / "a", *args)
        reader, reader_port = serve(tmp_path / "b", *args)
        try:
            with (
                grpc.insecure_channel(writer.address) as write_channel,
                grpc.insecure_channel(reader.address) as read_channel,
            ):
                events = BlackboardServiceStub(read_channel).Watch(
                    blackboard_pb2.WatchRequest(board="b")
                )
                wait_until(
                    lambda: value(scrape(reader_port), "statekeeper_blackboard_watchers") == 1,
                    scaled(30),
                    "the watch open on the reader",
                )
                BlackboardServiceStub(write_channel).PutEntry(
                    blackboard_pb2.PutEntryRequest(
                        board="b",
                        key="k",
                        value=blackboard_pb2.BlackboardValue(payload=common_pb2.Payload(data=b"v")),
                    )
                )
                for response in events:
                    if response.WhichOneof("kind") == "events":
                        break
                events.cancel()
            samples = scrape_until(
                reader_port,
                lambda s: value(s, "statekeeper_feed_lag_seconds_count", feed="blackboard") >= 1,
                "the feed lag observed",
            )
        finally:
            writer.stop()
            reader.stop()
    total = value(samples, "statekeeper_feed_lag_seconds_sum", feed="blackboard")
    assert 0 <= total < scaled(30)


DASHBOARD = REPO / "deploy/grafana/dashboards/statekeeper.json"


def dashboard_metrics() -> set[str]:
    """The metric names the Grafana dashboard's queries read."""
    panels = json.loads(DASHBOARD.read_text())["panels"]
    names = set()
    for panel in panels:
        for target in panel["targets"]:
            names |= set(re.findall(r"\b(?:grpc_server|statekeeper)_\w+", target["expr"]))
    return names


def test_every_dashboard_query_reads_a_metric_the_server_serves(tmp_path: Path) -> None:
    with production("dash") as where:
        server, port = serve(
            tmp_path,
            "--postgres-dsn",
            where.postgres_dsn,
            "--redis-url",
            where.redis_url,
            "--redis-key-prefix",
            where.redis_prefix,
            "--migrate-on-start",
            "--workers",
            "1",
        )
        try:
            with grpc.insecure_channel(server.address) as channel:
                SessionServiceStub(channel).CreateSession(
                    session_pb2.CreateSessionRequest(
                        session_id="s1", session=session_pb2.Session(user_id="u1")
                    )
                )
            text = scrape_text(port)
        finally:
            server.stop()
    served = set()
    for family in text_string_to_metric_families(text):
        served.add(family.name)
        served |= {sample.name for sample in family.samples}
    # A counter family is named without _total; histograms have _bucket.
    served |= {f"{name}_total" for name in served} | {f"{name}_bucket" for name in served}
    missing = dashboard_metrics() - served
    assert not missing, missing
    assert len(dashboard_metrics()) >= 20


def scrape_text(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text: str = reply.read().decode()
    return text
