"""The SQLite migration runner: each migration all or nothing, DDL included."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from statekeeper.storage.embedded.migrations import apply_migrations


def tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def open_db(path: Path) -> sqlite3.Connection:
    # As the store opens its connection: deferred transactions for DML.
    db = sqlite3.connect(path, isolation_level=None)
    db.isolation_level = "DEFERRED"
    return db


def test_a_failing_migration_leaves_nothing_and_can_run_again(tmp_path: Path) -> None:
    db = open_db(tmp_path / "db.sqlite3")
    broken = [
        (1, ["CREATE TABLE a (x INTEGER)"]),
        (2, ["CREATE TABLE b (x INTEGER)", "CREATE INDEX b_x ON b (x)", "CREATE TABLE a (y)"]),
    ]
    with pytest.raises(sqlite3.OperationalError):
        apply_migrations(db, "versions", broken)
    # Migration 1 is applied and recorded; nothing of migration 2 survived.
    assert "a" in tables(db) and "b" not in tables(db)
    assert [row[0] for row in db.execute("SELECT version FROM versions")] == [1]
    fixed = [broken[0], (2, ["CREATE TABLE b (x INTEGER)", "CREATE INDEX b_x ON b (x)"])]
    assert apply_migrations(db, "versions", fixed) == [2]
    assert apply_migrations(db, "versions", fixed) == []
    assert "b" in tables(db)


def test_inside_a_transaction_a_migration_is_a_savepoint(tmp_path: Path) -> None:
    db = open_db(tmp_path / "db.sqlite3")
    db.execute("CREATE TABLE versions (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
    db.execute("BEGIN IMMEDIATE")
    db.execute("CREATE TABLE outer_work (x)")
    with pytest.raises(sqlite3.OperationalError):
        apply_migrations(db, "versions", [(1, ["CREATE TABLE c (x)", "CREATE TABLE c (x)"])])
    # The caller's transaction is still open and still holds its own work.
    assert db.in_transaction and "outer_work" in tables(db) and "c" not in tables(db)
    db.commit()
