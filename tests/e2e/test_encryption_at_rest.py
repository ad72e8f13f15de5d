"""Encryption at rest of sensitive fields, on both backends, through real
server processes.

Tenant alpha is sensitive, tenant beta is not (the control: its markers must
be found, or the dump would prove nothing). Each writes, through gRPC, a
distinctive marker into every covered field: message contents and tool-call
arguments, context variables, a compaction summary, episode texts,
checkpoint state, channel values and pending writes, blackboard values (two
versions, so the history holds one too) and bus payloads (in an inbox and
dead-lettered). Then:

1. every read returns alpha's values exactly as beta's (round trip);
2. a dump of the SQLite file and WAL (raw bytes, all tables), or of every
   PostgreSQL table and every Redis key of the deployment, holds no marker of
   alpha and every kind of beta's;
3. values written before alpha was marked sensitive (plaintext) still read;
4. `keys rotate` to a new key, interrupted after one batch and then resumed,
   leaves no value under the old key; with the old key removed from the ring
   everything still reads;
5. (embedded) a sealed value copied to another row, or to another tenant's
   row, fails to open: FAILED_PRECONDITION, never the other row's text.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import grpc
import pytest
import redis
from google.protobuf import struct_pb2

from statekeeper.core.memory.models import content_hash
from statekeeper_client.v1 import (
    blackboard_pb2,
    blackboard_pb2_grpc,
    checkpoint_pb2,
    checkpoint_pb2_grpc,
    common_pb2,
    memory_pb2,
    memory_pb2_grpc,
    message_pb2,
    message_pb2_grpc,
    session_pb2,
    session_pb2_grpc,
)
from tests.harness.backends import (
    BACKENDS,
    PRODUCTION,
    Production,
    backend,
    redis_prefix,
    running_services,
)
from tests.harness.deadlines import wait_until
from tests.harness.deploy import statekeeper_replicas

KEYS = {"alpha": "key-alpha", "beta": "key-beta"}
DIMENSION = 8
SERVE_ARGS = ["--embedder-kind", "none", "--sensitive-tenant", "alpha"]
TOKEN = re.compile(rb"~sk1d?~([A-Za-z0-9_.-]+)~")
FIELDS = (
    "content",
    "toolargs",
    "ctxvar",
    "episode",
    "answer",
    "fact",
    "state",
    "channel",
    "write",
    "board",
    "inbox",
    "dead",
)


def new_key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def write_keys(path: Path, keys: list[tuple[str, str]]) -> None:
    path.write_text("".join(f"{key_id} {key}\n" for key_id, key in keys))
    path.chmod(0o600)


@dataclass(frozen=True)
class Owner:
    tenant: str
    marker: str  # unique to this owner; every field's marker starts with it
    ident: str

    @property
    def auth(self) -> list[tuple[str, str]]:
        return [("x-api-key", KEYS[self.tenant])]

    def mark(self, field_name: str) -> str:
        return f"{self.marker}{field_name.upper()}"


def owners() -> tuple[Owner, Owner, Owner]:
    """alpha (sensitive), beta (the control) and alpha's rows written before
    encryption was enabled."""
    run = uuid.uuid4().hex[:8].upper()
    return (
        Owner("alpha", f"ZQALPHA{run}", uuid.uuid4().hex[:8]),
        Owner("beta", f"ZQBETA{run}", uuid.uuid4().hex[:8]),
        Owner("alpha", f"ZQLEGACY{run}", uuid.uuid4().hex[:8]),
    )


def payload(text: str) -> common_pb2.Payload:
    return common_pb2.Payload(content_type="application/json", data=json.dumps(text).encode())


class Stubs:
    def __init__(self, channel: grpc.Channel) -> None:
        self.sessions = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
        self.memory = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        self.checkpoints = checkpoint_pb2_grpc.CheckpointServiceStub(channel)  # type: ignore[no-untyped-call]
        self.blackboard = blackboard_pb2_grpc.BlackboardServiceStub(channel)  # type: ignore[no-untyped-call]
        self.bus = message_pb2_grpc.MessageServiceStub(channel)  # type: ignore[no-untyped-call]


@contextmanager
def stubs(address: str) -> Iterator[Stubs]:
    with grpc.insecure_channel(address) as channel:
        yield Stubs(channel)


def fill(stub: Stubs, owner: Owner) -> None:
    """Every covered field of `owner`, each with its marker."""
    md, m = owner.auth, owner.mark
    sid = f"s-{owner.ident}"
    variables = struct_pb2.Struct()
    variables.update({"goal": m("ctxvar"), "nested": {"deep": m("ctxvar")}})
    stub.sessions.CreateSession(
        session_pb2.CreateSessionRequest(
            session_id=sid,
            session=session_pb2.Session(user_id=f"u-{owner.ident}", context_variables=variables),
        ),
        metadata=md,
    )
    call = session_pb2.ToolCall(
        id="call-1", name="lookup", arguments=json.dumps({"q": m("toolargs")})
    )
    messages = [
        session_pb2.SessionMessage(role=session_pb2.ROLE_USER, content=f"hello {m('content')} {i}")
        for i in range(4)
    ]
    messages.append(session_pb2.SessionMessage(role=session_pb2.ROLE_ASSISTANT, tool_calls=[call]))
    messages.append(
        session_pb2.SessionMessage(
            role=session_pb2.ROLE_TOOL, tool_call_id="call-1", content=f"tool {m('content')}"
        )
    )
    stub.sessions.AppendMessages(
        session_pb2.AppendMessagesRequest(session_id=sid, messages=messages), metadata=md
    )
    # The summary of the compacted messages holds their text.
    stub.sessions.CompactSession(
        session_pb2.CompactSessionRequest(session_id=sid, keep_recent_messages=2), metadata=md
    )
    record_episode(stub, owner)
    # The same again: an exact duplicate (found by its keyed hash).
    assert record_episode(stub, owner).duplicate
    # The same fact twice: the second is a duplicate (objects compare equal
    # sealed too).
    for _ in range(2):
        stub.memory.AddFacts(
            memory_pb2.AddFactsRequest(
                user_id=f"u-{owner.ident}",
                facts=[
                    memory_pb2.FactInput(subject="the user", predicate="likes", object=m("fact"))
                ],
            ),
            metadata=md,
        )
    execution = f"exec-{owner.ident}"
    stub.checkpoints.SaveCheckpoint(
        checkpoint_pb2.SaveCheckpointRequest(
            checkpoint=checkpoint_pb2.Checkpoint(
                execution_id=execution,
                checkpoint_id="c1",
                step=1,
                state=payload(f"state {m('state')}"),
                channels={
                    "messages": checkpoint_pb2.ChannelValue(
                        version="1", value=payload(m("channel"))
                    )
                },
            )
        ),
        metadata=md,
    )
    stub.checkpoints.PutWrites(
        checkpoint_pb2.PutWritesRequest(
            execution_id=execution,
            checkpoint_id="c1",
            task_id="t1",
            writes=[checkpoint_pb2.WriteInput(index=0, channel="out", value=payload(m("write")))],
        ),
        metadata=md,
    )
    # A checkpoint whose id the server assigns.
    stub.checkpoints.SaveCheckpoint(
        checkpoint_pb2.SaveCheckpointRequest(
            checkpoint=checkpoint_pb2.Checkpoint(
                execution_id=execution,
                parent_checkpoint_id="c1",
                step=2,
                state=payload(f"state2 {m('state')}"),
            )
        ),
        metadata=md,
    )
    for version in range(2):
        value = struct_pb2.Struct()
        value.update({"v": f"{version} {m('board')}"})
        stub.blackboard.PutEntry(
            blackboard_pb2.PutEntryRequest(
                board="plans",
                key=f"k-{owner.ident}",
                value=blackboard_pb2.BlackboardValue(json=value),
            ),
            metadata=md,
        )
    agent = f"agent-{owner.ident}"
    stub.bus.SendMessage(
        message_pb2.SendMessageRequest(to_agent=agent, payload=payload(f"inbox {m('inbox')}")),
        metadata=md,
    )
    stub.bus.SendMessage(
        message_pb2.SendMessageRequest(
            to_agent=f"{agent}-dead", payload=payload(f"dead {m('dead')}")
        ),
        metadata=md,
    )
    pulled = stub.bus.PullMessages(
        message_pb2.PullMessagesRequest(agent_id=f"{agent}-dead", max_messages=1), metadata=md
    )
    stub.bus.NackMessages(
        message_pb2.NackMessagesRequest(
            receipt_handles=[d.receipt_handle for d in pulled.deliveries], dead_letter=True
        ),
        metadata=md,
    )


def record_episode(stub: Stubs, owner: Owner) -> memory_pb2.RecordEpisodeResponse:
    reply: memory_pb2.RecordEpisodeResponse = stub.memory.RecordEpisode(
        memory_pb2.RecordEpisodeRequest(
            user_id=f"u-{owner.ident}",
            session_id=f"s-{owner.ident}",
            user_message=f"episode {owner.mark('episode')}",
            assistant_response=f"answer {owner.mark('answer')}",
            embedding=[float(i + 1) for i in range(DIMENSION)],
        ),
        metadata=owner.auth,
    )
    return reply


def episode_digest(owner: Owner) -> bytes:
    """The plaintext duplicate key of `owner`'s episode (SHA-256 hex)."""
    return content_hash(
        f"episode {owner.mark('episode')}", f"answer {owner.mark('answer')}"
    ).encode()


