"""`statekeeper inspect session|user|board|execution TENANT/ID`: a readable
view of one thing, read from the store (never created, never written; the
same table and column names on both backends, so one set of queries)."""

from __future__ import annotations

import contextlib
import datetime
import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Protocol

from statekeeper.admin.transfer import TransferError
from statekeeper.core.sessions.models import Role, SessionStatus
from statekeeper.core.workflows.models import WorkflowStatus

NEWEST = 5
TEXT_WIDTH = 72


class Reader(Protocol):
    async def fetch(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        """Rows of `sql`, whose parameters are written {1}, {2}, ..."""


class _SqliteReader:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    async def fetch(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        cursor = self._db.execute(_numbered(sql, lambda n: f"?{n}"), params)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


class _PostgresReader:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def fetch(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        rows = await self._conn.fetch(_numbered(sql, lambda n: f"${n}"), *params)
        return [dict(row) for row in rows]


def _numbered(sql: str, style: Callable[[int], str]) -> str:
    for number in range(1, 10):
        sql = sql.replace("{" + str(number) + "}", style(number))
    return sql


@contextlib.asynccontextmanager
async def reader(data_dir: Path, postgres_dsn: str) -> AsyncIterator[Reader]:
    if postgres_dsn:
        from statekeeper.admin import postgres

        conn = await postgres.connect(postgres_dsn)
        try:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                yield _PostgresReader(conn)
        finally:
            await conn.close()
        return
    from statekeeper.admin.embedded import open_existing

    try:
        db = open_existing(data_dir)
    except sqlite3.OperationalError as exc:
        raise TransferError(f"no embedded store in {data_dir}: {exc}") from exc
    with contextlib.closing(db):
        db.execute("PRAGMA query_only=ON")
        yield _SqliteReader(db)


class NotFoundError(TransferError):
    pass


def split_name(text: str) -> tuple[str, str]:
    tenant, slash, name = text.partition("/")
    if not slash or not tenant or not name:
        raise TransferError(f"expected TENANT/ID, got {text!r}")
    return tenant, name


async def session(db: Reader, tenant: str, session_id: str) -> dict[str, Any]:
    rows = await db.fetch(
        "SELECT session_id, user_id, agent_id, status, create_time, expire_time, version"
        " FROM sessions WHERE tenant = {1} AND session_id = {2}",
        tenant,
        session_id,
    )
    if not rows:
        raise NotFoundError(f"no session {session_id} in tenant {tenant}")
    view = rows[0]
    view["status"] = _named(SessionStatus, view["status"])
    counts = await db.fetch(
        "SELECT count(*) AS messages, coalesce(sum(token_count), 0) AS tokens"
        " FROM messages WHERE tenant = {1} AND session_id = {2}",
        tenant,
        session_id,
    )
    view.update(counts[0])
    versions = await db.fetch(
        "SELECT count(*) AS n FROM session_versions WHERE tenant = {1} AND session_id = {2}",
        tenant,
        session_id,
    )
    view["versions"] = versions[0]["n"]
    view["newest_messages"] = await db.fetch(
        "SELECT sequence, role, name, content, create_time FROM messages"
        " WHERE tenant = {1} AND session_id = {2} ORDER BY sequence DESC LIMIT {3}",
        tenant,
        session_id,
        NEWEST,
    )
    for message in view["newest_messages"]:
        message["role"] = _named(Role, message["role"])
    return view


async def user(db: Reader, tenant: str, user_id: str) -> dict[str, Any]:
    view: dict[str, Any] = {"tenant": tenant, "user_id": user_id}
    for name, sql in (
        ("sessions", "SELECT count(*) AS n FROM sessions WHERE tenant = {1} AND user_id = {2}"),
        (
            "episodes",
            "SELECT count(*) AS n FROM memory_episodes WHERE tenant = {1} AND user_id = {2}",
        ),
        (
            "facts",
            "SELECT count(*) AS n FROM memory_facts WHERE tenant = {1} AND user_id = {2}",
        ),
        (
            "facts_valid",
            "SELECT count(*) AS n FROM memory_facts WHERE tenant = {1} AND user_id = {2}"
            " AND invalidate_time IS NULL",
        ),
    ):
        view[name] = (await db.fetch(sql, tenant, user_id))[0]["n"]
    if not (view["sessions"] or view["episodes"] or view["facts"]):
        raise NotFoundError(f"no sessions or memory of user {user_id} in tenant {tenant}")
    view["newest_episodes"] = await db.fetch(
        "SELECT episode_id, occur_time, importance, summary, user_message FROM memory_episodes"
        " WHERE tenant = {1} AND user_id = {2} ORDER BY occur_time DESC, vector_key DESC"
        " LIMIT {3}",
        tenant,
        user_id,
        NEWEST,
    )
    view["newest_facts"] = await db.fetch(
        "SELECT fact_id, subject, predicate, object, confidence, create_time, invalidate_time"
        " FROM memory_facts WHERE tenant = {1} AND user_id = {2}"
        " ORDER BY create_time DESC, fact_id DESC LIMIT {3}",
        tenant,
        user_id,
        NEWEST,
    )
    return view


async def board(db: Reader, tenant: str, name: str) -> dict[str, Any]:
    keys = await db.fetch(
        "SELECT key, kind, content_type, revision, create_revision, version, writer,"
        " length(data) AS size, update_time, expire_time FROM bb_entries"
        " WHERE tenant = {1} AND board = {2} ORDER BY key",
        tenant,
        name,
    )
    tenant_rows = await db.fetch(
        "SELECT revision, oldest_revision FROM bb_tenants WHERE tenant = {1}", tenant
    )
    if not keys and not tenant_rows:
        raise NotFoundError(f"no board {name} in tenant {tenant}")
    history = await db.fetch(
        "SELECT count(*) AS n FROM bb_versions WHERE tenant = {1} AND board = {2}",
        tenant,
        name,
    )
    return {
        "tenant": tenant,
        "board": name,
        "tenant_revision": tenant_rows[0]["revision"] if tenant_rows else 0,
        "oldest_revision": tenant_rows[0]["oldest_revision"] if tenant_rows else 0,
        "board_revision": max((key["revision"] for key in keys), default=0),
        "history_versions": history[0]["n"],
        "keys": keys,
    }


async def execution(db: Reader, tenant: str, execution_id: str) -> dict[str, Any]:
    view: dict[str, Any] = {"tenant": tenant, "execution_id": execution_id}
    owner = await db.fetch(
        "SELECT last_sequence, ownership_epoch FROM cp_executions"
        " WHERE tenant = {1} AND execution_id = {2}",
        tenant,
        execution_id,
    )
    view["checkpoints"] = (
        await db.fetch(
            "SELECT count(*) AS n FROM cp_checkpoints WHERE tenant = {1} AND execution_id = {2}",
            tenant,
            execution_id,
        )
    )[0]["n"]
    view["pending_writes"] = (
        await db.fetch(
            "SELECT count(*) AS n FROM cp_writes WHERE tenant = {1} AND execution_id = {2}",
            tenant,
            execution_id,
        )
    )[0]["n"]
    view["newest_checkpoints"] = await db.fetch(
        "SELECT namespace, checkpoint_id, parent_checkpoint_id, step, step_name, run_id,"
        " create_time_ns FROM cp_checkpoints WHERE tenant = {1} AND execution_id = {2}"
        " ORDER BY create_time_ns DESC, sequence DESC LIMIT {3}",
        tenant,
        execution_id,
        NEWEST,
    )
    workflow = await db.fetch(
        "SELECT status, revision, create_time, document_type, length(document) AS size"
        " FROM wf_workflows WHERE tenant = {1} AND workflow_id = {2}",
        tenant,
        execution_id,
    )
    if not owner and not view["checkpoints"] and not workflow:
        raise NotFoundError(f"no checkpoints or workflow {execution_id} in tenant {tenant}")
    if owner:
        view.update(owner[0])
    view["workflow"] = workflow[0] if workflow else None
    if workflow:
        view["workflow"]["status"] = _named(WorkflowStatus, workflow[0]["status"])
        view["workflow"]["claimable_steps"] = await db.fetch(
            "SELECT step_id, name, claimable_at, cause FROM wf_claimable"
            " WHERE tenant = {1} AND workflow_id = {2} ORDER BY claimable_at, step_id",
            tenant,
            execution_id,
        )
        view["workflow"]["transitions"] = await db.fetch(
            "SELECT revision, step_id, kind, attempt, worker_id, time FROM wf_transitions"
            " WHERE tenant = {1} AND workflow_id = {2} ORDER BY revision DESC LIMIT {3}",
            tenant,
            execution_id,
            NEWEST,
        )
    return view


VIEWS = {"session": session, "user": user, "board": board, "execution": execution}


def _named(kind: Any, number: int) -> str:
    """An enum's name (as the API spells it), or the number if unknown."""
    try:
        return str(kind(number).name)
    except ValueError:
        return str(number)


def as_json(view: dict[str, Any]) -> str:
    return json.dumps(view, default=_plain, ensure_ascii=False, indent=2)


def _plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return str(value)


def as_text(kind: str, view: dict[str, Any]) -> str:
    """Scalars as `name: value` lines, lists as indented tables."""
    lines = [f"{kind}"]
    _render(view, lines, "  ")
    return "\n".join(lines)


def _render(view: dict[str, Any], lines: list[str], indent: str) -> None:
    scalars = [(k, v) for k, v in view.items() if not isinstance(v, list | dict)]
    width = max((len(k) for k, _ in scalars), default=0)
    for name, value in scalars:
        lines.append(f"{indent}{name.ljust(width)}  {_show(name, value)}")
    for name, value in view.items():
        if isinstance(value, dict):
            lines.append(f"{indent}{name}:")
            _render(value, lines, indent + "  ")
        elif isinstance(value, list):
            lines.append(f"{indent}{name}: {len(value)}" + (" (newest first)" * bool(value)))
            for row in value:
                lines.append(indent + "  - " + _row(row))


def _row(row: Any) -> str:
    if not isinstance(row, dict):
        return str(row)
    return "  ".join(f"{k}={_show(k, v)}" for k, v in row.items() if v not in (None, ""))


def _show(name: str, value: Any) -> str:
    if value is None:
        return "-"
    timed = name.endswith(("_time", "_at")) or name == "time"
    if timed and isinstance(value, int | float):
        return _when(float(value))
    if name.endswith("_time_ns") and isinstance(value, int):
        return _when(value / 1e9)
    text = str(value).replace("\n", " ")
    return text if len(text) <= TEXT_WIDTH else text[: TEXT_WIDTH - 1] + "…"


def _when(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
