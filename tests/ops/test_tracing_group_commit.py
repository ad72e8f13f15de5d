"""Tracing of group commits: the PostgreSQL blackboard commits the writes of
several callers in one transaction from a background task. That task starts
in an empty context, so its database spans are traces of their own, never
children of whichever caller happened to start it (before, every caller's
commit statements landed in the first caller's trace, across tenants too).
A real server on the production tier, a real OTLP collector on loopback."""

from __future__ import annotations

import secrets
import threading
from pathlib import Path

import grpc
from google.protobuf import struct_pb2

from statekeeper_client.v1 import blackboard_pb2, blackboard_pb2_grpc
from tests.harness.backends import production
from tests.harness.deadlines import scaled, wait_until
from tests.ops.test_tracing import Collector, attribute, collector, traced_server  # noqa: F401

PUT = "statekeeper.v1.BlackboardService/PutEntry"
CALLERS = 8


def put_in_trace(address: str, index: int, traces: list[bytes], lock: threading.Lock) -> None:
    trace_id, parent_id = secrets.token_bytes(16), secrets.token_bytes(8)
    with lock:
        traces.append(trace_id)
    value = blackboard_pb2.BlackboardValue(json=struct_pb2.Struct())
    with grpc.insecure_channel(address) as channel:
        stub = blackboard_pb2_grpc.BlackboardServiceStub(channel)  # type: ignore[no-untyped-call]
        for round_ in range(5):
            stub.PutEntry(
                blackboard_pb2.PutEntryRequest(board="b", key=f"k{index}-{round_}", value=value),
                metadata=[("traceparent", f"00-{trace_id.hex()}-{parent_id.hex()}-01")],
            )


def is_commit(span: object) -> bool:
    statement = attribute(span, "db.statement")  # type: ignore[arg-type]
    return isinstance(statement, str) and "bb_commit" in statement


def test_group_commit_spans_are_in_no_callers_trace(
    tmp_path: Path,
    collector: tuple[Collector, int],  # noqa: F811
) -> None:
    received, port = collector
    traces: list[bytes] = []
    lock = threading.Lock()
    with production("trace-group") as where:
        assert where is not None
        server = traced_server(
            tmp_path,
            port,
            "--postgres-dsn",
            where.postgres_dsn,
            "--redis-url",
            where.redis_url,
            "--redis-key-prefix",
            where.redis_prefix,
            "--migrate-on-start",
        )
        try:
            threads = [
                threading.Thread(target=put_in_trace, args=(server.address, n, traces, lock))
                for n in range(CALLERS)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=scaled(60))

            def exported() -> bool:
                with received._lock:
                    spans = list(received.spans)
                puts = [s for s in spans if s.name == PUT]
                return len(puts) == CALLERS * 5 and any(is_commit(s) for s in spans)

            wait_until(exported, scaled(30), "the PutEntry and commit spans")
        finally:
            server.stop()
    with received._lock:
        spans = list(received.spans)
    commits = [s for s in spans if is_commit(s)]
    assert commits, sorted({s.name for s in spans})
    callers = set(traces)
    # No caller's trace holds a commit statement; the commits are roots.
    assert [s for s in commits if s.trace_id in callers] == []
    assert all(s.parent_span_id == b"" for s in commits)
    # Each caller's own calls are still in its trace.
    for trace_id in traces:
        assert len([s for s in spans if s.trace_id == trace_id and s.name == PUT]) == 5
