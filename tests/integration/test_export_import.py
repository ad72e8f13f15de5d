"""`statekeeper export` then `statekeeper import` into an empty deployment
reproduces every read byte for byte, on both backends (issue 16).

A tenant is filled through the gRPC API of a real `statekeeper serve` on
every capability (sessions with messages and versions, memory episodes,
facts and predicates, checkpoints with channels and writes, a workflow
with a completed step, blackboard keys with history, bus messages and a
dead letter, items, the audit trail); everything is read back through the
API and serialized; the tenant is exported with the CLI, imported with
the CLI into another data dir (another PostgreSQL database and Redis
prefix), served by a new server, read again and compared exactly. Another
tenant of the source stays behind. Also: a per-user export, the refusal of
a tenant with data, an interrupted import continued by a re-run, a corrupt
file refused, and `statekeeper inspect` on the imported store.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import gzip
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2, struct_pb2, text_format
from google.protobuf.message import Message

from statekeeper_client.v1 import (
    admin_pb2,
    blackboard_pb2,
    checkpoint_pb2,
    common_pb2,
    items_pb2,
    memory_pb2,
    message_pb2,
    session_pb2,
)
from statekeeper_client.v1.admin_pb2_grpc import AdminServiceStub
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from statekeeper_client.v1.checkpoint_pb2_grpc import CheckpointServiceStub
from statekeeper_client.v1.items_pb2_grpc import ItemServiceStub
from statekeeper_client.v1.memory_pb2_grpc import MemoryServiceStub
from statekeeper_client.v1.message_pb2_grpc import MessageServiceStub
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.harness.backends import production_args, redis_prefix
from tests.harness.deadlines import scaled
from tests.harness.processes import REPO
from tests.harness.servers import ServerProcess
from tests.services import Services, configured, create_database, drop_database, reachable

TENANT, OTHER = "acme", "globex"
KEYS = {"key-acme": TENANT, "key-globex": OTHER}
DIMENSION = 8
HOUR = duration_pb2.Duration(seconds=3600)


@dataclass
class Store:
    """Where one deployment keeps its data: the CLI's store flags and the
    server's."""

    data_dir: Path
    dsn: str = ""
    redis_url: str = ""
    prefix: str = ""

    def store_args(self) -> list[str]:
        if self.dsn:
            return ["--postgres-dsn", self.dsn]
        return ["--data-dir", str(self.data_dir)]

    def import_args(self) -> list[str]:
        if self.dsn:
            return [
                *self.store_args(),
                "--redis-url",
                self.redis_url,
                "--redis-key-prefix",
                self.prefix,
            ]
        return self.store_args()

    def server(self) -> ServerProcess:
        args = [arg for key, tenant in KEYS.items() for arg in ("--api-key", f"{key}={tenant}")]
        if self.dsn:
            args += production_args(self.dsn, self.redis_url, self.prefix)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        server = ServerProcess(self.data_dir, extra_args=args)
        server.start()
        return server


@pytest.fixture(params=["embedded", "production"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], Store]]:
    """A factory of empty deployments of the parametrized backend."""
    created: list[str] = []
    services: Services | None = None
    if request.param == "production":
        services = configured()
        asyncio.run(reachable(services))

    def make(name: str) -> Store:
        directory = tmp_path / name
        if services is None:
            return Store(directory)
        dsn = asyncio.run(create_database(services))
        created.append(dsn)
        return Store(directory, dsn, services.redis_url, redis_prefix("exp"))

    try:
        yield make
    finally:
        if services is not None:
            for dsn in created:
                asyncio.run(drop_database(services, dsn))


@contextlib.contextmanager
def running(store: Store) -> Iterator[grpc.Channel]:
    server = store.server()
    try:
        with grpc.insecure_channel(server.address) as channel:
            yield channel
    finally:
        server.stop()


def key(name: str) -> list[tuple[str, str]]:
    return [("x-api-key", name)]


