"""The PostgreSQL checkpoint schema: tables, the cp_save and cp_put_writes
functions, the SQLSTATEs they raise, and the migrations that create them
(the locking protocol they follow is described in storage/postgres/checkpoints.py)."""

from __future__ import annotations

from statekeeper.storage.postgres.migrations import Migration
from statekeeper.storage.shared.checkpoints import CHECKPOINT_ORDER_INDEXES
from statekeeper.storage.sql import AUDIT_COLUMNS

VALUE_LOCK_CLASS = int.from_bytes(b"ckvl", "big")

# Server ids tried per save when clients took the next ones.
SERVER_ID_CANDIDATES = 16

SCHEMA_TABLE = "checkpoint_schema_migrations"


# pg_advisory_xact_lock key serializing this store's migrations ("skchkpnt").
MIGRATION_LOCK_KEY = int.from_bytes(b"skchkpnt", "big")


TEXT = 'text COLLATE "C" NOT NULL'


# ----- the functions behind saves and writes ------------------------------------------
#
# Errors they raise (custom SQLSTATEs, class "SK"), which
# _domain_error turns into the domain's. Raising aborts the statement, so a
# refused save or write stores nothing.
SUPERSEDED = "SKC01"  # DETAIL: the current epoch


NEVER_ISSUED = "SKC02"


DELETED = "SKC03"  # DETAIL: the tombstoned checkpoint id


VALUE_MISSING = "SKC04"  # DETAIL: the channel; HINT: why


NEEDS_EXCLUSIVE = "SKC05"  # a shared-lock save found its id taken


NO_CHECKPOINT = "SKC06"


NO_FREE_ID = "SKC07"


def audit_cte(first: int, source: str, revision: str) -> str:
    """A data-modifying CTE body inserting the audit record whose
    `audit_arguments` start at placeholder `first` (tenant is $1), once per
    row of `source`, only when a record was given."""
    p = [f"${first + offset}" for offset in range(7)]
    return (
        f"INSERT INTO audit_log ({AUDIT_COLUMNS}) SELECT $1, {p[0]}::text, {p[1]}::text,"
        f" {p[2]}::text, {p[3]}::text, {p[4]}::text, {revision}, {p[5]}::float8, {p[6]}::text"
        f" FROM {source} WHERE {p[0]}::text IS NOT NULL"
    )


FENCE = f"""
    IF p_fence_epoch <> 0 AND p_fence_epoch < v_epoch THEN
        RAISE EXCEPTION USING ERRCODE = '{SUPERSEDED}', MESSAGE = 'ownership superseded',
            DETAIL = v_epoch::text;
    ELSIF p_fence_epoch > v_epoch THEN
        RAISE EXCEPTION USING ERRCODE = '{NEVER_ISSUED}', MESSAGE = 'epoch never issued';
    END IF;"""


AUDIT = f"""
    IF p_audit IS NOT NULL THEN
        INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES (p_tenant, p_audit[1], p_audit[2],
            p_audit[3], p_audit[4], p_audit[5], v_sequence, p_audit_time, p_audit[6]);
    END IF;"""


