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
import json
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tqdm import tqdm

from statekeeper.core.archive.keys import parse_key
from statekeeper.core.memory import lexical
from statekeeper.core.memory.models import content_hash, entity_key
from statekeeper.storage.sealing import (
    DET_MAGIC,
    HASH_MAGIC,
    MAGIC,
    TOKEN_BYTES,
    SealedValueError,
    Sealer,
)

SQLITE_FILE = "statekeeper.sqlite3"
# Deterministically sealed values (fact objects) are sealed again under the
# active key, with the entity key the store compares them by.
FACTS_TABLE = "memory_facts"
# Hash-chained: never rewritten (they name entities, never sealed contents).
AUDIT_TABLES = frozenset({"audit_log", "audit_chain_heads"})
# Sealed episode texts carry blind index terms under the key that sealed
# them: they are opened and sealed again whole (with the lexical terms the
# store indexes), before the generic pass, which then leaves them alone.
EPISODES_TABLE = "memory_episodes"
EPISODE_TEXTS = ("user_message", "assistant_response", "summary")


def _episode_condition(active: str) -> str:
    checks = [
        f"(substr({c}, 1, {len(MAGIC)}) = '{MAGIC}'"
        f" AND substr({c}, 1, {len(active)}) != '{active}')"
        for c in EPISODE_TEXTS
    ]
    return "(" + " OR ".join(checks) + ")"


def _resealed_episode(
    sealer: Sealer,
    tenant: str,
    episode_id: str,
    texts: tuple[str, ...],
    stored_hash: str,
    active: str,
) -> list[str] | None:
    """The texts sealed again under the active key, and the duplicate key
    (keyed again when it was keyed), or None when a text cannot be opened
    (left as it is, counted as unreadable)."""
    resealed, plain = [], []
    for column, value in zip(EPISODE_TEXTS, texts, strict=True):
        field_name = f"episode.{column}"
        try:
            opened = sealer.open_text(tenant, field_name, (episode_id,), value or "")
        except SealedValueError:
            return None
        plain.append(opened)
        if value and value.startswith(MAGIC) and not value.startswith(active):
            value = sealer.seal_indexed_text(tenant, field_name, (episode_id,), opened, force=True)
        resealed.append(value)
    digest = stored_hash
    if stored_hash.startswith(HASH_MAGIC):
        digest = sealer.blind_hash(tenant, content_hash(plain[0], plain[1]))
    return [*resealed, digest]


@dataclass
class RotationReport:
    rewrapped: int = 0
    unreadable: int = 0
    # (where, rows rewritten) per table/column or Redis
    by_place: dict[str, int] = field(default_factory=dict)

    # Archived units (chunks in the archive tier) holding a value under
    # another key: rotation does not rewrite archive objects; restore them
    # (RestoreArchived) and rotate again before removing the old key.
    archived_stale: int = 0

    def add(self, place: str, count: int) -> None:
        if count:
            self.by_place[place] = self.by_place.get(place, 0) + count
            self.rewrapped += count


@dataclass
class _Batches:
    """The batches a pass ran, against its `stop_after` (None: no limit;
    tests interrupt a run with it)."""

    stop_after: int | None
    done: int = 0

    def exhausted(self) -> bool:
        return self.stop_after is not None and self.done >= self.stop_after


def _ignore(_: int) -> None:
    """A progress callback for passes that show none."""


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
    tables = [
        t
        for t in tables
        if not any(t.startswith(v + "_") for v in virtual) and t not in AUDIT_TABLES
    ]
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
        if any(t == EPISODES_TABLE for t, _ in columns):
            if not _rotate_sqlite_episodes(db, sealer, batch, report, stop_after):
                return report
            columns = [
                (t, c) for t, c in columns if not (t == EPISODES_TABLE and c in EPISODE_TEXTS)
            ]
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
        batches = _Batches(stop_after)
        for table, column, cond, count in totals:
            if count and not _sqlite_pass(
                db,
                "rowid",
                f'SELECT rowid, "{column}" FROM "{table}" WHERE {cond}',
                _sqlite_value_rewrite(sealer, table, column),
                batch,
                f"{table}.{column}",
                report,
                batches,
                bar.update,
            ):
                bar.close()
                return report
        bar.close()
        if any(t == FACTS_TABLE for t, _ in columns):
            _rotate_sqlite_facts(db, sealer, batch, report)
        return report
    finally:
        db.close()


