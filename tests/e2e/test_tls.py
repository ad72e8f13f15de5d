"""TLS and mTLS (issue 14): a real `statekeeper serve` with certificates this
test issues (tests.harness.certs). Over TLS calls, health and reflection work
and plaintext does not; under mTLS a client without a certificate (or with
one from another CA) cannot connect, and a certificate mapped with
--tls-client-tenant is its tenant's credential, isolated from the other
tenants; replaced certificate files serve new connections without a restart;
bad files stop `serve` with one line naming the path."""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from statekeeper_client import NO_RETRY, AsyncClient, Client, TlsOptions
from statekeeper_client.v1 import session_pb2, session_pb2_grpc

# The worker helpers read /proc to tell which worker holds a connection.
from tests.e2e.test_workers import TCP_LISTEN, _holder, _inodes_of, _sockets, _workers_of
from tests.harness import processes
from tests.harness.certs import Issued, issue, make_ca
from tests.harness.deadlines import scaled, wait_until
from tests.harness.servers import ServerProcess
from tests.services import configured, create_database, drop_database, reachable

API_KEY = "tls-key-alpha"
ALPHA, BETA = "tenant-alpha", "tenant-beta"


@dataclass
class Pki:
    """The files of one test: a CA, the server's certificate and clients'."""

    directory: Path
    ca: Issued = field(default_factory=make_ca)

    def __post_init__(self) -> None:
        self.ca_path.write_bytes(self.ca.cert_pem)
        issue(self.ca, "statekeeper-server", server=True).write(self.cert_path, self.key_path)

    @property
    def ca_path(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def cert_path(self) -> Path:
        return self.directory / "server.pem"

    @property
    def key_path(self) -> Path:
        return self.directory / "server.key"

    def client(self, common_name: str, ca: Issued | None = None) -> Issued:
        return issue(ca or self.ca, common_name, server=False)

    def credentials(self, client: Issued | None = None) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            self.ca.cert_pem,
            client.key_pem if client else None,
            client.cert_pem if client else None,
        )


@dataclass
class TlsServer(ServerProcess):
    """A ServerProcess that is ready when health answers over TLS (with
    `ready_client`'s certificate under mTLS)."""

    pki: Pki | None = None
    ready_client: Issued | None = None

    def is_ready(self) -> bool:
        assert self.pki is not None
        credentials = self.pki.credentials(self.ready_client)
        with grpc.secure_channel(self.address, credentials) as channel:
            try:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=2
                )
            except grpc.RpcError:
                return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    directory = tmp_path / "pki"
    directory.mkdir()
    return Pki(directory)


def tls_args(pki: Pki) -> list[str]:
    return ["--tls-cert", str(pki.cert_path), "--tls-key", str(pki.key_path)]


@pytest.fixture
def tls_server(tmp_path: Path, pki: Pki) -> Iterator[TlsServer]:
    server = TlsServer(
        tmp_path / "data", extra_args=[*tls_args(pki), "--api-key", f"{API_KEY}={ALPHA}"], pki=pki
    )
    server.start()
    try:
        yield server
    finally:
        server.kill()


def create_session(channel: grpc.Channel, user: str, key: str | None = None) -> str:
    metadata = [("x-api-key", key)] if key else None
    reply = session_pb2_grpc.SessionServiceStub(channel).CreateSession(
        session_pb2.CreateSessionRequest(session=session_pb2.Session(user_id=user)),
        metadata=metadata,
        timeout=10,
    )
    return str(reply.session.session_id)


def listed(channel: grpc.Channel, key: str | None = None) -> set[str]:
    metadata = [("x-api-key", key)] if key else None
    reply = session_pb2_grpc.SessionServiceStub(channel).ListSessions(
        session_pb2.ListSessionsRequest(), metadata=metadata, timeout=10
    )
    return {session.session_id for session in reply.sessions}


def code_of(call: Callable[[], object]) -> grpc.StatusCode:
    """The status code `call` fails with (the test fails if it succeeds)."""
    with pytest.raises(grpc.RpcError) as raised:
        call()
    return raised.value.code()


