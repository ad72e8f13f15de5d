"""Driving a server's sessions and reading its store for the archive tests."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import zstandard

from statekeeper_client.v1 import admin_pb2, session_pb2, session_pb2_grpc
from tests.harness.backends import Production
from tests.harness.deadlines import wait_until
from tests.harness.servers import ServerProcess, worker_count

KEYS = {"alpha": "key-alpha", "beta": "key-beta"}
SESSION_TABLES = ("sessions", "messages", "session_versions", "append_receipts")


def auth(tenant: str) -> list[tuple[str, str]]:
    return [("x-api-key", KEYS[tenant])]


def make_session(
    stub: session_pb2_grpc.SessionServiceStub,
    tenant: str,
    session_id: str,
    user_id: str,
    turns: int,
    tag: str = "",
) -> None:
    stub.CreateSession(
        session_pb2.CreateSessionRequest(
            session_id=session_id,
            session=session_pb2.Session(user_id=user_id, agent_id="agent-1"),
        ),
        metadata=auth(tenant),
        timeout=60,
    )
    for turn in range(turns):
        stub.AppendMessages(
            session_pb2.AppendMessagesRequest(
                session_id=session_id,
                request_id=f"{session_id}-turn-{turn}",
                messages=[
                    session_pb2.SessionMessage(
                        role=session_pb2.ROLE_USER, content=f"{tag}question {turn} of {session_id}"
                    ),
                    session_pb2.SessionMessage(
                        role=session_pb2.ROLE_ASSISTANT, content=f"{tag}answer {turn} ✓ {tenant}"
                    ),
                ],
            ),
            metadata=auth(tenant),
            timeout=60,
        )


def read_all(stub: session_pb2_grpc.SessionServiceStub, tenant: str, session_id: str) -> Any:
    """Everything the session API shows of a session (restores it if archived)."""
    meta = auth(tenant)
    session = stub.GetSession(
        session_pb2.GetSessionRequest(session_id=session_id), metadata=meta, timeout=60
    ).session
    messages = stub.ListMessages(
        session_pb2.ListMessagesRequest(session_id=session_id, page_size=1000),
        metadata=meta,
        timeout=60,
    ).messages
    versions = stub.ListSessionVersions(
        session_pb2.ListSessionVersionsRequest(session_id=session_id, page_size=1000),
        metadata=meta,
        timeout=60,
    ).versions
    window = stub.GetContextWindow(
        session_pb2.GetContextWindowRequest(session_id=session_id, token_budget=200),
        metadata=meta,
        timeout=60,
    )
    return (
        session.SerializeToString(deterministic=True),
        [m.SerializeToString(deterministic=True) for m in messages],
        [v.SerializeToString(deterministic=True) for v in versions],
        window.SerializeToString(deterministic=True),
    )


def not_found(call: Any) -> bool:
    try:
        call()
    except grpc.RpcError as exc:
        return bool(exc.code() == grpc.StatusCode.NOT_FOUND)
    return False


def hot_rows(data_dir: Path, tenant: str | None = None) -> dict[str, list[tuple[Any, ...]]]:
    """The session tables' rows of the embedded store (read-only)."""
    db = sqlite3.connect(f"file:{data_dir / 'statekeeper.sqlite3'}?mode=ro", uri=True)
    try:
        rows = {}
        for table in SESSION_TABLES:
            where = "" if tenant is None else " WHERE tenant = ?"
            params = () if tenant is None else (tenant,)
            rows[table] = sorted(
                db.execute(f"SELECT * FROM {table}{where}", params).fetchall(), key=repr
            )
        return rows
    finally:
        db.close()


def hot_sessions(data_dir: Path) -> dict[tuple[str, str], int]:
    return {(row[0], row[1]): row[7] for row in hot_rows(data_dir)["sessions"]}


def chunk_lines(data: bytes) -> list[dict[str, Any]]:
    """The records of an archived chunk (an export file)."""
    text = zstandard.ZstdDecompressor().stream_reader(data).read().decode()
    return [json.loads(line) for line in text.splitlines()]


def erase_user(
    channel: grpc.Channel, tenant: str, user_id: str, dry_run: bool = False
) -> admin_pb2.EraseUserResponse:
    from statekeeper_client.v1 import admin_pb2_grpc

    stub = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]
    answer: admin_pb2.EraseUserResponse = stub.EraseUser(
        admin_pb2.EraseUserRequest(user_id=user_id, dry_run=dry_run),
        metadata=auth(tenant),
        timeout=120,
    )
    return answer


def statekeeper(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "statekeeper", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def hot(server: ServerProcess, where: Production | None) -> dict[tuple[str, str], int]:
    """Hot sessions and their versions, read from the database itself."""
    if where is None:
        return hot_sessions(server.data_dir)

    async def query() -> dict[tuple[str, str], int]:
        conn = await asyncpg.connect(where.postgres_dsn)
        try:
            rows = await conn.fetch("SELECT tenant, session_id, version FROM sessions")
        finally:
            await conn.close()
        return {(row[0], row[1]): int(row[2]) for row in rows}

    return asyncio.run(query())


def serve(server: ServerProcess, args: list[str]) -> None:
    """Restarts the server with `args` (an archive configured), and returns
    once every worker's repair at start has ended: a repair still running
    could remove objects a test then puts in place."""
    server.stop()
    server.extra_args = args
    server.start()
    wait_until(lambda: repairs_at_start(server.log()), 60, "the repairs at start", server.log_tail)


def repairs_at_start(log: str) -> bool:
    """True once each worker process has logged how its repair at start
    ended."""
    return log.count("archive repair at start:") >= (worker_count(log) or 1)