def _rotate_sqlite_episodes(
    db: sqlite3.Connection,
    sealer: Sealer,
    batch: int,
    report: RotationReport,
    stop_after: int | None,
) -> bool:
    """False when stopped by `stop_after` (an interrupted run)."""
    assert sealer.ring is not None
    active = f"{MAGIC}{sealer.ring.active}~"

    def reseal(db: sqlite3.Connection, row: Sequence[Any]) -> bool:
        key, tenant, user_id, episode_id, stored_hash, *texts = row
        new = _resealed_episode(sealer, tenant, episode_id, tuple(texts), stored_hash, active)
        if new is None:
            return False
        terms = lexical.document_terms(*new[:3])
        db.execute(
            f"UPDATE {EPISODES_TABLE} SET user_message = ?, assistant_response = ?,"
            " summary = ?, content_hash = ?, lexical_terms = ? WHERE vector_key = ?",
            (*new, terms, key),
        )
        db.execute("DELETE FROM memory_episode_terms WHERE rowid = ?", (key,))
        db.execute(
            "INSERT INTO memory_episode_terms (rowid, scope, terms) VALUES (?, ?, ?)",
            (key, lexical.scope_token(tenant, user_id), terms),
        )
        return True

    return _sqlite_pass(
        db,
        "vector_key",
        f"SELECT vector_key, tenant, user_id, episode_id, content_hash,"
        f" {', '.join(EPISODE_TEXTS)} FROM {EPISODES_TABLE} WHERE {_episode_condition(active)}",
        reseal,
        batch,
        f"{EPISODES_TABLE}.texts",
        report,
        _Batches(stop_after),
    )


def _rotate_sqlite_facts(
    db: sqlite3.Connection, sealer: Sealer, batch: int, report: RotationReport
) -> None:
    assert sealer.ring is not None
    current = f"{DET_MAGIC}{sealer.ring.active}~"
    cond = (
        f"substr(object, 1, {len(DET_MAGIC)}) = '{DET_MAGIC}'"
        f" AND substr(object, 1, {len(current)}) != '{current}'"
    )

    def reseal(db: sqlite3.Connection, row: Sequence[Any]) -> bool:
        rowid, tenant, value = row
        new = sealer.redet(tenant, "fact.object", value)
        if new is None:
            return False
        db.execute(
            f"UPDATE {FACTS_TABLE} SET object = ?, object_key = ? WHERE rowid = ?",
            (new, entity_key(new), rowid),
        )
        return True

    select = f"SELECT rowid, tenant, object FROM {FACTS_TABLE} WHERE {cond}"
    _sqlite_pass(
        db, "rowid", select, reseal, batch, f"{FACTS_TABLE}.object", report, _Batches(None)
    )


def _sqlite_value_rewrite(
    sealer: Sealer, table: str, column: str
) -> Callable[[sqlite3.Connection, Sequence[Any]], bool]:
    def rewrap(db: sqlite3.Connection, row: Sequence[Any]) -> bool:
        rowid, value = row
        new = _rewrap_value(sealer, value)
        if new is None:
            return False
        db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (new, rowid))
        return True

    return rewrap


def _sqlite_pass(
    db: sqlite3.Connection,
    key: str,
    select: str,
    rewrite: Callable[[sqlite3.Connection, Sequence[Any]], bool],
    batch: int,
    place: str,
    report: RotationReport,
    batches: _Batches,
    progress: Callable[[int], object] = _ignore,
) -> bool:
    """Rewrites the rows `select` finds (its first column `key`, an integer
    row key), `batch` at a time, each batch one write transaction, until none is
    left: `rewrite` updates one row, False when it cannot (the value's key
    is not in the ring: counted unreadable and left out from then on).
    False when stopped by `batches`."""
    skipped: set[int] = set()
    while True:
        if batches.exhausted():
            return False
        db.execute("BEGIN IMMEDIATE")
        try:
            rows = db.execute(
                f"{select} AND {key} NOT IN ({','.join(str(s) for s in skipped) or '0'}) LIMIT ?",
                (batch,),
            ).fetchall()
            done = 0
            for row in rows:
                if rewrite(db, row):
                    done += 1
                else:
                    skipped.add(int(row[0]))
                    report.unreadable += 1
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        batches.done += 1
        report.add(place, done)
        progress(len(rows))
        if len(rows) < batch:
            return True


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
        if any(row["table_name"] == EPISODES_TABLE for row in columns):
            schema = next(r["table_schema"] for r in columns if r["table_name"] == EPISODES_TABLE)
            qualified_episodes = f'"{schema}".{EPISODES_TABLE}'
            if not await _rotate_postgres_episodes(
                conn, qualified_episodes, sealer, batch, report, stop_after
            ):
                return report
            columns = [
                r
                for r in columns
                if not (r["table_name"] == EPISODES_TABLE and r["column_name"] in EPISODE_TEXTS)
            ]
        columns = [r for r in columns if r["table_name"] not in AUDIT_TABLES]
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
        batches = _Batches(stop_after)
        for qualified, col, data_type, cond, count in plan:
            if count and not await _postgres_pass(
                conn,
                f"SELECT ctid::text AS id, {col} AS v FROM {qualified} WHERE {cond}",
                (),
                _postgres_value_rewrite(conn, sealer, qualified, col, data_type),
                batch,
                f"{qualified}.{col}",
                report,
                batches,
                bar.update,
            ):
                bar.close()
                return report
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