# The whole save in one call, so it costs one round trip and holds the locks
# for no network wait. Columns are always qualified: OUT parameters and
# variables share the namespace of column names in PL/pgSQL. Server ids are
# lpad(sequence, 20, '0'), as core.checkpoints.server_checkpoint_id makes them.
SAVE_FUNCTION = f"""
CREATE FUNCTION cp_save(
    p_tenant text, p_execution_id text, p_namespace text, p_checkpoint_id text,
    p_parent_id text, p_create_time_ns bigint, p_step bigint, p_step_name text, p_run_id text,
    p_state_type text, p_state_version integer, p_state_data bytea, p_metadata jsonb,
    p_fence_epoch bigint, p_exclusive boolean,
    p_channels text[], p_versions text[], p_hashes text[],
    p_value_hashes text[], p_value_types text[], p_value_versions integer[],
    p_value_data bytea[], p_audit text[], p_audit_time double precision)
RETURNS TABLE (saved_id text, saved_sequence bigint, was_replaced boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_last bigint;
    v_epoch bigint;
    v_id text := p_checkpoint_id;
    v_sequence bigint;
    v_replaced boolean := false;
    v_hashes text[] := p_hashes;
    v_released text[];
    v_found text;
BEGIN
    -- 1. The tenant's value lock, then the execution's row.
    IF p_exclusive THEN
        PERFORM pg_advisory_xact_lock({VALUE_LOCK_CLASS}, hashtext(p_tenant));
    ELSE
        PERFORM pg_advisory_xact_lock_shared({VALUE_LOCK_CLASS}, hashtext(p_tenant));
    END IF;
    INSERT INTO cp_executions AS e (tenant, execution_id) VALUES (p_tenant, p_execution_id)
    ON CONFLICT (tenant, execution_id) DO UPDATE SET last_sequence = e.last_sequence
    RETURNING e.last_sequence, e.ownership_epoch INTO v_last, v_epoch;
    -- 2. Fencing, then tombstones (the parent's first).{FENCE}
    SELECT t.checkpoint_id INTO v_found FROM cp_tombstones t
    WHERE t.tenant = p_tenant AND t.execution_id = p_execution_id
    AND t.namespace = p_namespace AND t.checkpoint_id IN (p_parent_id, p_checkpoint_id)
    ORDER BY t.checkpoint_id = p_parent_id DESC LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '{DELETED}', MESSAGE = 'checkpoint deleted',
            DETAIL = v_found;
    END IF;
    -- 3. Identity: the id's sequence if it exists, else the next free one.
    IF v_id <> '' THEN
        SELECT c.sequence INTO v_sequence FROM cp_checkpoints c
        WHERE c.tenant = p_tenant AND c.execution_id = p_execution_id
        AND c.namespace = p_namespace AND c.checkpoint_id = v_id;
        v_replaced := FOUND;
        IF NOT v_replaced THEN
            v_sequence := v_last + 1;
        END IF;
    ELSE
        FOR v_offset IN 1..{SERVER_ID_CANDIDATES} LOOP
            v_sequence := v_last + v_offset;
            v_id := lpad(v_sequence::text, 20, '0');
            EXIT WHEN NOT EXISTS (SELECT 1 FROM cp_checkpoints c WHERE c.tenant = p_tenant
                AND c.execution_id = p_execution_id AND c.namespace = p_namespace
                AND c.checkpoint_id = v_id);
            IF v_offset = {SERVER_ID_CANDIDATES} THEN
                RAISE EXCEPTION USING ERRCODE = '{NO_FREE_ID}', MESSAGE = 'no free id';
            END IF;
        END LOOP;
    END IF;
    -- 4. Every channel's value: inline, named by hash, or by version.
    FOR i IN 1..coalesce(array_length(p_channels, 1), 0) LOOP
        IF v_hashes[i] = '' THEN
            SELECT x.content_hash INTO v_found FROM cp_channels x
            WHERE x.tenant = p_tenant AND x.execution_id = p_execution_id
            AND x.namespace = p_namespace AND x.channel = p_channels[i]
            AND x.version = p_versions[i] ORDER BY x.saved DESC LIMIT 1;
            IF NOT FOUND THEN
                RAISE EXCEPTION USING ERRCODE = '{VALUE_MISSING}', MESSAGE = 'value missing',
                    DETAIL = p_channels[i],
                    HINT = format('no value is stored for version %L', p_versions[i]);
            END IF;
            v_hashes[i] := v_found;
        ELSIF NOT v_hashes[i] = ANY(p_value_hashes) AND NOT EXISTS (SELECT 1 FROM cp_blobs b
                WHERE b.tenant = p_tenant AND b.content_hash = v_hashes[i]) THEN
            RAISE EXCEPTION USING ERRCODE = '{VALUE_MISSING}', MESSAGE = 'value missing',
                DETAIL = p_channels[i], HINT = 'no value has hash ' || v_hashes[i];
        END IF;
    END LOOP;
    -- 5. Replacing drops references: only under the exclusive value lock.
    IF v_replaced THEN
        IF NOT p_exclusive THEN
            RAISE EXCEPTION USING ERRCODE = '{NEEDS_EXCLUSIVE}', MESSAGE = 'replacement';
        END IF;
        WITH released AS (
            DELETE FROM cp_channels x WHERE x.tenant = p_tenant
            AND x.execution_id = p_execution_id AND x.namespace = p_namespace
            AND x.checkpoint_id = v_id RETURNING x.content_hash)
        SELECT array_agg(DISTINCT r.content_hash) INTO v_released FROM released r;
    ELSE
        UPDATE cp_executions e SET last_sequence = v_sequence
        WHERE e.tenant = p_tenant AND e.execution_id = p_execution_id;
    END IF;
    -- 6. The write, and the values nothing references any more.
    INSERT INTO cp_blobs AS b (tenant, content_hash, content_type, schema_version, data)
    SELECT p_tenant, v.* FROM unnest(p_value_hashes, p_value_types, p_value_versions,
        p_value_data) AS v
    ON CONFLICT (tenant, content_hash) DO NOTHING;
    INSERT INTO cp_checkpoints AS c (tenant, execution_id, namespace, checkpoint_id, sequence,
        create_time_ns, parent_checkpoint_id, step, step_name, run_id, state_type,
        state_version, state_data, metadata)
    VALUES (p_tenant, p_execution_id, p_namespace, v_id, v_sequence, p_create_time_ns,
        p_parent_id, p_step, p_step_name, p_run_id, p_state_type, p_state_version,
        p_state_data, p_metadata)
    ON CONFLICT (tenant, execution_id, namespace, checkpoint_id) DO UPDATE SET
        create_time_ns = excluded.create_time_ns,
        parent_checkpoint_id = excluded.parent_checkpoint_id, step = excluded.step,
        step_name = excluded.step_name, run_id = excluded.run_id,
        state_type = excluded.state_type, state_version = excluded.state_version,
        state_data = excluded.state_data, metadata = excluded.metadata;
    INSERT INTO cp_channels AS x (tenant, execution_id, namespace, checkpoint_id, channel,
        version, content_hash)
    SELECT p_tenant, p_execution_id, p_namespace, v_id, n.* FROM unnest(p_channels,
        p_versions, v_hashes) AS n;
    IF v_released IS NOT NULL THEN
        DELETE FROM cp_blobs b WHERE b.tenant = p_tenant AND b.content_hash = ANY(v_released)
        AND NOT EXISTS (SELECT 1 FROM cp_channels x WHERE x.tenant = p_tenant
            AND x.content_hash = b.content_hash);
    END IF;{AUDIT}
    RETURN QUERY SELECT v_id, v_sequence, v_replaced;
END
$$"""


