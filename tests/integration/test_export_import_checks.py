"""Regression tests of `statekeeper export` / `import` (issue 16 review):
the audit chain of PostgreSQL commits out of id order, a resumed import
into a target that changed, rows of another tenant or user than the
header's, sequences moved with each batch, promotion watermarks, and the
files' permissions. Each runs the CLI (or the import function on a real
store) against real stores of both backends where the defect applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import json
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.integration.test_export_import import (
    TENANT,
    Store,
    _import_until,
    cli,
    fill,
    running,
    stores,
)

__all__ = ["stores"]

OWNER_ONLY = 0o600


def query(store: Store, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Runs one statement on the store's database ($1.. parameters) and
    returns its rows."""
    if store.dsn:

        async def run() -> list[tuple[Any, ...]]:
            conn = await asyncpg.connect(store.dsn)
            try:
                return [tuple(row.values()) for row in await conn.fetch(sql, *params)]
            finally:
                await conn.close()

        return asyncio.run(run())
    with contextlib.closing(
        sqlite3.connect(store.data_dir / "statekeeper.sqlite3", isolation_level=None)
    ) as db:
        return db.execute(sql.replace("$", "?"), params).fetchall()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def exported_from(store: Store, path: Path, *extra: str) -> None:
    cli("export", *store.store_args(), "--tenant", TENANT, "--no-progress", *extra, str(path))


