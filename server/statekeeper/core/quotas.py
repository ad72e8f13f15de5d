"""Per-tenant quotas: request and byte rates, open streams, stored bytes.

Each tenant gets (lazily, on its first call) two token buckets, one for
requests (each request message costs 1) and one for request bytes (the
serialized size of each request message), a count of its open streaming
calls, and the stored-bytes figure of the last usage measurement
(storage/usage.py), to which the size of every admitted write is added
until the next measurement replaces the figure. A call over a quota is
refused with QuotaExceededError: RESOURCE_EXHAUSTED, reason LIMIT_EXCEEDED,
metadata `quota` naming it, and the delay after which a retry can succeed
(the transport sends it as a google.rpc.RetryInfo). A refused call takes
no tokens.

The state is per server process: with `serve --workers N` each worker
holds its own buckets and stream counts, so a tenant can reach N times a
rate or stream quota in all (the README says so). Stored bytes are measured
in the shared store, so that quota holds across workers (up to the lag of
the measurement).

Every quota is off (0) by default. Quotas are set for every tenant
(`default`) and overridden per tenant; an override names only the fields
it changes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from statekeeper.core.errors import StatekeeperError

log = logging.getLogger("statekeeper.quotas")

# Retry delay of a refusal with no natural one (an open-streams quota): the
# client learns to back off without a busy loop.
STREAM_RETRY_SECONDS = 1.0
LOG_INTERVAL_SECONDS = 1.0

# Methods still served to a tenant over its stored-bytes quota: reads, and
# what removes or settles data (a tenant must be able to get back under).
_ALLOWED_OVER_STORAGE = (
    "Get",
    "List",
    "Query",
    "Search",
    "Recall",
    "BuildContext",
    "Watch",
    "Delete",
    "Prune",
    "Compact",
    "Invalidate",
    "Cancel",
    "Ack",
    "Nack",
    "ExtendVisibility",
    "Receive",
    "Pull",
    "RunForgetting",
    "RunConsolidation",
    "RebuildIndex",
    # Erasing frees space; renewing a lease and rolling back store nothing
    # new, and refusing them would expire work or strand a session.
    "EraseUser",
    "Renew",
    "Rollback",
    "RedriveDeadLetters",
)


@dataclass(frozen=True)
class TenantQuota:
    """One tenant's quotas; 0 means unlimited."""

    # Request messages per second (a unary call is one), and how many may
    # come at once after a quiet spell (0: one second's worth, at least 1).
    requests_per_second: float = 0.0
    requests_burst: float = 0.0
    # Serialized request bytes per second, and the burst (0: one second's
    # worth). A request larger than the burst is admitted when the bucket is
    # full, and the bucket then owes its size.
    bytes_per_second: float = 0.0
    bytes_burst: float = 0.0
    # Streaming calls (Watch, ReceiveMessages) open at once.
    max_streams: int = 0
    # Stored bytes (storage/usage.py counts them); over it, calls that add
    # data are refused, reads and deletes are served.
    max_stored_bytes: int = 0


QUOTA_NAMES = tuple(f.name for f in dataclasses.fields(TenantQuota))


@dataclass(frozen=True)
class Quotas:
    """The quotas of every tenant: `default`, and per-tenant overrides (each
    already merged over the default)."""

    default: TenantQuota = field(default_factory=TenantQuota)
    tenants: Mapping[str, TenantQuota] = field(default_factory=dict)

    def of(self, tenant: str) -> TenantQuota:
        return self.tenants.get(tenant, self.default)

    @property
    def stored_bytes(self) -> bool:
        """True when some tenant has a stored-bytes quota (the usage
        measurement runs only then)."""
        return any(q.max_stored_bytes for q in (self.default, *self.tenants.values()))


class QuotaError(ValueError):
    """A quota setting the server cannot use; the message names it."""


