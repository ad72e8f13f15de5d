"""`statekeeper keys rotate`: re-wraps every sealed value that is not under
the active key of the ring (storage/sealing.py).

Only the 48-byte wrapped data key of each value changes (the data stays
encrypted under its own data key, bound to its row), so rotation needs no
knowledge of what a row is: it looks for sealed values (`~sk1~<key id>~...`)
in every text, JSON and binary column of every table (SQLite: the embedded
store's file; PostgreSQL: every ordinary table outside the system schemas)
and in the Redis keys under the deployment's prefix (strings and hashes; a
stream's entries cannot be rewritten and age out by trimming).

Bounded batches, each one transaction (row locks taken with SKIP LOCKED on
PostgreSQL, so serving replicas are never blocked for long); a value the
server rewrites meanwhile is sealed under the active key anyway. Resumable
and idempotent: only values holding a token under another key are selected,
so an interrupted run continues where it stopped and a finished one finds
nothing. Values whose key is not in the ring are left as they are and
counted as `unreadable`.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from statekeeper.core.memory.models import entity_key
from statekeeper.storage.sealing import DET_MAGIC, MAGIC, Sealer

SQLITE_FILE = "statekeeper.sqlite3"
# Deterministically sealed values (fact objects) are sealed again under the
# active key, with the entity key the store compares them by.
FACTS_TABLE = "memory_facts"


@dataclass
class RotationReport:
    rewrapped: int = 0
    unreadable: int = 0
    # (where, rows rewritten) per table/column or Redis
    by_place: dict[str, int] = field(default_factory=dict)

    def add(self, place: str, count: int) -> None:
        if count:
            self.by_place[place] = self.by_place.get(place, 0) + count
            self.rewrapped += count


def _rewrap_value(sealer: Sealer, value: Any) -> Any:
    """The value with every token re-wrapped, or None when nothing changed
    (already current, or only tokens that cannot be re-wrapped)."""
    if isinstance(value, str):
        new_text = sealer.rewrap_text(value)
        return new_text if new_text != value else None
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        new_raw = sealer.rewrap_bytes(raw)
        return new_raw if new_raw != raw else None
    return None


# -- SQLite -----------------------------------------------------------------


def _sqlite_columns(db: sqlite3.Connection) -> list[tuple[str, str]]:
    virtual = [
        row[0]
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'"
        )
    ]
    tables = [
        row[0]
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " AND sql NOT LIKE 'CREATE VIRTUAL%' AND sql NOT LIKE '%WITHOUT ROWID%'"
        )
    ]
    # FTS shadow tables hold terms of (sealed) texts, never a value to re-wrap.
    tables = [t for t in tables if not any(t.startswith(v + "_") for v in virtual)]
    columns: list[tuple[str, str]] = []
    for table in tables:
        for info in db.execute(f'PRAGMA table_info("{table}")'):
            declared = str(info[2]).upper()
            if declared in ("", "TEXT", "BLOB", "JSON") or "CHAR" in declared:
                columns.append((table, str(info[1])))
    return columns


def rotate_sqlite(
    path: Path, sealer: Sealer, batch: int, progress: bool, stop_after: int | None = None
) -> RotationReport:
    """Rotates the embedded store's file. `stop_after` batches: for tests
    of an interrupted run."""
    assert sealer.ring is not None
    report = RotationReport()
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    active = f"{MAGIC}{sealer.ring.active}~"
    try:
        db.execute("PRAGMA busy_timeout = 60000")
        columns = _sqlite_columns(db)
        stale_sql = (
            "instr(CAST({c} AS TEXT), '{m}') > 0"
            " AND replace(CAST({c} AS TEXT), '{a}', '') LIKE '%{m}%'"
        )
        totals = []
        for table, column in columns:
            cond = stale_sql.format(c=f'"{column}"', m=MAGIC, a=active)
            (count,) = db.execute(f'SELECT count(*) FROM "{table}" WHERE {cond}').fetchone()
            totals.append((table, column, cond, int(count)))
        bar = tqdm(
            total=sum(t[3] for t in totals), unit="value", disable=not progress, desc="rotate"
        )
        batches = 0
        for table, column, cond, count in totals:
            if not count:
                continue
            skipped: set[int] = set()
            while True:
                if stop_after is not None and batches >= stop_after:
                    bar.close()
                    return report
                db.execute("BEGIN IMMEDIATE")
                try:
                    rows = db.execute(
                        f'SELECT rowid, "{column}" FROM "{table}" WHERE {cond}'
                        f" AND rowid NOT IN ({','.join(str(s) for s in skipped) or '0'})"
                        " LIMIT ?",
                        (batch,),
                    ).fetchall()
                    done = 0
                    for rowid, value in rows:
                        new = _rewrap_value(sealer, value)
                        if new is None:
                            skipped.add(int(rowid))
                            report.unreadable += 1
                            continue
                        db.execute(
                            f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (new, rowid)
                        )
                        done += 1
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                batches += 1
                report.add(f"{table}.{column}", done)
                bar.update(len(rows))
                if len(rows) < batch:
                    break
        bar.close()
        if any(t == FACTS_TABLE for t, _ in columns):
            _rotate_sqlite_facts(db, sealer, batch, report)
        return report
    finally:
        db.close()


def _rotate_sqlite_facts(
    db: sqlite3.Connection, sealer: Sealer, batch: int, report: RotationReport
) -> None:
    assert sealer.ring is not None
    current = f"{DET_MAGIC}{sealer.ring.active}~"
    cond = (
        f"substr(object, 1, {len(DET_MAGIC)}) = '{DET_MAGIC}'"
        f" AND substr(object, 1, {len(current)}) != '{current}'"
    )
    skipped: set[int] = set()
    while True:
        db.execute("BEGIN IMMEDIATE")
        try:
            rows = db.execute(
                f"SELECT rowid, tenant, object FROM {FACTS_TABLE} WHERE {cond}"
                f" AND rowid NOT IN ({','.join(str(s) for s in skipped) or '0'}) LIMIT ?",
                (batch,),
            ).fetchall()
            done = 0
            for rowid, tenant, value in rows:
                new = sealer.redet(tenant, "fact.object", value)
                if new is None:
                    skipped.add(int(rowid))
                    report.unreadable += 1
                    continue
                db.execute(
                    f"UPDATE {FACTS_TABLE} SET object = ?, object_key = ? WHERE rowid = ?",
                    (new, entity_key(new), rowid),
                )
                done += 1
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        report.add(f"{FACTS_TABLE}.object", done)
        if len(rows) < batch:
            return


# -- PostgreSQL ---------------------------------------------------------------


async def rotate_postgres(
    dsn: str, sealer: Sealer, batch: int, progress: bool, stop_after: int | None = None
) -> RotationReport:
    import asyncpg

    assert sealer.ring is not None
    report = RotationReport()
    active = f"{MAGIC}{sealer.ring.active}~"
    conn = await asyncpg.connect(dsn)
    try:
        columns = await conn.fetch(
            "SELECT c.table_schema, c.table_name, c.column_name, c.data_type"
            " FROM information_schema.columns c"
            " JOIN pg_class k ON k.relname = c.table_name"
            " JOIN pg_namespace n ON n.oid = k.relnamespace AND n.nspname = c.table_schema"
            " WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema')"
            " AND k.relkind = 'r'"
            " AND c.data_type IN ('text', 'bytea', 'json', 'jsonb', 'character varying')"
            " ORDER BY 1, 2, 3"
        )
        plan = []
        for row in columns:
            qualified = f'"{row["table_schema"]}"."{row["table_name"]}"'
            col = f'"{row["column_name"]}"'
            as_text = f"encode({col}, 'escape')" if row["data_type"] == "bytea" else f"{col}::text"
            cond = (
                f"strpos({as_text}, '{MAGIC}') > 0"
                f" AND replace({as_text}, '{active}', '') LIKE '%{MAGIC}%'"
            )
            count = await conn.fetchval(f"SELECT count(*) FROM {qualified} WHERE {cond}")
            plan.append((qualified, col, row["data_type"], cond, int(count)))
        bar = tqdm(total=sum(p[4] for p in plan), unit="value", disable=not progress, desc="rotate")
        batches = 0
        for qualified, col, data_type, cond, count in plan:
            if not count:
                continue
            skipped: list[str] = []
            while True:
                if stop_after is not None and batches >= stop_after:
                    bar.close()
                    return report
                async with conn.transaction():
                    rows = await conn.fetch(
                        f"SELECT ctid::text AS id, {col} AS v FROM {qualified}"
                        f" WHERE {cond} AND NOT (ctid::text = ANY($1::text[]))"
                        " LIMIT $2 FOR UPDATE SKIP LOCKED",
                        skipped,
                        batch,
                    )
                    done = 0
                    cast = (
                        "::jsonb"
                        if data_type == "jsonb"
                        else "::json"
                        if data_type == "json"
                        else ""
                    )
                    for row in rows:
                        value = row["v"]
                        new = _rewrap_value(sealer, value)
                        if new is None:
                            skipped.append(row["id"])
                            report.unreadable += 1
                            continue
                        await conn.execute(
                            f"UPDATE {qualified} SET {col} = $1{cast} WHERE ctid = $2::text::tid",
                            new,
                            row["id"],
                        )
                        done += 1
                batches += 1
                report.add(f"{qualified}.{col}", done)
                bar.update(len(rows))
                if len(rows) < batch:
                    break
        bar.close()
        tables = await conn.fetch(
            "SELECT schemaname FROM pg_tables WHERE tablename = $1", FACTS_TABLE
        )
        for table in tables:
            await _rotate_postgres_facts(
                conn, f'"{table["schemaname"]}".{FACTS_TABLE}', sealer, batch, report
            )
        return report
    finally:
        await conn.close()


async def _rotate_postgres_facts(
    conn: Any, qualified: str, sealer: Sealer, batch: int, report: RotationReport
) -> None:
    assert sealer.ring is not None
    current = f"{DET_MAGIC}{sealer.ring.active}~"
    skipped: list[str] = []
    while True:
        async with conn.transaction():
            rows = await conn.fetch(
                f"SELECT ctid::text AS id, tenant, object FROM {qualified}"
                " WHERE left(object, $1) = $2 AND left(object, $3) != $4"
                " AND NOT (ctid::text = ANY($5::text[])) LIMIT $6 FOR UPDATE SKIP LOCKED",
                len(DET_MAGIC),
                DET_MAGIC,
                len(current),
                current,
                skipped,
                batch,
            )
            done = 0
            for row in rows:
                new = sealer.redet(row["tenant"], "fact.object", row["object"])
                if new is None:
                    skipped.append(row["id"])
                    report.unreadable += 1
                    continue
                await conn.execute(
                    f"UPDATE {qualified} SET object = $1, object_key = $2"
                    " WHERE ctid = $3::text::tid",
                    new,
                    entity_key(new),
                    row["id"],
                )
                done += 1
        report.add(f"{qualified}.object", done)
        if len(rows) < batch:
            return


# -- Redis ------------------------------------------------------------------

_SET_IF_SAME = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
"""
_HSET_IF_SAME = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0
"""


async def rotate_redis(url: str, prefix: str, sealer: Sealer, batch: int) -> RotationReport:
    """Strings and hash fields under `prefix`, each changed only if nobody
    changed it since it was read (a value the server rewrote is current)."""
    import redis.asyncio as redis_asyncio

    report = RotationReport()
    client = redis_asyncio.Redis.from_url(url)
    try:
        set_if_same = client.register_script(_SET_IF_SAME)
        hset_if_same = client.register_script(_HSET_IF_SAME)
        async for key in client.scan_iter(match=f"{prefix}*", count=batch):
            kind = await client.type(key)
            kind = kind.decode() if isinstance(kind, bytes) else str(kind)
            if kind == "string":
                value = await client.get(key)
                new = _rewrap_value(sealer, value) if value is not None else None
                if (
                    value is not None
                    and new is not None
                    and await set_if_same(keys=[key], args=[value, new])
                ):
                    report.add("redis", 1)
            elif kind == "hash":
                for name, value in (await client.hgetall(key)).items():
                    new = _rewrap_value(sealer, value)
                    if new is not None and await hset_if_same(keys=[key], args=[name, value, new]):
                        report.add("redis", 1)
    finally:
        await client.aclose()
    return report


def rotate(
    settings: Any,
    sealer: Sealer,
    batch: int,
    progress: bool,
    stop_after: int | None = None,
    log: Callable[[str], None] = print,
) -> RotationReport:
    """Rotates the configured store: PostgreSQL (and Redis, when
    configured), or the embedded store's file."""
    if settings.postgres_dsn:
        report = asyncio.run(
            rotate_postgres(settings.postgres_dsn, sealer, batch, progress, stop_after)
        )
        if settings.redis_url and stop_after is None:
            cached = asyncio.run(
                rotate_redis(settings.redis_url, settings.redis_key_prefix, sealer, batch)
            )
            report.add("redis", cached.rewrapped)
            report.unreadable += cached.unreadable
        return report
    path = Path(settings.data_dir) / SQLITE_FILE
    if not path.exists():
        log(f"no embedded store at {path}")
        return RotationReport()
    return rotate_sqlite(path, sealer, batch, progress, stop_after)
