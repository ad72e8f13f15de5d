"""The SQLite schema of sessions, messages, versions, receipts and the audit log (with the
per-tenant hash chain its triggers keep), and its migrations."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import struct

from statekeeper.storage.embedded.migrations import apply_migrations
from statekeeper.storage.sql import (
    AUDIT_COLUMNS,
)

# The SQLite file inside the data dir.
DATABASE_FILE = "statekeeper.sqlite3"


# Versioned schema migrations: (version, statements). Append only; never edit
# a released entry.
# The SQL function the audit chain trigger calls (registered on the writer).
AUDIT_DIGEST = "sk_audit_digest"


def audit_digest(prev_hash: str | None, *content: object) -> str:
    """The hash of an audit record: its content (AUDIT_COLUMNS, time as its
    IEEE bits so no formatting can change it) after the previous record's
    hash."""
    *texts, revision, when, summary = content
    fields = [*texts, str(revision), struct.pack(">d", when).hex(), summary]
    canonical = (prev_hash or "") + json.dumps(fields, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            """CREATE TABLE sessions (
                tenant TEXT NOT NULL,
                session_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                agent_id TEXT NOT NULL,
                status INTEGER NOT NULL,
                create_time REAL NOT NULL,
                expire_time REAL,
                version INTEGER NOT NULL,
                state TEXT NOT NULL,
                PRIMARY KEY (tenant, session_id)
            )""",
            "CREATE INDEX sessions_by_time ON sessions (tenant, create_time DESC, session_id DESC)",
            "CREATE INDEX sessions_by_expiry ON sessions (expire_time)"
            " WHERE expire_time IS NOT NULL",
            """CREATE TABLE messages (
                tenant TEXT NOT NULL,
                session_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                message_id TEXT NOT NULL,
                role INTEGER NOT NULL,
                content TEXT NOT NULL,
                name TEXT NOT NULL,
                tool_calls TEXT NOT NULL,
                tool_call_id TEXT NOT NULL,
                metadata TEXT NOT NULL,
                token_count INTEGER NOT NULL,
                create_time REAL NOT NULL,
                rolled_back INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (tenant, session_id, sequence)
            )""",
            """CREATE TABLE session_versions (
                tenant TEXT NOT NULL,
                session_id TEXT NOT NULL,
                version INTEGER NOT NULL,
                parent_version INTEGER NOT NULL,
                change_kind INTEGER NOT NULL,
                create_time REAL NOT NULL,
                snapshot TEXT NOT NULL,
                PRIMARY KEY (tenant, session_id, version)
            )""",
            """CREATE TABLE append_receipts (
                tenant TEXT NOT NULL,
                request_id TEXT NOT NULL,
                session_id TEXT NOT NULL,
                first_sequence INTEGER NOT NULL,
                last_sequence INTEGER NOT NULL,
                version INTEGER NOT NULL,
                PRIMARY KEY (tenant, request_id)
            )""",
            "CREATE INDEX receipts_by_session ON append_receipts (tenant, session_id)",
        ],
    ),
    (
        2,
        [
            """CREATE TABLE audit_log (
                audit_id INTEGER PRIMARY KEY AUTOINCREMENT,
                tenant TEXT NOT NULL,
                principal TEXT NOT NULL,
                service TEXT NOT NULL,
                method TEXT NOT NULL,
                entity_type TEXT NOT NULL,
                entity_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                time REAL NOT NULL,
                summary TEXT NOT NULL
            )""",
            "CREATE INDEX audit_by_tenant ON audit_log (tenant, audit_id)",
            "CREATE INDEX audit_by_entity ON audit_log (tenant, entity_id, audit_id)",
        ],
    ),
    (
        3,
        [
            # The ids of each message's tool calls, for planning windows
            # without decoding `tool_calls` (see sql.MESSAGE_INSERT_COLUMNS);
            # existing rows are backfilled from `tool_calls`.
            "ALTER TABLE messages ADD COLUMN tool_call_ids TEXT NOT NULL DEFAULT ''",
            "UPDATE messages SET tool_call_ids = (SELECT json_group_array("
            "json_extract(value, '$.id')) FROM json_each(messages.tool_calls))"
            " WHERE tool_calls NOT IN ('', '[]')",
        ],
    ),
    (
        4,
        [
            # A per-tenant hash chain of the audit trail (core/audit/service.py),
            # linked by a trigger in the inserting transaction; the writer
            # is single, so the chain head needs no lock of its own.
            "ALTER TABLE audit_log ADD COLUMN chain_seq INTEGER",
            "ALTER TABLE audit_log ADD COLUMN prev_hash TEXT",
            "ALTER TABLE audit_log ADD COLUMN hash TEXT",
            "CREATE UNIQUE INDEX audit_by_chain ON audit_log (tenant, chain_seq)",
            """CREATE TABLE audit_chain_heads (
                tenant TEXT PRIMARY KEY,
                seq INTEGER NOT NULL,
                hash TEXT NOT NULL
            )""",
            f"""CREATE TRIGGER audit_chain AFTER INSERT ON audit_log BEGIN
                INSERT OR IGNORE INTO audit_chain_heads VALUES (NEW.tenant, 0, '');
                UPDATE audit_log SET
                    chain_seq = (SELECT seq + 1 FROM audit_chain_heads WHERE tenant = NEW.tenant),
                    prev_hash = (SELECT hash FROM audit_chain_heads WHERE tenant = NEW.tenant)
                WHERE audit_id = NEW.audit_id;
                UPDATE audit_log SET hash = {AUDIT_DIGEST}(prev_hash, {AUDIT_COLUMNS})
                WHERE audit_id = NEW.audit_id;
                UPDATE audit_chain_heads SET seq = seq + 1,
                    hash = (SELECT hash FROM audit_log WHERE audit_id = NEW.audit_id)
                WHERE tenant = NEW.tenant;
            END""",
        ],
    ),
    (
        5,
        [
            # A tenant's records by time: the audit archiver finds and moves
            # whole UTC days (core/archive/audit.py) without scanning the log.
            "CREATE INDEX audit_by_time ON audit_log (tenant, time)",
        ],
    ),
    (
        6,
        [
            # Archive chunks already used up (restored, or removed by an
            # erasure or a delete): a restore that read one before it was
            # used up must not insert it again (core/archive/service.py).
            """CREATE TABLE archive_consumed (
                tenant TEXT NOT NULL,
                chunk_sha256 TEXT NOT NULL,
                consumed_at REAL NOT NULL,
                PRIMARY KEY (tenant, chunk_sha256)
            )""",
        ],
    ),
    (
        7,
        [
            # The stores insert records already linked, a batch at a time
            # (embedded/audit_chain.py: the head read and written once per
            # tenant per batch, not four statements per record); the trigger
            # links only records inserted without a hash (raw SQL, imports),
            # in three statements instead of four.
            "DROP TRIGGER audit_chain",
            f"""CREATE TRIGGER audit_chain AFTER INSERT ON audit_log
            WHEN NEW.hash IS NULL BEGIN
                INSERT OR IGNORE INTO audit_chain_heads VALUES (NEW.tenant, 0, '');
                UPDATE audit_log SET
                    chain_seq = (SELECT seq + 1 FROM audit_chain_heads WHERE tenant = NEW.tenant),
                    prev_hash = (SELECT hash FROM audit_chain_heads WHERE tenant = NEW.tenant),
                    hash = {AUDIT_DIGEST}(
                        (SELECT hash FROM audit_chain_heads WHERE tenant = NEW.tenant),
                        {AUDIT_COLUMNS})
                WHERE audit_id = NEW.audit_id;
                UPDATE audit_chain_heads SET seq = seq + 1,
                    hash = (SELECT hash FROM audit_log WHERE audit_id = NEW.audit_id)
                WHERE tenant = NEW.tenant;
            END""",
        ],
    ),
]


def migrate(db: sqlite3.Connection) -> None:
    apply_migrations(db, "schema_migrations", MIGRATIONS)
