"""What an operator trips on first, each answered by one line naming the
value or the path (issue 16): data dirs that cannot hold a store, ports out
of range, booleans that are not booleans, `audit list` on a typo, subcommand
help, `statekeeper migrate` applying every schema and `serve` refusing an
old one, library noise in the JSON log, and the local production recipe."""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from statekeeper import config
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres import sessions_schema
from statekeeper.storage.schemas import postgres_schemas, postgres_states
from tests.harness.deadlines import scaled
from tests.harness.processes import REPO
from tests.harness.servers import ServerProcess
from tests.services import configured, fresh_database, reachable

STATEKEEPER = [sys.executable, "-m", "statekeeper"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*STATEKEEPER, *args],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        env=env,
        cwd=REPO,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *names: str) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0, result
    assert len(lines) == 1, f"expected one line, got:\n{result.stderr}"
    assert "Traceback" not in result.stderr
    for name in names:
        assert name in lines[0], lines[0]


def test_a_data_dir_that_is_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    for command in ("serve", "migrate"):
        result = run(command, "--data-dir", str(blocker), *listen_args(command))
        assert_one_line_error(result, str(blocker), "not a directory")


def listen_args(command: str) -> list[str]:
    return ["--listen", "127.0.0.1:0"] if command == "serve" else []


def test_serve_checks_the_index_dir_and_the_data_dir_on_the_production_tier(
    tmp_path: Path,
) -> None:
    """Vector index snapshots are written on both tiers (index_dir, by
    default inside the data dir): checked before any connection is made."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    index_dir = run("serve", "--data-dir", str(tmp_path), "--index-dir", str(blocker))
    assert_one_line_error(index_dir, f"index_dir {blocker}", "not a directory")
    dsn = "postgresql://nobody@127.0.0.1:1/none"  # never reached
    production = run("serve", "--postgres-dsn", dsn, "--data-dir", str(blocker), "--workers", "1")
    assert_one_line_error(production, f"data_dir {blocker}", "not a directory")


def read_only_command(directory: Path, command: list[str]) -> list[str]:
    """`command` run where `directory` cannot be written: as an ordinary
    user through its mode bits, as root (who ignores them) in a mount
    namespace of its own where the directory is a read-only bind mount."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        return command
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare(1): cannot make a directory unwritable")
    probe = subprocess.run(
        ["unshare", "-rm", "true"], capture_output=True, text=True, timeout=scaled(30)
    )
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace for root here: {probe.stderr.strip()}")
    quoted = shlex.quote(str(directory))
    script = f"mount --bind -o ro {quoted} {quoted} && exec {shlex.join(command)}"
    return ["unshare", "-rm", "sh", "-c", script]


def test_an_existing_but_unwritable_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "root-owned"
    data.mkdir()
    command = [*STATEKEEPER, "serve", "--data-dir", str(data), "--listen", "127.0.0.1:0"]
    result = subprocess.run(
        read_only_command(data, command),
        capture_output=True,
        text=True,
        timeout=scaled(60),
        cwd=REPO,
    )
    assert_one_line_error(result, str(data), "not writable")


@pytest.mark.parametrize("listen", ["127.0.0.1:99999", "127.0.0.1:65536", "127.0.0.1:http"])
def test_listen_port_out_of_range(tmp_path: Path, listen: str) -> None:
    result = run("serve", "--data-dir", str(tmp_path), "--listen", listen)
    assert_one_line_error(result, "listen", listen.rpartition(":")[2])


def test_booleans_are_strict(tmp_path: Path) -> None:
    flag = run("serve", "--data-dir", str(tmp_path), "--migrate-on-start", "maybe")
    assert_one_line_error(flag, "migrate_on_start", "'maybe'")
    env = {**os.environ, "STATEKEEPER_MIGRATE_ON_START": "maybe"}
    from_env = run("migrate", "--data-dir", str(tmp_path), env=env)
    assert_one_line_error(from_env, "migrate_on_start", "'maybe'")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *[("true", True), ("YES", True), ("on", True), ("1", True)],
        *[("false", False), ("No", False), ("off", False), ("0", False)],
    ],
)
def test_boolean_spellings(text: str, value: bool) -> None:
    settings = config.load(_parse(), {"STATEKEEPER_MIGRATE_ON_START": text})
    assert settings.migrate_on_start is value


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    return parser.parse_args(argv)