ACME = key("key-acme")


def vector(seed: int) -> list[float]:
    return [1.0 if i == seed % DIMENSION else 0.05 * (seed + 1) for i in range(DIMENSION)]


def payload(text: str) -> common_pb2.Payload:
    return common_pb2.Payload(content_type="application/json", data=json.dumps(text).encode())


def fill(channel: grpc.Channel) -> None:
    """Writes tenant acme on every capability (and a little of globex)."""
    sessions = SessionServiceStub(channel)
    for number, user in enumerate(("alice", "alice", "bob")):
        session_id = f"s-{number}"
        context = struct_pb2.Struct()
        context.update({"step": number, "topic": "export", "nested": {"ok": True}})
        sessions.CreateSession(
            session_pb2.CreateSessionRequest(
                session_id=session_id,
                session=session_pb2.Session(
                    user_id=user,
                    agent_id="planner",
                    metadata={"team": "red", "n": str(number)},
                    context_variables=context,
                    ttl=duration_pb2.Duration(seconds=86400),
                ),
            ),
            metadata=ACME,
        )
        for turn in range(3):
            sessions.AppendMessages(
                session_pb2.AppendMessagesRequest(
                    session_id=session_id,
                    request_id=f"append-{number}-{turn}",
                    messages=[
                        session_pb2.SessionMessage(
                            role=session_pb2.ROLE_USER, content=f"question {turn} to {user}"
                        ),
                        session_pb2.SessionMessage(
                            role=session_pb2.ROLE_ASSISTANT,
                            content=f"answer {turn} — ünïcode ✓",
                            metadata={"turn": str(turn)},
                        ),
                    ],
                ),
                metadata=ACME,
            )
    sessions.CreateSession(
        session_pb2.CreateSessionRequest(
            session_id="g-1", session=session_pb2.Session(user_id="zed")
        ),
        metadata=key("key-globex"),
    )
    memory = MemoryServiceStub(channel)
    memory.DeclarePredicate(
        memory_pb2.DeclarePredicateRequest(name="lives_in", single_valued=True, description="home"),
        metadata=ACME,
    )
    for seed in range(6):
        memory.RecordEpisode(
            memory_pb2.RecordEpisodeRequest(
                user_id="alice" if seed < 4 else "bob",
                session_id="s-0",
                user_message=f"where is the red{seed} harbour",
                assistant_response=f"the harbour number {seed} is north",
                embedding=vector(seed),
                metadata={"seed": str(seed)},
            ),
            metadata=ACME,
        )
    added = memory.AddFacts(
        memory_pb2.AddFactsRequest(
            user_id="alice",
            facts=[
                memory_pb2.FactInput(subject="alice", predicate="lives_in", object="Lisbon"),
                memory_pb2.FactInput(subject="alice", predicate="likes", object="sailing"),
            ],
        ),
        metadata=ACME,
    )
    memory.AddFacts(
        memory_pb2.AddFactsRequest(
            user_id="alice",
            facts=[memory_pb2.FactInput(subject="alice", predicate="lives_in", object="Porto")],
        ),
        metadata=ACME,
    )
    assert len(added.results) == 2
    checkpoints = CheckpointServiceStub(channel)
    parent = ""
    for step in range(3):
        saved = checkpoints.SaveCheckpoint(
            checkpoint_pb2.SaveCheckpointRequest(
                checkpoint=checkpoint_pb2.Checkpoint(
                    execution_id="run-1",
                    parent_checkpoint_id=parent,
                    step=step,
                    step_name=f"node-{step}",
                    run_id="r-1",
                    state=payload(f"state {step}"),
                    channels={
                        "messages": checkpoint_pb2.ChannelValue(
                            version=str(step + 1), value=payload(f"messages {step}")
                        ),
                        "fixed": checkpoint_pb2.ChannelValue(version="1", value=payload("fixed")),
                    },
                )
            ),
            metadata=ACME,
        )
        parent = saved.checkpoint_id
        checkpoints.PutWrites(
            checkpoint_pb2.PutWritesRequest(
                execution_id="run-1",
                checkpoint_id=parent,
                task_id=f"task-{step}",
                task_path="~",
                writes=[checkpoint_pb2.WriteInput(index=0, channel="messages", value=payload("w"))],
            ),
            metadata=ACME,
        )
    checkpoints.StartWorkflow(
        checkpoint_pb2.StartWorkflowRequest(
            workflow_id="wf-1",
            steps=[
                checkpoint_pb2.WorkflowStepSpec(
                    step_id="fetch", name="fetch", inputs=payload("in")
                ),
                checkpoint_pb2.WorkflowStepSpec(
                    step_id="parse", name="parse", depends_on=["fetch"]
                ),
                checkpoint_pb2.WorkflowStepSpec(
                    step_id="store", name="store", depends_on=["parse"]
                ),
            ],
        ),
        metadata=ACME,
    )
    claimed = checkpoints.ClaimSteps(
        checkpoint_pb2.ClaimStepsRequest(
            workflow_id="wf-1", worker_id="w-1", max_steps=1, lease_duration=HOUR
        ),
        metadata=ACME,
    )
    step = claimed.steps[0]
    checkpoints.CompleteStep(
        checkpoint_pb2.CompleteStepRequest(
            workflow_id="wf-1",
            step_id=step.step.step_id,
            lease_id=step.lease_id,
            outputs=payload("o"),
        ),
        metadata=ACME,
    )
    checkpoints.ClaimSteps(
        checkpoint_pb2.ClaimStepsRequest(
            workflow_id="wf-1", worker_id="w-2", max_steps=1, lease_duration=HOUR
        ),
        metadata=ACME,
    )
    board = BlackboardServiceStub(channel)
    for revision in range(4):
        for name in ("plan", "status", "notes/a", "notes/b"):
            value = struct_pb2.Struct()
            value.update({"v": revision, "k": name})
            board.PutEntry(
                blackboard_pb2.PutEntryRequest(
                    board="team",
                    key=name,
                    value=blackboard_pb2.BlackboardValue(json=value),
                    writer_agent_id=f"agent-{revision}",
                ),
                metadata=ACME,
            )
    board.DeleteEntry(blackboard_pb2.DeleteEntryRequest(board="team", key="notes/b"), metadata=ACME)
    board.PutEntry(
        blackboard_pb2.PutEntryRequest(
            board="other",
            key="bin",
            value=blackboard_pb2.BlackboardValue(
                payload=common_pb2.Payload(
                    content_type="application/octet-stream", data=bytes(range(256))
                )
            ),
        ),
        metadata=ACME,
    )
    bus = MessageServiceStub(channel)
    for number in range(4):
        bus.SendMessage(
            message_pb2.SendMessageRequest(
                from_agent="planner",
                to_agent="worker",
                type="task",
                payload=payload(f"task {number}"),
                headers={"n": str(number)},
                request_id=f"send-{number}",
                correlation_id=f"c-{number}",
            ),
            metadata=ACME,
        )
    bus.SendMessage(
        message_pb2.SendMessageRequest(
            from_agent="planner", to_agent="sink", type="bad", payload=payload("poison")
        ),
        metadata=ACME,
    )
    pulled = bus.PullMessages(
        message_pb2.PullMessagesRequest(agent_id="sink", max_messages=1, visibility_timeout=HOUR),
        metadata=ACME,
    )
    bus.NackMessages(
        message_pb2.NackMessagesRequest(
            receipt_handles=[d.receipt_handle for d in pulled.deliveries],
            dead_letter=True,
            reason="cannot parse",
        ),
        metadata=ACME,
    )
    items = ItemServiceStub(channel)
    for number in range(5):
        items.PutItem(
            items_pb2.PutItemRequest(
                namespace=["users", "alice" if number % 2 else "bob", "prefs"],
                key=f"k{number}",
                value_json=json.dumps({"n": number, "text": f"item {number}"}),
            ),
            metadata=ACME,
        )


