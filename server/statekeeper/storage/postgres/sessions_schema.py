"""The PostgreSQL schema of sessions, messages, versions, receipts and the audit log, with
its migrations and the schema-version query `doctor` and `serve` use."""

from __future__ import annotations

from typing import TYPE_CHECKING

import asyncpg
import asyncpg.pool

from statekeeper.storage.postgres.migrations import (
    Migration,
    apply_migrations,
)

if TYPE_CHECKING:
    Connection = (
        asyncpg.Connection[asyncpg.Record] | asyncpg.pool.PoolConnectionProxy[asyncpg.Record]
    )


# Append only; never edit a released entry.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "sessions, messages, versions, append receipts",
        (
            """CREATE TABLE sessions (
                tenant text NOT NULL,
                session_id text NOT NULL,
                user_id text NOT NULL,
                agent_id text NOT NULL,
                status integer NOT NULL,
                create_time double precision NOT NULL,
                expire_time double precision,
                version bigint NOT NULL,
                state text NOT NULL,
                PRIMARY KEY (tenant, session_id)
            )""",
            "CREATE INDEX sessions_by_time ON sessions (tenant, create_time DESC, session_id DESC)",
            "CREATE INDEX sessions_by_expiry ON sessions (expire_time)"
            " WHERE expire_time IS NOT NULL",
            """CREATE TABLE messages (
                tenant text NOT NULL,
                session_id text NOT NULL,
                sequence bigint NOT NULL,
                message_id text NOT NULL,
                role integer NOT NULL,
                content text NOT NULL,
                name text NOT NULL,
                tool_calls text NOT NULL,
                tool_call_id text NOT NULL,
                metadata text NOT NULL,
                token_count integer NOT NULL,
                create_time double precision NOT NULL,
                rolled_back boolean NOT NULL DEFAULT false,
                PRIMARY KEY (tenant, session_id, sequence),
                FOREIGN KEY (tenant, session_id) REFERENCES sessions ON DELETE CASCADE
            )""",
            """CREATE TABLE session_versions (
                tenant text NOT NULL,
                session_id text NOT NULL,
                version bigint NOT NULL,
                parent_version bigint NOT NULL,
                change_kind integer NOT NULL,
                create_time double precision NOT NULL,
                snapshot text NOT NULL,
                PRIMARY KEY (tenant, session_id, version),
                FOREIGN KEY (tenant, session_id) REFERENCES sessions ON DELETE CASCADE
            )""",
            """CREATE TABLE append_receipts (
                tenant text NOT NULL,
                request_id text NOT NULL,
                session_id text NOT NULL,
                first_sequence bigint NOT NULL,
                last_sequence bigint NOT NULL,
                version bigint NOT NULL,
                PRIMARY KEY (tenant, request_id),
                FOREIGN KEY (tenant, session_id) REFERENCES sessions ON DELETE CASCADE
            )""",
            "CREATE INDEX receipts_by_session ON append_receipts (tenant, session_id)",
        ),
    ),
    Migration(
        2,
        "audit log",
        (
            """CREATE TABLE audit_log (
                audit_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                tenant text NOT NULL,
                principal text NOT NULL,
                service text NOT NULL,
                method text NOT NULL,
                entity_type text NOT NULL,
                entity_id text NOT NULL,
                revision bigint NOT NULL,
                time double precision NOT NULL,
                summary text NOT NULL
            )""",
            "CREATE INDEX audit_by_tenant ON audit_log (tenant, audit_id)",
            "CREATE INDEX audit_by_entity ON audit_log (tenant, entity_id, audit_id)",
        ),
    ),
    Migration(
        3,
        "messages.tool_call_ids, for planning windows without decoding tool_calls",
        (
            "ALTER TABLE messages ADD COLUMN tool_call_ids text NOT NULL DEFAULT ''",
            "UPDATE messages SET tool_call_ids = (SELECT json_agg(c->>'id')::text"
            " FROM json_array_elements(tool_calls::json) AS c)"
            " WHERE tool_calls NOT IN ('', '[]')",
        ),
    ),
    Migration(
        4,
        "audit_log: a per-tenant hash chain, linked at commit",
        (
            "ALTER TABLE audit_log ADD COLUMN chain_seq bigint, ADD COLUMN prev_hash text,"
            " ADD COLUMN hash text",
            "CREATE UNIQUE INDEX audit_by_chain ON audit_log (tenant, chain_seq)",
            """CREATE TABLE audit_chain_heads (
                tenant text PRIMARY KEY,
                seq bigint NOT NULL,
                hash text NOT NULL
            )""",
            # The content as bytes that no session setting changes (time as
            # its IEEE bits, not as text), after the previous record's hash.
            """CREATE FUNCTION audit_digest(prev text, r audit_log) RETURNS text
            LANGUAGE sql IMMUTABLE AS $$
                SELECT encode(sha256(convert_to(prev || json_build_array(r.tenant, r.principal,
                    r.service, r.method, r.entity_type, r.entity_id, r.revision::text,
                    encode(float8send(r.time), 'hex'), r.summary)::text, 'UTF8')), 'hex')
            $$""",
            """CREATE FUNCTION audit_chain_link() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                head audit_chain_heads%ROWTYPE;
                linked text;
            BEGIN
                INSERT INTO audit_chain_heads VALUES (NEW.tenant, 0, '')
                ON CONFLICT (tenant) DO NOTHING;
                SELECT * INTO head FROM audit_chain_heads WHERE tenant = NEW.tenant FOR UPDATE;
                linked := audit_digest(head.hash, NEW);
                UPDATE audit_log SET chain_seq = head.seq + 1, prev_hash = head.hash,
                    hash = linked
                WHERE audit_id = NEW.audit_id;
                UPDATE audit_chain_heads SET seq = head.seq + 1, hash = linked
                WHERE tenant = NEW.tenant;
                RETURN NULL;
            END
            $$""",
            # Deferred to COMMIT: the tenant's chain head is locked only from
            # then to the end of the commit, not across the transaction's
            # other statements (and never while it waits for other locks).
            "CREATE CONSTRAINT TRIGGER audit_chain AFTER INSERT ON audit_log"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_chain_link()",
        ),
    ),
    Migration(
        5,
        "audit_log by (tenant, time), for the audit archiver's whole UTC days",
        ("CREATE INDEX audit_by_time ON audit_log (tenant, time)",),
    ),
    Migration(
        6,
        "archive chunks already used up, which a late restore must not insert again",
        (
            """CREATE TABLE archive_consumed (
                tenant TEXT NOT NULL,
                chunk_sha256 TEXT NOT NULL,
                consumed_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (tenant, chunk_sha256)
            )""",
        ),
    ),
    Migration(
        7,
        "audit_log: a transaction's records linked in one pass at commit",
        (
            # Links the committing transaction's records from audit_id `first`
            # on: every tenant's in one pass, heads locked in tenant order (so
            # two transactions of several tenants cannot deadlock), digests
            # chained in a loop and the rows written by one UPDATE. The
            # records it finds unlinked are this transaction's: another's are
            # invisible until it commits, and linked by then; records older
            # than the chain (migration 4) have smaller ids than `first`.
            # Each record is hashed exactly as audit_digest does.
            # A custom plan for each call: a generic one guesses that
            # `audit_id >= first` keeps a third of the table, and scans it all.
            """CREATE FUNCTION audit_chain_link_from(first bigint) RETURNS void
            LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
            DECLARE
                r record;
                tenant_now text;
                seq_now bigint;
                hash_now text;
                n integer := 0;
                ids bigint[] := '{}';
                seqs bigint[] := '{}';
                prevs text[] := '{}';
                hashes text[] := '{}';
            BEGIN
                FOR r IN
                    SELECT a.audit_id, a.tenant, json_build_array(a.tenant, a.principal,
                        a.service, a.method, a.entity_type, a.entity_id, a.revision::text,
                        encode(float8send(a.time), 'hex'), a.summary)::text AS content
                    FROM audit_log a
                    WHERE a.audit_id >= first AND a.chain_seq IS NULL
                    ORDER BY a.tenant, a.audit_id
                LOOP
                    IF tenant_now IS DISTINCT FROM r.tenant THEN
                        IF tenant_now IS NOT NULL THEN
                            UPDATE audit_chain_heads SET seq = seq_now, hash = hash_now
                            WHERE tenant = tenant_now;
                        END IF;
                        tenant_now := r.tenant;
                        INSERT INTO audit_chain_heads VALUES (tenant_now, 0, '')
                        ON CONFLICT (tenant) DO NOTHING;
                        SELECT h.seq, h.hash INTO seq_now, hash_now FROM audit_chain_heads h
                        WHERE h.tenant = tenant_now FOR UPDATE;
                    END IF;
                    n := n + 1;
                    seq_now := seq_now + 1;
                    ids[n] := r.audit_id;
                    seqs[n] := seq_now;
                    prevs[n] := hash_now;
                    hash_now := encode(sha256(convert_to(hash_now || r.content, 'UTF8')), 'hex');
                    hashes[n] := hash_now;
                END LOOP;
                IF n = 0 THEN
                    RETURN;
                END IF;
                UPDATE audit_chain_heads SET seq = seq_now, hash = hash_now
                WHERE tenant = tenant_now;
                UPDATE audit_log a SET chain_seq = u.seq, prev_hash = u.prev, hash = u.hash
                FROM unnest(ids, seqs, prevs, hashes) AS u(id, seq, prev, hash)
                WHERE a.audit_id = u.id;
            END
            $$""",
            # Still one deferred call per record (a constraint trigger is per
            # row), but only the first of a transaction finds its record
            # unlinked and links them all; the others return at once.
            """CREATE OR REPLACE FUNCTION audit_chain_link() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                IF (SELECT chain_seq FROM audit_log WHERE audit_id = NEW.audit_id) IS NULL THEN
                    PERFORM audit_chain_link_from(NEW.audit_id);
                END IF;
                RETURN NULL;
            END
            $$""",
        ),
    ),
    Migration(
        8,
        "audit_log: the one pass at commit links in insertion order, whatever the ids",
        (
            # Migration 7 linked from the first record's audit_id up, by id:
            # records inserted with their own ids (an import keeps the
            # source's, in its chain order) could come out in another order.
            # The pass now finds the transaction's unlinked records through a
            # partial index that holds only records not linked yet, and links
            # them in the order they were inserted (command id, then id).
            # Records older than the chain (migration 4) are at or below the
            # floor, the highest unlinked id when this migration runs, so
            # they are neither indexed nor linked; a record inserted later
            # with an id at or below it is linked alone by its own call.
            """DO $migration$
            DECLARE
                floor_id bigint := (SELECT coalesce(max(audit_id), 0) FROM audit_log
                                    WHERE chain_seq IS NULL);
            BEGIN
                EXECUTE format('CREATE INDEX audit_unlinked ON audit_log (audit_id)'
                    ' WHERE chain_seq IS NULL AND audit_id > %s', floor_id);
                EXECUTE format($body$
                CREATE FUNCTION audit_chain_link_pending(alone bigint) RETURNS void
                LANGUAGE plpgsql AS $fn$
                DECLARE
                    r record;
                    tenant_now text;
                    seq_now bigint;
                    hash_now text;
                    n integer := 0;
                    ids bigint[] := '{}';
                    seqs bigint[] := '{}';
                    prevs text[] := '{}';
                    hashes text[] := '{}';
                BEGIN
                    FOR r IN
                        SELECT p.audit_id, p.tenant, json_build_array(p.tenant, p.principal,
                            p.service, p.method, p.entity_type, p.entity_id, p.revision::text,
                            encode(float8send(p.time), 'hex'), p.summary)::text AS content
                        FROM (
                            SELECT a.*, a.cmin::text::bigint AS command FROM audit_log a
                            WHERE a.chain_seq IS NULL AND a.audit_id > %1$s
                            UNION ALL
                            SELECT a.*, a.cmin::text::bigint FROM audit_log a
                            WHERE a.audit_id = alone AND a.chain_seq IS NULL
                                AND a.audit_id <= %1$s
                        ) p
                        ORDER BY p.tenant, p.command, p.audit_id
                    LOOP
                        IF tenant_now IS DISTINCT FROM r.tenant THEN
                            IF tenant_now IS NOT NULL THEN
                                UPDATE audit_chain_heads SET seq = seq_now, hash = hash_now
                                WHERE tenant = tenant_now;
                            END IF;
                            tenant_now := r.tenant;
                            INSERT INTO audit_chain_heads VALUES (tenant_now, 0, '')
                            ON CONFLICT (tenant) DO NOTHING;
                            SELECT h.seq, h.hash INTO seq_now, hash_now
                            FROM audit_chain_heads h WHERE h.tenant = tenant_now FOR UPDATE;
                        END IF;
                        n := n + 1;
                        seq_now := seq_now + 1;
                        ids[n] := r.audit_id;
                        seqs[n] := seq_now;
                        prevs[n] := hash_now;
                        hash_now := encode(sha256(convert_to(hash_now || r.content, 'UTF8')),
                            'hex');
                        hashes[n] := hash_now;
                    END LOOP;
                    IF n = 0 THEN
                        RETURN;
                    END IF;
                    UPDATE audit_chain_heads SET seq = seq_now, hash = hash_now
                    WHERE tenant = tenant_now;
                    UPDATE audit_log a SET chain_seq = u.seq, prev_hash = u.prev, hash = u.hash
                    FROM unnest(ids, seqs, prevs, hashes) AS u(id, seq, prev, hash)
                    WHERE a.audit_id = u.id;
                END
                $fn$
                $body$, floor_id);
            END
            $migration$""",
            """CREATE OR REPLACE FUNCTION audit_chain_link() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                IF (SELECT chain_seq FROM audit_log WHERE audit_id = NEW.audit_id) IS NULL THEN
                    PERFORM audit_chain_link_pending(NEW.audit_id);
                END IF;
                RETURN NULL;
            END
            $$""",
            "DROP FUNCTION audit_chain_link_from(bigint)",
        ),
    ),
    Migration(
        9,
        "audit_log: one deferred link per transaction, from its lowest record",
        (
            # Migration 8 queued a deferred call per record (each returned at
            # once but the first) and its pass read the partial index from the
            # floor up, over every entry that vacuum had not yet removed. Now
            # a record queues a call only when it is its transaction's first
            # (or at or below the floor, to be linked alone), and the
            # transaction's lowest audit_id, kept in a transaction-local
            # setting as records are inserted, bounds the pass. A rolled-back
            # savepoint takes its records, its queued call and its setting
            # change with it; the pass clears the setting, so records inserted
            # after an early pass (SET CONSTRAINTS ... IMMEDIATE) queue a call
            # again. The floor is migration 8's, as its index states it
            # (PostgreSQL quotes a constant past 2^31 - 1 or below 0 there).
            """DO $migration$
            DECLARE
                floor_id bigint := (regexp_match(pg_get_indexdef('audit_unlinked'::regclass),
                                    'audit_id > ''?(-?[0-9]+)'))[1]::bigint;
                pass_function text;
            BEGIN
                IF floor_id IS NULL THEN
                    RAISE EXCEPTION 'audit_unlinked states no floor';
                END IF;
                EXECUTE format($body$
                CREATE FUNCTION audit_chain_note(id bigint) RETURNS boolean
                LANGUAGE plpgsql AS $fn$
                DECLARE
                    low text := current_setting('statekeeper.audit_low', true);
                BEGIN
                    IF id <= %1$s THEN
                        RETURN true;
                    END IF;
                    IF low IS NULL OR low = '' THEN
                        PERFORM set_config('statekeeper.audit_low', id::text, true);
                        RETURN true;
                    END IF;
                    IF id < low::bigint THEN
                        PERFORM set_config('statekeeper.audit_low', id::text, true);
                    END IF;
                    RETURN false;
                END
                $fn$
                $body$, floor_id);
                -- Migration 8's pass, with a second argument that bounds it.
                pass_function := replace(replace(pg_get_functiondef(
                        'audit_chain_link_pending(bigint)'::regprocedure),
                    'audit_chain_link_pending(alone bigint)',
                    'audit_chain_link_pending(alone bigint, low bigint)'),
                    format('WHERE a.chain_seq IS NULL AND a.audit_id > %s', floor_id),
                    format('WHERE a.chain_seq IS NULL AND a.audit_id > %s'
                        ' AND a.audit_id >= low', floor_id));
                IF position('a.audit_id >= low' in pass_function) = 0
                    OR position('(alone bigint, low bigint)' in pass_function) = 0 THEN
                    RAISE EXCEPTION 'audit_chain_link_pending is not migration 8''s';
                END IF;
                EXECUTE pass_function;
            END
            $migration$""",
            "DROP FUNCTION audit_chain_link_pending(bigint)",
            """CREATE OR REPLACE FUNCTION audit_chain_link() RETURNS trigger
            LANGUAGE plpgsql AS $$
            DECLARE
                low bigint := nullif(current_setting('statekeeper.audit_low', true), '')::bigint;
            BEGIN
                PERFORM set_config('statekeeper.audit_low', '', true);
                PERFORM audit_chain_link_pending(NEW.audit_id, least(low, NEW.audit_id));
                RETURN NULL;
            END
            $$""",
            "DROP TRIGGER audit_chain ON audit_log",
            "CREATE CONSTRAINT TRIGGER audit_chain AFTER INSERT ON audit_log"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW"
            " WHEN (audit_chain_note(NEW.audit_id)) EXECUTE FUNCTION audit_chain_link()",
        ),
    ),
    Migration(
        10,
        "audit_log: records inserted already linked by the functions that are a whole transaction",
        (
            # For a server-side function or statement that is its
            # transaction's whole work (cp_save, bb_commit, ...): the records
            # are inserted linked, so the pass at commit has nothing to
            # rewrite (an UPDATE is a new row version and five index entries
            # per record). Rows are chained in tenant order, then in the
            # order given; each tenant's head is locked FOR UPDATE in tenant
            # order (no deadlock between two calls of several tenants), only
            # after every digest input is known, and held to commit, so the
            # caller calls this last. Each record is hashed exactly as
            # audit_digest does. Records a transaction inserted unlinked
            # before or after are linked by the pass from the head this
            # moved: one gap-free chain per tenant either way. Returns the
            # number of records inserted.
            """CREATE FUNCTION audit_append_linked(
                p_tenants text[], p_principals text[], p_services text[], p_methods text[],
                p_entity_types text[], p_entity_ids text[], p_revisions bigint[],
                p_times float8[], p_summaries text[]) RETURNS integer
            LANGUAGE plpgsql AS $$
            DECLARE
                r record;
                tenant_now text;
                seq_now bigint;
                hash_now text;
                n integer := 0;
                positions integer[] := '{}';
                seqs bigint[] := '{}';
                prevs text[] := '{}';
                hashes text[] := '{}';
            BEGIN
                FOR r IN
                    SELECT u.position, u.tenant, json_build_array(u.tenant, u.principal,
                        u.service, u.method, u.entity_type, u.entity_id, u.revision::text,
                        encode(float8send(u.time), 'hex'), u.summary)::text AS content
                    FROM unnest(p_tenants, p_principals, p_services, p_methods,
                        p_entity_types, p_entity_ids, p_revisions, p_times, p_summaries)
                        WITH ORDINALITY AS u(tenant, principal, service, method, entity_type,
                            entity_id, revision, time, summary, position)
                    ORDER BY u.tenant, u.position
                LOOP
                    IF tenant_now IS DISTINCT FROM r.tenant THEN
                        IF tenant_now IS NOT NULL THEN
                            UPDATE audit_chain_heads SET seq = seq_now, hash = hash_now
                            WHERE tenant = tenant_now;
                        END IF;
                        tenant_now := r.tenant;
                        SELECT h.seq, h.hash INTO seq_now, hash_now FROM audit_chain_heads h
                        WHERE h.tenant = tenant_now FOR UPDATE;
                        IF NOT FOUND THEN  -- the tenant's first record
                            INSERT INTO audit_chain_heads VALUES (tenant_now, 0, '')
                            ON CONFLICT (tenant) DO NOTHING;
                            SELECT h.seq, h.hash INTO seq_now, hash_now
                            FROM audit_chain_heads h WHERE h.tenant = tenant_now FOR UPDATE;
                        END IF;
                    END IF;
                    n := n + 1;
                    seq_now := seq_now + 1;
                    positions[n] := r.position::integer;
                    seqs[n] := seq_now;
                    prevs[n] := hash_now;
                    hash_now := encode(sha256(convert_to(hash_now || r.content, 'UTF8')), 'hex');
                    hashes[n] := hash_now;
                END LOOP;
                IF n = 0 THEN
                    RETURN 0;
                END IF;
                UPDATE audit_chain_heads SET seq = seq_now, hash = hash_now
                WHERE tenant = tenant_now;
                -- In chain order, so audit_id ascends along each chain.
                INSERT INTO audit_log (tenant, principal, service, method, entity_type,
                    entity_id, revision, time, summary, chain_seq, prev_hash, hash)
                SELECT p_tenants[k.position], p_principals[k.position],
                    p_services[k.position], p_methods[k.position],
                    p_entity_types[k.position], p_entity_ids[k.position],
                    p_revisions[k.position], p_times[k.position], p_summaries[k.position],
                    k.seq, k.prev, k.hash
                FROM unnest(positions, seqs, prevs, hashes) WITH ORDINALITY
                    AS k(position, seq, prev, hash, chained)
                ORDER BY k.chained;
                RETURN n;
            END
            $$""",
            # A record inserted linked queues no call and notes no id: CASE,
            # not AND, so audit_chain_note is never evaluated for it (noting
            # its id would keep a later unlinked record from queueing the
            # pass).
            "DROP TRIGGER audit_chain ON audit_log",
            "CREATE CONSTRAINT TRIGGER audit_chain AFTER INSERT ON audit_log"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW"
            " WHEN (CASE WHEN NEW.chain_seq IS NULL THEN audit_chain_note(NEW.audit_id)"
            " ELSE false END) EXECUTE FUNCTION audit_chain_link()",
        ),
    ),
)


LATEST_SCHEMA = MIGRATIONS[-1].version


# pg_advisory_xact_lock key that serializes migrations ("statekpr" in ASCII).
MIGRATION_LOCK_KEY = 0x73746174656B7072


async def migrate(conn: Connection) -> list[int]:
    """Applies the missing session-schema migrations; returns the versions
    this call applied."""
    applied = await apply_migrations(conn, "schema_migrations", MIGRATION_LOCK_KEY, MIGRATIONS)
    return applied.applied_now


async def schema_version(conn: Connection) -> int:
    """The newest applied migration, 0 for an empty database."""
    try:
        version = await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_migrations")
    except asyncpg.UndefinedTableError:
        return 0
    return int(version)
