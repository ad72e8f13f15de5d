"""Assembles the gRPC server: storage, domain, servicers, health, reflection.

Lifecycle: `start()` opens storage (health turns SERVING once it is ready),
starts the background sweeper and the health monitor and binds the port;
`stop()` turns health NOT_SERVING, stops accepting calls, lets in-flight
calls finish within the grace period, then closes storage.

The health monitor probes the durable tier every `health_interval_seconds`:
while it cannot be reached, health is NOT_SERVING (calls that need it answer
UNAVAILABLE) and the server keeps running; when it answers again, health
returns to SERVING by itself. The same probe lets the Redis cache recover.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from statekeeper import __version__, keys, telemetry, tls
from statekeeper.adapters.openai_chat import OpenAIChatSummarizer
from statekeeper.api import reflection, session_servicer, tracing
from statekeeper.api.admin_servicer import AdminServicer
from statekeeper.api.interceptor import DomainInterceptor, FailedAuthentications
from statekeeper.capabilities import (
    CAPABILITY_SERVICES,
    ArchivingCapability,
    Capability,
    Memory,
    ProductionMemory,
    build_capabilities,
    user_eraser,
)
from statekeeper.config import Settings
from statekeeper.core import observations
from statekeeper.core.archive.service import ArchiveErasureAgain
from statekeeper.core.audit.service import AuditLog
from statekeeper.core.errors import StorageUnavailableError
from statekeeper.core.limits import Limits
from statekeeper.core.privacy.service import ArchiveHook
from statekeeper.core.quotas import QuotaEnforcer
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer, Summarizer
from statekeeper.core.tenancy import Authenticator
from statekeeper.core.tokens import TokenCounter
from statekeeper.storage import sealed
from statekeeper.storage.archive.audit import attach_audit
from statekeeper.storage.archive.factory import build_archive
from statekeeper.storage.factory import build_storage
from statekeeper.storage.production import ProductionStorage
from statekeeper.storage.sealing import sealer_for
from statekeeper.storage.usage import UsageMonitor
from statekeeper_client.v1 import admin_pb2, admin_pb2_grpc, session_pb2

log = logging.getLogger(__name__)

STATEKEEPER_SERVICES = [
    session_pb2.DESCRIPTOR.services_by_name["SessionService"].full_name,
    admin_pb2.DESCRIPTOR.services_by_name["AdminService"].full_name,
    *CAPABILITY_SERVICES,
]


def build_summarizer(settings: Settings, counter: TokenCounter) -> Summarizer:
    if settings.summarizer_url:
        return OpenAIChatSummarizer(
            settings.summarizer_url, settings.summarizer_model, settings.summarizer_api_key, counter
        )
    return ExtractiveSummarizer(counter)


def grpc_options(limits: Limits) -> list[tuple[str, int]]:
    """Transport limits (README, "Limits"). HTTP/2 lets a connection open
    twice the streaming calls the interceptor admits, so the calls past that
    limit reach it and get a clear RESOURCE_EXHAUSTED instead of waiting in
    the client for a stream slot."""
    return [
        ("grpc.max_receive_message_length", limits.max_request_bytes),
        ("grpc.max_send_message_length", limits.max_request_bytes),
        ("grpc.max_concurrent_streams", 2 * limits.max_streams_per_connection),
        # Calls that arrived before the server asked for them wait in gRPC core's
        # pending queue; past its soft limit (default 1000) core cancels a random
        # share of them with CANCELLED and logs nothing. A burst of stream opens
        # on one connection reaches it, so the queue holds what the limits admit.
        ("grpc.server.max_pending_requests", limits.max_open_streams),
        ("grpc.server.max_pending_requests_hard_limit", 2 * limits.max_open_streams),
    ]


class StatekeeperServer:
    """One server process. `reuse_port` is for the workers of `serve
    --workers N` only (statekeeper/workers.py): a lone server binds without
    SO_REUSEPORT, so that a port already in use fails its start instead of
    silently splitting clients between two servers."""

    def __init__(self, settings: Settings, reuse_port: bool = False) -> None:
        self.settings = settings
        self.reuse_port = reuse_port
        self.storage = build_storage(settings)
        counter = TokenCounter()
        summarizer = build_summarizer(settings, counter)
        self.sessions = SessionManager(
            sealed.sessions(self.storage.sessions, sealer_for(settings)),
            counter,
            summarizer,
            settings.limits,
        )
        # The archive tier: cold state in an object store, restored on read.
        self.archive = build_archive(settings, self.storage)
        if self.archive is not None:
            self.sessions.restorer = self.archive.restore_session
            self.sessions.archived = self.archive.is_archived
            self.archive.after_pass = lambda _: observations.swept("archiver")
        self.capabilities: list[Capability] = build_capabilities(
            settings,
            self.storage,
            self.sessions,
            counter,
            summarizer if settings.summarizer_url else None,
        )
        if self.archive is not None:
            # Capabilities that archive register their unit kinds and hooks.
            for capability in self.capabilities:
                if isinstance(capability, ArchivingCapability):
                    capability.attach_archive(self.archive, settings)
        # Audit records (not a capability object): archived by UTC day, read through.
        archived_audit = (
            None if self.archive is None else attach_audit(self.archive, settings, self.storage)
        )
        self.audit = AuditLog(self.storage.audit, settings.limits, archived_audit)
        self.authenticator = Authenticator(
            settings.api_keys, settings.tls_client_tenants, keys_file=bool(settings.api_keys_file)
        )
        # Hashed keys, re-read on SIGHUP (reload_keys) and when the file changes.
        self.keys_file = (
            keys.KeysFile(Path(settings.api_keys_file), self.authenticator)
            if settings.api_keys_file
            else None
        )
        # Quota state and refusal counts (`quotas.refusals`), failed
        # authentications (`failed_authentications.total`): for metrics too.
        self.quotas = QuotaEnforcer(settings.quotas, settings.usage_interval_seconds)
        self.failed_authentications = FailedAuthentications()
        self.usage = (
            UsageMonitor(self.storage, settings.usage_interval_seconds, self.quotas.set_usage)
            if settings.quotas.stored_bytes
            else None
        )
        # None unless an OTLP endpoint is set: then no interceptor, no cost.
        self.tracing = tracing.build(settings.otlp_endpoint, __version__)
        self.telemetry = telemetry.build(
            settings,
            self.authenticator,
            lambda: self._serving,
            self.storage.durable if isinstance(self.storage, ProductionStorage) else None,
            [
                capability.app.index_loading
                for capability in self.capabilities
                if isinstance(capability, Memory | ProductionMemory)
            ],
            self._metric_sources(),
        )
        self.health = health.aio.HealthServicer()
        self._server: grpc.aio.Server | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._serving = False
        self.port = 0

    def _metric_sources(self) -> telemetry.Sources:
        """What /metrics reads from this server: the stores and capabilities,
        and the security counters (quota refusals, failed authentications,
        stored bytes per tenant while a stored-bytes quota is set)."""
        sources = telemetry.sources_of(self.storage, self.capabilities)
        sources.quota_refusals = lambda: dict(self.quotas.refusals)
        sources.auth_failures = lambda: self.failed_authentications.total
        if self.usage is not None:
            sources.stored_bytes = self.quotas.stored_by_tenant
        return sources

    async def start(self) -> int:
        """Opens storage and starts serving; returns the bound port."""
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.storage.start()
        for capability in self.capabilities:
            await capability.start()
        server = grpc.aio.server(
            # Telemetry first: it sees each call as the client does, refusals
            # of the domain interceptor included.
            interceptors=[
                *self.telemetry.interceptors,
                *([self.tracing.interceptor] if self.tracing is not None else []),
                DomainInterceptor(
                    self.authenticator,
                    self.settings.limits,
                    self.quotas,
                    self.failed_authentications,
                ),
            ],
            options=[
                *grpc_options(self.settings.limits),
                ("grpc.so_reuseport", 1 if self.reuse_port else 0),
            ],
        )
        session_servicer.register(server, self.sessions)
        # The archive's participant runs before the sessions (a read that
        # starts later finds nothing archived of the user to restore, and one
        # that read a chunk already inserts nothing: the participant marks
        # the chunks used up first) and again after them (a session the
        # archiver moved out meanwhile); it is idempotent, the second run
        # counts only what the first missed.
        archive_hook = [] if self.archive is None else [ArchiveHook("archive", self.archive)]
        eraser = user_eraser(
            self.storage,
            self.capabilities,
            self.storage.audit,
            self.settings.limits,
            first=archive_hook,
        )
        if self.archive is not None:
            eraser.add(ArchiveHook("archive", ArchiveErasureAgain(self.archive)))
        admin_pb2_grpc.add_AdminServiceServicer_to_server(
            AdminServicer(self.audit, eraser, self.archive), server
        )
        for capability in self.capabilities:
            capability.register(server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable([*STATEKEEPER_SERVICES, health.SERVICE_NAME], server)
        credentials = tls.server_credentials(self.settings)
        try:
            if credentials is None:
                self.port = server.add_insecure_port(self.settings.listen)
            else:
                self.port = server.add_secure_port(self.settings.listen, credentials)
        except RuntimeError:  # grpcio raises on a failed bind (older versions return 0)
            self.port = 0
        if self.port == 0:
            raise OSError(
                f"cannot listen on {self.settings.listen}: address already in use or not available"
            )
        self.telemetry.start()
        await server.start()
        self._server = server
        await self._set_serving(True)
        self._tasks = [
            asyncio.create_task(self._sweep_forever(), name="sweeper"),
            asyncio.create_task(self._monitor_forever(), name="health-monitor"),
        ]
        if self.archive is not None:
            self._tasks.append(asyncio.create_task(self.archive.run_forever(), name="archiver"))
        if self.keys_file is not None:
            self.keys_file.start()
        if self.usage is not None:
            self.usage.start()
        self._announce()
        return self.port

    def _announce(self) -> None:
        settings = self.settings
        transport = (
            "mTLS" if settings.tls_client_ca else "TLS" if settings.tls_cert else "plaintext"
        )
        log.info(
            "statekeeper %s serving on %s (port %d, %s) with %s",
            __version__,
            settings.listen,
            self.port,
            transport,
            self.storage.description,
        )
        if self.authenticator.single_tenant:
            log.warning(
                "NO API KEYS CONFIGURED: running SINGLE-TENANT and UNAUTHENTICATED; every caller"
                " is tenant 'default'. Configure keys (--api-key KEY=TENANT) or client certificate"
                " tenants (--tls-client-tenant NAME=TENANT) before exposing"
                " this server."
            )

    def reload_keys(self) -> None:
        """SIGHUP: re-read the API keys file (open calls are not touched)."""
        if self.keys_file is None:
            log.info("SIGHUP: no API keys file configured (api_keys_file); nothing to reload")
            return
        self.keys_file.reload("SIGHUP")

    async def _set_health(self, status: Any) -> None:
        await self.health.set("", status)
        for name in STATEKEEPER_SERVICES:
            await self.health.set(name, status)

    async def _set_serving(self, serving: bool) -> None:
        self._serving = serving
        status = health_pb2.HealthCheckResponse
        await self._set_health(status.SERVING if serving else status.NOT_SERVING)

    async def _monitor_forever(self) -> None:
        """Health follows the durable tier: NOT_SERVING while it is down."""
        while True:
            await asyncio.sleep(self.settings.health_interval_seconds)
            try:
                healthy = await self.storage.healthy()
            except Exception:
                log.exception("health probe failed")
                healthy = False
            if healthy != self._serving:
                if healthy:
                    log.warning("storage reachable again: health SERVING")
                else:
                    log.error("storage unreachable: health NOT_SERVING until it answers again")
                await self._set_serving(healthy)

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sweep_interval_seconds)
            try:
                swept = await self.sessions.sweep_expired(self.settings.expired_retention_seconds)
                observations.swept("sessions")
                if swept:
                    log.info("swept expired sessions", extra={"swept": swept})
            except StorageUnavailableError as exc:
                log.warning("sweep of expired sessions skipped: %s", exc.message)
            except Exception:
                log.exception("sweep of expired sessions failed; will retry")

    async def wait(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    async def stop(self) -> None:
        """Drains: NOT_SERVING first, then finish in-flight calls, then close."""
        log.info("draining: health NOT_SERVING, finishing in-flight calls")
        await self.health.enter_graceful_shutdown()
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.keys_file is not None:
            await self.keys_file.stop()
        if self.usage is not None:
            await self.usage.stop()
        # Open streams (watches, inboxes) would otherwise hold the grace period.
        for capability in self.capabilities:
            await capability.drain()
        if self._server is not None:
            await self._server.stop(self.settings.shutdown_grace_seconds)
        for capability in self.capabilities:
            await capability.close()
        await self.storage.close()
        self.telemetry.stop()
        if self.tracing is not None:
            self.tracing.shutdown()
        log.info("stopped")
