"""Tamper-evident audit (issue 14): each tenant's records form a hash chain
kept in the writing transaction, and `statekeeper audit verify` names the
first record changed or removed behind the server's back, on both backends."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import asyncpg
import grpc
import pytest

from statekeeper.storage.embedded.sessions_schema import AUDIT_DIGEST, DATABASE_FILE, audit_digest
from statekeeper.storage.sql import AUDIT_COLUMNS
from statekeeper_client.v1 import blackboard_pb2 as bb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.e2e.conftest import ServerProcess
from tests.harness.deadlines import scaled
from tests.harness.processes import REPO
from tests.integration.conftest import ServerFactory

KEYS = ["--api-key", "key-alpha=alpha", "--api-key", "key-beta=beta"]
ALPHA = [("x-api-key", "key-alpha")]
BETA = [("x-api-key", "key-beta")]

# Runs a statement against the server's store, behind its back; returns the
# first column of its first row, if any.
Tamper = Callable[[str], object]
# What recomputes a record's hash in SQL, as a forger would, by backend.
REHASH = {
    "embedded": f"{AUDIT_DIGEST}(prev_hash, {AUDIT_COLUMNS})",
    "production": "audit_digest(prev_hash, audit_log)",
}


def write(server: ServerProcess, metadata: list[tuple[str, str]], count: int) -> None:
    value = bb.BlackboardValue(payload=common_pb2.Payload(data=b"v"))
    with grpc.insecure_channel(server.address) as channel:
        stub = BlackboardServiceStub(channel)
        for n in range(count):
            request = bb.PutEntryRequest(board="b", key=f"k{n}", value=value)
            stub.PutEntry(request, metadata=metadata)


def verify(store_args: list[str], *extra: str) -> tuple[int, str]:
    result = subprocess.run(
        [sys.executable, "-m", "statekeeper", "audit", "verify", *store_args, *extra],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        cwd=REPO,
    )
    return result.returncode, result.stdout + result.stderr


@pytest.fixture(params=["embedded", "production"])
def backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[ServerProcess, list[str], Tamper, str]:
    """A server, the store flags of `audit verify`, a way to tamper and the
    SQL expression of a record's hash."""
    if request.param == "embedded":
        server = ServerProcess(tmp_path, extra_args=KEYS)
        server.start()
        request.addfinalizer(server.kill)

        def on_sqlite(statement: str) -> object:
            with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
                db.create_function(AUDIT_DIGEST, 10, audit_digest)
                row = db.execute(statement).fetchone()
            return None if row is None else row[0]

        return server, ["--data-dir", str(tmp_path)], on_sqlite, REHASH["embedded"]
    factory: ServerFactory = request.getfixturevalue("production_server")
    dsn: str = request.getfixturevalue("database")

    def on_postgres(statement: str) -> object:
        async def run() -> object:
            conn = await asyncpg.connect(dsn)
            try:
                return await conn.fetchval(statement)
            finally:
                await conn.close()

        return asyncio.run(run())

    return factory(*KEYS), ["--postgres-dsn", dsn], on_postgres, REHASH["production"]


def record_id(tamper: Tamper, tenant: str, seq: int) -> int:
    found = tamper(
        f"SELECT audit_id FROM audit_log WHERE tenant = '{tenant}' AND chain_seq = {seq}"
    )
    assert isinstance(found, int)
    return found


def test_verify_names_the_first_tampered_record(
    backend: tuple[ServerProcess, list[str], Tamper, str],
) -> None:
    server, store, tamper, rehash = backend
    write(server, ALPHA, 6)
    write(server, BETA, 4)
    server.kill()  # the embedded store has one writer; verify opens it
    assert verify(store) == (0, "audit chain intact: 10 records of 2 tenants\n")

    # A changed summary: that record is named, and only alpha's chain breaks.
    third, fourth = record_id(tamper, "alpha", 3), record_id(tamper, "alpha", 4)
    tamper(f"UPDATE audit_log SET summary = 'put nothing' WHERE audit_id = {third}")
    assert verify(store) == (
        1,
        f"audit chain broken at record {third} (tenant alpha): content does not match its hash\n",
    )
    assert verify(store, "--tenant", "beta")[0] == 0

    # Its hash recomputed as a forger would: the record after it is named.
    tamper(f"UPDATE audit_log SET hash = {rehash} WHERE audit_id = {third}")
    code, output = verify(store, "--tenant", "alpha")
    assert code == 1
    assert f"record {fourth} (tenant alpha): does not follow the record before it" in output

    # The newest record of beta removed: the chain head tells.
    tamper(
        "DELETE FROM audit_log WHERE audit_id ="
        " (SELECT max(audit_id) FROM audit_log WHERE tenant = 'beta')"
    )
    code, output = verify(store, "--tenant", "beta")
    assert code == 1 and "newer records of the chain are missing" in output, output


def test_concurrent_writers_on_two_replicas_keep_one_chain_per_tenant(
    production_server: ServerFactory, database: str
) -> None:
    """Commits of one tenant from two replicas race; each links its records
    to the head at COMMIT, so the chain stays whole."""
    replicas = [production_server(*KEYS), production_server(*KEYS)]
    value = bb.BlackboardValue(payload=common_pb2.Payload(data=b"v"))

    def writer(n: int) -> None:
        server = replicas[n % 2]
        with grpc.insecure_channel(server.address) as channel:
            stub = BlackboardServiceStub(channel)
            for i in range(15):
                request = bb.PutEntryRequest(board=f"b{n}", key=f"k{i}", value=value)
                stub.PutEntry(request, metadata=ALPHA if i % 3 else BETA)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(writer, range(8)))
    assert verify(["--postgres-dsn", database]) == (
        0,
        "audit chain intact: 120 records of 2 tenants\n",
    )
