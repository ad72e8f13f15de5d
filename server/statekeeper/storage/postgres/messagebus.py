"""Production message store: inboxes, deliveries and dead letters in
PostgreSQL, durable across restarts of any replica and of Redis.

Wake-ups and reply hand-offs between replicas travel over Redis
(storage/redis/feeds.py: RedisInboxNotifier, RedisReplyWaiters); this store
is the only place messages live.

Concurrency across replicas:

* `claim` is one statement: it locks up to `limit` visible READY messages
  with FOR UPDATE SKIP LOCKED, so competing receivers (on any replica) take
  different messages without waiting for each other, then deletes the
  expired ones, dead-letters the exhausted ones and delivers the rest (a
  fresh receipt nonce each, visible again after the visibility timeout).
* ack, nack and extend lock the named messages (FOR UPDATE, in message id
  order, so two calls never deadlock), decide in Python exactly as the
  embedded store does, and write each changed row once.
* Deduplication claims the (tenant, to_agent, idempotency_key) row with
  INSERT ... ON CONFLICT DO UPDATE ... WHERE the old record expired: of two
  concurrent sends with one key, the second waits for the first to commit
  and then sees its record, so exactly one message is stored.
* sweep runs on one replica at a time (pg_try_advisory_xact_lock); the
  others skip that round.

The inbox limit is checked in the INSERT statement itself; concurrent sends
to a nearly full inbox may overshoot it by the number of concurrent senders.

The schema is this module's own versioned migration list, recorded in
mb_schema_migrations and applied under an advisory lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import asyncpg

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import InvalidArgumentError
from statekeeper.core.messagebus.models import (
    AgentMessage,
    DeadLetter,
    DeadLetterReason,
    Delivery,
    Receipt,
)
from statekeeper.core.messagebus.store import Audit, DeadLetterCursor, Lease, Send, redrive_record
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.storage.postgres.erasure import run_steps
from statekeeper.storage.postgres.migrations import (
    Migration,
    SchemaOutOfDateError,
    apply_migrations,
)
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.shared import messagebus as shared
from statekeeper.storage.shared.erasure import messagebus_steps
from statekeeper.storage.shared.messagebus import Settlement
from statekeeper.storage.sql import AUDIT_COLUMNS, Row, audit_values

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection

# Append only; never edit a released entry.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "message bus: messages, deduplication records",
        (
            """CREATE TABLE mb_messages (
                tenant text NOT NULL,
                message_id text NOT NULL,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                to_agent text NOT NULL,
                from_agent text NOT NULL,
                type text NOT NULL,
                content_type text NOT NULL,
                schema_version integer NOT NULL,
                data bytea NOT NULL,
                reply_to text NOT NULL,
                correlation_id text NOT NULL,
                in_reply_to text NOT NULL,
                headers text NOT NULL,
                idempotency_key text NOT NULL,
                send_time double precision NOT NULL,
                first_visible_time double precision NOT NULL,
                visible_time double precision NOT NULL,
                expire_time double precision,
                max_deliveries integer NOT NULL,
                delivery_count integer NOT NULL,
                receipt text,
                state smallint NOT NULL,
                state_time double precision NOT NULL,
                dead_reason smallint,
                dead_detail text,
                PRIMARY KEY (tenant, message_id)
            )""",
            "CREATE INDEX mb_inbox ON mb_messages (tenant, to_agent, visible_time, seq)"
            " WHERE state = 0",
            "CREATE INDEX mb_dead ON mb_messages (tenant, to_agent, state_time, message_id)"
            " WHERE state = 2",
            "CREATE INDEX mb_acked ON mb_messages (state_time) WHERE state = 1",
            "CREATE INDEX mb_expiring ON mb_messages (expire_time)"
            " WHERE state = 0 AND expire_time IS NOT NULL",
            "CREATE INDEX mb_in_flight ON mb_messages (visible_time)"
            " WHERE state = 0 AND receipt IS NOT NULL",
            """CREATE TABLE mb_dedup (
                tenant text NOT NULL,
                to_agent text NOT NULL,
                idempotency_key text NOT NULL,
                message_id text NOT NULL,
                expire_time double precision NOT NULL,
                PRIMARY KEY (tenant, to_agent, idempotency_key)
            )""",
            "CREATE INDEX mb_dedup_by_expiry ON mb_dedup (expire_time)",
        ),
    ),
)
LATEST_SCHEMA = MIGRATIONS[-1].version
# pg_advisory_xact_lock keys: these migrations ("msgbus:m") and the sweep
# ("msgbus:s").
MIGRATION_LOCK_KEY = 0x6D73676275733A6D
SWEEP_LOCK_KEY = 0x6D73676275733A73
SCHEMA_TABLE = "mb_schema_migrations"

_MAX_DELIVERIES = int(DeadLetterReason.MAX_DELIVERIES)

_MESSAGE_COLUMNS = (
    "message_id, to_agent, from_agent, type, content_type, schema_version, data, reply_to,"
    " correlation_id, in_reply_to, headers, idempotency_key, send_time, first_visible_time,"
    " visible_time, expire_time, max_deliveries"
)

# Stores a READY (or held: ACKED) message ($1..$20: message_values), unless
# the inbox is full ($21: its limit): the inbox count is bounded by the
# limit so that a full check costs at most `limit` index entries.
_INSERT = f"""
INSERT INTO mb_messages ({shared.INSERT_COLUMNS}, delivery_count)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, 0
WHERE $19::smallint <> 0 OR (
    SELECT count(*) FROM (
        SELECT 1 FROM mb_messages WHERE tenant = $1 AND to_agent = $3 AND state = 0 LIMIT $21
    ) AS inbox) < $21