def test_audit_list_never_creates_a_store(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    result = run("audit", "list", "--data-dir", str(typo))
    assert_one_line_error(result, str(typo))
    assert not typo.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("audit", "list", "--data-dir", str(empty))
    assert_one_line_error(result, str(empty), "no embedded store")
    assert list(empty.iterdir()) == []


def test_subcommand_help_lists_its_own_flags_with_defaults() -> None:
    serve = run("serve", "--help").stdout
    assert "--workers" in serve and "--listen" in serve
    assert "(default: 127.0.0.1:50051" in serve
    assert "(default: ./data" in serve
    for command in (["migrate"], ["audit", "list"]):
        text = run(*command, "--help").stdout
        assert "--data-dir" in text and "--postgres-dsn" in text
        assert "(default: ./data" in text
        for serve_only in ("--listen", "--workers", "--api-key", "--sweep-interval-seconds"):
            assert serve_only not in text, f"{command}: {serve_only}"
    assert "(default: 50)" in run("audit", "list", "--help").stdout


def test_migrate_applies_every_embedded_schema(tmp_path: Path) -> None:
    result = run("migrate", "--data-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(tmp_path / "statekeeper.sqlite3") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    for version_table in (
        "schema_migrations",
        "memory_schema_migrations",
        "checkpoint_schema_migrations",
        "workflow_schema_migrations",
        "blackboard_schema",
        "messagebus_schema",
    ):
        assert version_table in tables


def test_serve_refuses_an_old_embedded_store_unless_migrate_on_start(tmp_path: Path) -> None:
    async def sessions_schema_only() -> None:
        storage = EmbeddedStorage(tmp_path)
        await storage.start()  # what an older server, before the other capabilities, left
        await storage.close()

    asyncio.run(sessions_schema_only())
    refused = run("serve", "--data-dir", str(tmp_path), "--listen", "127.0.0.1:0")
    assert_one_line_error(refused, "statekeeper migrate", "--migrate-on-start")
    for name in ("memory", "checkpoints", "workflows", "blackboard", "bus"):
        assert f"{name} at 0" in refused.stderr
    server = ServerProcess(tmp_path, extra_args=["--migrate-on-start"])
    server.start()
    server.stop()
    again = ServerProcess(tmp_path)  # current now: no flag needed
    again.start()
    again.stop()


def test_faiss_library_noise_stays_out_of_the_log() -> None:
    script = (
        "from statekeeper import logs; logs.configure('INFO', 'json');"
        " import logging; logging.getLogger('statekeeper').info('marker');"
        " import faiss"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=scaled(60)
    )
    assert result.returncode == 0, result.stderr
    assert "marker" in result.stderr  # INFO lines do reach the log
    assert "faiss" not in result.stderr, result.stderr


# ----- PostgreSQL ---------------------------------------------------------------------


@pytest.fixture
def services_dsn() -> str:
    services = configured()
    asyncio.run(reachable(services))
    return services.postgres_dsn


async def _states(dsn: str) -> dict[str, tuple[int, int]]:
    conn = await asyncpg.connect(dsn)
    try:
        return {s.name: (s.version, s.latest) for s in await postgres_states(conn)}
    finally:
        await conn.close()


async def _sessions_schema_only(dsn: str) -> None:
    """A database as an older server (one that only migrated its session
    tables) left it."""
    conn = await asyncpg.connect(dsn)
    try:
        await sessions_schema.migrate(conn)
    finally:
        await conn.close()


def test_migrate_applies_every_postgres_schema(services_dsn: str) -> None:
    async def scenario() -> None:
        services = configured()
        async with fresh_database(services) as dsn:
            result = await asyncio.to_thread(run, "migrate", "--postgres-dsn", dsn)
            assert result.returncode == 0, result.stderr
            states = await _states(dsn)
            assert set(states) == {schema.name for schema in postgres_schemas()}
            assert {name for name, (version, latest) in states.items() if version < latest} == set()
            again = await asyncio.to_thread(run, "migrate", "--postgres-dsn", dsn)
            assert "up to date" in again.stdout, again.stdout

    asyncio.run(scenario())


def test_serve_refuses_an_old_schema_unless_migrate_on_start(
    services_dsn: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        services = configured()
        async with fresh_database(services) as dsn:
            await _sessions_schema_only(dsn)
            args = ["--postgres-dsn", dsn, "--workers", "1"]
            refused = await asyncio.to_thread(
                run, "serve", "--listen", "127.0.0.1:0", "--log-format", "text", *args
            )
            assert refused.returncode != 0
            for name in ("memory", "checkpoints", "workflows", "blackboard", "bus"):
                assert name in refused.stderr, refused.stderr
            assert "statekeeper migrate" in refused.stderr
            assert (await _states(dsn))["checkpoints"][0] == 0, "refusing applied nothing"
            server = ServerProcess(tmp_path / "server", extra_args=[*args, "--migrate-on-start"])
            await asyncio.to_thread(server.start)
            try:
                states = await _states(dsn)
                assert all(version == latest for version, latest in states.values()), states
            finally:
                await asyncio.to_thread(server.stop)

    asyncio.run(scenario())


def test_the_readme_recipe_env_selects_the_production_tier(tmp_path: Path) -> None:
    """`scripts/services.sh start DIR && . DIR/statekeeper.env`: what
    `statekeeper serve` then reads runs the production tier on that pair."""
    directory = tmp_path / "services"
    directory.mkdir()
    (directory / "postgres.port").write_text("5999\n")
    (directory / "redis.port").write_text("6999\n")
    subprocess.run([str(REPO / "scripts/services.sh"), "env", str(directory)], check=True)
    exported = subprocess.run(
        ["bash", "-c", f". {shlex.quote(str(directory / 'statekeeper.env'))} && env"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"]},
    ).stdout
    environ = dict(line.split("=", 1) for line in exported.splitlines() if "=" in line)
    settings = config.load(_parse(), environ)
    assert settings.production
    assert ":5999/" in settings.postgres_dsn and ":6999/" in settings.redis_url
    # The tests' own file keeps its TEST_ names only: servers they start
    # must not pick the pair up by accident.
    test_env = (directory / "env").read_text()
    assert "STATEKEEPER_POSTGRES_DSN" not in test_env
    assert "STATEKEEPER_TEST_POSTGRES_DSN" in test_env
