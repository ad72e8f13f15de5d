"""The SQLite side of export/import (admin/transfer.py) and inspect.

Rows are read in rowid order (the insertion order, which some queries of
the embedded store sort by; the audit log in chain order) inside one read
transaction, and replayed in that order. The audit trigger needs the
store's digest function; imported episodes get their rows in the FTS5
lexical index in the same transaction.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

from statekeeper.admin.tables import Table
from statekeeper.admin.transfer import Selection, conflict, tenant_selection
from statekeeper.core.memory import lexical
from statekeeper.storage import schemas
from statekeeper.storage.embedded.sessions_schema import AUDIT_DIGEST, DATABASE_FILE, audit_digest
from statekeeper.storage.sql import sqlite_numbered_mark


def open_existing(data_dir: Path) -> sqlite3.Connection:
    """The store's file, never created here (mode=rw)."""
    database = data_dir / DATABASE_FILE
    db = sqlite3.connect(f"file:{database}?mode=rw", uri=True, isolation_level=None)
    db.execute("PRAGMA busy_timeout=5000")
    db.create_function(AUDIT_DIGEST, 10, audit_digest, deterministic=True)
    return db


class _Embedded:
    backend = "embedded"

    def __init__(self, db: sqlite3.Connection, data_dir: Path) -> None:
        self._db = db
        self._data_dir = data_dir

    async def schema_versions(self) -> dict[str, int]:
        states = schemas.embedded_states(self._data_dir / DATABASE_FILE)
        return {state.name: state.version for state in states}

    async def columns(self, table: Table) -> list[str]:
        rows = self._db.execute(f"PRAGMA table_info({table.name})").fetchall()
        return [row[1] for row in rows if row[1] not in table.generated]

    def selection(self, table: Table, tenant: str, user: str | None) -> Selection | None:
        """What is read of `table` (None: nothing); a unit's source narrows it."""
        return tenant_selection(table, tenant, user, sqlite_numbered_mark)

    async def count(self, table: Table, tenant: str, user: str | None) -> int:
        chosen = self.selection(table, tenant, user)
        if chosen is None:
            return 0
        row = self._db.execute(
            f"SELECT count(*) FROM {table.name} WHERE {chosen.where}", chosen.params
        ).fetchone()
        return int(row[0])

    async def identity(self) -> str:
        return f"embedded:{(self._data_dir / DATABASE_FILE).resolve()}"


class EmbeddedSource(_Embedded):
    """Reads inside one read transaction (BEGIN ... the first SELECT fixes
    the snapshot, WAL keeps it while writers go on)."""

    async def rows(
        self, table: Table, columns: Sequence[str], tenant: str, user: str | None
    ) -> AsyncIterator[Sequence[Any]]:
        chosen = self.selection(table, tenant, user)
        if chosen is None:
            return
        order = chosen.order or table.sort or "rowid"
        cursor = self._db.execute(
            f"SELECT {', '.join(columns)} FROM {table.name} WHERE {chosen.where} ORDER BY {order}",
            chosen.params,
        )
        for row in cursor:
            yield row


@contextlib.contextmanager
def read_snapshot(data_dir: Path) -> Iterator[sqlite3.Connection]:
    """The store's file on a connection of its own, inside one read
    transaction (its first SELECT fixes the snapshot), rolled back and
    closed at the end: what an export reads."""
    with contextlib.closing(open_existing(data_dir)) as db:
        db.execute("BEGIN")
        try:
            yield db
        finally:
            db.execute("ROLLBACK")


@contextlib.asynccontextmanager
async def source(data_dir: Path) -> AsyncIterator[EmbeddedSource]:
    with read_snapshot(data_dir) as db:
        yield EmbeddedSource(db, data_dir)


class EmbeddedTarget(_Embedded):
    async def insert(
        self, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        names = ", ".join(columns)
        marks = ", ".join("?" for _ in columns)
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(f"INSERT INTO {table.name} ({names}) VALUES ({marks})", rows)
            if table.name == "memory_episodes":
                index_episodes(db, list(columns), rows)
            db.execute("COMMIT")
        except sqlite3.IntegrityError as exc:
            db.execute("ROLLBACK")
            raise conflict(table, exc, f"{exc} (the key of a row in this batch)") from exc
        except BaseException:
            db.execute("ROLLBACK")
            raise

    async def finish(self, tables: Sequence[Table], tenant: str) -> None:
        """Nothing to move: AUTOINCREMENT follows explicit ids by itself,
        and vector indexes are built from the rows when first used."""


def index_episodes(
    db: sqlite3.Connection, columns: list[str], rows: Sequence[Sequence[Any]]
) -> None:
    """The FTS5 rows of imported (or restored) episodes, as the store
    writes them (the import and the episodes' archive restore share it)."""
    at = {name: columns.index(name) for name in columns}
    for row in rows:
        key, tenant, user_id = row[at["vector_key"]], row[at["tenant"]], row[at["user_id"]]
        terms = row[at["lexical_terms"]]
        if terms is None:
            terms = lexical.document_terms(
                row[at["user_message"]], row[at["assistant_response"]], row[at["summary"]]
            )
            db.execute(
                "UPDATE memory_episodes SET lexical_terms = ? WHERE vector_key = ?", (terms, key)
            )
        db.execute("DELETE FROM memory_episode_terms WHERE rowid = ?", (key,))
        db.execute(
            "INSERT INTO memory_episode_terms (rowid, scope, terms) VALUES (?, ?, ?)",
            (key, lexical.scope_token(tenant, user_id), terms),
        )


@contextlib.asynccontextmanager
async def target(data_dir: Path) -> AsyncIterator[EmbeddedTarget]:
    """The store in `data_dir`, created and migrated if need be (as
    `statekeeper migrate` does)."""
    from statekeeper.storage.embedded.sessions import EmbeddedStorage

    storage = EmbeddedStorage(data_dir)
    try:
        await schemas.migrate_embedded(storage)
    finally:
        await storage.close()
    with contextlib.closing(open_existing(data_dir)) as db:
        yield EmbeddedTarget(db, data_dir)