def reads(channel: grpc.Channel) -> dict[str, bytes]:
    """Every read of tenant acme, serialized (deterministically)."""
    sessions = SessionServiceStub(channel)
    memory = MemoryServiceStub(channel)
    checkpoints = CheckpointServiceStub(channel)
    board = BlackboardServiceStub(channel)
    bus = MessageServiceStub(channel)
    items = ItemServiceStub(channel)
    calls: dict[str, tuple[Callable[..., Message], Message]] = {
        "ListSessions": (sessions.ListSessions, session_pb2.ListSessionsRequest(page_size=100)),
        "ListAudit": (
            AdminServiceStub(channel).ListAuditRecords,
            admin_pb2.ListAuditRecordsRequest(page_size=1000),
        ),
        "ListPredicates": (memory.ListPredicates, memory_pb2.ListPredicatesRequest()),
        "ListCheckpoints": (
            checkpoints.ListCheckpoints,
            checkpoint_pb2.ListCheckpointsRequest(execution_id="run-1", page_size=100),
        ),
        "GetCheckpoint": (
            checkpoints.GetCheckpoint,
            checkpoint_pb2.GetCheckpointRequest(execution_id="run-1"),
        ),
        "GetWorkflow": (
            checkpoints.GetWorkflow,
            checkpoint_pb2.GetWorkflowRequest(workflow_id="wf-1"),
        ),
        "ListWorkflows": (
            checkpoints.ListWorkflows,
            checkpoint_pb2.ListWorkflowsRequest(include_steps=True),
        ),
        "ListEntries": (board.ListEntries, blackboard_pb2.ListEntriesRequest(board="team")),
        "ListOther": (board.ListEntries, blackboard_pb2.ListEntriesRequest(board="other")),
        "ListDeadLetters": (
            bus.ListDeadLetters,
            message_pb2.ListDeadLettersRequest(agent_id="sink"),
        ),
        "SearchItems": (items.SearchItems, items_pb2.SearchItemsRequest(limit=100)),
        "ListItemNamespaces": (
            items.ListItemNamespaces,
            items_pb2.ListItemNamespacesRequest(),
        ),
        "GetItem": (
            items.GetItem,
            items_pb2.GetItemRequest(namespace=["users", "alice", "prefs"], key="k1"),
        ),
    }
    for revision in range(1, 18):
        calls[f"ListEntries@{revision}"] = (
            board.ListEntries,
            blackboard_pb2.ListEntriesRequest(board="team", revision=revision),
        )
    for number in range(3):
        session_id = f"s-{number}"
        calls[f"GetSession {session_id}"] = (
            sessions.GetSession,
            session_pb2.GetSessionRequest(session_id=session_id),
        )
        calls[f"ListMessages {session_id}"] = (
            sessions.ListMessages,
            session_pb2.ListMessagesRequest(session_id=session_id, page_size=100),
        )
        calls[f"ListSessionVersions {session_id}"] = (
            sessions.ListSessionVersions,
            session_pb2.ListSessionVersionsRequest(session_id=session_id, page_size=100),
        )
        calls[f"GetSessionVersion {session_id}"] = (
            sessions.GetSessionVersion,
            session_pb2.GetSessionVersionRequest(session_id=session_id, version=2),
        )
        calls[f"GetContextWindow {session_id}"] = (
            sessions.GetContextWindow,
            session_pb2.GetContextWindowRequest(session_id=session_id, token_budget=60),
        )
    for user in ("alice", "bob"):
        calls[f"ListEpisodes {user}"] = (
            memory.ListEpisodes,
            memory_pb2.ListEpisodesRequest(user_id=user, page_size=100, include_embedding=True),
        )
        calls[f"ListFacts {user}"] = (
            memory.ListFacts,
            memory_pb2.ListFactsRequest(user_id=user, include_invalidated=True, page_size=100),
        )
        calls[f"Recall {user}"] = (
            memory.Recall,
            memory_pb2.RecallRequest(
                user_id=user, query_vector=memory_pb2.QueryVector(values=vector(1)), top_k=4
            ),
        )
        calls[f"Recall text {user}"] = (
            memory.Recall,
            memory_pb2.RecallRequest(user_id=user, query_text="red2 harbour", top_k=4),
        )
        calls[f"QueryEntity {user}"] = (
            memory.QueryEntity,
            memory_pb2.QueryEntityRequest(user_id=user, entity=user, include_invalidated=True),
        )
    seen = {}
    for name, (method, request) in calls.items():
        seen[name] = serialized(method(request, metadata=ACME, timeout=scaled(30)))
    return seen


