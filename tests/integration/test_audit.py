"""The audit trail: one record per mutation, on both backends, read through
AdminService with filters and paging (and through `statekeeper audit`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2, timestamp_pb2

from statekeeper_client.v1 import admin_pb2, admin_pb2_grpc, common_pb2
from statekeeper_client.v1 import blackboard_pb2 as bb
from statekeeper_client.v1 import message_pb2 as mb
from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from statekeeper_client.v1.message_pb2_grpc import MessageServiceStub
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.e2e.conftest import ServerProcess
from tests.integration.conftest import ServerFactory

KEYS = ["--api-key", "key-alpha=alpha", "--api-key", "key-beta=beta"]
SWEEP = ["--sweep-interval-seconds", "0.2"]
ALPHA = [("x-api-key", "key-alpha")]
BETA = [("x-api-key", "key-beta")]


def user(text: str) -> pb.SessionMessage:
    return pb.SessionMessage(role=pb.ROLE_USER, content=text)


def mixed_workload(stub: SessionServiceStub) -> Counter[str]:
    """Successful mutations by method; failed and replayed calls do not count."""
    done: Counter[str] = Counter()

    def call(method: str, request: Any, counts: Callable[[Any], bool] = bool) -> None:
        try:
            reply = getattr(stub, method)(request, metadata=ALPHA)
        except grpc.RpcError:
            return  # failed calls change nothing and leave no record
        if counts(reply):
            done[method] += 1

    def create(sid: str, ttl: int = 0) -> None:
        session = pb.Session(user_id="u", ttl=duration_pb2.Duration(seconds=ttl))
        call("CreateSession", pb.CreateSessionRequest(session_id=sid, session=session))

    def append(sid: str, text: str, request_id: str) -> None:
        request = pb.AppendMessagesRequest(
            session_id=sid, messages=[user(text)], request_id=request_id
        )
        call("AppendMessages", request, lambda reply: not reply.replayed)

    def update(sid: str, etag: str = "") -> None:
        session = pb.Session(session_id=sid, metadata={"v": etag or "any"})
        call("UpdateSession", pb.UpdateSessionRequest(session=session, expected_etag=etag))

    def compact(sid: str) -> None:
        request = pb.CompactSessionRequest(session_id=sid, keep_recent_messages=2)
        call("CompactSession", request, lambda reply: reply.compacted_message_count > 0)

    for n in range(6):
        sid = f"s{n}"
        create(sid)
        for i in range(5):
            append(sid, f"m{i}", f"{sid}-{i}")
        append(sid, "m0", f"{sid}-0")  # a retry: replayed, not a mutation
        update(sid)
        update(sid, etag='W/"1"')  # stale etag: fails
        compact(sid)
        compact(sid)  # nothing left to fold: a no-op
        call("RollbackSession", pb.RollbackSessionRequest(session_id=sid, target_version=2))
        if n % 2:
            call("DeleteSession", pb.DeleteSessionRequest(session_id=sid))
        call("GetSession", pb.GetSessionRequest(session_id=sid), lambda reply: False)  # a read
    create("s0")  # exists: fails
    for n in range(3):
        create(f"brief{n}", ttl=1)  # swept by the server after a second
    return done


def all_records(
    admin: admin_pb2_grpc.AdminServiceStub, metadata: list[tuple[str, str]], **filters: object
) -> list[admin_pb2.AuditRecord]:
    records: list[admin_pb2.AuditRecord] = []
    token = ""
    while True:
        page = admin.ListAuditRecords(
            admin_pb2.ListAuditRecordsRequest(page_size=7, page_token=token, **filters),
            metadata=metadata,
        )
        records.extend(page.audit_records)
        token = page.next_page_token
        if not token:
            return records


def wait_swept(admin: admin_pb2_grpc.AdminServiceStub, count: int) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if len(all_records(admin, ALPHA, method="SweepExpiredSessions")) >= count:
            return
        time.sleep(0.2)
    raise AssertionError("the sweeper did not delete the expired sessions")


@pytest.fixture(params=["embedded", "production"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> ServerProcess:
    if request.param == "embedded":
        proc = ServerProcess(tmp_path, extra_args=[*KEYS, *SWEEP])
        proc.start()
        request.addfinalizer(proc.kill)
        return proc
    factory: ServerFactory = request.getfixturevalue("production_server")
    return factory(*KEYS, *SWEEP)


def test_audit_records_equal_mutations(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.address) as channel:
        stub = SessionServiceStub(channel)
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        done = mixed_workload(stub)
        wait_swept(admin, 3)
        done["SweepExpiredSessions"] += 3
        records = all_records(admin, ALPHA)
        by_method = Counter(r.method for r in records)
        assert by_method == done
        assert len(records) == sum(done.values())
        assert len({r.audit_id for r in records}) == len(records)
        assert [r.audit_id for r in records] == sorted((r.audit_id for r in records), reverse=True)
        # Who, what, which revision.
        created = next(r for r in records if r.method == "CreateSession" and r.entity_id == "s0")
        assert (created.service, created.entity_type, created.revision) == (
            "statekeeper.v1.SessionService",
            "session",
            1,
        )
        assert created.principal and created.principal not in ("key-alpha", "anonymous")
        swept = [r for r in records if r.method == "SweepExpiredSessions"]
        assert {r.entity_id for r in swept} == {"brief0", "brief1", "brief2"}
        assert {r.principal for r in swept} == {"system"}
        # Filters: entity, method, time window; other tenants see nothing.
        s2 = all_records(admin, ALPHA, entity_id="s2")
        assert [r.revision for r in s2] == sorted((r.revision for r in s2), reverse=True)
        assert {r.entity_id for r in s2} == {"s2"}
        assert len(all_records(admin, ALPHA, method="DeleteSession")) == 3
        future = timestamp_pb2.Timestamp(seconds=int(time.time()) + 3600)
        assert all_records(admin, ALPHA, start_time=future) == []
        assert len(all_records(admin, ALPHA, end_time=future)) == len(records)
        assert all_records(admin, BETA) == []
    print(f"{len(records)} audit records for {sum(done.values())} mutations: {dict(done)}")


def blackboard_workload(stub: BlackboardServiceStub, puts: int) -> Counter[str]:
    """Puts, deletes (one of an absent key: no change), transactions (one
    whose branch is empty: no change) and a key left to expire."""
    value = bb.BlackboardValue(payload=common_pb2.Payload(data=b"v"))
    for n in range(puts):
        stub.PutEntry(bb.PutEntryRequest(board="b", key=f"k{n}", value=value), metadata=ALPHA)
    stub.DeleteEntry(bb.DeleteEntryRequest(board="b", key="k0"), metadata=ALPHA)
    stub.DeleteEntry(bb.DeleteEntryRequest(board="b", key="absent"), metadata=ALPHA)
    both = [bb.TxnOp(put_entry=bb.TxnPut(key=key, value=value)) for key in ("t1", "t2")]
    stub.Txn(bb.TxnRequest(board="b", success=both), metadata=ALPHA)
    stub.Txn(bb.TxnRequest(board="b"), metadata=ALPHA)
    brief = bb.PutEntryRequest(board="b", key="brief", value=value)
    brief.ttl.FromMilliseconds(300)
    stub.PutEntry(brief, metadata=ALPHA)
    return Counter({"PutEntry": puts + 1, "DeleteEntry": 1, "Txn": 1, "ExpireEntries": 1})


def bus_workload(stub: MessageServiceStub, sends: int) -> Counter[str]:
    """Sends (one retried: a duplicate, no change), a reply, acks (one
    repeated: no change), a nack to the dead letters and their redrive."""
    for n in range(sends):
        request = mb.SendMessageRequest(from_agent="a", to_agent="b", request_id=f"r{n}")
        stub.SendMessage(request, metadata=ALPHA)
    stub.SendMessage(request, metadata=ALPHA)  # a retry of the last one
    pulled = stub.PullMessages(mb.PullMessagesRequest(agent_id="b", max_messages=3), metadata=ALPHA)
    handles = [d.receipt_handle for d in pulled.deliveries]
    assert len(handles) == 3
    first = pulled.deliveries[0].message.message_id
    stub.SendReply(mb.SendReplyRequest(request_message_id=first), metadata=ALPHA)
    stub.AckMessages(mb.AckMessagesRequest(receipt_handles=handles[:2]), metadata=ALPHA)
    stub.AckMessages(mb.AckMessagesRequest(receipt_handles=handles[:1]), metadata=ALPHA)
    nack = mb.NackMessagesRequest(receipt_handles=handles[2:], dead_letter=True)
    stub.NackMessages(nack, metadata=ALPHA)
    stub.RedriveDeadLetters(mb.RedriveDeadLettersRequest(agent_id="b"), metadata=ALPHA)
    return Counter(
        {
            "SendMessage": sends,
            "SendReply": 1,
            "AckMessages": 2,
            "NackMessages": 1,
            "RedriveDeadLetters": 1,
        }
    )


def wait_records(
    admin: admin_pb2_grpc.AdminServiceStub, count: int, **filters: object
) -> list[admin_pb2.AuditRecord]:
    deadline = time.monotonic() + 15
    while len(records := all_records(admin, ALPHA, **filters)) < count:
        assert time.monotonic() < deadline, f"{len(records)} records, expected {count}"
        time.sleep(0.2)
    return records


def test_blackboard_and_bus_mutations_are_audited(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.address) as channel:
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        done = blackboard_workload(BlackboardServiceStub(channel), puts=25)
        sent = bus_workload(MessageServiceStub(channel), sends=17)
        # The expiry sweeper's record comes a moment later.
        everything = wait_records(admin, sum(done.values()) + sum(sent.values()))
        assert Counter(r.method for r in everything) == done + sent
        assert all_records(admin, BETA) == []
        records = all_records(admin, ALPHA, entity_type="blackboard")
        # One record per revision, each naming it and what it changed.
        assert sorted(r.revision for r in records) == list(range(1, len(records) + 1))
        txn = next(r for r in records if r.method == "Txn")
        assert (txn.service, txn.entity_id, txn.summary) == (
            "statekeeper.v1.BlackboardService",
            "b",
            "put t1; put t2",
        )
        expired = next(r for r in records if r.method == "ExpireEntries")
        assert (expired.principal, expired.summary) == ("system", "expired brief")
        put = next(r for r in records if r.method == "PutEntry")
        assert put.principal not in ("", "system", "anonymous")
        bus = {r.method: r for r in everything if r.service == "statekeeper.v1.MessageService"}
        assert (bus["SendMessage"].entity_type, bus["SendMessage"].summary) == (
            "message",
            "sent to b",
        )
        assert bus["SendReply"].summary == "sent to a"
        assert bus["NackMessages"].summary == "dead-lettered"
        assert (bus["RedriveDeadLetters"].entity_id, bus["RedriveDeadLetters"].summary) == (
            "b",
            "redrove 1 dead letters",
        )


def test_audit_cli_reads_the_store(tmp_path: Path) -> None:
    proc = ServerProcess(tmp_path, extra_args=KEYS)
    proc.start()
    try:
        with grpc.insecure_channel(proc.address) as channel:
            stub = SessionServiceStub(channel)
            stub.CreateSession(
                pb.CreateSessionRequest(session_id="c1", session=pb.Session(user_id="u")),
                metadata=BETA,
            )
            stub.DeleteSession(pb.DeleteSessionRequest(session_id="c1"), metadata=BETA)
    finally:
        proc.terminate()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "statekeeper",
            "audit",
            "list",
            "--data-dir",
            str(tmp_path),
            "--tenant",
            "beta",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(r["method"], r["entity_id"], r["tenant"]) for r in lines] == [
        ("DeleteSession", "c1", "beta"),
        ("CreateSession", "c1", "beta"),
    ]
