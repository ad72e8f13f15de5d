"""Server settings from defaults, a TOML file, environment and flags.

Precedence, lowest first: built-in defaults, the config file (`--config` or
STATEKEEPER_CONFIG), environment variables (STATEKEEPER_<OPTION>), command
line flags. Every option has all four forms; see README "Configuration".
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import math
import os
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statekeeper.core.blackboard.models import BlackboardLimits
from statekeeper.core.checkpoints.models import CheckpointLimits
from statekeeper.core.items.models import ItemLimits
from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import MemoryConfig, RerankConfig
from statekeeper.core.messagebus.models import MessageBusLimits
from statekeeper.core.quotas import QuotaError, Quotas, parse_entry
from statekeeper.core.quotas import build as build_quotas
from statekeeper.core.workflows.models import WorkflowLimits

ENV_PREFIX = "STATEKEEPER_"
MAX_PORT = 65535
LIMIT_ENV_PREFIX = "STATEKEEPER_LIMIT_"
QUOTA_ENV_PREFIX = "STATEKEEPER_QUOTA_"


class ConfigError(ValueError):
    """A setting has a value the server cannot use."""


@dataclass(frozen=True)
class CapabilityLimits:
    """Each capability's limits and tunables, named `<capability>.<field>`
    (nested settings take more dots: `memory.recall.<field>`) in `--limit`,
    the config file's [limits.<capability>] tables and
    STATEKEEPER_LIMIT_<CAPABILITY>__<FIELD> (`__` for each dot)."""

    blackboard: BlackboardLimits = field(default_factory=BlackboardLimits)
    messagebus: MessageBusLimits = field(default_factory=MessageBusLimits)
    checkpoints: CheckpointLimits = field(default_factory=CheckpointLimits)
    workflows: WorkflowLimits = field(default_factory=WorkflowLimits)
    items: ItemLimits = field(default_factory=ItemLimits)
    memory: MemoryConfig = field(default_factory=MemoryConfig)


@dataclass(frozen=True)
class Settings:
    """Everything `statekeeper serve` can be told."""

    listen: str = "127.0.0.1:50051"
    data_dir: str = "./data"
    index_dir: str = ""
    api_keys: dict[str, str] = field(default_factory=dict)
    # A file of `sha256:<hex> TENANT` lines, re-read on SIGHUP and on change
    # (statekeeper/keys.py).
    api_keys_file: str = ""
    # Serve without API keys on an address other hosts can reach (see
    # check_exposure): off, so an exposed server never runs open by accident.
    allow_anonymous: bool = False
    # Encryption at rest of sensitive fields (storage/sealing.py): the key
    # ring (a file, or `id:base64,...` usually from the environment), the key
    # that seals new values (default: the last listed), and what is sensitive
    # (comma lists: tenants or `all`; TENANT/BOARD for single boards).
    encryption_keys_file: str = ""
    encryption_keys: str = ""
    encryption_active_key: str = ""
    sensitive_tenants: str = ""
    sensitive_boards: str = ""
    log_level: str = "INFO"
    log_format: str = "json"
    sweep_interval_seconds: float = 30.0
    expired_retention_seconds: float = 0.0
    # The archive tier (core/archive): where cold state goes (empty: the
    # directory DATA_DIR/archive; s3://bucket/prefix: an S3-compatible store
    # configured by the AWS_* environment variables), and when.
    archive_url: str = ""
    archive_sessions_after_days: float = 0.0
    archive_checkpoints_after_days: float = 0.0
    archive_episodes_after_days: float = 0.0
    archive_audit_after_days: float = 0.0
    archive_blackboard_history: bool = False
    archive_interval_seconds: float = 300.0
    archive_batch_size: int = 100
    shutdown_grace_seconds: float = 10.0
    summarizer_url: str = ""
    summarizer_model: str = "gpt-4o-mini"
    summarizer_api_key: str = ""
    embedder_url: str = ""
    embedder_model: str = "text-embedding-3-small"
    embedder_api_key: str = ""
    embedder_kind: str = "auto"
    local_model_path: str = ""
    llm_url: str = ""
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str = ""
    postgres_dsn: str = ""
    redis_url: str = ""
    migrate_on_start: bool = False
    postgres_pool_size: int = 10
    redis_key_prefix: str = "sk"
    cache_ttl_seconds: float = 300.0
    health_interval_seconds: float = 1.0
    # Server processes on the listen port; 0: one per core on the production
    # tier, 1 on the embedded store (which keeps one writer).
    workers: int = 0
    # One INFO line per RPC in the `statekeeper.access_log` log, for a share of
    # the calls (failed calls are always logged).
    access_log: bool = True
    access_log_sample_rate: float = 1.0
    # HOST:PORT of the Prometheus /metrics endpoint; empty: no endpoint.
    metrics_listen: str = ""
    # Seconds between two samples of what /metrics reads from the database
    # (the bus queue depths); a scrape itself never queries it.
    metrics_sample_interval_seconds: float = 15.0
    # OTLP/gRPC endpoint of a trace collector (api/tracing.py); empty: no
    # tracing, unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
    otlp_endpoint: str = ""
    # Server TLS (PEM files); with tls_client_ca, clients must present a
    # certificate that CA signed (mTLS). See statekeeper/tls.py.
    tls_cert: str = ""
    tls_key: str = ""
    tls_client_ca: str = ""
    # Client certificate name (its CN or a subject alternative name) -> tenant:
    # a verified certificate is a credential, as an API key is.
    tls_client_tenants: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    # Per-tenant quotas (core/quotas.py) and how often stored bytes are measured.
    quotas: Quotas = field(default_factory=Quotas)
    usage_interval_seconds: float = 60.0
    capability_limits: CapabilityLimits = field(default_factory=CapabilityLimits)

    @property
    def production(self) -> bool:
        """True when the PostgreSQL (+ Redis) tier replaces the embedded store."""
        return bool(self.postgres_dsn)

    @property
    def worker_count(self) -> int:
        """How many server processes `serve` runs (`workers`, or its default)."""
        if self.workers:
            return self.workers
        return (os.cpu_count() or 1) if self.production else 1


EMBEDDER_KINDS = ("auto", "multilingual", "openai", "local", "none")

# Options other than api_keys, tls_client_tenants and limits, with their help text.
_OPTIONS: dict[str, str] = {
    "listen": "HOST:PORT to serve gRPC on",
    "allow_anonymous": "serve without API keys on a non-loopback listen address (every caller"
    " is the anonymous tenant); without it, serve refuses to start so exposed",
    "api_keys_file": "file of API keys by hash, one `sha256:<hex> TENANT` a line (`statekeeper"
    " keys create` prints them); re-read on SIGHUP and when it changes",
    "encryption_keys_file": "file of encryption keys, `ID BASE64` lines or TOML ([keys] id ="
    ' "base64", optional active = "id"), 32-byte keys; must not be group/world-readable',
    "encryption_keys": "encryption keys as ID:BASE64,ID:BASE64 (prefer the file or the"
    " environment: flags show in ps)",
    "encryption_active_key": "id of the key that seals new values (unset: the last key listed)",
    "sensitive_tenants": "comma list of tenants whose sensitive fields are encrypted at rest,"
    " or `all` (needs an encryption key); also --sensitive-tenant T, repeatable",
    "sensitive_boards": "comma list of TENANT/BOARD blackboards whose values are encrypted at"
    " rest on top of the sensitive tenants'; also --sensitive-board TENANT/BOARD, repeatable",
    "usage_interval_seconds": "seconds between measurements of each tenant's stored bytes (only"
    " while a max_stored_bytes quota is set)",
    "data_dir": "directory of the embedded store",
    "index_dir": "local directory where vector indexes are saved to survive restarts (unset:"
    " DATA_DIR/indexes; on the production tier each replica's own disk)",
    "log_level": "DEBUG, INFO, WARNING or ERROR",
    "log_format": "json (one object per line) or text",
    "sweep_interval_seconds": "seconds between sweeps of expired state",
    "expired_retention_seconds": "seconds an expired session is kept (invisible) before a sweep"
    " deletes it",
    "archive_url": "where archived (cold) state is written: a directory path or file:// URL, or"
    " s3://bucket/prefix (endpoint and credentials from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,"
    " AWS_SECRET_ACCESS_KEY, AWS_REGION; unset: DATA_DIR/archive)",
    "archive_sessions_after_days": "archive sessions without a TTL not updated for this many days"
    " (0: never); a read brings an archived session back",
    "archive_checkpoints_after_days": "archive the checkpoint history of executions whose last"
    " checkpoint is this many days old (the latest checkpoint of each namespace stays hot;"
    " 0: never); reading an archived checkpoint brings the history back",
    "archive_episodes_after_days": "archive the episodes of users who recorded none for this"
    " many days (they leave the vector index; 0: never); listing them brings them back",
    "archive_audit_after_days": "archive audit records older than this many days (0: never);"
    " audit queries read archived records through",
    "archive_blackboard_history": "archive blackboard history before compaction deletes it"
    " (history reads of compacted revisions read it through)",
    "archive_interval_seconds": "seconds between passes of the archiver",
    "archive_batch_size": "units (e.g. sessions) the archiver moves per batch",
    "shutdown_grace_seconds": "seconds in-flight calls get to finish on SIGTERM",
    "summarizer_url": "base URL of an OpenAI-compatible API for summaries (unset: offline)",
    "summarizer_model": "model name sent to the summarizer endpoint",
    "summarizer_api_key": "bearer key for the summarizer endpoint",
    "embedder_url": "base URL of an OpenAI-compatible embeddings API (unset: vectors come"
    " from clients; text recall falls back to lexical ranking)",
    "embedder_model": "model name sent to the embeddings endpoint",
    "embedder_api_key": "bearer key for the embeddings endpoint",
    "embedder_kind": "auto (the endpoint if embedder_url is set, else multilingual), multilingual"
    " (bundled offline multilingual USE v3), openai (HTTP endpoint), local (all-MiniLM-L6-v2,"
    " the local-embedder extra) or none (client vectors and lexical text recall only)",
    "local_model_path": "path of the local embedding model (unset: the packaged one)",
    "llm_url": "base URL of an OpenAI-compatible chat API for fact extraction (unset:"
    " offline pattern extractor)",
    "llm_model": "model name sent to the fact extraction endpoint",
    "llm_api_key": "bearer key for the fact extraction endpoint",
    "postgres_dsn": "PostgreSQL DSN of the durable tier, e.g. postgresql://user:pw@host/db;"
    " set to run the production tier instead of the embedded store",
    "redis_url": "Redis URL of the hot tier (session cache), e.g. redis://host:6379/0;"
    " needs postgres_dsn",
    "migrate_on_start": "apply pending PostgreSQL migrations at startup (safe with several"
    " replicas starting at once)",
    "postgres_pool_size": "connections per replica in the PostgreSQL pool",
    "redis_key_prefix": "prefix of every Redis key (to share one Redis between deployments)",
    "cache_ttl_seconds": "seconds a cached session record lives in Redis after its last read",
    "health_interval_seconds": "seconds between health probes of the storage tiers",
    "workers": "server processes sharing the listen port, each a full replica (0: one per"
    " core on the production tier; the embedded store allows 1)",
    "access_log": "log one line per RPC at INFO in the statekeeper.access_log logger (tenant,"
    " method, code, latency, bytes, peer)",
    "access_log_sample_rate": "share of successful calls the access log records, 0 to 1"
    " (failed calls are always logged)",
    "metrics_listen": "HOST:PORT serving Prometheus metrics at /metrics (unset: none;"
    " with --workers N, port+1..port+N-1 for the other workers)",
    "metrics_sample_interval_seconds": "seconds between two samples of the message bus queue"
    " depths for /metrics (read from the store; a scrape never queries it)",
    "otlp_endpoint": "OTLP/gRPC endpoint (e.g. http://collector:4317) receiving a trace span per"
    " RPC and its PostgreSQL/Redis calls, joined to the caller's W3C trace context (unset: no"
    " tracing unless OTEL_EXPORTER_OTLP_ENDPOINT is set)",
    "tls_cert": "PEM certificate chain of the server: serve TLS instead of plaintext (needs"
    " tls_key; the files are re-read for new connections when they change on disk)",
    "tls_key": "PEM private key (unencrypted) of tls_cert",
    "tls_client_ca": "PEM CA certificate(s): require every client to present a certificate"
    " they signed (mTLS; needs tls_cert)",
}

# Maps of NAME=VALUE pairs: (flag, metavar, env variable, help).
_PAIR_OPTIONS: dict[str, tuple[str, str, str, str]] = {
    "api_keys": (
        "--api-key",
        "KEY=TENANT",
        "STATEKEEPER_API_KEYS",
        "accept KEY for TENANT; repeatable (env STATEKEEPER_API_KEYS=k1=t1,k2=t2)",
    ),
    "tls_client_tenants": (
        "--tls-client-tenant",
        "NAME=TENANT",
        "STATEKEEPER_TLS_CLIENT_TENANTS",
        "a client certificate (verified by tls_client_ca) whose subject CN or a subject"
        " alternative name is NAME authenticates as TENANT, as an API key does; repeatable"
        " (env STATEKEEPER_TLS_CLIENT_TENANTS=n1=t1,n2=t2)",
    ),
}

# The config file's [encryption] table: its keys and the options they set.
_ENCRYPTION_TABLE = {
    "keys_file": "encryption_keys_file",
    "keys": "encryption_keys",
    "active_key": "encryption_active_key",
    "tenants": "sensitive_tenants",
    "boards": "sensitive_boards",
}

# Values accepted for a boolean option, in every source (flag, env, file).
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def add_arguments(parser: argparse.ArgumentParser, only: Collection[str] | None = None) -> None:
    """Adds the flag of every option, or of the options in `only` (a
    subcommand lists the flags it reads; the others still come from the
    environment and the config file but change nothing it does)."""
    parser.add_argument("--config", help="TOML config file (env STATEKEEPER_CONFIG)")
    defaults = Settings()
    for name, help_text in _OPTIONS.items():
        if only is not None and name not in only:
            continue
        flag = "--" + name.replace("_", "-")
        shown = _shown(getattr(defaults, name))
        text = f"{help_text} (default: {shown}; env {ENV_PREFIX}{name.upper()})"
        if isinstance(getattr(defaults, name), bool):
            # `--flag` alone means true; `--flag=false` is accepted too.
            parser.add_argument(flag, dest=name, nargs="?", const="true", metavar="BOOL", help=text)
        else:
            parser.add_argument(flag, dest=name, help=text)
    if only is not None:
        return
    for name, (flag, metavar, _, help_text) in _PAIR_OPTIONS.items():
        parser.add_argument(flag, dest=name, action="append", metavar=metavar, help=help_text)
    for flag, dest in (
        ("--sensitive-tenant", "sensitive_tenant"),
        ("--sensitive-board", "sensitive_board"),
    ):
        parser.add_argument(
            flag, dest=dest, action="append", metavar="NAME", help=f"one of {dest}s (repeatable)"
        )
    parser.add_argument(
        "--limit",
        dest="limit",
        action="append",
        metavar="NAME=VALUE",
        help="override a limit: a server-wide one (max_page_size=500) or a capability's "
        "(blackboard.max_value_bytes=2097152, memory.limits.default_top_k=20); env "
        "STATEKEEPER_LIMIT_<NAME>, `__` for each dot",
    )
    parser.add_argument(
        "--quota",
        dest="quota",
        action="append",
        metavar="[TENANT:]NAME=VALUE",
        help="a quota of every tenant (requests_per_second=50) or of one"
        " (acme:max_streams=10); names: requests_per_second, requests_burst, bytes_per_second,"
        " bytes_burst, max_streams, max_stored_bytes; 0 = unlimited (the default); env"
        " STATEKEEPER_QUOTAS=n=v,t:n=v or STATEKEEPER_QUOTA_<NAME>",
    )


def _shown(default: object) -> str:
    """A default as the user would type it."""
    if isinstance(default, bool):
        return str(default).lower()
    return str(default) if default != "" else "unset"


def load(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> Settings:
    values: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    quotas: list[tuple[str | None, str, object]] = []
    config_path = getattr(args, "config", None) or environ.get(ENV_PREFIX + "CONFIG")
    if config_path:
        _merge_file(Path(config_path), values, limits, quotas)
    for key, value in environ.items():
        if key.startswith(QUOTA_ENV_PREFIX):
            quotas.append((None, key[len(QUOTA_ENV_PREFIX) :].lower(), value))
    if env_quotas := environ.get(ENV_PREFIX + "QUOTAS"):
        quotas.extend(_quota_entries("STATEKEEPER_QUOTAS", env_quotas.split(",")))
    quotas.extend(_quota_entries("--quota", getattr(args, "quota", None) or []))
    try:
        values["quotas"] = build_quotas(quotas)
    except QuotaError as exc:
        raise ConfigError(str(exc)) from exc
    for name in _OPTIONS:
        if (env := environ.get(ENV_PREFIX + name.upper())) is not None:
            values[name] = env
    for name, (_, _, env_name, _) in _PAIR_OPTIONS.items():
        if (env_pairs := environ.get(env_name)) is not None:
            values[name] = _parse_pairs(env_name, env_pairs.split(","))
    for key, value in environ.items():
        if key.startswith(LIMIT_ENV_PREFIX):
            limits[key[len(LIMIT_ENV_PREFIX) :].lower().replace("__", ".")] = value
    for name in _OPTIONS:
        if (flag := getattr(args, name, None)) is not None:
            values[name] = flag
    for name, (flag, _, _, _) in _PAIR_OPTIONS.items():
        if given := getattr(args, name, None):
            values[name] = _parse_pairs(flag, given)
    if getattr(args, "limit", None):
        limits.update(_parse_pairs("--limit", args.limit))
    for name in ("sensitive_tenant", "sensitive_board"):
        if repeated := getattr(args, name, None):
            values[name + "s"] = ",".join(repeated)
    return _build(values, limits)


def _merge_file(
    path: Path,
    values: dict[str, Any],
    limits: dict[str, Any],
    quotas: list[tuple[str | None, str, object]],
) -> None:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    limits.update(_flattened(data.pop("limits", {})))
    quotas.extend(_file_quotas(data.pop("quotas", {})))
    encryption = data.pop("encryption", {})
    if not isinstance(encryption, dict):
        raise ConfigError("config file: [encryption] must be a table")
    for key, name in _ENCRYPTION_TABLE.items():
        if key in encryption:
            data.setdefault(name, encryption.pop(key))
    if encryption:
        raise ConfigError(f"config file: unknown [encryption] option {sorted(encryption)[0]!r}")
    for name in ("sensitive_tenants", "sensitive_boards"):
        if isinstance(data.get(name), list):
            data[name] = ",".join(str(item) for item in data[name])
    for name in _PAIR_OPTIONS:
        pairs = data.pop(name, None)
        if pairs is not None:
            if not isinstance(pairs, dict):
                raise ConfigError(f"config file: [{name}] must map names to tenants")
            values[name] = {str(k): str(v) for k, v in pairs.items()}
    for name, value in data.items():
        if name not in _OPTIONS:
            raise ConfigError(f"config file: unknown option {name!r}")
        values[name] = value


def _file_quotas(table: Any) -> list[tuple[str | None, str, object]]:
    """[quotas.default] and [quotas.tenants.<tenant>] tables as entries."""
    if not isinstance(table, Mapping) or set(table) - {"default", "tenants"}:
        raise ConfigError(
            "config file: [quotas] holds only [quotas.default] and [quotas.tenants.*]"
        )
    entries: list[tuple[str | None, str, object]] = []
    groups: list[tuple[str | None, Any]] = [(None, table.get("default", {}))]
    tenants = table.get("tenants", {})
    if not isinstance(tenants, Mapping):
        raise ConfigError("config file: [quotas.tenants] must hold one table per tenant")
    groups.extend(tenants.items())
    for tenant, values in groups:
        if not isinstance(values, Mapping):
            raise ConfigError(f"config file: quotas of {tenant or 'default'} must be a table")
        entries.extend((tenant, str(name), value) for name, value in values.items())
    return entries


def _quota_entries(source: str, items: Sequence[str]) -> list[tuple[str | None, str, object]]:
    return [parse_entry(name, value) for name, value in _parse_pairs(source, items).items()]


def _parse_pairs(source: str, items: Sequence[str]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for position, item in enumerate(items, start=1):
        if not item.strip():
            continue
        # The last `=`: values (tenant ids, limit numbers) never contain one, while
        # keys may (a base64 API key ends in `=` or `==`).
        key, sep, value = item.rpartition("=")
        if not sep or not key.strip() or not value.strip():
            # The entry itself is not echoed: it may be an API key.
            raise ConfigError(f"{source}: entry {position} is not NAME=VALUE")
        pairs[key.strip()] = value.strip()
    return pairs


def _coerce(name: str, value: Any, target: Any) -> Any:
    if isinstance(target, bool):
        return _boolean(name, value)
    try:
        return type(target)(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{name}: cannot use {value!r}") from exc


def _boolean(name: str, value: Any) -> bool:
    """Only the usual spellings: `maybe` or a typo fails instead of
    silently reading as false."""
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{name}: expected true or false, got {value!r}")


def _flattened(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A config file's [limits] table, nested tables as dotted names."""
    flat: dict[str, Any] = {}
    for name, value in table.items():
        if isinstance(value, Mapping):
            flat.update(_flattened(value, f"{prefix}{name}."))
        else:
            flat[prefix + name] = value
    return flat