def serialized(reply: Message) -> bytes:
    without_clock(reply)
    data = reply.SerializeToString(deterministic=True)
    TEXT[data] = text_format.MessageToString(reply)
    return data


# Scores memory computes from the time of the read (decay since the
# episode's occur_time), not from what is stored: zeroed before comparing.
READ_TIME_FIELDS = {"decayed_importance", "recency", "combined"}


def without_clock(message: Message) -> None:
    for field, value in message.ListFields():
        if field.name in READ_TIME_FIELDS:
            message.ClearField(field.name)
        elif field.message_type is None:
            continue
        elif field.is_repeated and not field.message_type.GetOptions().map_entry:
            for item in value:
                without_clock(item)
        elif not field.is_repeated:
            without_clock(value)


# The text form of each serialized reply, to show what differs.
TEXT: dict[bytes, str] = {}


def differences(before: dict[str, bytes], after: dict[str, bytes]) -> str:
    """'' when every read is byte for byte the same, else a diff of each
    differing reply."""
    shown = []
    for name in before:
        if before[name] != after.get(name):
            old, new = TEXT.get(before[name], ""), TEXT.get(after.get(name, b""), "")
            diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
            shown.append(f"{name}:\n" + "\n".join(list(diff)[:40]))
    return "\n".join(shown)


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "statekeeper", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def pull_all(channel: grpc.Channel) -> list[tuple[str, bytes, int]]:
    reply = MessageServiceStub(channel).PullMessages(
        message_pb2.PullMessagesRequest(
            agent_id="worker", max_messages=10, visibility_timeout=HOUR
        ),
        metadata=ACME,
    )
    return [
        (d.message.message_id, d.message.payload.data, d.delivery_count) for d in reply.deliveries
    ]


