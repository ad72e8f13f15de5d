"""The PostgreSQL schema of memory (episodes, facts, predicates, the lexical index and the
vector change log) and its migrations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from statekeeper.core.memory import lexical
from statekeeper.storage.postgres.migrations import apply_migrations

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection

from typing import TYPE_CHECKING

from statekeeper.storage.postgres.migrations import Migration

if TYPE_CHECKING:
    pass


# Append only; never edit a released entry.
MEMORY_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "episodes, facts, predicates, vector change log",
        (
            """CREATE TABLE memory_episodes (
                vector_key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                tenant text NOT NULL,
                episode_id text NOT NULL,
                user_id text NOT NULL,
                session_id text NOT NULL,
                user_message text NOT NULL,
                assistant_response text NOT NULL,
                summary text NOT NULL,
                summary_source integer NOT NULL,
                embedding bytea,
                dimension integer NOT NULL,
                embedding_source integer NOT NULL,
                embedding_model text NOT NULL,
                importance double precision NOT NULL,
                metadata jsonb NOT NULL,
                occur_time double precision NOT NULL,
                create_time double precision NOT NULL,
                content_hash text NOT NULL,
                consolidate_time double precision,
                derived_fact_ids text[] NOT NULL
            )""",
            "CREATE UNIQUE INDEX memory_episodes_id ON memory_episodes (tenant, episode_id)",
            "CREATE UNIQUE INDEX memory_episodes_hash"
            " ON memory_episodes (tenant, user_id, content_hash)",
            "CREATE INDEX memory_episodes_user_time"
            " ON memory_episodes (tenant, user_id, occur_time DESC, episode_id DESC)",
            "CREATE INDEX memory_episodes_time"
            " ON memory_episodes (tenant, occur_time DESC, episode_id DESC)",
            # Index rebuilds and batch scans walk a user's rows by key.
            "CREATE INDEX memory_episodes_user_key"
            " ON memory_episodes (tenant, user_id, vector_key)",
            """CREATE TABLE memory_facts (
                tenant text NOT NULL,
                fact_id text NOT NULL,
                user_id text NOT NULL,
                subject text NOT NULL,
                subject_key text NOT NULL,
                predicate text NOT NULL,
                predicate_key text NOT NULL,
                object text NOT NULL,
                object_key text NOT NULL,
                source text NOT NULL,
                confidence double precision NOT NULL,
                valid_from double precision NOT NULL,
                valid_to double precision,
                origin integer NOT NULL,
                source_episode_ids text[] NOT NULL,
                create_time double precision NOT NULL,
                invalidate_time double precision,
                invalidated_by text NOT NULL,
                invalidation_reason text NOT NULL,
                PRIMARY KEY (tenant, fact_id)
            )""",
            "CREATE INDEX memory_facts_subject"
            " ON memory_facts (tenant, subject_key, predicate_key, user_id)",
            "CREATE INDEX memory_facts_object ON memory_facts (tenant, object_key)",
            "CREATE INDEX memory_facts_time"
            " ON memory_facts (tenant, create_time DESC, fact_id DESC)",
            """CREATE TABLE memory_predicates (
                tenant text NOT NULL,
                name text NOT NULL,
                single_valued boolean NOT NULL,
                description text NOT NULL,
                create_time double precision NOT NULL,
                update_time double precision NOT NULL,
                PRIMARY KEY (tenant, name)
            )""",
            """CREATE TABLE memory_change_heads (
                tenant text PRIMARY KEY,
                seq bigint NOT NULL
            )""",
            """CREATE TABLE memory_vector_changes (
                tenant text NOT NULL,
                seq bigint NOT NULL,
                user_id text NOT NULL,
                op text NOT NULL,
                keys bigint[] NOT NULL,
                origin text NOT NULL,
                change_time timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tenant, seq)
            )""",
            "CREATE INDEX memory_vector_changes_time ON memory_vector_changes (change_time)",
        ),
    ),
    Migration(
        2,
        "lexical index of episodes (terms from core.lexical, GIN over a tsvector)",
        (
            # NULL: not indexed yet (rows older than this migration are
            # indexed by index_missing_terms, which start() runs).
            "ALTER TABLE memory_episodes ADD COLUMN lexical_terms text",
            # The terms are lexemes as they are: no parser, no dictionary, so
            # both backends match exactly the terms core.lexical produced.
            "ALTER TABLE memory_episodes ADD COLUMN lexical tsvector GENERATED ALWAYS AS"
            " (array_to_tsvector(string_to_array(coalesce(lexical_terms, ''), ' '))) STORED",
            "CREATE INDEX memory_episodes_lexical ON memory_episodes USING gin (lexical)",
        ),
    ),
    Migration(
        3,
        "episodes by session and key (recall looks up a match's neighbouring turns)",
        (
            "CREATE INDEX memory_episodes_session_key"
            " ON memory_episodes (tenant, user_id, session_id, vector_key)",
        ),
    ),
    Migration(
        4,
        "episodes by metadata (filtered recall: containment through GIN, not a scan)",
        (
            "CREATE INDEX memory_episodes_metadata ON memory_episodes"
            " USING gin (metadata jsonb_path_ops)",
        ),
    ),
    Migration(
        5,
        "episodes whose lexical terms are still to be derived",
        (
            # index_missing_terms runs at every start: through this index
            # (empty once done) its check costs nothing, not a scan.
            "CREATE INDEX memory_episodes_unindexed ON memory_episodes (vector_key)"
            " WHERE lexical_terms IS NULL",
        ),
    ),
)


LATEST_MEMORY_SCHEMA = MEMORY_MIGRATIONS[-1].version


# pg_advisory_xact_lock key that serialises memory migrations ("skmemory").
MEMORY_MIGRATION_LOCK_KEY = 0x736B6D656D6F7279


_INDEX_BATCH = 500


async def migrate_memory(conn: Connection) -> list[int]:
    """Applies the missing memory migrations; returns the versions this call
    applied."""
    applied = await apply_migrations(
        conn, "memory_schema_migrations", MEMORY_MIGRATION_LOCK_KEY, MEMORY_MIGRATIONS
    )
    return applied.applied_now


async def index_missing_terms(conn: Connection) -> int:
    """Derives the lexical terms of episodes stored before migration 2, in
    batches of their own transactions (replicas may run it together: each
    batch locks the rows it takes, skipping those another one holds)."""
    total = 0
    while True:
        async with conn.transaction():
            rows = await conn.fetch(
                "SELECT vector_key, user_message, assistant_response, summary"
                " FROM memory_episodes WHERE lexical_terms IS NULL LIMIT $1"
                " FOR UPDATE SKIP LOCKED",
                _INDEX_BATCH,
            )
            await conn.executemany(
                "UPDATE memory_episodes SET lexical_terms = $2 WHERE vector_key = $1",
                [(r["vector_key"], lexical.document_terms(r[1], r[2], r[3])) for r in rows],
            )
        total += len(rows)
        if len(rows) < _INDEX_BATCH:
            return total
