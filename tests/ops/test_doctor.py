"""`statekeeper doctor` (issue 16): config, store connectivity, every schema
version, a running server's health and its index state; it changes nothing
and exits non-zero when a check fails."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
from pathlib import Path

import asyncpg

from statekeeper.storage.postgres import sessions_schema
from tests.harness.deadlines import scaled
from tests.harness.processes import REPO, free_port
from tests.harness.servers import ServerProcess
from tests.services import configured, fresh_database, reachable


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    # No STATEKEEPER_* from the environment: the arguments say everything.
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEKEEPER_")}
    return subprocess.run(
        [sys.executable, "-m", "statekeeper", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        cwd=REPO,
        env=env,
    )


def finding(result: subprocess.CompletedProcess[str], topic: str) -> str:
    lines = [line for line in result.stdout.splitlines() if line[6:].startswith(topic)]
    assert len(lines) == 1, result.stdout
    return lines[0]


def test_a_healthy_embedded_deployment(tmp_path: Path) -> None:
    metrics = free_port()
    server = ServerProcess(tmp_path, extra_args=["--metrics-listen", f"127.0.0.1:{metrics}"])
    server.start()
    try:
        result = doctor(
            "--data-dir",
            str(tmp_path),
            "--listen",
            server.address,
            "--metrics-listen",
            f"127.0.0.1:{metrics}",
        )
    finally:
        server.stop()
    assert result.returncode == 0, result.stdout + result.stderr
    assert finding(result, "schemas").startswith("ok ")
    for name in ("sessions", "memory", "checkpoints", "workflows", "blackboard", "bus"):
        assert name in finding(result, "schemas")
    assert finding(result, "server").startswith("ok ") and "SERVING" in finding(result, "server")
    assert "startup load done" in finding(result, "indexes")


def test_a_missing_store_fails_and_is_not_created(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    result = doctor("--data-dir", str(typo), "--listen", f"127.0.0.1:{free_port()}")
    assert result.returncode == 1
    assert finding(result, "store").startswith("FAIL") and str(typo) in finding(result, "store")
    assert finding(result, "server").startswith("WARN")
    assert not typo.exists()


def test_production_schemas_and_connectivity() -> None:
    services = configured()
    asyncio.run(reachable(services))

    async def scenario() -> None:
        async with fresh_database(services) as dsn:
            conn = await asyncpg.connect(dsn)
            try:
                await sessions_schema.migrate(conn)  # the session tables only
            finally:
                await conn.close()
            store = ["--postgres-dsn", dsn, "--redis-url", services.redis_url]
            old = await asyncio.to_thread(doctor, *store)
            assert old.returncode == 1
            assert finding(old, "schemas").startswith("FAIL")
            assert "memory 0 (needs" in finding(old, "schemas")
            assert finding(old, "postgres").startswith("ok ")
            assert finding(old, "redis").startswith("ok ")
            migrate = [sys.executable, "-m", "statekeeper", "migrate", "--postgres-dsn", dsn]
            await asyncio.to_thread(subprocess.run, migrate, check=True, capture_output=True)
            current = await asyncio.to_thread(doctor, *store)
            assert finding(current, "schemas").startswith("ok "), current.stdout
            assert current.returncode == 0, current.stdout

    asyncio.run(scenario())


def test_unreachable_postgres_fails() -> None:
    closed = free_port()
    result = doctor("--postgres-dsn", f"postgresql://sk:secret@127.0.0.1:{closed}/sk")
    assert result.returncode == 1
    assert finding(result, "postgres").startswith("FAIL")
    assert "secret" not in result.stdout


def test_an_api_keys_file_counts_as_credentials(tmp_path: Path) -> None:
    """A server authenticated only by a keys file is not reported as open."""
    keys = tmp_path / "keys"
    keys.write_text("sha256:" + "ab" * 32 + " team-a\n")
    keys.chmod(0o600)
    config_file = tmp_path / "statekeeper.toml"
    config_file.write_text(f'api_keys_file = "{keys}"\n')
    open_result = doctor("--data-dir", str(tmp_path))
    keyed = doctor("--data-dir", str(tmp_path), "--config", str(config_file))
    assert "unauthenticated" in finding(open_result, "config")
    config_line = finding(keyed, "config")
    assert config_line.startswith("ok ") and "unauthenticated" not in config_line
    assert str(keys) in config_line


def test_the_encryption_key_ring_is_reported_by_id_never_by_key(tmp_path: Path) -> None:
    key = base64.b64encode(bytes(range(32))).decode()
    keys = tmp_path / "encryption-keys"
    other = base64.b64encode(bytes(range(32, 64))).decode()
    keys.write_text(f"k1 {key}\nk2 {other}\n")
    keys.chmod(0o600)
    config_file = tmp_path / "statekeeper.toml"
    config_file.write_text(f'encryption_keys_file = "{keys}"\nsensitive_tenants = "acme"\n')
    result = doctor("--data-dir", str(tmp_path), "--config", str(config_file))
    line = finding(result, "keys")
    assert line.startswith("ok ") and "k1" in line and "active k2" in line and "acme" in line
    assert key not in result.stdout and other not in result.stdout
    off = finding(doctor("--data-dir", str(tmp_path)), "keys")
    assert "encryption at rest off" in off
    orphan = tmp_path / "sensitive-only.toml"
    orphan.write_text('sensitive_tenants = "acme"\n')
    broken = finding(doctor("--data-dir", str(tmp_path), "--config", str(orphan)), "keys")
    assert broken.startswith("FAIL") and "no encryption key" in broken