def read_back(stub: Stubs, owner: Owner) -> dict[str, object]:
    """What the read APIs return of `owner`, with its marker replaced by a
    placeholder, so that two owners' reads compare equal."""
    md = owner.auth
    sid = f"s-{owner.ident}"
    session = stub.sessions.GetSession(
        session_pb2.GetSessionRequest(session_id=sid), metadata=md
    ).session
    listed = stub.sessions.ListMessages(
        session_pb2.ListMessagesRequest(session_id=sid, include_rolled_back=True), metadata=md
    ).messages
    versions = stub.sessions.ListSessionVersions(
        session_pb2.ListSessionVersionsRequest(session_id=sid), metadata=md
    ).versions
    episodes = stub.memory.ListEpisodes(
        memory_pb2.ListEpisodesRequest(user_id=f"u-{owner.ident}"), metadata=md
    ).episodes
    # Text recall is lexical here (no embedder): blind terms for alpha.
    recalled = stub.memory.Recall(
        memory_pb2.RecallRequest(
            user_id=f"u-{owner.ident}", query_text=f"{owner.mark('episode')} answer", top_k=3
        ),
        metadata=md,
    ).results
    facts = stub.memory.ListFacts(
        memory_pb2.ListFactsRequest(user_id=f"u-{owner.ident}"), metadata=md
    ).facts
    by_object = stub.memory.ListFacts(
        memory_pb2.ListFactsRequest(user_id=f"u-{owner.ident}", object=owner.mark("fact")),
        metadata=md,
    ).facts
    checkpoint = stub.checkpoints.GetCheckpoint(
        checkpoint_pb2.GetCheckpointRequest(execution_id=f"exec-{owner.ident}", checkpoint_id="c1"),
        metadata=md,
    ).checkpoint
    states = [
        c.state.data.decode()
        for c in stub.checkpoints.ListCheckpoints(
            checkpoint_pb2.ListCheckpointsRequest(execution_id=f"exec-{owner.ident}"), metadata=md
        ).checkpoints
    ]
    # A fork of the execution reads the same (its rows are copies).
    fork = f"fork-{uuid.uuid4().hex[:8]}"
    stub.checkpoints.CopyExecution(
        checkpoint_pb2.CopyExecutionRequest(
            source_execution_id=f"exec-{owner.ident}", target_execution_id=fork
        ),
        metadata=md,
    )
    forked = [
        (c.state.data.decode(), [w.value.data.decode() for w in c.pending_writes])
        for c in stub.checkpoints.ListCheckpoints(
            checkpoint_pb2.ListCheckpointsRequest(execution_id=fork), metadata=md
        ).checkpoints
    ]
    originals = [
        (c.state.data.decode(), [w.value.data.decode() for w in c.pending_writes])
        for c in stub.checkpoints.ListCheckpoints(
            checkpoint_pb2.ListCheckpointsRequest(execution_id=f"exec-{owner.ident}"), metadata=md
        ).checkpoints
    ]
    assert forked == originals
    entry = stub.blackboard.GetEntry(
        blackboard_pb2.GetEntryRequest(board="plans", key=f"k-{owner.ident}"), metadata=md
    )
    first = stub.blackboard.GetEntry(
        blackboard_pb2.GetEntryRequest(
            board="plans",
            key=f"k-{owner.ident}",
            revision=entry.entry.create_revision,
        ),
        metadata=md,
    )
    agent = f"agent-{owner.ident}"
    inbox = stub.bus.PullMessages(
        message_pb2.PullMessagesRequest(agent_id=agent, max_messages=10), metadata=md
    ).deliveries
    if inbox:
        stub.bus.NackMessages(
            message_pb2.NackMessagesRequest(receipt_handles=[d.receipt_handle for d in inbox]),
            metadata=md,
        )
    dead = stub.bus.ListDeadLetters(
        message_pb2.ListDeadLettersRequest(agent_id=f"{agent}-dead"), metadata=md
    ).dead_letters
    seen = {
        "context": json.dumps(dict(session.context_variables.items()), sort_keys=True, default=str),
        "summary": session.compaction_summary if hasattr(session, "compaction_summary") else "",
        "messages": [
            (x.content, [(c.id, c.name, c.arguments) for c in x.tool_calls]) for x in listed
        ],
        "versions": len(versions),
        "episodes": [(e.user_message, e.assistant_response) for e in episodes],
        "recall": [r.episode.user_message for r in recalled],
        "facts": [(f.subject, f.predicate, f.object) for f in facts],
        "facts by object": [f.object for f in by_object],
        "state": checkpoint.state.data.decode(),
        "states": states,
        "channels": {k: v.value.data.decode() for k, v in checkpoint.channels.items()},
        "writes": [w.value.data.decode() for w in checkpoint.pending_writes],
        "entry": entry.entry.value.json["v"],
        "first": first.entry.value.json["v"],
        "inbox": [d.message.payload.data.decode() for d in inbox],
        "dead": [d.message.payload.data.decode() for d in dead],
    }
    text = json.dumps(seen, sort_keys=True)
    assert owner.marker in text
    neutral: dict[str, object] = json.loads(
        text.replace(owner.marker, "MARKER").replace(owner.ident, "IDENT")
    )
    return neutral