def test_audit_chain_committed_out_of_id_order_imports_and_verifies(
    stores: Callable[[str], Store], tmp_path: Path
) -> None:
    """PostgreSQL links audit records at COMMIT: a transaction that took a
    smaller audit_id but committed later has the larger chain_seq. The
    import replays the chain order and the target's chain verifies, with
    the same hashes as the source's."""
    source, target = stores("source"), stores("target")
    exported = tmp_path / "acme.skx"
    with running(source) as channel:
        fill(channel)
    if source.dsn:
        asyncio.run(_audit_out_of_order(source.dsn))
    chain = "SELECT chain_seq, hash FROM audit_log WHERE tenant = $1 ORDER BY chain_seq"
    before = query(source, chain, TENANT)
    if source.dsn:
        ids = query(
            source,
            "SELECT audit_id FROM audit_log WHERE tenant = $1 ORDER BY chain_seq",
            TENANT,
        )
        assert [row[0] for row in ids] != sorted(row[0] for row in ids)
    exported_from(source, exported)
    done = cli("import", *target.import_args(), "--no-progress", str(exported), check=False)
    assert done.returncode == 0, done.stderr
    assert query(target, chain, TENANT) == before
    verified = cli("audit", "verify", *target.store_args(), "--tenant", TENANT, check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr


async def _audit_out_of_order(dsn: str) -> None:
    """Two transactions: the first takes an audit_id and commits after the
    second."""
    first, second = await asyncpg.connect(dsn), await asyncpg.connect(dsn)
    insert = (
        "INSERT INTO audit_log (tenant, principal, service, method, entity_type, entity_id,"
        " revision, time, summary) VALUES ($1, 'admin', 'test', $2, 'session', 's-0', 1,"
        " 1700000000.25, 'out of order') RETURNING audit_id"
    )
    try:
        early = first.transaction()
        late = second.transaction()
        await early.start()
        await late.start()
        small = await first.fetchval(insert, TENANT, "First")
        large = await second.fetchval(insert, TENANT, "Second")
        assert small < large
        await late.commit()
        await early.commit()
    finally:
        await first.close()
        await second.close()


def test_a_resumed_import_refuses_a_target_that_changed(
    stores: Callable[[str], Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checkpoint names its target: another target is refused, and so
    is the same target once a done table was wiped. The files are the
    owner's only."""
    from statekeeper.admin import transfer

    source, target, other = stores("source"), stores("target"), stores("other")
    exported = tmp_path / "acme.skx"
    with running(source) as channel:
        fill(channel)
    exported_from(source, exported)
    assert mode(exported) == OWNER_ONLY
    monkeypatch.setattr(transfer, "BATCH_ROWS", 3)
    asyncio.run(_import_until(target, exported, 6))
    sidecar = transfer.checkpoint_path(exported)
    state = json.loads(sidecar.read_text())
    assert "sessions" in state["done"]
    assert mode(sidecar) == OWNER_ONLY
    # Another (empty) target with the same checkpoint: refused, untouched.
    refused = cli("import", *other.import_args(), "--no-progress", str(exported), check=False)
    assert refused.returncode == 1, refused.stdout
    assert "remove it to start this import afresh" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert query(other, "SELECT count(*) FROM sessions WHERE tenant = $1", TENANT) == [(0,)]
    # The same target, its sessions wiped: refused (the done table is gone).
    query(target, "DELETE FROM sessions WHERE tenant = $1", TENANT)
    refused = cli("import", *target.import_args(), "--no-progress", str(exported), check=False)
    assert refused.returncode == 1, refused.stdout
    assert "table sessions was imported" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert sidecar.exists()


def _rewrite(source: Path, path: Path, change: Callable[[list[dict[str, Any]]], None]) -> None:
    """Writes the gzip export `source` to `path` changed by `change`, with
    a trailer recomputed as the export writes it (header and row lines)."""
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    change(records)
    body = [
        (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        for record in records[:-1]
    ]
    counts: dict[str, int] = {}
    for record in records[1:-1]:
        counts[record["t"]] = counts.get(record["t"], 0) + 1
    trailer = {
        "kind": "trailer",
        "counts": counts,
        "sha256": hashlib.sha256(b"".join(body)).hexdigest(),
    }
    with gzip.open(path, "wb") as out:
        out.write(b"".join(body) + json.dumps(trailer).encode() + b"\n")


def test_rows_must_belong_to_the_header_tenant_and_user(
    stores: Callable[[str], Store], tmp_path: Path
) -> None:
    """A header edited to name another tenant fails the checksum; a file
    whose rows are not the header's tenant (or user, or the user's
    sessions) is refused before anything is written."""
    source, target = stores("source"), stores("target")
    whole, alice = tmp_path / "acme.skx", tmp_path / "alice.skx"
    with running(source) as channel:
        fill(channel)
    exported_from(source, whole, "--gzip")
    exported_from(source, alice, "--gzip", "--user", "alice")

    def renamed(records: list[dict[str, Any]]) -> None:
        records[0]["tenant"] = "globex"

    # The header changed, the trailer kept: the checksum covers the header.
    edited = tmp_path / "edited.skx"
    with gzip.open(whole, "rt", encoding="utf-8") as lines:
        text = lines.read()
    first, rest = text.split("\n", 1)
    header = json.loads(first)
    header["tenant"] = "globex"
    with gzip.open(edited, "wt", encoding="utf-8") as out:
        out.write(json.dumps(header, separators=(",", ":"), ensure_ascii=False) + "\n" + rest)
    refused = cli("import", *target.import_args(), "--no-progress", str(edited), check=False)
    assert refused.returncode == 1 and "corrupt" in refused.stderr, refused.stderr
    # The header names globex, the rows are acme's (checksum consistent).
    foreign = tmp_path / "foreign.skx"
    _rewrite(whole, foreign, renamed)
    refused = cli("import", *target.import_args(), "--no-progress", str(foreign), check=False)
    assert refused.returncode == 1, refused.stdout
    assert "belongs to tenant 'acme', not to the header's tenant 'globex'" in refused.stderr

    def as_bob(records: list[dict[str, Any]]) -> None:
        records[0]["user"] = "bob"

    bob = tmp_path / "bob.skx"
    _rewrite(alice, bob, as_bob)
    refused = cli("import", *target.import_args(), "--no-progress", str(bob), check=False)
    assert refused.returncode == 1, refused.stdout
    assert "belongs to user 'alice', not to the header's user 'bob'" in refused.stderr

    def without_session(records: list[dict[str, Any]]) -> None:
        columns = next(t["columns"] for t in records[0]["tables"] if t["name"] == "sessions")
        at = columns.index("session_id")
        for number, record in enumerate(records):
            if record.get("t") == "sessions" and record["r"][at] == "s-1":
                del records[number]
                break
        else:
            raise AssertionError("no session s-1 in the export")
        for table in records[0]["tables"]:
            if table["name"] == "sessions":
                table["rows"] -= 1

    orphan = tmp_path / "orphan.skx"
    _rewrite(alice, orphan, without_session)
    refused = cli("import", *target.import_args(), "--no-progress", str(orphan), check=False)
    assert refused.returncode == 1, refused.stdout
    assert "session 's-1', which is not a session of user 'alice'" in refused.stderr
    # Nothing was written: the genuine file imports into the same target.
    for tenant in (TENANT, "globex"):
        assert query(target, "SELECT count(*) FROM sessions WHERE tenant = $1", tenant) == [(0,)]
    done = cli("import", *target.import_args(), "--no-progress", str(whole), check=False)
    assert done.returncode == 0, done.stderr


def test_sequences_move_past_each_batch_as_it_commits(
    stores: Callable[[str], Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL: once a batch with identity ids is committed, the
    sequence is already past them (a server writing other tenants during
    the import never draws an imported id)."""
    from statekeeper.admin import transfer

    source, target = stores("source"), stores("target")
    if not target.dsn:
        pytest.skip("SQLite's AUTOINCREMENT follows explicit ids by itself")
    exported = tmp_path / "acme.skx"
    with running(source) as channel:
        fill(channel)
    exported_from(source, exported)
    monkeypatch.setattr(transfer, "BATCH_ROWS", 2)
    behind = asyncio.run(_import_watching_sequences(target, exported))
    assert behind == [], behind
    assert query(target, "SELECT count(*) FROM mb_messages WHERE tenant = $1", TENANT)[0][0] > 2


async def _import_watching_sequences(target: Store, path: Path) -> list[str]:
    """Imports, checking after every committed batch of a table with an
    identity column (from another connection) that its sequence is past
    the table's largest id."""
    from statekeeper.admin import postgres, tables, transfer

    identities = {table.name: table.identity for table in tables.TABLES if table.identity}
    behind: list[str] = []
    watcher = await asyncpg.connect(target.dsn)
    try:
        async with postgres.target(target.dsn, target.redis_url, target.prefix) as pg:
            original = pg.insert

            async def insert(table: Any, columns: Any, rows: Any) -> None:
                await original(table, columns, rows)
                column = identities.get(table.name)
                if column is None:
                    return
                sequence = await watcher.fetchval(
                    "SELECT pg_get_serial_sequence($1, $2)", table.name, column
                )
                largest = await watcher.fetchval(f"SELECT max({column}) FROM {table.name}")
                drawn = await watcher.fetchrow(f"SELECT last_value, is_called FROM {sequence}")
                assert drawn is not None
                reached = drawn["last_value"] if drawn["is_called"] else drawn["last_value"] - 1
                if reached < largest:
                    behind.append(f"{table.name}: sequence at {reached}, ids up to {largest}")

            pg.insert = insert  # type: ignore[method-assign]
            await transfer.import_(pg, path)
    finally:
        await watcher.close()
    return behind


def test_promotion_watermarks_travel_with_the_tenant_and_user(
    stores: Callable[[str], Store], tmp_path: Path
) -> None:
    """memory_promotions rows (a session's promotion watermark) are
    exported and imported, in a per-user export with the user's sessions."""
    source, target, user_target = stores("source"), stores("target"), stores("user")
    whole, alice = tmp_path / "acme.skx", tmp_path / "alice.skx"
    with running(source) as channel:
        fill(channel)
    marks = [(TENANT, "s-0", 4, 5, 6, 1700000000.5), (TENANT, "s-2", 2, 2, 2, 1700000001.25)]
    rows = "SELECT tenant, session_id, promoted_through, checked_through, seen_through,"
    rows += " update_time FROM memory_promotions WHERE tenant = $1 ORDER BY session_id"
    query(source, "DELETE FROM memory_promotions WHERE tenant = $1", TENANT)
    for mark in marks:
        query(
            source,
            "INSERT INTO memory_promotions (tenant, session_id, promoted_through,"
            " checked_through, seen_through, update_time) VALUES ($1, $2, $3, $4, $5, $6)",
            *mark,
        )
    exported_from(source, whole)
    exported_from(source, alice, "--user", "alice")
    cli("import", *target.import_args(), "--no-progress", str(whole))
    assert query(target, rows, TENANT) == marks
    # alice owns s-0 (and s-1); s-2 is bob's.
    cli("import", *user_target.import_args(), "--no-progress", str(alice))
    assert query(user_target, rows, TENANT) == marks[:1]