def test_export_then_import_reproduces_every_read(
    stores: Callable[[str], Store], tmp_path: Path
) -> None:
    source, target = stores("source"), stores("target")
    exported = tmp_path / "acme.skx"
    with running(source) as channel:
        fill(channel)
        before = reads(channel)
        # Export from the live deployment: one snapshot of the store.
        done = cli(
            "export", *source.store_args(), "--tenant", TENANT, "--no-progress", str(exported)
        )
        assert "exported" in done.stdout
        pulled_before = pull_all(channel)
    assert len(pulled_before) == 4
    done = cli("import", *target.import_args(), "--no-progress", str(exported))
    assert f"tenant {TENANT}" in done.stdout
    with running(target) as channel:
        after = reads(channel)
        # Only acme moved: globex's session is not in the target.
        with pytest.raises(grpc.RpcError) as missing:
            SessionServiceStub(channel).GetSession(
                session_pb2.GetSessionRequest(session_id="g-1"), metadata=key("key-globex")
            )
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        # New writes continue the imported sequences (no id is reused).
        reply = SessionServiceStub(channel).AppendMessages(
            session_pb2.AppendMessagesRequest(
                session_id="s-0",
                messages=[session_pb2.SessionMessage(role=session_pb2.ROLE_USER, content="more")],
            ),
            metadata=ACME,
        )
        assert reply.messages[0].sequence == 7
        pulled_after = pull_all(channel)
    assert sorted(before) == sorted(after)
    assert not differences(before, after), differences(before, after)
    assert pulled_after == pulled_before
    # inspect: the imported board, execution and workflow, read-only.
    board = json.loads(
        cli("inspect", *target.store_args(), "board", f"{TENANT}/team", "--json").stdout
    )
    assert [key["key"] for key in board["keys"]] == ["notes/a", "plan", "status"]
    assert board["tenant_revision"] == 18 and board["history_versions"] == 17
    run = json.loads(
        cli("inspect", *target.store_args(), "execution", f"{TENANT}/run-1", "--json").stdout
    )
    assert run["checkpoints"] == 3 and run["pending_writes"] == 3 and run["workflow"] is None
    flow = cli("inspect", *target.store_args(), "execution", f"{TENANT}/wf-1").stdout
    assert "workflow:" in flow and "transitions: 4" in flow
    # The step leased to w-2 is claimable again when its lease runs out.
    assert "step_id=parse" in flow and "cause=lease" in flow
    # The target now has the tenant: a second import is refused.
    again = cli("import", *target.import_args(), "--no-progress", str(exported), check=False)
    assert again.returncode == 1
    assert "already has data" in again.stderr


