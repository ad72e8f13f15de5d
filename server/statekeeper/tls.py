"""Server TLS and mTLS, with certificates reloaded from disk.

`--tls-cert`/`--tls-key` make the server speak TLS; `--tls-client-ca` also
requires every client to present a certificate signed by that CA (mTLS).
The credentials are grpc's dynamic ones: gRPC core asks the fetcher for a
configuration before each new handshake, and the fetcher answers with a new
one only when a file's mtime (or size) changed, so rotated files serve new
connections without a restart while open connections keep theirs. A
rotation caught half-written (a key that does not match its certificate
yet) keeps the previous configuration and is retried on the next handshake.

Every worker of `serve --workers N` builds its own credentials from the same
files, so all of them pick up a rotation.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization

from statekeeper.config import ConfigError, Settings

log = logging.getLogger(__name__)

# (mtime_ns, size) of each file: what says a file changed on disk.
_Stamp = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class TlsFiles:
    cert: Path
    key: Path
    client_ca: Path | None

    @property
    def paths(self) -> tuple[Path, ...]:
        return (
            (self.cert, self.key)
            if self.client_ca is None
            else (self.cert, self.key, self.client_ca)
        )


@dataclass(frozen=True)
class Identity:
    """The PEM bytes of one configuration, checked to fit together."""

    cert_chain: bytes
    private_key: bytes
    client_ca: bytes | None


def files(settings: Settings) -> TlsFiles | None:
    """The configured files, or None when the server runs plaintext."""
    if not settings.tls_cert:
        return None
    ca = Path(settings.tls_client_ca) if settings.tls_client_ca else None
    return TlsFiles(Path(settings.tls_cert), Path(settings.tls_key), ca)


def load(tls: TlsFiles) -> Identity:
    """Reads and checks the files; a ConfigError names the path at fault."""
    cert = _read(tls.cert, "tls_cert")
    key = _read(tls.key, "tls_key")
    try:
        certificates = x509.load_pem_x509_certificates(cert)
    except ValueError as exc:
        raise ConfigError(f"tls_cert: {tls.cert} holds no PEM certificate ({exc})") from exc
    try:
        private_key = serialization.load_pem_private_key(key, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        # TypeError: an encrypted key, which the server cannot unlock.
        raise ConfigError(
            f"tls_key: {tls.key} holds no unencrypted PEM private key ({exc})"
        ) from exc
    # The leaf (first) certificate must carry the key's public half, or every
    # handshake would fail after a start that looked fine.
    if _public_der(private_key.public_key()) != _public_der(certificates[0].public_key()):
        raise ConfigError(f"tls_key: {tls.key} does not match the certificate in {tls.cert}")
    ca: bytes | None = None
    if tls.client_ca is not None:
        ca = _read(tls.client_ca, "tls_client_ca")
        try:
            x509.load_pem_x509_certificates(ca)
        except ValueError as exc:
            raise ConfigError(
                f"tls_client_ca: {tls.client_ca} holds no PEM certificate ({exc})"
            ) from exc
    return Identity(cert, key, ca)


def _public_der(key: Any) -> bytes:
    return bytes(
        key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def _read(path: Path, option: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{option}: cannot read {path}: {exc.strerror or exc}") from exc


def _stamp(tls: TlsFiles) -> _Stamp | None:
    try:
        stats = [os.stat(path) for path in tls.paths]
    except OSError:
        return None  # a file being replaced (removed, then renamed in): try later
    return tuple((stat.st_mtime_ns, stat.st_size) for stat in stats)


def _configuration(identity: Identity) -> grpc.ServerCertificateConfiguration:
    return grpc.ssl_server_certificate_configuration(
        [(identity.private_key, identity.cert_chain)], root_certificates=identity.client_ca
    )


class ReloadingCredentials:
    """The dynamic credentials and the fetcher gRPC core calls before each
    handshake (from its own threads, hence the lock)."""

    def __init__(self, tls: TlsFiles) -> None:
        self._tls = tls
        self._lock = threading.Lock()
        self._stamp = _stamp(tls)
        self._failed: _Stamp | None = None
        initial = load(tls)  # a bad file at start is a startup error
        self.credentials = grpc.dynamic_ssl_server_credentials(
            _configuration(initial),
            self._fetch,
            require_client_authentication=tls.client_ca is not None,
        )

    def _fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """None keeps the current configuration (nothing changed, or the
        new files do not load yet)."""
        with self._lock:
            stamp = _stamp(self._tls)
            if stamp is None or stamp == self._stamp:
                return None
            try:
                identity = load(self._tls)
            except Exception as exc:
                # Any error, not only ConfigError: one escaping into gRPC core
                # would fail the handshake instead of keeping the old files.
                # Not recorded as seen: the next handshake tries again, so a
                # rotation that lands in two steps (cert, then key) is taken.
                # Logged once per state of the files, not once per handshake.
                if stamp != self._failed:
                    self._failed = stamp
                    log.warning(
                        "TLS files changed but cannot be used yet; keeping the old ones: %s", exc
                    )
                return None
            self._stamp = stamp
            log.info("TLS files changed: new connections use the new certificate")
            return _configuration(identity)


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """Credentials for the listen port, or None for plaintext."""
    tls = files(settings)
    return None if tls is None else ReloadingCredentials(tls).credentials
