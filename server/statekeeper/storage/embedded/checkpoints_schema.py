"""The SQLite schema of checkpoints (executions, checkpoints, channel values by content hash,
pending writes, tombstones) and its migrations."""

from __future__ import annotations

from statekeeper.storage.embedded.migrations import Migrations
from statekeeper.storage.shared.checkpoints import CHECKPOINT_ORDER_INDEXES

SCHEMA_TABLE = "checkpoint_schema_migrations"


# Append only; never edit a released entry.
MIGRATIONS: Migrations = [
    (
        1,
        [
            # One row per execution ever written or claimed: the sequence
            # counter and the ownership epoch outlive the checkpoints.
            """CREATE TABLE cp_executions (
                tenant TEXT NOT NULL,
                execution_id TEXT NOT NULL,
                last_sequence INTEGER NOT NULL DEFAULT 0,
                ownership_epoch INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (tenant, execution_id)
            )""",
            """CREATE TABLE cp_checkpoints (
                tenant TEXT NOT NULL,
                execution_id TEXT NOT NULL,
                namespace TEXT NOT NULL,
                checkpoint_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                create_time_ns INTEGER NOT NULL,
                parent_checkpoint_id TEXT NOT NULL,
                step INTEGER NOT NULL,
                step_name TEXT NOT NULL,
                run_id TEXT NOT NULL,
                state_type TEXT NOT NULL,
                state_version INTEGER NOT NULL,
                state_data BLOB NOT NULL,
                metadata TEXT NOT NULL,
                PRIMARY KEY (tenant, execution_id, namespace, checkpoint_id)
            )""",
            *CHECKPOINT_ORDER_INDEXES,
            "CREATE INDEX cp_checkpoints_run ON cp_checkpoints (tenant, run_id) WHERE run_id != ''",
            # Which value each checkpoint's channel has; the references that
            # keep blobs alive.
            """CREATE TABLE cp_channels (
                tenant TEXT NOT NULL,
                execution_id TEXT NOT NULL,
                namespace TEXT NOT NULL,
                checkpoint_id TEXT NOT NULL,
                channel TEXT NOT NULL,
                version TEXT NOT NULL,
                content_hash TEXT NOT NULL,
                UNIQUE (tenant, execution_id, namespace, checkpoint_id, channel)
            )""",
            "CREATE INDEX cp_channels_version ON cp_channels"
            " (tenant, execution_id, namespace, channel, version)",
            "CREATE INDEX cp_channels_hash ON cp_channels (tenant, content_hash)",
            """CREATE TABLE cp_blobs (
                tenant TEXT NOT NULL,
                content_hash TEXT NOT NULL,
                content_type TEXT NOT NULL,
                schema_version INTEGER NOT NULL,
                data BLOB NOT NULL,
                PRIMARY KEY (tenant, content_hash)
            )""",
            """CREATE TABLE cp_writes (
                tenant TEXT NOT NULL,
                execution_id TEXT NOT NULL,
                namespace TEXT NOT NULL,
                checkpoint_id TEXT NOT NULL,
                task_id TEXT NOT NULL,
                write_index INTEGER NOT NULL,
                task_path TEXT NOT NULL,
                channel TEXT NOT NULL,
                value_type TEXT NOT NULL,
                value_version INTEGER NOT NULL,
                value_data BLOB NOT NULL,
                PRIMARY KEY (tenant, execution_id, namespace, checkpoint_id, task_id, write_index)
            )""",
            """CREATE TABLE cp_tombstones (
                tenant TEXT NOT NULL,
                execution_id TEXT NOT NULL,
                namespace TEXT NOT NULL,
                checkpoint_id TEXT NOT NULL,
                delete_time_ns INTEGER NOT NULL,
                UNIQUE (tenant, execution_id, namespace, checkpoint_id)
            )""",
            "CREATE INDEX cp_tombstones_age ON cp_tombstones (delete_time_ns)",
        ],
    ),
]