def test_user_export_inspect_and_refusals(stores: Callable[[str], Store], tmp_path: Path) -> None:
    source, target = stores("source"), stores("target")
    exported = tmp_path / "alice.skx"
    with running(source) as channel:
        fill(channel)
        before = reads(channel)
    cli(
        "export",
        *source.store_args(),
        "--tenant",
        TENANT,
        "--user",
        "alice",
        "--gzip",
        "--no-progress",
        str(exported),
    )
    with gzip.open(exported, "rt") as lines:
        records = [json.loads(line) for line in lines]
    header, trailer = records[0], records[-1]
    assert header["format"] == "statekeeper-export" and header["user"] == "alice"
    tables = {row["t"] for row in records[1:-1]}
    assert tables == {
        "sessions",
        "messages",
        "session_versions",
        "append_receipts",
        "memory_episodes",
        "memory_facts",
    }
    assert trailer["counts"]["sessions"] == 2
    # A corrupt file is refused before anything is written.
    corrupt = tmp_path / "corrupt.skx"
    text = "".join(json.dumps(r) + "\n" for r in records).replace("question 1", "question 9")
    with gzip.open(corrupt, "wt") as out:
        out.write(text)
    refused = cli("import", *target.import_args(), "--no-progress", str(corrupt), check=False)
    assert refused.returncode == 1 and "corrupt" in refused.stderr
    # Another user of the tenant holds a session id of alice's there: the
    # import stops with one line, its batch not written.
    occupied = stores("occupied")
    with running(occupied) as channel:
        SessionServiceStub(channel).CreateSession(
            session_pb2.CreateSessionRequest(
                session_id="s-1", session=session_pb2.Session(user_id="carol")
            ),
            metadata=ACME,
        )
    clash = cli("import", *occupied.import_args(), "--no-progress", str(exported), check=False)
    assert clash.returncode == 1, clash.stderr
    assert "table sessions: a row conflicts" in clash.stderr and "Traceback" not in clash.stderr
    # It says what clashed (PostgreSQL: the constraint and key; SQLite: the columns).
    assert "(tenant, session_id)=(acme, s-1)" in clash.stderr or (
        "sessions.tenant, sessions.session_id" in clash.stderr
    ), clash.stderr
    # Nothing reached the occupied target: no checkpoint binds the file to it.
    assert not exported.with_name(exported.name + ".import-checkpoint").exists()
    cli("import", *target.import_args(), "--no-progress", str(exported))
    with running(target) as channel:
        after = reads_of_user(channel)
    # Every read of the user's sessions and memory, byte for byte.
    assert len(after) == 8
    user_before = {name: before[name] for name in after}
    assert not differences(user_before, after), differences(user_before, after)
    # inspect reads the imported store.
    shown = cli("inspect", *target.store_args(), "session", f"{TENANT}/s-1")
    assert "messages" in shown.stdout and "alice" in shown.stdout
    view = json.loads(
        cli("inspect", *target.store_args(), "user", f"{TENANT}/alice", "--json").stdout
    )
    assert view["episodes"] == 4 and view["facts"] == 3 and view["sessions"] == 2
    missing = cli("inspect", *target.store_args(), "board", f"{TENANT}/team", check=False)
    assert missing.returncode == 1 and "no board" in missing.stderr