RETURNING 1
"""

# One claim round (see the module docstring). The effective maximum of
# deliveries is the message's own, else the configured one ($7).
_CLAIM = """
WITH picked AS (
    SELECT message_id, visible_time AS old_visible, seq FROM mb_messages
    WHERE tenant = $1 AND to_agent = $2 AND state = 0 AND visible_time <= $3
        AND ($4::text[] IS NULL OR type = ANY($4::text[]))
    ORDER BY visible_time, seq LIMIT $5
    FOR UPDATE SKIP LOCKED
), dropped AS (
    DELETE FROM mb_messages m USING picked p
    WHERE m.tenant = $1 AND m.message_id = p.message_id AND m.expire_time <= $3
), exhausted AS (
    UPDATE mb_messages m SET state = 2, state_time = $3, dead_reason = $8, dead_detail = '',
        receipt = NULL
    FROM picked p
    WHERE m.tenant = $1 AND m.message_id = p.message_id
        AND (m.expire_time IS NULL OR m.expire_time > $3)
        AND m.delivery_count >= CASE WHEN m.max_deliveries > 0 THEN m.max_deliveries ELSE $7 END
), delivered AS (
    UPDATE mb_messages m SET delivery_count = m.delivery_count + 1,
        receipt = substr(md5(gen_random_uuid()::text), 1, 16), visible_time = $3 + $6
    FROM picked p
    WHERE m.tenant = $1 AND m.message_id = p.message_id
        AND (m.expire_time IS NULL OR m.expire_time > $3)
        AND m.delivery_count < CASE WHEN m.max_deliveries > 0 THEN m.max_deliveries ELSE $7 END
    RETURNING m.*, p.old_visible, p.seq AS picked_seq
)
SELECT c.picked, d.* FROM (SELECT count(*) AS picked FROM picked) AS c
LEFT JOIN delivered d ON true
ORDER BY d.old_visible, d.picked_seq
"""

# Writes the final state of the rows an ack, nack or extend changed.
_UPDATE_ROWS = """
UPDATE mb_messages m SET state = u.state, state_time = u.state_time,
    visible_time = u.visible_time, receipt = u.receipt, dead_reason = u.dead_reason,
    dead_detail = u.dead_detail
FROM unnest($2::text[], $3::smallint[], $4::float8[], $5::float8[], $6::text[], $7::smallint[],
    $8::text[]) AS u(message_id, state, state_time, visible_time, receipt, dead_reason,
    dead_detail)
