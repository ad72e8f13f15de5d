"""The PostgreSQL schema of the blackboard (tenants, entries, versions, the bb_commit
function behind group commits) and its migrations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from statekeeper.storage.postgres.migrations import Migration

if TYPE_CHECKING:
    pass


# Append only; never edit a released entry.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "blackboard: tenants, entries, versions, revision log",
        (
            """CREATE TABLE bb_tenants (
                tenant text PRIMARY KEY,
                revision bigint NOT NULL,
                oldest_revision bigint NOT NULL,
                key_count bigint NOT NULL
            )""",
            """CREATE TABLE bb_entries (
                tenant text NOT NULL,
                board text COLLATE "C" NOT NULL,
                key text COLLATE "C" NOT NULL,
                kind smallint NOT NULL,
                content_type text NOT NULL,
                schema_version integer NOT NULL,
                data bytea NOT NULL,
                create_revision bigint NOT NULL,
                revision bigint NOT NULL,
                version bigint NOT NULL,
                writer text NOT NULL,
                expire_time double precision,
                update_time double precision NOT NULL,
                PRIMARY KEY (tenant, board, key)
            )""",
            "CREATE INDEX bb_entries_by_expiry ON bb_entries (expire_time)"
            " WHERE expire_time IS NOT NULL",
            """CREATE TABLE bb_versions (
                tenant text NOT NULL,
                board text COLLATE "C" NOT NULL,
                key text COLLATE "C" NOT NULL,
                revision bigint NOT NULL,
                seq integer NOT NULL,
                event_type smallint NOT NULL,
                kind smallint,
                content_type text,
                schema_version integer,
                data bytea,
                create_revision bigint NOT NULL,
                version bigint NOT NULL,
                writer text NOT NULL,
                expire_time double precision,
                update_time double precision NOT NULL,
                PRIMARY KEY (tenant, board, key, revision)
            )""",
            "CREATE INDEX bb_versions_by_board ON bb_versions (tenant, board, revision, seq)",
            "CREATE INDEX bb_versions_by_revision ON bb_versions (tenant, revision, seq)",
            """CREATE TABLE bb_log (
                tenant text NOT NULL,
                revision bigint NOT NULL,
                board text COLLATE "C" NOT NULL,
                commit_time double precision NOT NULL,
                PRIMARY KEY (tenant, revision)
            )""",
            "CREATE INDEX bb_log_by_board ON bb_log (tenant, board, revision)",
        ),
    ),
    Migration(
        2,
        "blackboard: bb_commit, a group of revisions in one call if the tenant is unchanged",
        (
            """CREATE FUNCTION bb_commit(
                p_tenant text, p_expected bigint, p_revision bigint, p_key_count bigint,
                v_board text[], v_key text[], v_revision bigint[], v_seq integer[],
                v_event_type smallint[], v_kind smallint[], v_content_type text[],
                v_schema_version integer[], v_data bytea[], v_create_revision bigint[],
                v_version bigint[], v_writer text[], v_expire_time float8[],
                v_update_time float8[], v_commit_time float8[],
                p_put_rows integer[], p_deleted_boards text[], p_deleted_keys text[],
                l_revision bigint[], l_board text[], l_commit_time float8[]
            ) RETURNS bigint LANGUAGE plpgsql AS $$
            DECLARE
                oldest bigint;
            BEGIN
                INSERT INTO bb_tenants (tenant, revision, oldest_revision, key_count)
                VALUES (p_tenant, 0, 1, 0) ON CONFLICT (tenant) DO NOTHING;
                -- The row lock, taken only if no other mutation committed since
                -- the caller read the state its decisions ran on.
                UPDATE bb_tenants SET revision = p_revision, key_count = p_key_count
                WHERE tenant = p_tenant AND revision = p_expected
                RETURNING oldest_revision INTO oldest;
                IF NOT FOUND THEN
                    RETURN NULL;
                END IF;
                INSERT INTO bb_versions (tenant, board, key, revision, seq, event_type, kind,
                    content_type, schema_version, data, create_revision, version, writer,
                    expire_time, update_time)
                SELECT p_tenant, u.board, u.key, u.revision, u.seq, u.event_type, u.kind,
                    u.content_type, u.schema_version, u.data, u.create_revision, u.version,
                    u.writer, u.expire_time, u.commit_time
                FROM unnest(v_board, v_key, v_revision, v_seq, v_event_type, v_kind,
                    v_content_type, v_schema_version, v_data, v_create_revision, v_version,
                    v_writer, v_expire_time, v_commit_time)
                    AS u(board, key, revision, seq, event_type, kind, content_type,
                        schema_version, data, create_revision, version, writer, expire_time,
                        commit_time);
                INSERT INTO bb_entries (tenant, board, key, kind, content_type, schema_version,
                    data, create_revision, revision, version, writer, expire_time, update_time)
                SELECT p_tenant, v_board[i], v_key[i], v_kind[i], v_content_type[i],
                    v_schema_version[i], v_data[i], v_create_revision[i], v_revision[i],
                    v_version[i], v_writer[i], v_expire_time[i], v_update_time[i]
                FROM unnest(p_put_rows) AS i
                ON CONFLICT (tenant, board, key) DO UPDATE SET kind = excluded.kind,
                    content_type = excluded.content_type,
                    schema_version = excluded.schema_version, data = excluded.data,
                    create_revision = excluded.create_revision, revision = excluded.revision,
                    version = excluded.version, writer = excluded.writer,
                    expire_time = excluded.expire_time, update_time = excluded.update_time;
                DELETE FROM bb_entries e
                USING unnest(p_deleted_boards, p_deleted_keys) AS d(board, key)
                WHERE e.tenant = p_tenant AND e.board = d.board AND e.key = d.key;
                INSERT INTO bb_log (tenant, revision, board, commit_time)
                SELECT p_tenant, l.revision, l.board, l.commit_time
                FROM unnest(l_revision, l_board, l_commit_time) AS l(revision, board, commit_time);
                RETURN oldest;
            END
            $$""",
        ),
    ),
    Migration(
        3,
        "blackboard: bb_commit with the audit records of its revisions",
        (
            # An overload (33 arguments): the 25-argument bb_commit stays for
            # replicas of the previous release during a rolling upgrade.
            """CREATE FUNCTION bb_commit(
                p_tenant text, p_expected bigint, p_revision bigint, p_key_count bigint,
                v_board text[], v_key text[], v_revision bigint[], v_seq integer[],
                v_event_type smallint[], v_kind smallint[], v_content_type text[],
                v_schema_version integer[], v_data bytea[], v_create_revision bigint[],
                v_version bigint[], v_writer text[], v_expire_time float8[],
                v_update_time float8[], v_commit_time float8[],
                p_put_rows integer[], p_deleted_boards text[], p_deleted_keys text[],
                l_revision bigint[], l_board text[], l_commit_time float8[],
                a_principal text[], a_service text[], a_method text[], a_entity_type text[],
                a_entity_id text[], a_revision bigint[], a_time float8[], a_summary text[]
            ) RETURNS bigint LANGUAGE plpgsql AS $$
            DECLARE
                oldest bigint;
            BEGIN
                oldest := bb_commit(p_tenant, p_expected, p_revision, p_key_count,
                    v_board, v_key, v_revision, v_seq, v_event_type, v_kind, v_content_type,
                    v_schema_version, v_data, v_create_revision, v_version, v_writer,
                    v_expire_time, v_update_time, v_commit_time, p_put_rows,
                    p_deleted_boards, p_deleted_keys, l_revision, l_board, l_commit_time);
                IF oldest IS NULL THEN
                    RETURN NULL;  -- the tenant moved: nothing written, nothing audited
                END IF;
                INSERT INTO audit_log (tenant, principal, service, method, entity_type,
                    entity_id, revision, time, summary)
                SELECT p_tenant, a.principal, a.service, a.method, a.entity_type,
                    a.entity_id, a.revision, a.time, a.summary
                FROM unnest(a_principal, a_service, a_method, a_entity_type, a_entity_id,
                    a_revision, a_time, a_summary) WITH ORDINALITY
                    AS a(principal, service, method, entity_type, entity_id, revision, time,
                        summary, n)
                ORDER BY a.n;
                RETURN oldest;
            END
            $$""",
        ),
    ),
    Migration(
        4,
        "blackboard: an erasure epoch per tenant, checked by bb_commit",
        (
            # EraseUser deletes entries without a revision (revisions stay
            # gap-free for watchers) but bumps erase_epoch under the tenant's
            # row lock; a replica's decisions read before it (or its
            # remembered entries) then commit nothing and are re-read.
            "ALTER TABLE bb_tenants ADD COLUMN erase_epoch bigint NOT NULL DEFAULT 0",
            # An overload (34 arguments, the epoch read last): the 33- and
            # 25-argument ones stay for replicas of earlier releases during a
            # rolling upgrade. The row lock is taken before the epoch is
            # compared, so no erasure commits between the check and the write.
            """CREATE FUNCTION bb_commit(
                p_tenant text, p_expected bigint, p_revision bigint, p_key_count bigint,
                v_board text[], v_key text[], v_revision bigint[], v_seq integer[],
                v_event_type smallint[], v_kind smallint[], v_content_type text[],
                v_schema_version integer[], v_data bytea[], v_create_revision bigint[],
                v_version bigint[], v_writer text[], v_expire_time float8[],
                v_update_time float8[], v_commit_time float8[],
                p_put_rows integer[], p_deleted_boards text[], p_deleted_keys text[],
                l_revision bigint[], l_board text[], l_commit_time float8[],
                a_principal text[], a_service text[], a_method text[], a_entity_type text[],
                a_entity_id text[], a_revision bigint[], a_time float8[], a_summary text[],
                p_epoch bigint
            ) RETURNS bigint LANGUAGE plpgsql AS $$
            DECLARE
                current_epoch bigint;
            BEGIN
                SELECT erase_epoch INTO current_epoch FROM bb_tenants
                WHERE tenant = p_tenant FOR UPDATE;
                IF FOUND AND current_epoch <> p_epoch THEN
                    RETURN NULL;  -- an erasure since the read: nothing written
                END IF;
                RETURN bb_commit(p_tenant, p_expected, p_revision, p_key_count,
                    v_board, v_key, v_revision, v_seq, v_event_type, v_kind, v_content_type,
                    v_schema_version, v_data, v_create_revision, v_version, v_writer,
                    v_expire_time, v_update_time, v_commit_time, p_put_rows,
                    p_deleted_boards, p_deleted_keys, l_revision, l_board, l_commit_time,
                    a_principal, a_service, a_method, a_entity_type, a_entity_id,
                    a_revision, a_time, a_summary);
            END
            $$""",
        ),
    ),
    Migration(
        5,
        "blackboard: bb_commit inserts the audit records of its revisions already linked",
        (
            # The 33-argument bb_commit (called by the 34-argument one) with
            # its records inserted already linked into the tenant's chain
            # (session schema migration 10): a call is its transaction's
            # whole work and the records its last step, so the chain head's
            # lock is held only for the commit and the commit rewrites no
            # audit row. Same signature: every release's replicas get it.
            """CREATE OR REPLACE FUNCTION bb_commit(
                p_tenant text, p_expected bigint, p_revision bigint, p_key_count bigint,
                v_board text[], v_key text[], v_revision bigint[], v_seq integer[],
                v_event_type smallint[], v_kind smallint[], v_content_type text[],
                v_schema_version integer[], v_data bytea[], v_create_revision bigint[],
                v_version bigint[], v_writer text[], v_expire_time float8[],
                v_update_time float8[], v_commit_time float8[],
                p_put_rows integer[], p_deleted_boards text[], p_deleted_keys text[],
                l_revision bigint[], l_board text[], l_commit_time float8[],
                a_principal text[], a_service text[], a_method text[], a_entity_type text[],
                a_entity_id text[], a_revision bigint[], a_time float8[], a_summary text[]
            ) RETURNS bigint LANGUAGE plpgsql AS $$
            DECLARE
                oldest bigint;
            BEGIN
                oldest := bb_commit(p_tenant, p_expected, p_revision, p_key_count,
                    v_board, v_key, v_revision, v_seq, v_event_type, v_kind, v_content_type,
                    v_schema_version, v_data, v_create_revision, v_version, v_writer,
                    v_expire_time, v_update_time, v_commit_time, p_put_rows,
                    p_deleted_boards, p_deleted_keys, l_revision, l_board, l_commit_time);
                IF oldest IS NULL THEN
                    RETURN NULL;  -- the tenant moved: nothing written, nothing audited
                END IF;
                PERFORM audit_append_linked(
                    array_fill(p_tenant, ARRAY[coalesce(cardinality(a_principal), 0)]),
                    a_principal, a_service, a_method, a_entity_type, a_entity_id,
                    a_revision, a_time, a_summary);
                RETURN oldest;
            END
            $$""",
        ),
    ),
)


LATEST_SCHEMA = MIGRATIONS[-1].version


# pg_advisory_xact_lock key of these migrations ("blackbrd" in ASCII).
MIGRATION_LOCK_KEY = 0x626C61636B627264


SCHEMA_TABLE = "bb_schema_migrations"