async def _rotate_postgres_episodes(
    conn: Any,
    qualified: str,
    sealer: Sealer,
    batch: int,
    report: RotationReport,
    stop_after: int | None,
) -> bool:
    assert sealer.ring is not None
    active = f"{MAGIC}{sealer.ring.active}~"

    async def reseal(row: Any) -> bool:
        texts = tuple(row[c] for c in EPISODE_TEXTS)
        new = _resealed_episode(
            sealer, row["tenant"], row["episode_id"], texts, row["content_hash"], active
        )
        if new is None:
            return False
        await conn.execute(
            f"UPDATE {qualified} SET user_message = $1, assistant_response = $2,"
            " summary = $3, content_hash = $4, lexical_terms = $5"
            " WHERE ctid = $6::text::tid",
            *new,
            lexical.document_terms(*new[:3]),
            row["id"],
        )
        return True

    return await _postgres_pass(
        conn,
        f"SELECT ctid::text AS id, tenant, episode_id, content_hash,"
        f" {', '.join(EPISODE_TEXTS)} FROM {qualified} WHERE {_episode_condition(active)}",
        (),
        reseal,
        batch,
        f"{qualified}.texts",
        report,
        _Batches(stop_after),
    )


async def _rotate_postgres_facts(
    conn: Any, qualified: str, sealer: Sealer, batch: int, report: RotationReport
) -> None:
    assert sealer.ring is not None
    current = f"{DET_MAGIC}{sealer.ring.active}~"

    async def reseal(row: Any) -> bool:
        new = sealer.redet(row["tenant"], "fact.object", row["object"])
        if new is None:
            return False
        await conn.execute(
            f"UPDATE {qualified} SET object = $1, object_key = $2 WHERE ctid = $3::text::tid",
            new,
            entity_key(new),
            row["id"],
        )
        return True

    await _postgres_pass(
        conn,
        f"SELECT ctid::text AS id, tenant, object FROM {qualified}"
        " WHERE left(object, $1) = $2 AND left(object, $3) != $4",
        (len(DET_MAGIC), DET_MAGIC, len(current), current),
        reseal,
        batch,
        f"{qualified}.object",
        report,
        _Batches(None),
    )


def _postgres_value_rewrite(
    conn: Any, sealer: Sealer, qualified: str, col: str, data_type: str
) -> Callable[[Any], Awaitable[bool]]:
    cast = "::jsonb" if data_type == "jsonb" else "::json" if data_type == "json" else ""

    async def rewrap(row: Any) -> bool:
        new = _rewrap_value(sealer, row["v"])
        if new is None:
            return False
        await conn.execute(
            f"UPDATE {qualified} SET {col} = $1{cast} WHERE ctid = $2::text::tid", new, row["id"]
        )
        return True

    return rewrap