# The writes of one task in one call: the execution's row FOR SHARE (so a
# claim or a deletion waits for it), fencing, tombstone, existence, then the
# writes. Index >= 0 keeps the first write (a repeat is skipped, so not
# counted), index < 0 replaces. Returns how many were stored.
PUT_WRITES_FUNCTION = f"""
CREATE FUNCTION cp_put_writes(
    p_tenant text, p_execution_id text, p_namespace text, p_checkpoint_id text,
    p_task_id text, p_task_path text, p_fence_epoch bigint, p_indexes bigint[],
    p_channels text[], p_types text[], p_versions integer[], p_data bytea[],
    p_audit text[], p_audit_time double precision)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_epoch bigint;
    v_sequence bigint;
    v_stored bigint;
BEGIN
    SELECT e.ownership_epoch INTO v_epoch FROM cp_executions e
    WHERE e.tenant = p_tenant AND e.execution_id = p_execution_id FOR SHARE;
    v_epoch := coalesce(v_epoch, 0);{FENCE}
    IF EXISTS (SELECT 1 FROM cp_tombstones t WHERE t.tenant = p_tenant
            AND t.execution_id = p_execution_id AND t.namespace = p_namespace
            AND t.checkpoint_id = p_checkpoint_id) THEN
        RAISE EXCEPTION USING ERRCODE = '{DELETED}', MESSAGE = 'checkpoint deleted',
            DETAIL = p_checkpoint_id;
    END IF;
    SELECT c.sequence INTO v_sequence FROM cp_checkpoints c WHERE c.tenant = p_tenant
    AND c.execution_id = p_execution_id AND c.namespace = p_namespace
    AND c.checkpoint_id = p_checkpoint_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '{NO_CHECKPOINT}', MESSAGE = 'no such checkpoint';
    END IF;
    WITH stored AS (
        INSERT INTO cp_writes AS w (tenant, execution_id, namespace, checkpoint_id, task_id,
            write_index, task_path, channel, value_type, value_version, value_data)
        SELECT p_tenant, p_execution_id, p_namespace, p_checkpoint_id, p_task_id, n.i,
            p_task_path, n.channel, n.value_type, n.value_version, n.value_data
        FROM unnest(p_indexes, p_channels, p_types, p_versions, p_data)
            AS n(i, channel, value_type, value_version, value_data)
        ON CONFLICT (tenant, execution_id, namespace, checkpoint_id, task_id, write_index)
        DO UPDATE SET task_path = excluded.task_path, channel = excluded.channel,
            value_type = excluded.value_type, value_version = excluded.value_version,
            value_data = excluded.value_data
        WHERE excluded.write_index < 0
        RETURNING 1)
    SELECT count(*) INTO v_stored FROM stored;{AUDIT}
    RETURN v_stored;
END
$$"""


