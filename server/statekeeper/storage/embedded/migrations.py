"""The one migration runner of every SQLite schema of the embedded store."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Iterator

log = logging.getLogger(__name__)

# (version, statements) in order; append only, never edit a released entry.
Migrations = list[tuple[int, list[str]]]


def apply_migrations(db: sqlite3.Connection, table: str, migrations: Migrations) -> list[int]:
    """Applies the missing entries of `migrations`, each in its own
    transaction with its record in `table`, so a crash between two leaves
    the first applied and the second to do. Returns the versions applied.
    Only the store's writer thread calls it: no lock is needed."""
    with _transaction(db):
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {table}"
            " (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
        )
    applied = {row[0] for row in db.execute(f"SELECT version FROM {table}")}
    applied_now: list[int] = []
    for version, statements in migrations:
        if version in applied:
            continue
        # Python's sqlite3 opens a transaction implicitly only before DML:
        # CREATE TABLE / CREATE INDEX would each commit on their own, and a
        # crash halfway would leave a migration half applied and unrecorded.
        with _transaction(db):
            for statement in statements:
                db.execute(statement)
            db.execute(
                f"INSERT INTO {table} (version, applied_at) VALUES (?, ?)", (version, time.time())
            )
        applied_now.append(version)
    if applied_now:
        log.info("applied schema migrations", extra={"table": table, "versions": applied_now})
    return applied_now


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One migration, all or nothing: its own transaction, or a savepoint
    when the caller already holds one."""
    nested = db.in_transaction
    db.execute("SAVEPOINT migration" if nested else "BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if nested:
            db.execute("ROLLBACK TO migration")
            db.execute("RELEASE migration")
        else:
            db.rollback()
        raise
    if nested:
        db.execute("RELEASE migration")
    else:
        db.commit()
