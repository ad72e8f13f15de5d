"""TLS options of the clients: the CA that signed the server's certificate,
a client certificate and key for servers that require one (mTLS), and a
server name override."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

#: A PEM file's path, or its PEM bytes.
Pem = str | os.PathLike[str] | bytes


@dataclass(frozen=True)
class TlsOptions:
    """How to reach a server that serves TLS.

    `root_ca`: the CA certificate(s) to verify the server with (unset: the
    system's roots); `client_cert` and `client_key`: this client's
    certificate and key, sent when the server requires one (both or
    neither); `server_name`: the name to verify the server's certificate
    against instead of the host of the target (e.g. when dialling an IP).
    Each PEM is a file path or the PEM bytes themselves.
    """

    root_ca: Pem | None = None
    client_cert: Pem | None = None
    client_key: Pem | None = None
    server_name: str | None = None

    def __post_init__(self) -> None:
        if (self.client_cert is None) != (self.client_key is None):
            raise ValueError("TlsOptions: pass client_cert and client_key together")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> TlsOptions | None:
        """From STATEKEEPER_TLS_ROOT_CA, STATEKEEPER_TLS_CLIENT_CERT, STATEKEEPER_TLS_CLIENT_KEY
        and STATEKEEPER_TLS_SERVER_NAME (all paths but the last); None when
        none is set (plaintext)."""
        names = ("ROOT_CA", "CLIENT_CERT", "CLIENT_KEY", "SERVER_NAME")
        values = {name: environ.get(f"STATEKEEPER_TLS_{name}") or None for name in names}
        if not any(values.values()):
            return None
        return cls(
            values["ROOT_CA"], values["CLIENT_CERT"], values["CLIENT_KEY"], values["SERVER_NAME"]
        )

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            _pem(self.root_ca), _pem(self.client_key), _pem(self.client_cert)
        )

    def channel_options(self) -> list[tuple[str, Any]]:
        if not self.server_name:
            return []
        return [("grpc.ssl_target_name_override", self.server_name)]


def _pem(value: Pem | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    return Path(value).read_bytes()


def channel_settings(
    tls: TlsOptions | None,
    credentials: grpc.ChannelCredentials | None,
    options: Any,
) -> tuple[grpc.ChannelCredentials | None, list[tuple[str, Any]]]:
    """The credentials and channel options a client opens its channel with."""
    merged = list(options or ())
    if tls is None:
        return credentials, merged
    if credentials is not None:
        raise ValueError("pass tls or credentials, not both")
    return tls.credentials(), [*merged, *tls.channel_options()]