async def _postgres_pass(
    conn: Any,
    select: str,
    params: Sequence[Any],
    rewrite: Callable[[Any], Awaitable[bool]],
    batch: int,
    place: str,
    report: RotationReport,
    batches: _Batches,
    progress: Callable[[int], object] = _ignore,
) -> bool:
    """As `_sqlite_pass`: rewrites the rows `select` finds (with `params`;
    each row's `id` its ctid), `batch` at a time, each batch one transaction
    that locks its rows, skipping those another transaction holds."""
    skipped: list[str] = []
    first = len(params) + 1
    while True:
        if batches.exhausted():
            return False
        async with conn.transaction():
            rows = await conn.fetch(
                f"{select} AND NOT (ctid::text = ANY(${first}::text[]))"
                f" LIMIT ${first + 1} FOR UPDATE SKIP LOCKED",
                *params,
                skipped,
                batch,
            )
            done = 0
            for row in rows:
                if await rewrite(row):
                    done += 1
                else:
                    skipped.append(row["id"])
                    report.unreadable += 1
        batches.done += 1
        report.add(place, done)
        progress(len(rows))
        if len(rows) < batch:
            return True


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
        # "prefix:*", never "prefix*": another deployment sharing the
        # Redis under "prefix2" (or "prefix-x") is not ours to re-wrap.
        async for key in client.scan_iter(match=f"{prefix}:*", count=batch):
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


# -- the archive tier ----------------------------------------------------------


def _stale_in(sealer: Sealer, value: Any) -> bool:
    active = sealer.ring.active if sealer.ring else ""
    if isinstance(value, bytes | bytearray | memoryview):
        return any(m.group(1) != active.encode() for m in TOKEN_BYTES.finditer(bytes(value)))
    if value is None:
        return False
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return sealer.stale(text)


async def _archive_chunks(settings: Any) -> AsyncIterator[tuple[str, bytes]]:
    """(key, bytes) of every archive chunk. A local directory is read
    directly: obstore's runtime can abort a short-lived process at exit."""
    url = settings.archive_url
    parts = urlsplit(url)
    if not url or parts.scheme in ("", "file"):
        root = (
            Path(settings.data_dir) / "archive"
            if not url
            else Path(parts.path if parts.scheme else url)
        )
        for path in sorted((root / "v1").rglob("*.ndjson.zst")):
            try:
                data = path.read_bytes()
            except FileNotFoundError:  # restored meanwhile
                continue
            yield path.relative_to(root).as_posix(), data
        return
    from statekeeper.storage.objects import open_store

    objects = open_store(url, Path(settings.data_dir))
    for key in await objects.list("v1/"):
        if key.endswith(".ndjson.zst"):
            found = await objects.get(key)
            if found is not None:  # else restored meanwhile
                yield key, found


async def stale_archive(settings: Any, sealer: Sealer, log: Callable[[str], None]) -> int:
    """How many archived units of any capability (their chunks in the
    archive tier, under --archive-url or DATA_DIR/archive) hold a sealed
    value under a key other than the active one, or could not be checked.
    Rotation does not rewrite archive objects: such a unit becomes
    unreadable once its key leaves the ring, so it must be restored
    (RestoreArchived) and rotated first."""
    stale: set[str] = set()
    async for key, data in _archive_chunks(settings):
        unit = key.rsplit("/", 1)[0]
        capability = parse_key(key).capability
        if capability in READ_THROUGH:
            # Never restored, so never re-sealed: the operator keeps the key.
            if await asyncio.to_thread(_chunk_is_stale, data, sealer):
                log(f"archived {capability} {unit} holds values under another key: keep it")
            continue
        try:
            if await asyncio.to_thread(_chunk_is_stale, data, sealer):
                stale.add(unit)
        except Exception as exc:  # counted: the operator must look at it
            log(f"archive object {key} could not be checked: {exc}")
            stale.add(unit)
    return len(stale)


# Capabilities whose archived units are read through, never restored (so
# rotation cannot bring them back to re-seal them).
READ_THROUGH = ("audit", "blackboard")


def _chunk_is_stale(data: bytes, sealer: Sealer) -> bool:
    from statekeeper.storage.archive.chunks import chunk_rows

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chunk.ndjson.zst"
        path.write_bytes(data)
        _, rows = chunk_rows(path, tables=None)
    return any(
        _stale_in(sealer, value) for _, values in rows.values() for row in values for value in row
    )


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
    else:
        path = Path(settings.data_dir) / SQLITE_FILE
        if not path.exists():
            log(f"no embedded store at {path}")
            report = RotationReport()
        else:
            report = rotate_sqlite(path, sealer, batch, progress, stop_after)
    if stop_after is None:
        report.archived_stale = asyncio.run(stale_archive(settings, sealer, log))
    return report