# The audit record of a save or a write inserted already linked into its
# tenant's chain (session schema migration 10): the call is its
# transaction's whole work and this is its last step, so the chain head's
# lock is held only for the commit, and the pass at commit rewrites nothing.
LINKED_AUDIT = """
    IF p_audit IS NOT NULL THEN
        PERFORM audit_append_linked(ARRAY[p_tenant], ARRAY[p_audit[1]], ARRAY[p_audit[2]],
            ARRAY[p_audit[3]], ARRAY[p_audit[4]], ARRAY[p_audit[5]], ARRAY[v_sequence],
            ARRAY[p_audit_time], ARRAY[p_audit[6]]);
    END IF;"""


def with_linked_audit(function: str) -> str:
    """`function` (migration 1's text) redefined in place, its audit record
    inserted already linked."""
    redefined = function.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)
    assert redefined.count(AUDIT) == 1, "the function no longer ends with AUDIT"
    return redefined.replace(AUDIT, LINKED_AUDIT)


# Append only; never edit a released entry.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "executions, checkpoints, channel values, pending writes, tombstones;"
        " functions cp_save and cp_put_writes",
        (
            # One row per execution ever written or claimed: the sequence
            # counter and the ownership epoch outlive the checkpoints.
            f"""CREATE TABLE cp_executions (
                tenant {TEXT},
                execution_id {TEXT},
                last_sequence bigint NOT NULL DEFAULT 0,
                ownership_epoch bigint NOT NULL DEFAULT 0,
                PRIMARY KEY (tenant, execution_id)
            )""",
            f"""CREATE TABLE cp_checkpoints (
                tenant {TEXT},
                execution_id {TEXT},
                namespace {TEXT},
                checkpoint_id {TEXT},
                sequence bigint NOT NULL,
                create_time_ns bigint NOT NULL,
                parent_checkpoint_id {TEXT},
                step bigint NOT NULL,
                step_name text NOT NULL,
                run_id {TEXT},
                state_type text NOT NULL,
                state_version integer NOT NULL,
                state_data bytea NOT NULL,
                metadata jsonb NOT NULL,
                PRIMARY KEY (tenant, execution_id, namespace, checkpoint_id)
            )""",
            *CHECKPOINT_ORDER_INDEXES,
            "CREATE INDEX cp_checkpoints_run ON cp_checkpoints (tenant, run_id) WHERE run_id <> ''",
            # Which value each checkpoint's channel has: the references that
            # keep values alive. `saved` orders them by save, so a channel
            # named by version alone finds the value saved last for it.
            f"""CREATE TABLE cp_channels (
                saved bigint GENERATED ALWAYS AS IDENTITY,
                tenant {TEXT},
                execution_id {TEXT},
                namespace {TEXT},
                checkpoint_id {TEXT},
                channel {TEXT},
                version {TEXT},
                content_hash {TEXT},
                PRIMARY KEY (tenant, execution_id, namespace, checkpoint_id, channel)
            )""",
            "CREATE INDEX cp_channels_version ON cp_channels"
            " (tenant, execution_id, namespace, channel, version, saved)",
            "CREATE INDEX cp_channels_hash ON cp_channels (tenant, content_hash)",
            f"""CREATE TABLE cp_blobs (
                tenant {TEXT},
                content_hash {TEXT},
                content_type text NOT NULL,
                schema_version integer NOT NULL,
                data bytea NOT NULL,
                PRIMARY KEY (tenant, content_hash)
            )""",
            f"""CREATE TABLE cp_writes (
                tenant {TEXT},
                execution_id {TEXT},
                namespace {TEXT},
                checkpoint_id {TEXT},
                task_id {TEXT},
                write_index bigint NOT NULL,
                task_path {TEXT},
                channel text NOT NULL,
                value_type text NOT NULL,
                value_version integer NOT NULL,
                value_data bytea NOT NULL,
                PRIMARY KEY (tenant, execution_id, namespace, checkpoint_id, task_id, write_index)
            )""",
            f"""CREATE TABLE cp_tombstones (
                tenant {TEXT},
                execution_id {TEXT},
                namespace {TEXT},
                checkpoint_id {TEXT},
                delete_time_ns bigint NOT NULL,
                PRIMARY KEY (tenant, execution_id, namespace, checkpoint_id)
            )""",
            "CREATE INDEX cp_tombstones_age ON cp_tombstones (delete_time_ns)",
            SAVE_FUNCTION,
            PUT_WRITES_FUNCTION,
        ),
    ),
    Migration(
        2,
        "cp_save and cp_put_writes insert their audit record already linked",
        (with_linked_audit(SAVE_FUNCTION), with_linked_audit(PUT_WRITES_FUNCTION)),
    ),
)