# ----- dumps -----------------------------------------------------------------


def sqlite_dump(data_dir: Path) -> bytes:
    """The SQLite file and WAL as raw bytes (free pages too), after a
    checkpoint, plus every row of every table as text."""
    path = data_dir / "statekeeper.sqlite3"
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = [
            f"{table}: {row!r}".encode()
            for table in tables
            for row in db.execute(f'SELECT * FROM "{table}"')
        ]
    finally:
        db.close()
    raw = path.read_bytes()
    wal = path.with_name(path.name + "-wal")
    return b"\n".join([raw, wal.read_bytes() if wal.exists() else b"", *rows])


async def postgres_dump(dsn: str) -> bytes:
    conn = await asyncpg.connect(dsn)
    try:
        lines: list[str] = []
        tables = await conn.fetch(
            "SELECT schemaname, tablename FROM pg_tables"
            " WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        )
        for table in tables:
            qualified = f'"{table["schemaname"]}"."{table["tablename"]}"'
            rows = await conn.fetch(f"SELECT t::text AS row FROM {qualified} t")
            lines.extend(r["row"] for r in rows)
            columns = await conn.fetch(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = $1 AND table_name = $2 AND data_type = 'bytea'",
                table["schemaname"],
                table["tablename"],
            )
            for column in columns:
                values = await conn.fetch(f'SELECT "{column["column_name"]}" AS v FROM {qualified}')
                lines.extend(
                    bytes(v["v"]).decode(errors="replace") for v in values if v["v"] is not None
                )
        return "\n".join(lines).encode()
    finally:
        await conn.close()


def redis_dump(url: str, prefix: str) -> bytes:
    client = redis.Redis.from_url(url)
    try:
        parts: list[bytes] = []
        for key in client.scan_iter(match=f"{prefix}:*", count=500):
            kind = client.type(key)
            kind = kind.decode() if isinstance(kind, bytes) else str(kind)
            value: object
            if kind == "string":
                value = client.get(key)
            elif kind == "hash":
                value = client.hgetall(key)
            elif kind == "stream":
                value = client.xrange(key)
            elif kind == "list":
                value = client.lrange(key, 0, -1)
            elif kind == "set":
                value = client.smembers(key)
            elif kind == "zset":
                value = client.zrange(key, 0, -1)
            else:
                value = None
            parts.append(repr((key, value)).encode())
            parts.append(_raw_bytes(value))
        return b"\n".join(parts)
    finally:
        client.close()


def _raw_bytes(value: object) -> bytes:
    """Every bytes inside a Redis reply, concatenated (repr escapes them)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, dict):
        return b"\n".join(_raw_bytes(k) + b"\n" + _raw_bytes(v) for k, v in value.items())
    if isinstance(value, list | tuple | set):
        return b"\n".join(_raw_bytes(v) for v in value)
    return b""


def dump(servers_dir: Path, where: Production | None) -> bytes:
    if where is None:
        data = sqlite_dump(servers_dir)
        # Everything else in the data directory too (index snapshots).
        for path in sorted(servers_dir.rglob("*")):
            if path.is_file() and not path.name.startswith("statekeeper.sqlite3"):
                data += b"\n" + path.read_bytes()
        return data
    return asyncio.run(postgres_dump(where.postgres_dsn)) + redis_dump(
        where.redis_url, where.redis_prefix
    )


def key_ids(data: bytes) -> set[str]:
    return {m.group(1).decode() for m in TOKEN.finditer(data)}


def marker_hits(data: bytes, owner: Owner) -> set[str]:
    """Which fields' markers of `owner` the dump holds."""
    return {f for f in FIELDS if owner.mark(f).encode() in data}


def rotate(
    where: Production | None, data_dir: Path, keys_file: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    store = (
        [
            "--postgres-dsn",
            where.postgres_dsn,
            "--redis-url",
            where.redis_url,
            "--redis-key-prefix",
            where.redis_prefix,
        ]
        if where is not None
        else ["--data-dir", str(data_dir)]
    )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "statekeeper",
            "keys",
            "rotate",
            "--no-progress",
            "--encryption-keys-file",
            str(keys_file),
            *store,
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


# ----- the test --------------------------------------------------------------


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_sensitive_fields_sealed_at_rest(backend_name: str, tmp_path: Path) -> None:
    alpha, beta, legacy_alpha = owners()
    keys_file = tmp_path / "encryption.keys"
    old_key, new = ("k1", new_key()), ("k2", new_key())
    write_keys(keys_file, [old_key])
    encrypted = [*SERVE_ARGS, "--encryption-keys-file", str(keys_file)]
    with backend(backend_name, "enc") as where:
        # (3) Before encryption is enabled: plaintext rows of alpha.
        with statekeeper_replicas(tmp_path, where, 1, ["--embedder-kind", "none"]) as servers:
            data_dir = servers[0].data_dir
            with stubs(servers[0].address) as stub:
                fill(stub, legacy_alpha)
                legacy = read_back(stub, legacy_alpha)

        with statekeeper_replicas(tmp_path, where, 1, encrypted) as servers:
            with stubs(servers[0].address) as stub:
                assert read_back(stub, legacy_alpha) == legacy
                fill(stub, alpha)
                fill(stub, beta)
                # (1) Round trip: alpha reads what beta reads.
                expected = read_back(stub, beta)
                assert read_back(stub, alpha) == expected
            # (2) No marker of alpha's new rows at rest, beta's all there.
            stored = dump(data_dir, where)
            assert marker_hits(stored, alpha) == set()
            assert marker_hits(stored, beta) == set(FIELDS)
            # The duplicate key is keyed: it cannot confirm a guessed text.
            assert episode_digest(alpha) not in stored
            assert episode_digest(beta) in stored
            # Rows written before encryption was enabled keep their text.
            assert marker_hits(stored, legacy_alpha) == set(FIELDS)
            assert key_ids(stored) == {"k1"}

        # (4) Rotation to k2, interrupted after one batch, then resumed.
        write_keys(keys_file, [old_key, new])
        interrupted = rotate(
            where, data_dir, keys_file, "--batch", "1", "--stop-after-batches", "1"
        )
        assert interrupted.returncode == 0, interrupted.stderr
        assert key_ids(dump(data_dir, where)) == {"k1", "k2"}
        resumed = rotate(where, data_dir, keys_file, "--batch", "3")
        assert resumed.returncode == 0, resumed.stderr + resumed.stdout
        assert "re-wrapped" in resumed.stdout
        assert key_ids(dump(data_dir, where)) == {"k2"}
        again = rotate(where, data_dir, keys_file)
        assert "0 values re-wrapped" in again.stdout, again.stdout
        write_keys(keys_file, [new])  # the old key leaves the ring
        with (
            statekeeper_replicas(tmp_path, where, 1, encrypted) as servers,
            stubs(servers[0].address) as stub,
        ):
            assert read_back(stub, alpha) == expected
            assert read_back(stub, beta) == expected
            assert read_back(stub, legacy_alpha) == legacy
            # Duplicates are still found after rotation (hash keyed again).
            assert record_episode(stub, alpha).duplicate
            assert record_episode(stub, legacy_alpha).duplicate
        if backend_name == PRODUCTION:
            return

        # (5) A sealed content moved to another row, then to another tenant.
        db = sqlite3.connect(data_dir / "statekeeper.sqlite3")
        try:
            sealed_content = db.execute(
                "SELECT content FROM messages WHERE tenant = 'alpha' AND session_id = ?"
                " AND sequence = 1",
                (f"s-{alpha.ident}",),
            ).fetchone()[0]
            assert sealed_content.startswith("~sk1~k2~")
            db.execute(
                "UPDATE messages SET content = ? WHERE tenant = 'alpha' AND session_id = ?"
                " AND sequence = 2",
                (sealed_content, f"s-{alpha.ident}"),
            )
            db.execute(
                "UPDATE messages SET content = ? WHERE tenant = 'beta' AND session_id = ?"
                " AND sequence = 1",
                (sealed_content, f"s-{beta.ident}"),
            )
            # The state of checkpoint c1 moved to the server-id checkpoint.
            execution = f"exec-{alpha.ident}"
            db.execute(
                "UPDATE cp_checkpoints SET state_data = (SELECT state_data FROM cp_checkpoints"
                " WHERE tenant = 'alpha' AND execution_id = ? AND checkpoint_id = 'c1')"
                " WHERE tenant = 'alpha' AND execution_id = ? AND checkpoint_id != 'c1'",
                (execution, execution),
            )
            db.commit()
        finally:
            db.close()
        with (
            statekeeper_replicas(tmp_path, where, 1, encrypted) as servers,
            stubs(servers[0].address) as stub,
        ):
            for owner in (alpha, beta):
                with pytest.raises(grpc.RpcError) as failed:
                    stub.sessions.ListMessages(
                        session_pb2.ListMessagesRequest(session_id=f"s-{owner.ident}"),
                        metadata=owner.auth,
                    )
                assert failed.value.code() == grpc.StatusCode.FAILED_PRECONDITION
                assert "cannot be opened" in (failed.value.details() or "")
                assert alpha.marker not in (failed.value.details() or "")
            with pytest.raises(grpc.RpcError) as failed:
                stub.checkpoints.GetCheckpoint(
                    checkpoint_pb2.GetCheckpointRequest(execution_id=f"exec-{alpha.ident}"),
                    metadata=alpha.auth,
                )
            assert failed.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            # The checkpoint the state came from still reads.
            kept = stub.checkpoints.GetCheckpoint(
                checkpoint_pb2.GetCheckpointRequest(
                    execution_id=f"exec-{alpha.ident}", checkpoint_id="c1"
                ),
                metadata=alpha.auth,
            )
            assert kept.checkpoint.state.data.decode() == json.dumps(f"state {alpha.mark('state')}")


# ----- a sensitive board of a tenant that is not sensitive --------------------


def json_value(text: str) -> blackboard_pb2.BlackboardValue:
    value = struct_pb2.Struct()
    value.update({"v": text})
    return blackboard_pb2.BlackboardValue(json=value)


def watch_values(
    stub: Stubs, owner: Owner, board: str, start_revision: int, count: int
) -> list[tuple[str, str]]:
    """(value, previous value) of the first `count` events of a watch."""
    call = stub.blackboard.Watch(
        blackboard_pb2.WatchRequest(
            board=board, prefix="", start_revision=start_revision, prev_value=True
        ),
        metadata=owner.auth,
        timeout=120,
    )
    seen: list[tuple[str, str]] = []
    try:
        for response in call:
            for event in response.events.events:
                previous = event.previous.value.json["v"] if event.HasField("previous") else ""
                seen.append((event.entry.value.json["v"], previous))
            if len(seen) >= count:
                break
    finally:
        call.cancel()
    return seen


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_sensitive_board(backend_name: str, tmp_path: Path) -> None:
    """beta is not sensitive, its board `secret` is: values of that board
    are sealed (entries, history, feed), its other boards are not; watches
    and value compares of a transaction see the values."""
    _, beta, _ = owners()
    keys_file = tmp_path / "encryption.keys"
    write_keys(keys_file, [("k1", new_key())])
    args = [
        "--embedder-kind",
        "none",
        "--encryption-keys-file",
        str(keys_file),
        "--sensitive-board",
        "beta/secret",
    ]
    secret, plain = beta.mark("secretboard"), beta.mark("plainboard")
    with (
        backend(backend_name, "encb") as where,
        statekeeper_replicas(tmp_path, where, 1, args) as servers,
        stubs(servers[0].address) as stub,
    ):
        md = beta.auth
        first = stub.blackboard.PutEntry(
            blackboard_pb2.PutEntryRequest(board="secret", key="k", value=json_value(f"{secret}1")),
            metadata=md,
        )
        start = int(first.entry.mod_revision)
        stub.blackboard.PutEntry(
            blackboard_pb2.PutEntryRequest(board="plans", key="k", value=json_value(plain)),
            metadata=md,
        )

        def compare_and_put(expected: str, new: str) -> blackboard_pb2.TxnResponse:
            reply: blackboard_pb2.TxnResponse = stub.blackboard.Txn(
                blackboard_pb2.TxnRequest(
                    board="secret",
                    compares=[
                        blackboard_pb2.TxnCompare(
                            key="k",
                            operator=blackboard_pb2.TXN_COMPARE_OPERATOR_EQUAL,
                            value=json_value(expected),
                        )
                    ],
                    success=[
                        blackboard_pb2.TxnOp(
                            put_entry=blackboard_pb2.TxnPut(
                                key="k", value=json_value(new), return_previous=True
                            )
                        )
                    ],
                ),
                metadata=md,
            )
            return reply

        assert not compare_and_put("something else", f"{secret}X").succeeded
        done = compare_and_put(f"{secret}1", f"{secret}2")
        assert done.succeeded
        assert done.results[0].put_entry.previous.value.json["v"] == f"{secret}1"
        got = stub.blackboard.GetEntry(
            blackboard_pb2.GetEntryRequest(board="secret", key="k"), metadata=md
        )
        assert got.entry.value.json["v"] == f"{secret}2"
        # From the history, then live (through the store's event feed).
        assert watch_values(stub, beta, "secret", start, 2) == [
            (f"{secret}1", ""),
            (f"{secret}2", f"{secret}1"),
        ]
        live: list[list[tuple[str, str]]] = []
        head = int(got.header.revision)
        watcher = threading.Thread(
            target=lambda: live.append(watch_values(stub, beta, "secret", head + 1, 1))
        )
        watcher.start()
        stub.blackboard.PutEntry(
            blackboard_pb2.PutEntryRequest(board="secret", key="k", value=json_value(f"{secret}3")),
            metadata=md,
        )
        watcher.join(timeout=180)
        assert live == [[(f"{secret}3", f"{secret}2")]]

        stored = dump(servers[0].data_dir, where)
        assert secret.encode() not in stored
        assert plain.encode() in stored
        assert key_ids(stored) == {"k1"}


# ----- rotation while a server serves ----------------------------------------


MAX_WRITTEN = 2000


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_rotation_while_serving(backend_name: str, tmp_path: Path) -> None:
    """`keys rotate` runs while the server (already given the new key)
    keeps appending messages of the sensitive tenant; a second run finishes
    what the first left, and with the old key gone everything reads."""
    alpha, _, _ = owners()
    keys_file = tmp_path / "encryption.keys"
    old_key, new = ("k1", new_key()), ("k2", new_key())
    write_keys(keys_file, [old_key])
    encrypted = [*SERVE_ARGS, "--encryption-keys-file", str(keys_file)]
    sid = f"s-{alpha.ident}"

    def append(stub: Stubs, index: int) -> None:
        stub.sessions.AppendMessages(
            session_pb2.AppendMessagesRequest(
                session_id=sid,
                messages=[
                    session_pb2.SessionMessage(
                        role=session_pb2.ROLE_USER, content=f"{alpha.mark('content')} {index}"
                    )
                ],
            ),
            metadata=alpha.auth,
        )

    with backend(backend_name, "encr") as where:
        with (
            statekeeper_replicas(tmp_path, where, 1, encrypted) as servers,
            stubs(servers[0].address) as stub,
        ):
            data_dir = servers[0].data_dir
            stub.sessions.CreateSession(
                session_pb2.CreateSessionRequest(
                    session_id=sid, session=session_pb2.Session(user_id="u")
                ),
                metadata=alpha.auth,
            )
            for index in range(40):
                append(stub, index)
        write_keys(keys_file, [old_key, new])
        written = 40
        with (
            statekeeper_replicas(tmp_path, where, 1, encrypted) as servers,
            stubs(servers[0].address) as stub,
        ):
            stop = threading.Event()
            failures: list[BaseException] = []

            def writer() -> None:
                nonlocal written
                try:
                    # Bounded: enough to overlap the rotation on any machine.
                    while not stop.is_set() and written < MAX_WRITTEN:
                        append(stub, written)
                        written += 1
                except BaseException as exc:  # reported below
                    failures.append(exc)

            thread = threading.Thread(target=writer)
            thread.start()
            try:
                first = rotate(where, data_dir, keys_file, "--batch", "5")
            finally:
                stop.set()
                thread.join(timeout=120)
            assert not failures, failures
            assert first.returncode == 0, first.stderr + first.stdout
            second = rotate(where, data_dir, keys_file)
            assert second.returncode == 0, second.stderr + second.stdout
        assert key_ids(dump(data_dir, where)) == {"k2"}
        write_keys(keys_file, [new])
        with (
            statekeeper_replicas(tmp_path, where, 1, encrypted) as servers,
            stubs(servers[0].address) as stub,
        ):
            contents: list[str] = []
            token = ""
            for _ in range(MAX_WRITTEN):  # pages
                page = stub.sessions.ListMessages(
                    session_pb2.ListMessagesRequest(
                        session_id=sid, page_size=100, page_token=token
                    ),
                    metadata=alpha.auth,
                )
                contents.extend(m.content for m in page.messages)
                token = page.next_page_token
                if not token:
                    break
            assert contents == [f"{alpha.mark('content')} {i}" for i in range(written)]
            assert alpha.marker.encode() not in dump(data_dir, where)


# ----- Redis rotation stays inside its own deployment's keys -----------------


def test_redis_rotation_leaves_other_deployments_keys_alone() -> None:
    """Two deployments share one Redis under prefixes "P" and "P2" (and a
    stray "P-x"): rotating P re-wraps P's values only."""
    from statekeeper.storage.rotation import rotate_redis
    from statekeeper.storage.sealing import sealer_from

    url = running_services().redis_url
    k1, k2 = new_key(), new_key()
    old = sealer_from("", f"k1:{k1}", "", ["alpha"], [])
    rotated = sealer_from("", f"k1:{k1},k2:{k2}", "k2", ["alpha"], [])
    assert old is not None and rotated is not None
    prefix = redis_prefix("encp")
    ours, neighbour, stray = f"{prefix}:{{alpha}}:v", f"{prefix}2:{{alpha}}:v", f"{prefix}-x"
    token = old.seal_text("alpha", "f", (), "secret")
    client = redis.Redis.from_url(url)
    try:
        for key in (ours, neighbour, stray):
            client.set(key, token)
            client.hset(key + ":h", "field", token)
        report = asyncio.run(rotate_redis(url, prefix, rotated, 10))
        assert report.rewrapped == 2
        assert key_ids(bytes(client.get(ours) or b"")) == {"k2"}  # type: ignore[arg-type]
        assert key_ids(bytes(client.hget(ours + ":h", "field") or b"")) == {"k2"}  # type: ignore[arg-type]
        for key in (neighbour, stray):
            assert client.get(key) == token.encode()
            assert client.hget(key + ":h", "field") == token.encode()
    finally:
        for key in (ours, neighbour, stray):
            client.delete(key, key + ":h")
        client.close()


# ----- archived sessions and rotation ----------------------------------------


def test_rotation_reports_archived_sessions_under_the_old_key(tmp_path: Path) -> None:
    """`keys rotate` does not rewrite archive objects: while an archived
    session of a sensitive tenant holds values under the old key it fails
    (never "done"); after the session is restored (a read brings it back)
    a second run re-wraps it, and with the old key gone it still reads."""
    alpha, _, _ = owners()
    keys_file = tmp_path / "encryption.keys"
    old_key, new = ("k1", new_key()), ("k2", new_key())
    write_keys(keys_file, [old_key])
    archive = tmp_path / "archive"
    encrypted = [*SERVE_ARGS, "--encryption-keys-file", str(keys_file)]
    archiving = [
        *encrypted,
        "--archive-url",
        str(archive),
        "--archive-sessions-after-days",
        "0.00002",
        "--archive-interval-seconds",
        "0.3",
    ]
    sid = f"s-{alpha.ident}"
    text = f"{alpha.mark('content')} archived"
    with (
        statekeeper_replicas(tmp_path, None, 1, archiving) as servers,
        stubs(servers[0].address) as stub,
    ):
        data_dir = servers[0].data_dir
        stub.sessions.CreateSession(
            session_pb2.CreateSessionRequest(
                session_id=sid, session=session_pb2.Session(user_id="u")
            ),
            metadata=alpha.auth,
        )
        stub.sessions.AppendMessages(
            session_pb2.AppendMessagesRequest(
                session_id=sid,
                messages=[session_pb2.SessionMessage(role=session_pb2.ROLE_USER, content=text)],
            ),
            metadata=alpha.auth,
        )
        wait_until(
            lambda: any(archive.rglob("manifest.json")), 60, "the session archived", servers[0].log
        )
    write_keys(keys_file, [old_key, new])
    first = rotate(None, data_dir, keys_file, "--archive-url", str(archive))
    assert first.returncode == 1, first.stdout + first.stderr
    assert "1 archived units still hold values under another key" in first.stdout
    # Restored by a read (no archiving now), then rotated: done.
    with (
        statekeeper_replicas(
            tmp_path, None, 1, [*encrypted, "--archive-url", str(archive)]
        ) as servers,
        stubs(servers[0].address) as stub,
    ):
        page = stub.sessions.ListMessages(
            session_pb2.ListMessagesRequest(session_id=sid), metadata=alpha.auth
        )
        assert [m.content for m in page.messages] == [text]
        assert not any(archive.rglob("manifest.json"))
    second = rotate(None, data_dir, keys_file, "--archive-url", str(archive))
    assert second.returncode == 0, second.stdout + second.stderr
    assert "archived sessions" not in second.stdout
    write_keys(keys_file, [new])
    with (
        statekeeper_replicas(
            tmp_path, None, 1, [*encrypted, "--archive-url", str(archive)]
        ) as servers,
        stubs(servers[0].address) as stub,
    ):
        page = stub.sessions.ListMessages(
            session_pb2.ListMessagesRequest(session_id=sid), metadata=alpha.auth
        )
        assert [m.content for m in page.messages] == [text]


# ----- facts while a rotation is under way -----------------------------------


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_a_fact_stored_under_the_old_key_still_deduplicates(
    backend_name: str, tmp_path: Path
) -> None:
    """Between activating a new key and finishing `keys rotate`, adding a
    fact already stored under the old key deduplicates with it: no
    duplicate, and on a single-valued predicate no contradiction of the
    identical old fact."""
    alpha, _, _ = owners()
    keys_file = tmp_path / "encryption.keys"
    old_key, new = ("k1", new_key()), ("k2", new_key())
    write_keys(keys_file, [old_key])
    encrypted = [*SERVE_ARGS, "--encryption-keys-file", str(keys_file)]
    user = f"u-{alpha.ident}"
    city = f"{alpha.mark('fact')} Paris"

    def add(stub: Stubs) -> memory_pb2.FactResult:
        response = stub.memory.AddFacts(
            memory_pb2.AddFactsRequest(
                user_id=user,
                facts=[memory_pb2.FactInput(subject="the user", predicate="lives_in", object=city)],
            ),
            metadata=alpha.auth,
        )
        result: memory_pb2.FactResult = response.results[0]
        return result

    with backend(backend_name, "encf") as where:
        with (
            statekeeper_replicas(tmp_path, where, 1, encrypted) as servers,
            stubs(servers[0].address) as stub,
        ):
            data_dir = servers[0].data_dir
            stub.memory.DeclarePredicate(
                memory_pb2.DeclarePredicateRequest(name="lives_in", single_valued=True),
                metadata=alpha.auth,
            )
            first = add(stub)
            assert first.outcome == memory_pb2.FACT_OUTCOME_CREATED
        write_keys(keys_file, [old_key, new])
        with (
            statekeeper_replicas(tmp_path, where, 1, encrypted) as servers,
            stubs(servers[0].address) as stub,
        ):
            again = add(stub)
            assert again.outcome == memory_pb2.FACT_OUTCOME_DEDUPLICATED, again
            assert again.fact.id == first.fact.id
            assert list(again.invalidated_fact_ids) == []
            facts = stub.memory.ListFacts(
                memory_pb2.ListFactsRequest(user_id=user), metadata=alpha.auth
            ).facts
            assert [(f.id, f.object) for f in facts] == [(first.fact.id, city)]
        # After the rotation, under the new key alone: still one fact.
        done = rotate(where, data_dir, keys_file)
        assert done.returncode == 0, done.stdout + done.stderr
        write_keys(keys_file, [new])
        with (
            statekeeper_replicas(tmp_path, where, 1, encrypted) as servers,
            stubs(servers[0].address) as stub,
        ):
            last = add(stub)
            assert last.outcome == memory_pb2.FACT_OUTCOME_DEDUPLICATED, last
            assert last.fact.id == first.fact.id


# ----- RequestReply replies between replicas ----------------------------------


def test_reply_offers_cross_redis_sealed() -> None:
    """A RequestReply reply handed to the waiter on another replica goes
    through Redis pub/sub: for a sensitive tenant its payload crosses sealed
    (a subscriber sees no marker) and the waiter gets it opened."""
    from statekeeper.core.messagebus.models import AgentMessage, Payload
    from statekeeper.storage import sealed
    from statekeeper.storage.redis.bus import RedisReplyWaiters
    from statekeeper.storage.redis.codec import decode_message
    from statekeeper.storage.sealing import sealer_from

    url = running_services().redis_url
    prefix = redis_prefix("encw")
    sealer = sealer_from("", f"k1:{new_key()}", "", ["alpha"], [])
    marker = f"ZQREPLY{uuid.uuid4().hex[:8].upper()}"

    async def scenario() -> tuple[bytes, list[bytes]]:
        import redis.asyncio as redis_asyncio

        waiting_side = RedisReplyWaiters(url, prefix)
        offering_side = RedisReplyWaiters(url, prefix)
        waiting, offering = (
            sealed.waiters(waiting_side, sealer),
            sealed.waiters(offering_side, sealer),
        )
        spy = redis_asyncio.Redis.from_url(url)
        pubsub = spy.pubsub()
        await pubsub.psubscribe(f"{prefix}:mb:replica:*")
        seen: list[bytes] = []
        try:
            await waiting_side.start()
            await offering_side.start()
            future = await waiting.register("alpha", "agent", "corr-1")
            message = AgentMessage(
                message_id="m-1",
                to_agent="agent",
                correlation_id="corr-1",
                payload=Payload("application/json", 0, json.dumps(marker).encode()),
            )
            taken = False
            for _ in range(100):  # bounded: the subscription of the waiting side
                taken = await offering.offer("alpha", message)
                if taken:
                    break
                await asyncio.sleep(0.1)
            assert taken
            got = await asyncio.wait_for(future, 30)
            for _ in range(50):
                item = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.2)
                if item is None and seen:
                    break
                if item is not None:
                    seen.append(bytes(item["data"]))
            return got.payload.data, seen
        finally:
            await waiting_side.stop()
            await offering_side.stop()
            await pubsub.aclose()  # type: ignore[no-untyped-call]
            await spy.aclose()

    data, seen = asyncio.run(scenario())
    assert data == json.dumps(marker).encode()
    offers = [body for body in seen if b'"offer"' in body]
    assert offers, seen  # the reply did cross Redis
    assert not any(marker.encode() in body for body in offers), offers
    # As it crossed (the message's JSON form encodes the payload): sealed.
    payloads = [decode_message(json.loads(body)["message"]).payload.data for body in offers]
    assert all(p.startswith(b"~sk1~k1~") for p in payloads), payloads