def _build(values: dict[str, Any], limit_values: dict[str, Any]) -> Settings:
    defaults = Settings()
    plain = {name: value for name, value in limit_values.items() if "." not in name}
    dotted = {name: value for name, value in limit_values.items() if "." in name}
    limits = _with_values(defaults.limits, plain, "")
    capability_limits = defaults.capability_limits
    for name, value in dotted.items():
        capability_limits = _with_values(capability_limits, {name: value}, "")
    coerced = {
        name: value
        if name in _PAIR_OPTIONS or name == "quotas"
        else _coerce(name, value, getattr(defaults, name))
        for name, value in values.items()
    }
    settings = dataclasses.replace(
        defaults, limits=limits, capability_limits=capability_limits, **coerced
    )
    _check(settings)
    return settings


def _with_values(target: Any, values: Mapping[str, Any], prefix: str) -> Any:
    """`target` (a frozen dataclass) with the named fields replaced; a dotted
    name reaches into a nested dataclass. Only numbers, booleans and strings
    can be set: a field of another type is refused, as is an unknown name."""
    known = {f.name for f in dataclasses.fields(target)}
    changes: dict[str, Any] = {}
    for name, value in values.items():
        head, _, rest = name.partition(".")
        full = prefix + head
        if head not in known:
            raise ConfigError(f"unknown limit {prefix + name!r}")
        current = changes.get(head, getattr(target, head))
        if rest:
            if not dataclasses.is_dataclass(current):
                raise ConfigError(f"unknown limit {prefix + name!r}")
            changes[head] = _with_values(current, {rest: value}, full + ".")
        elif isinstance(current, bool | int | float | str):
            changes[head] = _checked_limit(full, _coerce(full, value, current))
        else:
            raise ConfigError(f"limit {full!r} is a group: name one of its fields")
    return dataclasses.replace(target, **changes)