def build(entries: Iterable[tuple[str | None, str, object]]) -> Quotas:
    """Quotas from (tenant or None for the default, name, value) entries,
    later entries winning (the caller orders them file, env, flags)."""
    default: dict[str, object] = {}
    tenants: dict[str, dict[str, object]] = {}
    for tenant, name, value in entries:
        (default if tenant is None else tenants.setdefault(tenant, {}))[name] = value
    base = _quota(TenantQuota(), default, "quotas.default")
    return Quotas(
        default=base,
        tenants={
            tenant: _quota(base, values, f"quotas.tenants.{tenant}")
            for tenant, values in tenants.items()
        },
    )


def _quota(base: TenantQuota, values: Mapping[str, object], where: str) -> TenantQuota:
    changes: dict[str, Any] = {}
    for name, value in values.items():
        if name not in QUOTA_NAMES:
            raise QuotaError(f"{where}: unknown quota {name!r} (one of {', '.join(QUOTA_NAMES)})")
        kind = type(getattr(base, name))
        try:
            number = kind(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            number = None
        if number is None or not math.isfinite(number) or number < 0:
            raise QuotaError(f"{where}.{name}: expected a number, 0 or more, got {value!r}")
        changes[name] = number
    return dataclasses.replace(base, **changes)


def parse_entry(text_name: str, value: object) -> tuple[str | None, str, object]:
    """`NAME` or `TENANT:NAME` (flags, env) as an entry for `build`."""
    tenant, sep, name = text_name.rpartition(":")
    return (tenant if sep else None, name, value)


class QuotaExceededError(StatekeeperError):
    """A tenant is over one of its quotas; retry after `retry_delay` seconds."""

    code = "RESOURCE_EXHAUSTED"
    reason = "LIMIT_EXCEEDED"

    def __init__(self, quota: str, limit: float, retry_delay: float, message: str) -> None:
        shown = f"{limit:g}"
        super().__init__(
            f"quota {quota}: {message} (limit {shown}); retry in {retry_delay:.3g} s",
            field=quota,
            quota=quota,
            limit=shown,
        )
        self.quota = quota
        self.retry_delay = retry_delay


class TokenBucket:
    """`rate` tokens a second up to `capacity`; full at creation."""

    def __init__(self, rate: float, capacity: float, now: float) -> None:
        self.rate = rate
        self.capacity = capacity
        self.tokens = capacity
        self.updated = now

    def wait(self, cost: float, now: float) -> float:
        """Seconds until `cost` can be taken (0: now). A cost over the
        capacity needs a full bucket."""
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        need = min(cost, self.capacity)
        return 0.0 if self.tokens >= need else (need - self.tokens) / self.rate

    def take(self, cost: float) -> None:
        self.tokens -= cost


@dataclass
class _TenantState:
    quota: TenantQuota
    requests: TokenBucket | None
    bytes: TokenBucket | None
    streams: int = 0


def _bucket(rate: float, burst: float, now: float) -> TokenBucket | None:
    if rate <= 0:
        return None
    return TokenBucket(rate, burst if burst > 0 else max(rate, 1.0), now)


def grows_storage(method: str) -> bool:
    """True for a method that can add stored data (`method` is the gRPC
    path or the bare name): refused to a tenant over its stored bytes."""
    name = method.rpartition("/")[2]
    return not name.startswith(_ALLOWED_OVER_STORAGE)


class QuotaEnforcer:
    """The quota state of one server process."""

    def __init__(
        self,
        quotas: Quotas,
        usage_interval_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.quotas = quotas
        self._usage_interval = usage_interval_seconds
        self._clock = clock
        self._tenants: dict[str, _TenantState] = {}
        self._stored: dict[str, int] = {}
        # (tenant, quota) -> refusals since the server started (for metrics).
        self.refusals: dict[tuple[str, str], int] = {}
        self._unlogged: dict[tuple[str, str], int] = {}
        self._last_logged: dict[tuple[str, str], float] = {}

    def _state(self, tenant: str) -> _TenantState:
        state = self._tenants.get(tenant)
        if state is None:
            quota = self.quotas.of(tenant)
            now = self._clock()
            state = _TenantState(
                quota,
                _bucket(quota.requests_per_second, quota.requests_burst, now),
                _bucket(quota.bytes_per_second, quota.bytes_burst, now),
            )
            self._tenants[tenant] = state
        return state

    def needs_size(self, tenant: str) -> bool:
        """True when the tenant's calls must report their request size."""
        state = self._state(tenant)
        return state.bytes is not None or state.quota.max_stored_bytes > 0

    def admit(self, tenant: str, method: str, size: int) -> None:
        """One request message of `size` bytes for `method`; raises
        QuotaExceededError (taking nothing) when a quota refuses it."""
        state = self._state(tenant)
        quota = state.quota
        if quota.max_stored_bytes and grows_storage(method):
            stored = self._stored.get(tenant, 0)
            if stored >= quota.max_stored_bytes:
                self._refuse(
                    tenant,
                    method,
                    "max_stored_bytes",
                    quota.max_stored_bytes,
                    self._usage_interval,
                    f"the tenant stores {stored} bytes; delete data to write again",
                )
        now = self._clock()
        if state.requests is not None:
            wait = state.requests.wait(1, now)
            if wait > 0:
                self._refuse(
                    tenant,
                    method,
                    "requests_per_second",
                    quota.requests_per_second,
                    wait,
                    "too many requests",
                )
        if state.bytes is not None:
            wait = state.bytes.wait(size, now)
            if wait > 0:
                self._refuse(
                    tenant,
                    method,
                    "bytes_per_second",
                    quota.bytes_per_second,
                    wait,
                    "too many request bytes",
                )
            state.bytes.take(size)
        if state.requests is not None:
            state.requests.take(1)
        if quota.max_stored_bytes and grows_storage(method):
            # Between measurements, what the tenant sends to be stored counts
            # at once: a burst of writes cannot outrun the measurement.
            self._stored[tenant] = self._stored.get(tenant, 0) + size

    @contextlib.contextmanager
    def stream(self, tenant: str, method: str) -> Iterator[None]:
        """Holds one of the tenant's stream slots while a stream is open."""
        state = self._state(tenant)
        limit = state.quota.max_streams
        if limit and state.streams >= limit:
            self._refuse(
                tenant, method, "max_streams", limit, STREAM_RETRY_SECONDS, "too many streams open"
            )
        state.streams += 1
        try:
            yield
        finally:
            state.streams -= 1

    def set_usage(self, stored: Mapping[str, int]) -> None:
        """The stored bytes of each tenant, from the last measurement (it
        replaces the estimate that admitted writes added since)."""
        self._stored = dict(stored)

    def stored_bytes(self, tenant: str) -> int:
        return self._stored.get(tenant, 0)

    def stored_by_tenant(self) -> dict[str, int]:
        """Every tenant's stored bytes, as last measured or estimated."""
        return dict(self._stored)

    def _refuse(
        self, tenant: str, method: str, quota: str, limit: float, delay: float, message: str
    ) -> None:
        key = (tenant, quota)
        self.refusals[key] = self.refusals.get(key, 0) + 1
        # One line per second per tenant and quota at most, with the count it
        # stands for: a client retrying in a loop must not flood the log.
        unlogged = self._unlogged.get(key, 0) + 1
        now = self._clock()
        if now - self._last_logged.get(key, -math.inf) >= LOG_INTERVAL_SECONDS:
            log.warning(
                "%d call(s) of tenant %s refused over quota %s (%g), the last %s",
                unlogged,
                tenant,
                quota,
                limit,
                method,
                extra={"tenant": tenant, "quota": quota, "refused": unlogged, "rpc_method": method},
            )
            unlogged, self._last_logged[key] = 0, now
        self._unlogged[key] = unlogged
        raise QuotaExceededError(quota, limit, max(delay, 0.001), message)
