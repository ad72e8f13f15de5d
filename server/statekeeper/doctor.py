"""`statekeeper doctor`: what an operator checks first, in one command.

Each check prints one line, `ok`, `WARN` or `FAIL`, and the command exits
non-zero when any failed:

- config: the tier and the settings that matter to it (secrets redacted);
- store: the embedded store's directory, or PostgreSQL and Redis answering;
- schemas: every capability's schema version against the one this server
  needs (read only: doctor never migrates and never creates a store);
- server: the gRPC health of a server at the listen address, if one runs;
- indexes: the vector index load state, read from that server's /metrics
  (`--metrics-listen`), the only place a running process reports it.
"""

from __future__ import annotations

import asyncio
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from statekeeper import data_dir, probe
from statekeeper.config import Settings
from statekeeper.logs import redact
from statekeeper.storage.schemas import SchemaState

OK, WARN, FAIL = "ok", "WARN", "FAIL"
INDEX_GAUGES = (
    "statekeeper_vector_indexes_loading",
    "statekeeper_vector_indexes_loaded",
    "statekeeper_vector_indexes_startup_done",
)


@dataclass(frozen=True)
class Finding:
    status: str
    topic: str
    detail: str

    def line(self) -> str:
        return f"{self.status:<4}  {self.topic:<8} {self.detail}"


async def examine(settings: Settings) -> list[Finding]:
    findings = [_config(settings), _encryption(settings)]
    if settings.production:
        findings += await _production(settings)
    else:
        findings += _embedded(settings)
    findings += _server(settings)
    return findings


def _config(settings: Settings) -> Finding:
    if settings.production:
        tier = f"production: PostgreSQL {redact(settings.postgres_dsn)}"
        tier += f", Redis {redact(settings.redis_url)}" if settings.redis_url else ", no Redis"
    else:
        tier = f"embedded store in {settings.data_dir}"
    keys = f"{len(settings.api_keys)} API key(s)" if settings.api_keys else "no API keys"
    if settings.api_keys_file:
        keys = f"API keys file {settings.api_keys_file}" + (
            f" and {keys}" if settings.api_keys else ""
        )
    if settings.tls_client_tenants:
        keys += f", {len(settings.tls_client_tenants)} client certificate tenant(s)"
    credentials = settings.api_keys or settings.api_keys_file or settings.tls_client_tenants
    transport = "mTLS" if settings.tls_client_ca else "TLS" if settings.tls_cert else "plaintext"
    return Finding(
        OK if credentials else WARN,
        "config",
        f"{tier}; listen {settings.listen} ({transport}); {settings.worker_count} worker(s);"
        f" {keys}" + ("" if credentials else " (single tenant, unauthenticated)"),
    )


def _encryption(settings: Settings) -> Finding:
    """The key ring (ids only, never a key) and what it seals."""
    from statekeeper.storage.sealing import KeyRingError, load_key_ring

    try:
        ring = load_key_ring(
            settings.encryption_keys_file, settings.encryption_keys, settings.encryption_active_key
        )
    except (KeyRingError, OSError) as exc:
        return Finding(FAIL, "keys", f"encryption key ring: {exc}")
    tenants = settings.sensitive_tenants or "none"
    if ring is None:
        if settings.sensitive_tenants or settings.sensitive_boards:
            return Finding(FAIL, "keys", f"sensitive tenants {tenants} but no encryption key")
        return Finding(OK, "keys", "encryption at rest off (no encryption key configured)")
    boards = f", sensitive boards {settings.sensitive_boards}" if settings.sensitive_boards else ""
    return Finding(
        OK if settings.sensitive_tenants or settings.sensitive_boards else WARN,
        "keys",
        f"{len(ring.keys)} encryption key(s) ({', '.join(ring.keys)}), active {ring.active};"
        f" sensitive tenants {tenants}{boards}",
    )


def _embedded(settings: Settings) -> list[Finding]:
    from statekeeper.storage.embedded.sessions_schema import DATABASE_FILE
    from statekeeper.storage.schemas import embedded_states

    try:
        data_dir.existing(Path(settings.data_dir))
    except data_dir.DataDirError as exc:
        return [Finding(FAIL, "store", str(exc))]
    return [
        Finding(OK, "store", f"{Path(settings.data_dir) / DATABASE_FILE} opens"),
        _schemas(embedded_states(Path(settings.data_dir) / DATABASE_FILE)),
    ]


async def _production(settings: Settings) -> list[Finding]:
    import asyncpg

    from statekeeper.storage.schemas import postgres_states

    findings = []
    try:
        conn = await asyncpg.connect(settings.postgres_dsn, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        findings.append(Finding(FAIL, "postgres", redact(f"cannot connect: {exc}")))
    else:
        try:
            server_version = await conn.fetchval("SHOW server_version")
            findings.append(Finding(OK, "postgres", f"answers (PostgreSQL {server_version})"))
            findings.append(_schemas(await postgres_states(conn)))
        finally:
            await conn.close()
    if settings.redis_url:
        findings.append(await _redis(settings.redis_url))
    return findings


async def _redis(url: str) -> Finding:
    import redis.asyncio as redis_asyncio

    client = redis_asyncio.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        info = await client.info("server")
    except (OSError, redis_asyncio.RedisError) as exc:
        return Finding(FAIL, "redis", redact(f"cannot reach {url}: {exc}"))
    finally:
        await client.aclose()
    return Finding(OK, "redis", f"answers (Redis {info.get('redis_version', '?')})")


def _schemas(states: list[SchemaState]) -> Finding:
    listed = ", ".join(
        f"{s.name} {s.version}" + ("" if s.current else f" (needs {s.latest})") for s in states
    )
    if all(state.current for state in states):
        return Finding(OK, "schemas", listed)
    return Finding(FAIL, "schemas", f"{listed}: run `statekeeper migrate`")


def _server(settings: Settings) -> list[Finding]:
    serving, text = probe.check(settings.listen, timeout=2)
    if not serving:
        return [Finding(WARN, "server", f"no server serving: {text}")]
    return [Finding(OK, "server", text), _indexes(settings)]


def _indexes(settings: Settings) -> Finding:
    if not settings.metrics_listen:
        return Finding(WARN, "indexes", "unknown: the server reports them at --metrics-listen")
    url = f"http://{probe.local_target(settings.metrics_listen)}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            text = reply.read().decode()
    except OSError as exc:
        return Finding(WARN, "indexes", f"cannot read {url}: {exc}")
    values = _gauges(text)
    if not values:
        return Finding(WARN, "indexes", f"{url} reports no vector indexes")
    loading, loaded, done = (values.get(name, 0.0) for name in INDEX_GAUGES)
    state = "startup load done" if done else "startup load still running"
    return Finding(
        OK if done else WARN, "indexes", f"{loaded:.0f} loaded, {loading:.0f} loading; {state}"
    )


def _gauges(text: str) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name in INDEX_GAUGES
    }


def run(settings: Settings) -> tuple[bool, list[str]]:
    """(healthy, the lines to print)."""
    findings = asyncio.run(examine(settings))
    return all(f.status != FAIL for f in findings), [f.line() for f in findings]