def test_calls_health_and_reflection_work_over_tls_and_plaintext_does_not(
    tls_server: TlsServer, pki: Pki
) -> None:
    with grpc.secure_channel(tls_server.address, pki.credentials()) as channel:
        session_id = create_session(channel, "u1", API_KEY)
        assert session_id in listed(channel, API_KEY)
        # An API key is still required over TLS without client certificates.
        assert code_of(lambda: listed(channel)) == grpc.StatusCode.UNAUTHENTICATED
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        replies = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
        )
        services = {s.name for reply in replies for s in reply.list_services_response.service}
        assert "statekeeper.v1.SessionService" in services
    with grpc.insecure_channel(tls_server.address) as plaintext:
        assert code_of(lambda: listed(plaintext, API_KEY)) == grpc.StatusCode.UNAVAILABLE


def test_mtls_requires_a_client_certificate_and_maps_it_to_its_tenant(
    tmp_path: Path, pki: Pki
) -> None:
    alpha, beta = pki.client("agent-alpha"), pki.client("agent-beta")
    server = TlsServer(
        tmp_path / "data",
        extra_args=[
            *tls_args(pki),
            "--tls-client-ca",
            str(pki.ca_path),
            "--tls-client-tenant",
            f"agent-alpha={ALPHA}",
            "--tls-client-tenant",
            f"agent-beta={BETA}",
            "--api-key",
            f"{API_KEY}={ALPHA}",
        ],
        pki=pki,
        ready_client=alpha,
    )
    server.start()
    try:
        # No certificate, or one another CA signed: the handshake fails.
        with grpc.secure_channel(server.address, pki.credentials()) as anonymous:
            assert code_of(lambda: listed(anonymous, API_KEY)) == grpc.StatusCode.UNAVAILABLE
        foreign = pki.client("agent-alpha", ca=make_ca("another CA"))
        with grpc.secure_channel(server.address, pki.credentials(foreign)) as forged:
            assert code_of(lambda: listed(forged)) == grpc.StatusCode.UNAVAILABLE

        with (
            grpc.secure_channel(server.address, pki.credentials(alpha)) as as_alpha,
            grpc.secure_channel(server.address, pki.credentials(beta)) as as_beta,
        ):
            alpha_session = create_session(as_alpha, "u-alpha")
            beta_session = create_session(as_beta, "u-beta")
            assert listed(as_alpha) == {alpha_session}
            assert listed(as_beta) == {beta_session}
            get = session_pb2_grpc.SessionServiceStub(as_beta).GetSession
            request = session_pb2.GetSessionRequest(session_id=alpha_session)
            assert code_of(lambda: get(request, timeout=10)) == grpc.StatusCode.NOT_FOUND
            # The API key decides when one is sent: beta's certificate with
            # alpha's key is alpha.
            assert listed(as_beta, API_KEY) == {alpha_session}
            assert code_of(lambda: listed(as_beta, "wrong")) == grpc.StatusCode.UNAUTHENTICATED

        # A certificate the CA signed but no mapping names needs an API key.
        stranger = pki.client("stranger")
        with grpc.secure_channel(server.address, pki.credentials(stranger)) as as_stranger:
            assert code_of(lambda: listed(as_stranger)) == grpc.StatusCode.UNAUTHENTICATED
            assert listed(as_stranger, API_KEY) == {alpha_session}
    finally:
        server.kill()


def replace_files(pki: Pki, new: Issued) -> None:
    """Writes `new` over the server's files as a deploy tool would: key and
    certificate each renamed into place (the fetcher may see the new key with
    the old certificate for a moment and must keep serving the old pair)."""
    for path, data in ((pki.key_path, new.key_pem), (pki.cert_path, new.cert_pem)):
        staged = path.with_name(path.name + ".new")
        staged.write_bytes(data)
        staged.replace(path)