def reads_of_user(channel: grpc.Channel) -> dict[str, bytes]:
    sessions = SessionServiceStub(channel)
    memory = MemoryServiceStub(channel)
    calls: dict[str, tuple[Callable[..., Message], Message]] = {
        "ListEpisodes alice": (
            memory.ListEpisodes,
            memory_pb2.ListEpisodesRequest(user_id="alice", page_size=100, include_embedding=True),
        ),
        "ListFacts alice": (
            memory.ListFacts,
            memory_pb2.ListFactsRequest(user_id="alice", include_invalidated=True, page_size=100),
        ),
    }
    for session_id in ("s-0", "s-1"):
        calls[f"GetSession {session_id}"] = (
            sessions.GetSession,
            session_pb2.GetSessionRequest(session_id=session_id),
        )
        calls[f"ListMessages {session_id}"] = (
            sessions.ListMessages,
            session_pb2.ListMessagesRequest(session_id=session_id, page_size=100),
        )
        calls[f"ListSessionVersions {session_id}"] = (
            sessions.ListSessionVersions,
            session_pb2.ListSessionVersionsRequest(session_id=session_id, page_size=100),
        )
    return {
        name: serialized(method(request, metadata=ACME, timeout=scaled(30)))
        for name, (method, request) in calls.items()
    }


class _CrashError(Exception):
    pass


def test_an_interrupted_import_continues_where_it_stopped(
    stores: Callable[[str], Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import dies after a few committed batches (small batches, so
    every table spans several); a re-run of the CLI finishes it, and the
    reads are those of the source."""
    from statekeeper.admin import transfer

    source, target = stores("source"), stores("target")
    exported = tmp_path / "acme.skx"
    with running(source) as channel:
        fill(channel)
        before = reads(channel)
    cli("export", *source.store_args(), "--tenant", TENANT, "--no-progress", str(exported))
    monkeypatch.setattr(transfer, "BATCH_ROWS", 3)
    for crash_after in (2, 9, 20):
        asyncio.run(_import_until(target, exported, crash_after))
        state = json.loads(transfer.checkpoint_path(exported).read_text())
        assert state["sha256"]
    done = cli("import", *target.import_args(), "--no-progress", str(exported))
    assert "continued an interrupted import" in done.stdout
    assert not transfer.checkpoint_path(exported).exists()
    with running(target) as channel:
        after = reads(channel)
    assert not differences(before, after), differences(before, after)


async def _import_until(target: Store, path: Path, batches: int) -> None:
    from statekeeper.admin import transfer

    async def crashing(inner: Any) -> None:
        calls = 0
        original = inner.insert

        async def insert(*args: Any) -> None:
            nonlocal calls
            calls += 1
            if calls > batches:
                raise _CrashError
            await original(*args)

        inner.insert = insert
        with pytest.raises(_CrashError):
            await transfer.import_(inner, path)

    if target.dsn:
        from statekeeper.admin import postgres

        async with postgres.target(target.dsn, target.redis_url, target.prefix) as pg:
            await crashing(pg)
    else:
        from statekeeper.admin import embedded

        target.data_dir.mkdir(parents=True, exist_ok=True)
        async with embedded.target(target.data_dir) as db:
            await crashing(db)