def _checked_limit(name: str, value: Any) -> Any:
    """Limits are sizes, counts, durations and weights: finite and not
    negative (0 where a limit allows it means off or unlimited)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and (not math.isfinite(value) or value < 0):
        raise ConfigError(f"limit {name!r}: expected a finite number >= 0, got {value!r}")
    return value


# The settings that turn an archive unit kind on (core/archive).
ARCHIVE_POLICIES = (
    "archive_sessions_after_days",
    "archive_checkpoints_after_days",
    "archive_episodes_after_days",
    "archive_audit_after_days",
    "archive_blackboard_history",
)


def _check(settings: Settings) -> None:
    host, sep, port = settings.listen.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"listen: expected HOST:PORT, got {settings.listen!r}")
    # Port 0 asks the system for a free port (the log names the one bound).
    if int(port) > MAX_PORT:
        raise ConfigError(f"listen: port {port} is out of range (1-{MAX_PORT}, or 0 for any)")
    _check_telemetry(settings)
    _check_rerank(settings.capability_limits.memory.rerank)
    if settings.embedder_kind not in EMBEDDER_KINDS:
        raise ConfigError(f"embedder_kind: must be one of {', '.join(EMBEDDER_KINDS)}")
    if settings.log_format not in ("json", "text"):
        raise ConfigError("log_format: must be json or text")
    if settings.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ConfigError("log_level: must be DEBUG, INFO, WARNING or ERROR")
    if settings.sweep_interval_seconds <= 0:
        raise ConfigError("sweep_interval_seconds: must be positive")
    if settings.metrics_sample_interval_seconds <= 0:
        raise ConfigError("metrics_sample_interval_seconds: must be positive")
    if settings.expired_retention_seconds < 0:
        raise ConfigError("expired_retention_seconds: must not be negative")
    if settings.archive_interval_seconds <= 0:
        raise ConfigError("archive_interval_seconds: must be positive")
    if settings.archive_batch_size <= 0:
        raise ConfigError("archive_batch_size: must be positive")
    for name in ARCHIVE_POLICIES:
        days = getattr(settings, name)
        if isinstance(days, float) and days < 0:
            raise ConfigError(f"{name}: must not be negative")
        if days and settings.production and not settings.archive_url:
            raise ConfigError(
                f"{name}: the production tier needs archive_url, a store every"
                " replica reaches (e.g. s3://bucket/prefix)"
            )
    if settings.usage_interval_seconds <= 0:
        raise ConfigError("usage_interval_seconds: must be positive")
    if settings.shutdown_grace_seconds < 0:
        raise ConfigError("shutdown_grace_seconds: must not be negative")
    if settings.workers < 0:
        raise ConfigError("workers: must not be negative")
    if settings.workers > 1 and not settings.production:
        raise ConfigError(
            "workers: the embedded store keeps one writer, so it runs 1 worker; use the"
            " production tier (postgres_dsn) for more"
        )
    _check_production(settings)
    _check_tls(settings)


def _check_tls(settings: Settings) -> None:
    """Which TLS options need which; the files themselves are read and
    checked by `serve` (statekeeper/tls.py), which names the path at fault."""
    if bool(settings.tls_cert) != bool(settings.tls_key):
        raise ConfigError("tls_cert and tls_key: set both (the certificate and its key) or neither")
    if settings.tls_client_ca and not settings.tls_cert:
        raise ConfigError("tls_client_ca: needs tls_cert and tls_key (mTLS runs over TLS)")
    if settings.tls_client_tenants and not settings.tls_client_ca:
        raise ConfigError(
            "tls_client_tenants: needs tls_client_ca (only a verified client certificate"
            " may name a tenant)"
        )


def check_exposure(settings: Settings) -> None:
    """`serve` refuses to listen where other hosts can reach it with no API
    keys (anyone could read and write the anonymous tenant) unless
    allow_anonymous says that is meant. Only serve checks: `health` and
    `doctor` dial the same address and must not refuse."""
    # A client certificate mapped to a tenant is a credential too (its CA is
    # then required by tls_client_ca, so no caller is anonymous).
    credentials = settings.api_keys or settings.api_keys_file or settings.tls_client_tenants
    if credentials or settings.allow_anonymous or _is_loopback(settings.listen):
        return
    raise ConfigError(
        f"listen: {settings.listen} is reachable from other hosts and no API keys are"
        " configured; set api keys (--api-key KEY=TENANT or --api-keys-file FILE), client"
        " certificate tenants"
        " (--tls-client-ca with --tls-client-tenant NAME=TENANT) or --allow-anonymous"
    )


def _is_loopback(listen: str) -> bool:
    host = listen.rpartition(":")[0].strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def _check_rerank(rerank: RerankConfig) -> None:
    """The reranker stage's settings (--limit memory.rerank.*): an http(s)
    URL or none, at least two candidates to reorder, a positive timeout."""
    scheme, sep, host = rerank.url.partition("://")
    if rerank.url and (scheme not in ("http", "https") or not sep or not host.strip("/")):
        raise ConfigError(
            f"limit 'memory.rerank.url': expected http://HOST[:PORT] or https://..., got"
            f" {rerank.url!r}"
        )
    if rerank.depth < 2:
        raise ConfigError(
            f"limit 'memory.rerank.depth': expected at least 2 candidates, got {rerank.depth}"
        )
    if not rerank.timeout_seconds > 0:
        raise ConfigError("limit 'memory.rerank.timeout_seconds': must be positive")


def _check_telemetry(settings: Settings) -> None:
    if not 0.0 <= settings.access_log_sample_rate <= 1.0:
        raise ConfigError("access_log_sample_rate: must be between 0 and 1")
    if settings.metrics_listen:
        host, sep, port = settings.metrics_listen.rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) > MAX_PORT:
            raise ConfigError(
                f"metrics_listen: expected HOST:PORT with a port up to {MAX_PORT},"
                f" got {settings.metrics_listen!r}"
            )


def _check_production(settings: Settings) -> None:
    if settings.postgres_dsn and not settings.postgres_dsn.startswith(
        ("postgres://", "postgresql://")
    ):
        raise ConfigError("postgres_dsn: expected postgresql://[user[:password]@]host[:port]/db")
    if settings.redis_url and not settings.postgres_dsn:
        raise ConfigError(
            "redis_url: needs postgres_dsn as well (Redis is only a cache; PostgreSQL keeps"
            " the data)"
        )
    if settings.redis_url and not settings.redis_url.startswith(
        ("redis://", "rediss://", "unix://")
    ):
        raise ConfigError("redis_url: expected redis://[:password@]host[:port][/db]")
    if settings.postgres_pool_size < 1:
        raise ConfigError("postgres_pool_size: must be at least 1")
    if settings.cache_ttl_seconds <= 0:
        raise ConfigError("cache_ttl_seconds: must be positive")
    if settings.health_interval_seconds <= 0:
        raise ConfigError("health_interval_seconds: must be positive")
