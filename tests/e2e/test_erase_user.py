"""EraseUser end to end, on both backends, through real server processes.

Tenant alpha has users U and V, tenant beta has a user with the same id U.
Each (tenant, user) gets data in every capability, every piece carrying a
marker unique to it. After EraseUser(U) in alpha:

1. every read API returns nothing of alpha's U, while alpha's V and beta's U
   are untouched;
2. a dump of everything stored (the SQLite file and its WAL as raw bytes; on
   the production tier every PostgreSQL table and every Redis key under the
   deployment's prefix; the vector index snapshot files of every replica)
   holds no marker of alpha's U and still holds the others';
3. Recall for alpha's U returns nothing on the other replica too (production
   runs two replicas), whose index snapshot of U is gone as well;

and a dry run beforehand reported exactly the counts of the real erasure,
which leaves one audit record naming the user by a hash only.

The audit trail is excluded from the dumps on purpose: records written
before the erasure keep their text (e.g. "put users/<U>/profile"), since
deleting or rewriting them would break the tenant's hash chain (README,
"Erasing a user"); the test checks that this is all they hold.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import struct
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import grpc
import pytest
import redis
from google.protobuf import struct_pb2

from statekeeper_client import AsyncClient, Client
from statekeeper_client.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    blackboard_pb2,
    blackboard_pb2_grpc,
    checkpoint_pb2,
    checkpoint_pb2_grpc,
    common_pb2,
    items_pb2,
    items_pb2_grpc,
    memory_pb2,
    memory_pb2_grpc,
    message_pb2,
    message_pb2_grpc,
    session_pb2,
    session_pb2_grpc,
)
from tests.e2e.errors import bad_field
from tests.harness.backends import BACKENDS, PRODUCTION, backend
from tests.harness.deadlines import wait_until
from tests.harness.deploy import statekeeper_replicas
from tests.harness.servers import ServerProcess

KEYS = {"alpha": "key-alpha", "beta": "key-beta"}
DIMENSION = 8
# Small indexes are saved too, and soon, so that snapshots exist to check.
SERVE_ARGS = [
    "--embedder-kind",
    "none",
    "--limit",
    "memory.index.snapshot_min_vectors=1",
    "--limit",
    "memory.index_snapshot_interval_seconds=0.5",
]
SNAPSHOT_MAGIC = b"SKVIDX01"


@dataclass(frozen=True)
class Owner:
    """A (tenant, user) and its marker: in contents only, never in ids (ids
    are in the audit trail, which the erasure keeps)."""

    tenant: str
    user: str
    marker: str
    vector: tuple[float, ...]
    ident: str

    @property
    def auth(self) -> list[tuple[str, str]]:
        return [("x-api-key", KEYS[self.tenant])]

    @property
    def session_id(self) -> str:
        return f"s-{self.ident}"

    @property
    def execution_id(self) -> str:
        return f"exec-{self.ident}"

    @property
    def workflow_id(self) -> str:
        return f"wf-{self.ident}"

    @property
    def board_key(self) -> str:
        return f"users/{self.user}/profile"

    @property
    def agent(self) -> str:
        return f"user:{self.user}"

    @property
    def namespace(self) -> list[str]:
        return ["users", self.user, "prefs"]


def owners() -> tuple[Owner, Owner, Owner]:
    run = uuid.uuid4().hex[:8]
    user_u, user_v = f"u-{run}", f"v-{run}"

    def vector(seed: int) -> tuple[float, ...]:
        return tuple(float((seed * 7 + i * 3) % 11) + 1.0 for i in range(DIMENSION))

    return (
        Owner("alpha", user_u, f"MARKAU{run}", vector(1), uuid.uuid4().hex[:8]),
        Owner("alpha", user_v, f"MARKAV{run}", vector(2), uuid.uuid4().hex[:8]),
        Owner("beta", user_u, f"MARKBU{run}", vector(3), uuid.uuid4().hex[:8]),
    )


def payload(text: str) -> common_pb2.Payload:
    return common_pb2.Payload(content_type="application/json", data=json.dumps(text).encode())


def json_struct(values: dict[str, str]) -> struct_pb2.Struct:
    result = struct_pb2.Struct()
    result.update(values)
    return result


class Stubs:
    def __init__(self, channel: grpc.Channel) -> None:
        self.sessions = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
        self.memory = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        self.checkpoints = checkpoint_pb2_grpc.CheckpointServiceStub(channel)  # type: ignore[no-untyped-call]
        self.blackboard = blackboard_pb2_grpc.BlackboardServiceStub(channel)  # type: ignore[no-untyped-call]
        self.bus = message_pb2_grpc.MessageServiceStub(channel)  # type: ignore[no-untyped-call]
        self.items = items_pb2_grpc.ItemServiceStub(channel)  # type: ignore[no-untyped-call]
        self.admin = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]


def stubs_for(server: ServerProcess) -> Iterator[Stubs]:
    with grpc.insecure_channel(server.address) as channel:
        yield Stubs(channel)


# ----- filling ---------------------------------------------------------------


def fill(stub: Stubs, owner: Owner) -> int:
    """Something of `owner` in every capability, each carrying its marker;
    returns the blackboard revision of the first put of its key."""
    md, mark = owner.auth, owner.marker
    stub.sessions.CreateSession(
        session_pb2.CreateSessionRequest(
            session_id=owner.session_id,
            session=session_pb2.Session(user_id=owner.user, metadata={"note": mark}),
        ),
        metadata=md,
    )
    stub.sessions.AppendMessages(
        session_pb2.AppendMessagesRequest(
            session_id=owner.session_id,
            messages=[session_pb2.SessionMessage(role=session_pb2.ROLE_USER, content=f"hi {mark}")],
            request_id=f"append-{mark}",
        ),
        metadata=md,
    )
    for index in range(2):
        stub.memory.RecordEpisode(
            memory_pb2.RecordEpisodeRequest(
                user_id=owner.user,
                session_id=owner.session_id,
                user_message=f"episode {index} {mark}",
                assistant_response=f"answer {mark}",
                # The second far from the first (not a near duplicate).
                embedding=[v if index == 0 or i % 2 else -v for i, v in enumerate(owner.vector)],
                metadata={"note": mark},
            ),
            metadata=md,
        )
    stub.memory.AddFacts(
        memory_pb2.AddFactsRequest(
            user_id=owner.user,
            facts=[memory_pb2.FactInput(subject=f"person {mark}", predicate="likes", object=mark)],
        ),
        metadata=md,
    )
    checkpoint = checkpoint_pb2.Checkpoint(
        execution_id=owner.execution_id,
        checkpoint_id="c1",
        step=1,
        state=payload(f"state {mark}"),
        channels={"messages": checkpoint_pb2.ChannelValue(version="1", value=payload(mark))},
        metadata=json_struct({"user_id": owner.user, "note": mark}),
    )
    stub.checkpoints.SaveCheckpoint(
        checkpoint_pb2.SaveCheckpointRequest(checkpoint=checkpoint), metadata=md
    )
    stub.checkpoints.StartWorkflow(
        checkpoint_pb2.StartWorkflowRequest(
            workflow_id=owner.workflow_id,
            steps=[checkpoint_pb2.WorkflowStepSpec(step_id="one", inputs=payload(mark))],
            metadata=json_struct({"user_id": owner.user, "note": mark}),
        ),
        metadata=md,
    )
    revisions: list[int] = []
    for version in range(2):  # a history of two versions
        put = stub.blackboard.PutEntry(
            blackboard_pb2.PutEntryRequest(
                board="profiles",
                key=owner.board_key,
                value=blackboard_pb2.BlackboardValue(json=json_struct({"v": f"{version} {mark}"})),
            ),
            metadata=md,
        )
        revisions.append(int(put.entry.mod_revision))
    stub.bus.SendMessage(
        message_pb2.SendMessageRequest(
            to_agent=owner.agent, payload=payload(f"inbox {mark}"), max_deliveries=100
        ),
        metadata=md,
    )
    stub.bus.SendMessage(
        message_pb2.SendMessageRequest(to_agent=owner.agent, payload=payload(f"dead {mark}")),
        metadata=md,
    )
    pulled = stub.bus.PullMessages(
        message_pb2.PullMessagesRequest(agent_id=owner.agent, max_messages=1), metadata=md
    )
    stub.bus.NackMessages(
        message_pb2.NackMessagesRequest(
            receipt_handles=[d.receipt_handle for d in pulled.deliveries], dead_letter=True
        ),
        metadata=md,
    )
    stub.items.PutItem(
        items_pb2.PutItemRequest(
            namespace=owner.namespace, key="colour", value_json=json.dumps({"m": mark})
        ),
        metadata=md,
    )
    return revisions[0]


# ----- reading back ----------------------------------------------------------


def not_found(call: object) -> bool:
    try:
        call()  # type: ignore[operator]
    except grpc.RpcError as exc:
        return exc.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[no-any-return]
    return False


def recall(stub: Stubs, owner: Owner) -> list[str]:
    reply = stub.memory.Recall(
        memory_pb2.RecallRequest(
            user_id=owner.user,
            query_vector=memory_pb2.QueryVector(values=list(owner.vector)),
            top_k=10,
        ),
        metadata=owner.auth,
    )
    return [r.episode.user_message for r in reply.results]


def visible(stub: Stubs, owner: Owner, first_revision: int) -> dict[str, bool]:
    """Which read APIs return something of `owner`."""
    md = owner.auth
    episodes = stub.memory.ListEpisodes(
        memory_pb2.ListEpisodesRequest(user_id=owner.user), metadata=md
    ).episodes
    facts = stub.memory.ListFacts(
        memory_pb2.ListFactsRequest(user_id=owner.user, include_invalidated=True), metadata=md
    ).facts
    sessions = stub.sessions.ListSessions(
        session_pb2.ListSessionsRequest(user_id=owner.user), metadata=md
    ).sessions
    checkpoints = stub.checkpoints.ListCheckpoints(
        checkpoint_pb2.ListCheckpointsRequest(execution_id=owner.execution_id), metadata=md
    ).checkpoints
    entries = stub.blackboard.ListEntries(
        blackboard_pb2.ListEntriesRequest(board="profiles", prefix=f"users/{owner.user}/"),
        metadata=md,
    ).entries
    first_put = stub.blackboard.GetEntry(
        blackboard_pb2.GetEntryRequest(
            board="profiles", key=owner.board_key, revision=first_revision
        ),
        metadata=md,
    )
    inbox = stub.bus.PullMessages(
        message_pb2.PullMessagesRequest(agent_id=owner.agent, max_messages=10), metadata=md
    ).deliveries
    if inbox:  # back to the inbox at once, for the next look
        stub.bus.NackMessages(
            message_pb2.NackMessagesRequest(receipt_handles=[d.receipt_handle for d in inbox]),
            metadata=md,
        )
    dead = stub.bus.ListDeadLetters(
        message_pb2.ListDeadLettersRequest(agent_id=owner.agent), metadata=md
    ).dead_letters
    found = stub.items.SearchItems(
        items_pb2.SearchItemsRequest(namespace_prefix=["users", owner.user]), metadata=md
    ).items
    return {
        "session": not not_found(
            lambda: stub.sessions.GetSession(
                session_pb2.GetSessionRequest(session_id=owner.session_id), metadata=md
            )
        ),
        "listed sessions": bool(sessions),
        "episodes": bool(episodes),
        "recall": bool(recall(stub, owner)),
        "facts": bool(facts),
        "checkpoints": bool(checkpoints),
        "workflow": not not_found(
            lambda: stub.checkpoints.GetWorkflow(
                checkpoint_pb2.GetWorkflowRequest(workflow_id=owner.workflow_id), metadata=md
            )
        ),
        "entries": bool(entries),
        "entry history": first_put.found,
        "inbox": bool(inbox),
        "dead letters": bool(dead),
        "items": bool(found),
    }


ALL = dict.fromkeys(
    [
        "session",
        "listed sessions",
        "episodes",
        "recall",
        "facts",
        "checkpoints",
        "workflow",
        "entries",
        "entry history",
        "inbox",
        "dead letters",
        "items",
    ],
    True,
)
NONE = dict.fromkeys(ALL, False)


def erase(server: ServerProcess, owner: Owner, dry_run: bool) -> admin_pb2.EraseUserResponse:
    """Through the Python client: the blocking one for real erasures, the
    asyncio one for dry runs."""
    key = KEYS[owner.tenant]
    if dry_run:

        async def dry() -> admin_pb2.EraseUserResponse:
            async with AsyncClient(server.address, api_key=key) as client:
                return await client.erase_user(owner.user, dry_run=True)

        return asyncio.run(dry())
    with Client(server.address, api_key=key) as client:
        return client.erase_user(owner.user)


def counts(reply: admin_pb2.EraseUserResponse) -> dict[tuple[str, str], int]:
    return {(c.capability, c.kind): c.count for c in reply.counts}


# ----- dumps -----------------------------------------------------------------

AUDIT_TABLES = {"audit_log", "audit_chain_heads"}


def sqlite_dump(data_dir: Path) -> bytes:
    """The SQLite file and its WAL as raw bytes (free pages included), after
    a checkpoint by a connection of our own while the server runs."""
    path = data_dir / "statekeeper.sqlite3"
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    raw = path.read_bytes()
    wal = path.with_name(path.name + "-wal")
    return raw + wal.read_bytes() if wal.exists() else raw


def sqlite_rows(data_dir: Path) -> list[str]:
    """Every row of every table but the audit ones, as text."""
    db = sqlite3.connect(data_dir / "statekeeper.sqlite3")
    try:
        tables = [
            row[0]
            for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if row[0] not in AUDIT_TABLES
        ]
        return [
            f"{table}: {row!r}"
            for table in tables
            for row in db.execute(f'SELECT * FROM "{table}"')
        ]
    finally:
        db.close()


async def postgres_rows(dsn: str) -> list[str]:
    conn = await asyncpg.connect(dsn)
    try:
        tables = await conn.fetch(
            "SELECT schemaname, tablename FROM pg_tables"
            " WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        )
        lines: list[str] = []
        for table in tables:
            name = table["tablename"]
            if name in AUDIT_TABLES:
                continue
            qualified = f'"{table["schemaname"]}"."{name}"'
            rows = await conn.fetch(f"SELECT t::text AS row FROM {qualified} t")
            lines.extend(f"{name}: {r['row']}" for r in rows)
            # bytea columns print as hex: decode them too.
            columns = await conn.fetch(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = $1 AND table_name = $2 AND data_type = 'bytea'",
                table["schemaname"],
                name,
            )
            for column in columns:
                values = await conn.fetch(f'SELECT "{column["column_name"]}" AS v FROM {qualified}')
                lines.extend(
                    f"{name}: {bytes(v['v']).decode(errors='replace')}"
                    for v in values
                    if v["v"] is not None
                )
        return lines
    finally:
        await conn.close()


def redis_dump(url: str, prefix: str) -> str:
    client = redis.Redis.from_url(url)
    try:
        lines: list[str] = []
        for key in client.scan_iter(match=f"{prefix}*", count=500):
            kind = client.type(key)
            kind = kind.decode() if isinstance(kind, bytes) else str(kind)
            if kind == "string":
                value: object = client.get(key)
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
            lines.append(f"{key!r}: {value!r}")
        return "\n".join(lines)
    finally:
        client.close()


def snapshot_owners(index_dir: Path) -> set[tuple[str, str]]:
    """(tenant, user_id) of every vector index snapshot file (its header)."""
    found: set[tuple[str, str]] = set()
    for path in index_dir.glob("*.faiss") if index_dir.is_dir() else ():
        data = path.read_bytes()
        magic, length, _ = struct.unpack("<8sII", data[:16])
        assert magic == SNAPSHOT_MAGIC
        header = json.loads(data[16 : 16 + length])
        found.add((header["tenant"], header["user_id"]))
    return found


def snapshot_check(server: ServerProcess, owner: Owner, present: bool) -> Callable[[], bool]:
    def check() -> bool:
        owners = snapshot_owners(server.data_dir / "indexes")
        return ((owner.tenant, owner.user) in owners) == present

    return check


def snapshot_bytes(index_dir: Path) -> bytes:
    if not index_dir.is_dir():
        return b""
    return b"".join(p.read_bytes() for p in sorted(index_dir.iterdir()) if p.is_file())


# ----- the test --------------------------------------------------------------


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_erase_user_everywhere(backend_name: str, tmp_path: Path) -> None:
    erased, other_user, other_tenant = owners()
    replicas = 2 if backend_name == PRODUCTION else 1
    with (
        backend(backend_name, "erase") as where,
        statekeeper_replicas(tmp_path, where, replicas, SERVE_ARGS) as servers,
    ):
        first, last = servers[0], servers[-1]
        everyone = (erased, other_user, other_tenant)
        revisions: dict[Owner, int] = {}
        with grpc.insecure_channel(first.address) as channel:
            stub = Stubs(channel)
            for owner in everyone:
                revisions[owner] = fill(stub, owner)
                assert visible(stub, owner, revisions[owner]) == ALL
        with grpc.insecure_channel(last.address) as channel:
            # Every replica loads every index (and saves its snapshot).
            for owner in everyone:
                assert recall(Stubs(channel), owner)
        for server in servers:
            for owner in everyone:
                wait_until(
                    snapshot_check(server, owner, present=True), 30, "every index snapshot saved"
                )

        with grpc.insecure_channel(first.address) as channel:
            stub = Stubs(channel)
            dry = erase(first, erased, dry_run=True)
            assert dry.dry_run
            assert visible(stub, erased, revisions[erased]) == ALL  # a dry run changes nothing
            real = erase(first, erased, dry_run=False)
            assert counts(real) == counts(dry)
            assert counts(real)[("sessions", "sessions")] == 1
            assert counts(real)[("sessions", "messages")] == 1
            assert counts(real)[("memory", "episodes")] == 2
            assert counts(real)[("memory", "facts")] == 1
            assert counts(real)[("checkpoints", "checkpoints")] == 1
            assert counts(real)[("workflows", "workflows")] == 1
            assert counts(real)[("blackboard", "entries")] == 1
            assert counts(real)[("blackboard", "versions")] == 2
            assert counts(real)[("messagebus", "messages")] == 2
            assert counts(real)[("items", "items")] == 1
            assert real.user_hash and erased.user not in real.user_hash

            # (1) nothing of U in alpha through any read API; the others intact.
            assert visible(stub, erased, revisions[erased]) == NONE
            assert visible(stub, other_user, revisions[other_user]) == ALL
            assert visible(stub, other_tenant, revisions[other_tenant]) == ALL
            # Idempotent: again, nothing left to erase.
            assert counts(erase(first, erased, dry_run=False)) == {}

            # One audit record, naming the user by its hash only.
            records = stub.admin.ListAuditRecords(
                admin_pb2.ListAuditRecordsRequest(method="EraseUser"), metadata=erased.auth
            ).audit_records
            assert [(r.entity_type, r.entity_id) for r in records] == [
                ("user", real.user_hash),
                ("user", real.user_hash),
            ]
            assert all(erased.user not in r.summary for r in records)
            assert "memory.episodes=2" in records[-1].summary

        # (3) the other replica: no recall, and its snapshot of U is gone.
        with grpc.insecure_channel(last.address) as channel:
            assert recall(Stubs(channel), erased) == []
            assert recall(Stubs(channel), other_user)
        for server in servers:
            wait_until(
                snapshot_check(server, erased, present=False),
                30,
                "the erased user's index snapshot deleted",
            )
            owners_left = snapshot_owners(server.data_dir / "indexes")
            assert (other_user.tenant, other_user.user) in owners_left
            assert (other_tenant.tenant, other_tenant.user) in owners_left

        # (2) the dumps: no marker of U in alpha, the others' still there; and
        # no stored row (the audit trail aside) of alpha naming U.
        dumps: list[str] = []
        for server in servers:
            dumps.append(snapshot_bytes(server.data_dir / "indexes").decode(errors="replace"))
        if where is None:
            dumps.append(sqlite_dump(first.data_dir).decode(errors="replace"))
            rows = sqlite_rows(first.data_dir)
            in_alpha = [r for r in rows if "'alpha'" in r]
        else:
            dumps.append(redis_dump(where.redis_url, where.redis_prefix))
            rows = asyncio.run(postgres_rows(where.postgres_dsn))
            in_alpha = [r for r in rows if "(alpha," in r]
        dumps.extend(rows)
        # Case-folded: the lexical index keeps terms case-folded.
        everything = "\n".join(dumps).casefold()
        assert erased.marker.casefold() not in everything
        assert other_user.marker.casefold() in everything
        assert other_tenant.marker.casefold() in everything
        assert [r for r in in_alpha if erased.user in r] == []
        assert [r for r in in_alpha if other_user.user in r] != []


def test_erase_user_checks_its_request_and_caller(tmp_path: Path) -> None:
    with (
        statekeeper_replicas(tmp_path, None, 1, SERVE_ARGS) as [server],
        grpc.insecure_channel(server.address) as channel,
    ):
        admin = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]
        key = [("x-api-key", KEYS["alpha"])]
        with pytest.raises(grpc.RpcError) as anonymous:
            admin.EraseUser(admin_pb2.EraseUserRequest(user_id="u1"))
        assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
        for request, field in [
            (admin_pb2.EraseUserRequest(), "user_id"),
            (admin_pb2.EraseUserRequest(user_id="has space"), "user_id"),
            (
                admin_pb2.EraseUserRequest(user_id="u1", blackboard_key_prefixes=[""]),
                "blackboard_key_prefixes[0]",
            ),
            (
                admin_pb2.EraseUserRequest(user_id="u1", agent_ids=["a"] * 17),
                "agent_ids",
            ),
            (
                admin_pb2.EraseUserRequest(
                    user_id="u1", item_namespaces=[admin_pb2.ErasedItemNamespace()]
                ),
                "item_namespaces[0]",
            ),
        ]:
            with pytest.raises(grpc.RpcError) as invalid:
                admin.EraseUser(request, metadata=key)
            assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert bad_field(invalid.value) == field
        # Nothing of the user: an erasure that finds nothing, recorded.
        reply = admin.EraseUser(admin_pb2.EraseUserRequest(user_id="nobody"), metadata=key)
        assert list(reply.counts) == [] and reply.user_hash
        [record] = admin.ListAuditRecords(
            admin_pb2.ListAuditRecordsRequest(entity_type="user"), metadata=key
        ).audit_records
        assert (record.method, record.entity_id) == ("EraseUser", reply.user_hash)
        assert record.summary == "erased user: nothing found"