# Class id of the tenants' value locks (two-key advisory locks, "ckvl").


# A claim is one statement, its own transaction: its audit record is
# inserted already linked. The audit CTE is a SELECT, run only because the
# final query reads it.
CLAIM = """
WITH claimed AS (
    INSERT INTO cp_executions AS e (tenant, execution_id, ownership_epoch) VALUES ($1, $2, 1)
    ON CONFLICT (tenant, execution_id) DO UPDATE SET ownership_epoch = e.ownership_epoch + 1
    RETURNING ownership_epoch
), audit AS (
    SELECT audit_append_linked(ARRAY[$1::text], ARRAY[$3::text], ARRAY[$4::text],
        ARRAY[$5::text], ARRAY[$6::text], ARRAY[$7::text], ARRAY[claimed.ownership_epoch],
        ARRAY[$8::float8], ARRAY[$9::text]) AS linked
    FROM claimed WHERE $3::text IS NOT NULL
)
SELECT ownership_epoch FROM claimed LEFT JOIN audit ON true
"""


REMOVE_EXECUTION = """
WITH removed AS (
    DELETE FROM cp_checkpoints WHERE tenant = $1 AND execution_id = $2
    RETURNING namespace, checkpoint_id
), tombstones AS (
    INSERT INTO cp_tombstones (tenant, execution_id, namespace, checkpoint_id, delete_time_ns)
    SELECT $1, $2, namespace, checkpoint_id, $3 FROM removed
    ON CONFLICT (tenant, execution_id, namespace, checkpoint_id)
    DO UPDATE SET delete_time_ns = excluded.delete_time_ns
), writes AS (
    DELETE FROM cp_writes WHERE tenant = $1 AND execution_id = $2 RETURNING 1
), released AS (
    DELETE FROM cp_channels WHERE tenant = $1 AND execution_id = $2 RETURNING content_hash
)
SELECT (SELECT count(*) FROM removed) AS checkpoints, (SELECT count(*) FROM writes) AS writes,
    ARRAY(SELECT DISTINCT content_hash FROM released) AS hashes
"""


# As REMOVE_EXECUTION for the checkpoints keyed by the arrays $2..$4;
# tombstones only when $5 (their time) is not NULL.
REMOVE = """
WITH doomed AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::text[])
        AS k(execution_id, namespace, checkpoint_id)
), removed AS (
    DELETE FROM cp_checkpoints c USING doomed k WHERE c.tenant = $1
    AND c.execution_id = k.execution_id AND c.namespace = k.namespace
    AND c.checkpoint_id = k.checkpoint_id
    RETURNING c.execution_id, c.namespace, c.checkpoint_id
), tombstones AS (
    INSERT INTO cp_tombstones (tenant, execution_id, namespace, checkpoint_id, delete_time_ns)
    SELECT $1, execution_id, namespace, checkpoint_id, $5 FROM removed
    WHERE $5::bigint IS NOT NULL
    ON CONFLICT (tenant, execution_id, namespace, checkpoint_id)
    DO UPDATE SET delete_time_ns = excluded.delete_time_ns
), writes AS (
    DELETE FROM cp_writes w USING doomed k WHERE w.tenant = $1
    AND w.execution_id = k.execution_id AND w.namespace = k.namespace
    AND w.checkpoint_id = k.checkpoint_id RETURNING 1
), released AS (
    DELETE FROM cp_channels x USING doomed k WHERE x.tenant = $1
    AND x.execution_id = k.execution_id AND x.namespace = k.namespace
    AND x.checkpoint_id = k.checkpoint_id RETURNING x.content_hash
)
SELECT (SELECT count(*) FROM removed) AS checkpoints, (SELECT count(*) FROM writes) AS writes,
    ARRAY(SELECT DISTINCT content_hash FROM released) AS hashes
"""