def served_certificate(address: str, ca: Path) -> x509.Certificate:
    """The certificate the server presents on a new TLS connection."""
    host, _, port = address.rpartition(":")
    context = ssl.create_default_context(cafile=str(ca))
    context.set_alpn_protocols(["h2"])
    with (
        socket.create_connection((host, int(port)), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as wrapped,
    ):
        der = wrapped.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


def test_replaced_certificate_files_serve_new_connections_without_a_restart(
    tls_server: TlsServer, pki: Pki
) -> None:
    before = served_certificate(tls_server.address, pki.ca_path)
    assert before.serial_number == pki_serial(pki)
    with grpc.secure_channel(tls_server.address, pki.credentials()) as kept:
        create_session(kept, "before", API_KEY)
        rotated = issue(
            pki.ca, "statekeeper-server-rotated", server=True, dns_names=("rotated.test",)
        )
        replace_files(pki, rotated)

        def rotated_served() -> bool:
            served = served_certificate(tls_server.address, pki.ca_path)
            return served.serial_number == rotated.certificate.serial_number

        wait_until(rotated_served, 10.0, "the rotated certificate served", tls_server.log_tail)
        served = served_certificate(tls_server.address, pki.ca_path)
        common_name = served.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value
        assert common_name == "statekeeper-server-rotated"
        # The connection opened before the rotation still works, and so do new ones.
        create_session(kept, "after", API_KEY)
        with grpc.secure_channel(tls_server.address, pki.credentials()) as fresh:
            assert len(listed(fresh, API_KEY)) == 2
    assert tls_server.alive()


def pki_serial(pki: Pki) -> int:
    return x509.load_pem_x509_certificate(pki.cert_path.read_bytes()).serial_number


def serve_error(tmp_path: Path, *args: str) -> str:
    """`serve ARGS` must exit 2 at once with one line on stderr; returns it."""
    command = processes.python_module(
        "statekeeper", "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path), *args
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_bad_tls_files_stop_serve_with_one_line_naming_the_path(tmp_path: Path, pki: Pki) -> None:
    missing = tmp_path / "absent.pem"
    line = serve_error(tmp_path, "--tls-cert", str(missing), "--tls-key", str(pki.key_path))
    assert str(missing) in line and "tls_cert" in line
    other = issue(pki.ca, "other", server=True)
    other_key = tmp_path / "other.key"
    other_key.write_bytes(other.key_pem)
    line = serve_error(tmp_path, "--tls-cert", str(pki.cert_path), "--tls-key", str(other_key))
    assert str(other_key) in line and "does not match" in line
    line = serve_error(tmp_path, *tls_args(pki), "--tls-client-ca", str(missing))
    assert str(missing) in line and "tls_client_ca" in line
    line = serve_error(tmp_path, "--tls-cert", str(pki.cert_path))
    assert "tls_key" in line
    line = serve_error(tmp_path, *tls_args(pki), "--tls-client-tenant", "agent=acme")
    assert "tls_client_ca" in line


def test_a_rotation_that_does_not_load_keeps_the_old_certificate(
    tls_server: TlsServer, pki: Pki
) -> None:
    before = served_certificate(tls_server.address, pki.ca_path)
    pki.key_path.write_bytes(issue(pki.ca, "mismatched", server=True).key_pem)
    time.sleep(0.1)
    assert served_certificate(tls_server.address, pki.ca_path) == before
    wait_until(
        lambda: "cannot be used yet" in tls_server.log(), 10.0, "a warning", tls_server.log_tail
    )
    assert tls_server.log().count("cannot be used yet") == 1  # not once per handshake
    with grpc.secure_channel(tls_server.address, pki.credentials()) as channel:
        create_session(channel, "still", API_KEY)


def test_the_python_clients_take_tls_options(tmp_path: Path, pki: Pki) -> None:
    """Client and AsyncClient over mTLS with a mapped certificate (files or
    PEM bytes), and the server name override verified: a name the
    certificate does not carry fails the handshake."""
    alpha = pki.client("agent-alpha")
    alpha.write(tmp_path / "alpha.pem", tmp_path / "alpha.key")
    server = TlsServer(
        tmp_path / "data",
        extra_args=[
            *tls_args(pki),
            "--tls-client-ca",
            str(pki.ca_path),
            "--tls-client-tenant",
            f"agent-alpha={ALPHA}",
        ],
        pki=pki,
        ready_client=alpha,
    )
    server.start()
    try:
        from_files = TlsOptions(pki.ca_path, tmp_path / "alpha.pem", tmp_path / "alpha.key")
        with Client(server.address, tls=from_files, timeout=10) as client:
            created = client.sessions.CreateSession(
                session_pb2.CreateSessionRequest(session=session_pb2.Session(user_id="u"))
            ).session.session_id
        named = TlsOptions(pki.ca.cert_pem, alpha.cert_pem, alpha.key_pem, "localhost")

        async def listed_async() -> set[str]:
            async with AsyncClient(server.address, tls=named, timeout=10) as client:
                reply = await client.sessions.ListSessions(session_pb2.ListSessionsRequest())
                return {session.session_id for session in reply.sessions}

        assert asyncio.run(listed_async()) == {created}
        wrong_name = TlsOptions(pki.ca_path, alpha.cert_pem, alpha.key_pem, "wrong.test")
        with Client(server.address, tls=wrong_name, timeout=3, retry=NO_RETRY) as client:
            request = session_pb2.ListSessionsRequest()
            assert code_of(lambda: client.sessions.ListSessions(request)) == (
                grpc.StatusCode.UNAVAILABLE
            )
    finally:
        server.kill()


@pytest.fixture
def database() -> Iterator[str]:
    """A fresh PostgreSQL database (skipped without the services)."""
    services = configured()
    asyncio.run(reachable(services))
    dsn = asyncio.run(create_database(services))
    try:
        yield dsn
    finally:
        asyncio.run(drop_database(services, dsn))


def test_every_worker_serves_mtls_and_picks_up_a_rotation(
    tmp_path: Path, pki: Pki, database: str
) -> None:
    """`--workers 2`: each worker builds its credentials from the same files,
    so both answer over mTLS with the certificate mapped to its tenant, and
    a rotation reaches the connections each of them accepts."""
    alpha = pki.client("agent-alpha")
    services = configured()
    server = TlsServer(
        tmp_path / "workers",
        extra_args=[
            *tls_args(pki),
            "--tls-client-ca",
            str(pki.ca_path),
            "--tls-client-tenant",
            f"agent-alpha={ALPHA}",
            "--workers",
            "2",
            "--postgres-dsn",
            database,
            "--redis-url",
            services.redis_url,
            "--redis-key-prefix",
            f"tls-{tmp_path.name}",
            "--migrate-on-start",
        ],
        pki=pki,
        ready_client=alpha,
    )
    server.start()
    try:
        assert server.process is not None
        parent = server.process.pid

        def both_listening() -> list[int] | None:
            workers = _workers_of(parent)
            listening = _sockets(server.port, TCP_LISTEN)
            ready = [pid for pid in workers if _inodes_of(pid) & listening]
            return workers if len(workers) == 2 and len(ready) == 2 else None

        workers = wait_until(both_listening, 60, "both workers listening", server.log_tail)
        rotated = issue(pki.ca, "statekeeper-server-rotated", server=True)
        replace_files(pki, rotated)

        def serial_per_worker() -> dict[int, int]:
            """The serial each worker presents, from new connections until
            both were seen (connections land on a worker by hash)."""
            seen: dict[int, int] = {}
            for _ in range(60):
                before = {pid: _inodes_of(pid) for pid in workers}
                host, _, port = server.address.rpartition(":")
                context = ssl.create_default_context(cafile=str(pki.ca_path))
                context.load_cert_chain(pki.directory / "alpha.pem", pki.directory / "alpha.key")
                context.set_alpn_protocols(["h2"])
                with (
                    socket.create_connection((host, int(port)), timeout=5) as raw,
                    context.wrap_socket(raw, server_hostname="localhost") as wrapped,
                ):
                    der = wrapped.getpeercert(binary_form=True)
                    holder = _holder(workers, server.port, before)
                assert der is not None
                if holder is not None:
                    seen[holder] = x509.load_der_x509_certificate(der).serial_number
                if len(seen) == len(workers):
                    return seen
            pytest.fail("60 connections all landed on the same worker")

        alpha.write(pki.directory / "alpha.pem", pki.directory / "alpha.key")
        wanted = rotated.certificate.serial_number
        wait_until(
            lambda: set(serial_per_worker().values()) == {wanted},
            30,
            "both workers serving the rotated certificate",
            server.log_tail,
        )
        with grpc.secure_channel(server.address, pki.credentials(alpha)) as channel:
            created = create_session(channel, "u-workers")
            assert created in listed(channel)
    finally:
        server.kill()
