"""Replicas of one backend as server processes, started and stopped together.

* `statekeeper_replicas`: N real `statekeeper serve` processes (embedded: 1,
  since the embedded store belongs to one process; production: any number
  sharing one database and Redis prefix);
* `blackboard_bus_deployment`: the blackboard and message bus assembly with
  fast sweeps (embedded: one process serving N replicas over one store;
  production: N processes reaching each other only through PostgreSQL and
  Redis).

If one replica fails to start, those already started are stopped before the
error propagates.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.harness.backends import Production
from tests.harness.servers import AssemblyProcess, ManagedProcess, ServerProcess

API_KEYS = {"key-alpha": "alpha", "key-beta": "beta"}
BLACKBOARD_BUS = "tests.harness.assemblies.blackboard_bus"


def key_args(api_keys: dict[str, str], flag: str = "--api-key") -> list[str]:
    return [arg for key, tenant in api_keys.items() for arg in (flag, f"{key}={tenant}")]


@dataclass
class Deployment:
    """The processes of one deployment and their gRPC addresses."""

    processes: list[ManagedProcess]

    @property
    def addresses(self) -> list[str]:
        found: list[str] = []
        for process in self.processes:
            if isinstance(process, AssemblyProcess):
                found.extend(process.addresses)
            elif isinstance(process, ServerProcess):
                found.append(process.address)
        return found

    def stop(self) -> None:
        for process in self.processes:
            process.stop()


def start_all(processes: Sequence[ManagedProcess]) -> Deployment:
    """Starts each process in turn; on any failure stops the started ones."""
    started: list[ManagedProcess] = []
    try:
        for process in processes:
            process.start()
            started.append(process)
    except BaseException:
        Deployment(started).stop()
        raise
    return Deployment(started)


def replica_dir(path: Path, index: int) -> Path:
    directory = path / f"replica-{index}"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


@contextmanager
def statekeeper_replicas(
    path: Path,
    where: Production | None,
    replicas: int = 1,
    extra_args: Sequence[str] = (),
    api_keys: dict[str, str] | None = None,
) -> Iterator[list[ServerProcess]]:
    """`replicas` running `statekeeper serve` processes on `where` (None:
    embedded, one replica), killed on exit."""
    if where is None and replicas != 1:
        raise ValueError("the embedded store serves from one process")
    args = [*key_args(API_KEYS if api_keys is None else api_keys), *extra_args]
    if where is not None:
        args = [*where.serve_args(), *args]
    servers = [ServerProcess(replica_dir(path, i), extra_args=args) for i in range(replicas)]
    start_all(servers)
    try:
        yield servers
    finally:
        for server in servers:
            server.kill()


@dataclass
class BlackboardBusProcess(AssemblyProcess):
    """One process of the blackboard and message bus assembly, serving
    `replicas` gRPC servers; limits are NAME=VALUE overrides of
    BlackboardLimits and MessageBusLimits."""

    replicas: int = 1
    bb_limits: dict[str, object] = field(default_factory=dict)
    bus_limits: dict[str, object] = field(default_factory=dict)
    # Production tier (empty: the embedded store in data_dir).
    postgres_dsn: str = ""
    redis_url: str = ""
    redis_prefix: str = "sk"
    api_keys: dict[str, str] = field(default_factory=lambda: dict(API_KEYS))

    def command(self) -> list[str]:
        self.module = BLACKBOARD_BUS
        self.args = ["--data-dir", str(self.data_dir), "--replicas", str(self.replicas)]
        self.args += key_args(self.api_keys)
        self.args += [a for n, v in self.bb_limits.items() for a in ("--bb-limit", f"{n}={v}")]
        self.args += [a for n, v in self.bus_limits.items() for a in ("--bus-limit", f"{n}={v}")]
        if self.postgres_dsn:
            self.args += ["--postgres-dsn", self.postgres_dsn, "--redis-prefix", self.redis_prefix]
            if self.redis_url:
                self.args += ["--redis-url", self.redis_url]
        return super().command()


def production_options(where: Production | None) -> dict[str, object]:
    """BlackboardBusProcess options for `where` (nothing for embedded)."""
    if where is None:
        return {}
    return {
        "postgres_dsn": where.postgres_dsn,
        "redis_url": where.redis_url,
        "redis_prefix": where.redis_prefix,
    }


def blackboard_bus_deployment(
    path: Path, where: Production | None, replicas: int = 2, **options: object
) -> Deployment:
    """`replicas` blackboard and bus replicas on `where`, started."""
    if where is None:
        return start_all([BlackboardBusProcess(path, replicas=replicas, **options)])  # type: ignore[arg-type]
    settings = {**production_options(where), **options}
    return start_all(
        [BlackboardBusProcess(replica_dir(path, i), **settings) for i in range(replicas)]  # type: ignore[arg-type]
    )
