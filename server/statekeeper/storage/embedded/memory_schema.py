"""The SQLite schema of memory (episodes, facts, predicates, the FTS5 lexical index) and its
migrations, including the backfill of lexical terms for episodes stored before the index."""

from __future__ import annotations

import sqlite3

from statekeeper.core.memory import lexical
from statekeeper.storage.embedded.migrations import apply_migrations

# Versioned migrations of the memory tables: (version, statements). Append
# only; never edit a released entry.
MEMORY_MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            """CREATE TABLE memory_episodes (
                vector_key INTEGER PRIMARY KEY AUTOINCREMENT,
                tenant TEXT NOT NULL,
                episode_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                session_id TEXT NOT NULL,
                user_message TEXT NOT NULL,
                assistant_response TEXT NOT NULL,
                summary TEXT NOT NULL,
                summary_source INTEGER NOT NULL,
                embedding BLOB,
                dimension INTEGER NOT NULL,
                embedding_source INTEGER NOT NULL,
                embedding_model TEXT NOT NULL,
                importance REAL NOT NULL,
                metadata TEXT NOT NULL,
                occur_time REAL NOT NULL,
                create_time REAL NOT NULL,
                content_hash TEXT NOT NULL,
                consolidate_time REAL,
                derived_fact_ids TEXT NOT NULL
            )""",
            "CREATE UNIQUE INDEX memory_episodes_id ON memory_episodes (tenant, episode_id)",
            "CREATE UNIQUE INDEX memory_episodes_hash"
            " ON memory_episodes (tenant, user_id, content_hash)",
            "CREATE INDEX memory_episodes_user_time"
            " ON memory_episodes (tenant, user_id, occur_time DESC, episode_id DESC)",
            "CREATE INDEX memory_episodes_time"
            " ON memory_episodes (tenant, occur_time DESC, episode_id DESC)",
            """CREATE TABLE memory_facts (
                tenant TEXT NOT NULL,
                fact_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                subject TEXT NOT NULL,
                subject_key TEXT NOT NULL,
                predicate TEXT NOT NULL,
                predicate_key TEXT NOT NULL,
                object TEXT NOT NULL,
                object_key TEXT NOT NULL,
                source TEXT NOT NULL,
                confidence REAL NOT NULL,
                valid_from REAL NOT NULL,
                valid_to REAL,
                origin INTEGER NOT NULL,
                source_episode_ids TEXT NOT NULL,
                create_time REAL NOT NULL,
                invalidate_time REAL,
                invalidated_by TEXT NOT NULL,
                invalidation_reason TEXT NOT NULL,
                PRIMARY KEY (tenant, fact_id)
            )""",
            "CREATE INDEX memory_facts_subject"
            " ON memory_facts (tenant, subject_key, predicate_key, user_id)",
            "CREATE INDEX memory_facts_object ON memory_facts (tenant, object_key)",
            "CREATE INDEX memory_facts_time"
            " ON memory_facts (tenant, create_time DESC, fact_id DESC)",
            """CREATE TABLE memory_predicates (
                tenant TEXT NOT NULL,
                name TEXT NOT NULL,
                single_valued INTEGER NOT NULL,
                description TEXT NOT NULL,
                create_time REAL NOT NULL,
                update_time REAL NOT NULL,
                PRIMARY KEY (tenant, name)
            )""",
        ],
    ),
    (
        2,
        [
            # Lexical index: terms come from core.lexical (NULL: not indexed
            # yet, see _index_terms); FTS5 only splits them on spaces.
            "ALTER TABLE memory_episodes ADD COLUMN lexical_terms TEXT",
            "CREATE VIRTUAL TABLE memory_episode_terms USING fts5(scope, terms,"
            " tokenize = 'unicode61 remove_diacritics 0')",
            "CREATE TRIGGER memory_episode_terms_delete AFTER DELETE ON memory_episodes"
            " BEGIN DELETE FROM memory_episode_terms WHERE rowid = old.vector_key; END",
        ],
    ),
    (
        3,
        [
            # Recall looks up the turns recorded next to a match in its session.
            "CREATE INDEX memory_episodes_session_key"
            " ON memory_episodes (tenant, user_id, session_id, vector_key)",
        ],
    ),
    (
        4,
        [
            # Filtered recall (matching_keys) reads a user's metadata from
            # this covering index, newest first, instead of every row with
            # its embedding (a 1-2 KB row per episode).
            "CREATE INDEX memory_episodes_user_metadata ON memory_episodes"
            " (tenant, user_id, occur_time DESC, episode_id DESC, dimension, metadata)",
        ],
    ),
    (
        5,
        [
            # Episodes whose terms are still to be derived (_index_terms runs
            # at every start): empty once done, so that check costs nothing.
            "CREATE INDEX memory_episodes_unindexed ON memory_episodes (vector_key)"
            " WHERE lexical_terms IS NULL",
        ],
    ),
]


_INDEX_BATCH = 500


def migrate_memory(db: sqlite3.Connection) -> None:
    """Applies the memory migrations not applied yet."""
    apply_migrations(db, "memory_schema_migrations", MEMORY_MIGRATIONS)
    _index_terms(db)


def _index_terms(db: sqlite3.Connection) -> None:
    """Indexes the terms of episodes stored before the lexical index
    existed (migration 2), in batches of their own transactions."""
    while True:
        with db:
            rows = db.execute(
                "SELECT vector_key, tenant, user_id, user_message, assistant_response, summary"
                " FROM memory_episodes INDEXED BY memory_episodes_unindexed"
                " WHERE lexical_terms IS NULL LIMIT ?",
                (_INDEX_BATCH,),
            ).fetchall()
            for row in rows:
                _store_terms(
                    db,
                    row[0],
                    row[1],
                    row[2],
                    lexical.document_terms(row[3], row[4], row[5]),
                )
        if len(rows) < _INDEX_BATCH:
            return


def _store_terms(db: sqlite3.Connection, key: int, tenant: str, user_id: str, terms: str) -> None:
    db.execute("UPDATE memory_episodes SET lexical_terms = ? WHERE vector_key = ?", (terms, key))
    db.execute(
        "INSERT INTO memory_episode_terms (rowid, scope, terms) VALUES (?, ?, ?)",
        (key, lexical.scope_token(tenant, user_id), terms),
    )