# Copies the checkpoints, their channel rows and writes of $2 to $3, those at
# or before ($4, $5) when $4 is not NULL; then forgets the target's
# tombstones of the ids it re-creates (writes against them are new).
COPY = """
WITH copied AS (
    INSERT INTO cp_checkpoints (tenant, execution_id, namespace, checkpoint_id, sequence,
        create_time_ns, parent_checkpoint_id, step, step_name, run_id, state_type,
        state_version, state_data, metadata)
    SELECT tenant, $3, namespace, checkpoint_id, sequence, create_time_ns,
        parent_checkpoint_id, step, step_name, run_id, state_type, state_version, state_data,
        metadata
    FROM cp_checkpoints WHERE tenant = $1 AND execution_id = $2
    AND ($4::bigint IS NULL OR (create_time_ns, sequence) <= ($4::bigint, $5::bigint))
    RETURNING namespace, checkpoint_id
), channels AS (
    INSERT INTO cp_channels (tenant, execution_id, namespace, checkpoint_id, channel, version,
        content_hash)
    SELECT s.tenant, $3, s.namespace, s.checkpoint_id, s.channel, s.version, s.content_hash
    FROM cp_channels s JOIN copied k ON s.namespace = k.namespace
        AND s.checkpoint_id = k.checkpoint_id
    WHERE s.tenant = $1 AND s.execution_id = $2
    ORDER BY s.saved
), writes AS (
    INSERT INTO cp_writes (tenant, execution_id, namespace, checkpoint_id, task_id,
        write_index, task_path, channel, value_type, value_version, value_data)
    SELECT s.tenant, $3, s.namespace, s.checkpoint_id, s.task_id, s.write_index, s.task_path,
        s.channel, s.value_type, s.value_version, s.value_data
    FROM cp_writes s JOIN copied k ON s.namespace = k.namespace
        AND s.checkpoint_id = k.checkpoint_id
    WHERE s.tenant = $1 AND s.execution_id = $2
    RETURNING 1
), revived AS (
    DELETE FROM cp_tombstones t USING copied k WHERE t.tenant = $1 AND t.execution_id = $3
    AND t.namespace = k.namespace AND t.checkpoint_id = k.checkpoint_id
)
SELECT (SELECT count(*) FROM copied) AS checkpoints, (SELECT count(*) FROM writes) AS writes
"""


# Deletes the chosen tombstones (still old enough), then the rows of their
# executions that nothing needs any more: no checkpoint, no tombstone a new
# id could collide with, no ownership epoch to fence with.
FORGET_TOMBSTONES = """
WITH chosen AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
        AS k(tenant, execution_id, namespace, checkpoint_id)
), forgotten AS (
    DELETE FROM cp_tombstones t USING chosen k WHERE t.tenant = k.tenant
    AND t.execution_id = k.execution_id AND t.namespace = k.namespace
    AND t.checkpoint_id = k.checkpoint_id AND t.delete_time_ns < $5
    RETURNING t.tenant, t.execution_id, t.namespace, t.checkpoint_id
), idle AS (
    DELETE FROM cp_executions e USING (SELECT DISTINCT tenant, execution_id FROM forgotten) f
    WHERE e.tenant = f.tenant AND e.execution_id = f.execution_id AND e.ownership_epoch = 0
    AND NOT EXISTS (SELECT 1 FROM cp_checkpoints c WHERE c.tenant = e.tenant
        AND c.execution_id = e.execution_id)
    AND NOT EXISTS (SELECT 1 FROM cp_tombstones t WHERE t.tenant = e.tenant
        AND t.execution_id = e.execution_id AND NOT EXISTS (SELECT 1 FROM forgotten g
            WHERE g.tenant = t.tenant AND g.execution_id = t.execution_id
            AND g.namespace = t.namespace AND g.checkpoint_id = t.checkpoint_id))
)
SELECT count(*) FROM forgotten
"""