WHERE m.tenant = $1 AND m.message_id = u.message_id
"""

_REDRIVE = (
    "UPDATE mb_messages SET state = 0, visible_time = $3, state_time = $3, delivery_count = 0,"
    " receipt = NULL, dead_reason = NULL, dead_detail = NULL"
    " WHERE tenant = $1 AND to_agent = $2 AND state = 2"
)

# Fields that PostgreSQL text cannot hold when they contain NUL.
_TEXT_FIELDS = ("type", "correlation_id", "in_reply_to", "idempotency_key")


# The columns of _UPDATE_ROWS's arrays after the tenant.
_UPDATED = ("message_id", *shared.CHANGED_COLUMNS)


class PostgresMessageStore(shared.SqlMessageStore):
    """The message bus on PostgreSQL."""

    def __init__(self, db: PostgresStorage, migrate: bool = True) -> None:
        self._db = db
        self._migrate = migrate

    @property
    def description(self) -> str:
        return "message bus on PostgreSQL"

    async def start(self) -> None:
        """Applies (or, with migrate=False, checks) the schema. The
        PostgresStorage must be started first."""
        async with self._db.connection("message bus schema") as conn:
            applied = await apply_migrations(
                conn, SCHEMA_TABLE, MIGRATION_LOCK_KEY, MIGRATIONS, self._migrate
            )
            version = applied.version
        if version < LATEST_SCHEMA:
            raise SchemaOutOfDateError(
                f"the message bus schema is at version {version}, this server needs"
                f" {LATEST_SCHEMA}: start with --migrate-on-start"
            )

    # ----- sending --------------------------------------------------------------------

    async def store_message(
        self, tenant: str, message: AgentMessage, send: Send, record: AuditRecord | None
    ) -> AgentMessage | None:
        _check_text_fields(message)
        async with self._db.transaction("send message") as conn:
            if message.idempotency_key:
                earlier = await _claim_dedup(conn, tenant, message, send.now, send.dedup_until)
                if earlier is not None:
                    return earlier
            values = shared.message_values(tenant, message, send.held, send.now)
            if await conn.fetchval(_INSERT, *values, send.max_inbox_messages) is None:
                raise shared.inbox_full(message.to_agent, send.max_inbox_messages)
            await _insert_audit(conn, tenant, [record])
        return None

    async def release(self, tenant: str, message_id: str) -> None:
        async with self._db.connection("release message") as conn:
            await conn.execute(
                "UPDATE mb_messages SET state = 0, receipt = NULL"
                " WHERE tenant = $1 AND message_id = $2 AND state = 1",
                tenant,
                message_id,
            )

    # ----- receiving --------------------------------------------------------------------

    async def claim_round(
        self, tenant: str, agent: str, types: Sequence[str], now: float, wanted: int, lease: Lease
    ) -> tuple[list[Delivery], int]:
        async with self._db.connection("claim messages") as conn:
            rows = await conn.fetch(
                _CLAIM,
                tenant,
                agent,
                now,
                list(types) if types else None,
                wanted,
                lease.visibility_timeout,
                lease.max_deliveries,
                _MAX_DELIVERIES,
            )
        deliveries = [_delivery(row) for row in rows if row["message_id"]]
        return deliveries, rows[0]["picked"] if rows else 0

    async def settle_rows(self, tenant: str, ids: list[str], decide: shared.Decide) -> Settlement:
        async with self._db.transaction("settle deliveries") as conn:
            rows = await conn.fetch(
                "SELECT message_id, to_agent, state, state_time, visible_time, receipt,"
                " delivery_count, max_deliveries, dead_reason, dead_detail FROM mb_messages"
                " WHERE tenant = $1 AND message_id = ANY($2::text[])"
                " ORDER BY message_id FOR UPDATE",
                tenant,
                ids,
            )
            done = decide({row["message_id"]: dict(row) for row in rows})
            if done.changed:
                changed = done.changed.values()
                columns = [[row[name] for row in changed] for name in _UPDATED]
                await conn.execute(_UPDATE_ROWS, tenant, *columns)
            await _insert_audit(conn, tenant, done.records)
        return done

    async def receipt_rows(self, tenant: str, ids: list[str]) -> dict[str, Row]:
        async with self._db.connection("in-flight deliveries") as conn:
            rows = await conn.fetch(
                "SELECT message_id, state, visible_time, receipt FROM mb_messages"
                " WHERE tenant = $1 AND message_id = ANY($2::text[])",
                tenant,
                ids,
            )
        return {row["message_id"]: row for row in rows}

    async def next_visible_time(self, tenant: str, agent: str, now: float) -> float | None:
        async with self._db.connection("next visible time") as conn:
            value = await conn.fetchval(
                "SELECT min(visible_time) FROM mb_messages WHERE tenant = $1 AND to_agent = $2"
                " AND state = 0 AND visible_time > $3",
                tenant,
                agent,
                now,
            )
        return None if value is None else float(value)

    async def get(self, tenant: str, message_id: str) -> AgentMessage | None:
        async with self._db.connection("get message") as conn:
            row = await conn.fetchrow(
                f"SELECT {_MESSAGE_COLUMNS} FROM mb_messages WHERE tenant = $1 AND message_id = $2",
                tenant,
                message_id,
            )
        return None if row is None else shared.message_from_row(row)

    # ----- dead letters and upkeep -------------------------------------------------------

    async def list_dead_letters(
        self, tenant: str, agent: str, after: DeadLetterCursor | None, limit: int
    ) -> list[DeadLetter]:
        after_time, after_id = after if after is not None else (-1.0, "")
        async with self._db.connection("list dead letters") as conn:
            rows = await conn.fetch(
                f"SELECT {_MESSAGE_COLUMNS}, delivery_count, dead_reason, dead_detail,"
                " state_time FROM mb_messages WHERE tenant = $1 AND to_agent = $2 AND state = 2"
                " AND (state_time, message_id) > ($3, $4)"
                " ORDER BY state_time, message_id LIMIT $5",
                tenant,
                agent,
                after_time,
                after_id,
                limit,
            )
        return [shared.dead_letter_from_row(row) for row in rows]

    async def move_dead_letters(
        self, tenant: str, agent: str, message_ids: Sequence[str], now: float, audit: Audit
    ) -> set[str]:
        async with self._db.transaction("redrive dead letters") as conn:
            if not message_ids:
                rows = await conn.fetch(_REDRIVE + " RETURNING message_id", tenant, agent, now)
            else:
                rows = await conn.fetch(
                    _REDRIVE + " AND message_id = ANY($4::text[]) RETURNING message_id",
                    tenant,
                    agent,
                    now,
                    list(message_ids),
                )
            moved = {row["message_id"] for row in rows}
            await _insert_audit(conn, tenant, [redrive_record(audit, agent, len(moved))])
        return moved

    async def sweep(self, now: float, acked_retention: float, max_deliveries: int) -> int:
        async with self._db.transaction("message bus sweep") as conn:
            if not await conn.fetchval("SELECT pg_try_advisory_xact_lock($1)", SWEEP_LOCK_KEY):
                return 0  # another replica is sweeping
            dropped = await conn.fetch(
                "DELETE FROM mb_messages WHERE state = 0 AND expire_time IS NOT NULL"
                " AND expire_time <= $1 RETURNING 1",
                now,
            )
            exhausted = await conn.fetch(
                "UPDATE mb_messages SET state = 2, state_time = $1, dead_reason = $2,"
                " receipt = NULL WHERE state = 0 AND receipt IS NOT NULL AND visible_time <= $1"
                " AND delivery_count >= (CASE WHEN max_deliveries > 0 THEN max_deliveries"
                " ELSE $3 END) RETURNING 1",
                now,
                _MAX_DELIVERIES,
                max_deliveries,
            )
            forgotten = await conn.fetch(
                "DELETE FROM mb_messages WHERE state = 1 AND state_time <= $1 RETURNING 1",
                now - acked_retention,
            )
            await conn.execute("DELETE FROM mb_dedup WHERE expire_time <= $1", now)
        return len(dropped) + len(exhausted) + len(forgotten)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        erasure = await run_steps(self._db, messagebus_steps(tenant, subject), dry_run)
        return erasure.counts


# ----- helpers -------------------------------------------------------------------------


async def _insert_audit(
    conn: Connection, tenant: str, records: Sequence[AuditRecord | None]
) -> None:
    """The records of a change, in the transaction that makes it."""
    values = [audit_values(record, tenant) for record in records if record is not None]
    if values:
        await conn.executemany(
            f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)", values
        )


def _check_text_fields(message: AgentMessage) -> None:
    """PostgreSQL text cannot hold NUL: refuse it as bad input, naming the
    field, instead of failing inside the database."""
    for name in _TEXT_FIELDS:
        if "\x00" in getattr(message, name):
            raise InvalidArgumentError(name, "must not contain NUL")
    if "\x00" in message.payload.content_type:
        raise InvalidArgumentError("payload.content_type", "must not contain NUL")


async def _claim_dedup(
    conn: Connection,
    tenant: str,
    message: AgentMessage,
    now: float,
    dedup_until: float | None,
) -> AgentMessage | None:
    """The earlier message if (to_agent, key) has a live record; else takes
    the record for `message` (when `dedup_until` is set) and returns None."""
    if dedup_until is not None:
        taken = await conn.fetchval(
            "INSERT INTO mb_dedup (tenant, to_agent, idempotency_key, message_id, expire_time)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, to_agent, idempotency_key)"
            " DO UPDATE SET message_id = excluded.message_id, expire_time = excluded.expire_time"
            " WHERE mb_dedup.expire_time <= $6 RETURNING 1",
            tenant,
            message.to_agent,
            message.idempotency_key,
            message.message_id,
            dedup_until,
            now,
        )
        if taken is not None:
            return None
    earlier_id = await conn.fetchval(
        "SELECT message_id FROM mb_dedup WHERE tenant = $1 AND to_agent = $2"
        " AND idempotency_key = $3 AND expire_time > $4",
        tenant,
        message.to_agent,
        message.idempotency_key,
        now,
    )
    if earlier_id is None:
        return None
    row = await conn.fetchrow(
        f"SELECT {_MESSAGE_COLUMNS} FROM mb_messages WHERE tenant = $1 AND message_id = $2",
        tenant,
        earlier_id,
    )
    return shared.earlier_message(earlier_id, message.to_agent, row)


def _delivery(row: asyncpg.Record) -> Delivery:
    receipt = Receipt(row["message_id"], row["receipt"])
    return Delivery(
        receipt, shared.message_from_row(row), row["delivery_count"], row["visible_time"]
    )
