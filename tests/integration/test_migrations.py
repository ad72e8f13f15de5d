"""Versioned PostgreSQL migrations: `statekeeper migrate` and
`serve --migrate-on-start`, safe when several run at once."""

from __future__ import annotations

import ast
import asyncio
import re
import subprocess
import sys
import threading
from pathlib import Path

import asyncpg

from statekeeper.storage.postgres.sessions_schema import LATEST_SCHEMA, MIGRATIONS
from statekeeper.storage.schemas import postgres_schemas
from tests.e2e.conftest import ServerProcess
from tests.integration.conftest import production_args
from tests.services import Services


def migrate_command(dsn: str) -> list[str]:
    return [sys.executable, "-m", "statekeeper", "migrate", "--postgres-dsn", dsn]


async def applied_versions(dsn: str) -> list[int]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT version FROM schema_migrations ORDER BY version")
    finally:
        await conn.close()
    return [row["version"] for row in rows]


def test_concurrent_migrate_commands_apply_each_migration_once(database: str) -> None:
    processes = [
        subprocess.Popen(migrate_command(database), stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [process.communicate(timeout=60)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0, 0, 0]
    # Each schema migrates in its own transaction, so the four commands may
    # share the work; together they apply every migration exactly once.
    applied: dict[str, list[int]] = {}
    for out in outputs:
        if match := re.search(r"applied migrations (\{.*?\}) to ", out):
            for schema, versions in ast.literal_eval(match.group(1)).items():
                applied.setdefault(schema, []).extend(versions)
    expected = {s.name: [m.version for m in s.migrations] for s in postgres_schemas()}
    assert {name: sorted(v) for name, v in applied.items()} == expected, outputs
    assert asyncio.run(applied_versions(database)) == [m.version for m in MIGRATIONS]
    again = subprocess.run(migrate_command(database), capture_output=True, text=True, check=True)
    assert "is up to date" in again.stdout
    assert f"sessions {LATEST_SCHEMA}," in again.stdout


def test_server_refuses_an_old_schema_without_migrate_on_start(
    tmp_path: Path, database: str, services: Services
) -> None:
    args = [
        a for a in production_args(database, services.redis_url, "m") if a != "--migrate-on-start"
    ]
    result = subprocess.run(
        [sys.executable, "-m", "statekeeper", "serve", "--listen", "127.0.0.1:0", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "statekeeper migrate" in result.stdout + result.stderr


def test_two_replicas_migrating_on_start_at_once(
    tmp_path: Path, database: str, services: Services
) -> None:
    replicas = [
        ServerProcess(
            tmp_path / f"r{n}", extra_args=production_args(database, services.redis_url, "m")
        )
        for n in range(2)
    ]
    errors: list[BaseException] = []

    def start(server: ServerProcess) -> None:
        server.data_dir.mkdir()
        try:
            server.start()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(r,)) for r in replicas]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=90)
        assert errors == []
    finally:
        for replica in replicas:
            replica.kill()
    assert asyncio.run(applied_versions(database)) == [m.version for m in MIGRATIONS]
