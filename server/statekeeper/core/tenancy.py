"""Who is calling: API keys and client certificates map to tenants.

The transport extracts the presented key from call metadata and, under
mTLS, the names of the client certificate gRPC verified (its subject CN
and subject alternative names); this module decides which tenant they
belong to. A presented key decides alone (a wrong key is refused even with
a good certificate); without one, a certificate name mapped to a tenant
authenticates. With neither keys nor certificate mappings configured the
server is single-tenant and every caller is the default tenant.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from statekeeper.core.errors import UnauthenticatedError

DEFAULT_TENANT = "default"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: its tenant and a non-secret key id for logs."""

    tenant: str
    key_id: str


class Authenticator:
    """Maps presented API keys (in constant time per key) and verified
    client certificate names to principals."""

    def __init__(
        self, api_keys: Mapping[str, str], certificate_tenants: Mapping[str, str] | None = None
    ) -> None:
        self._keys = [(key.encode(), tenant) for key, tenant in api_keys.items()]
        self._certificate_tenants = dict(certificate_tenants or {})

    @property
    def single_tenant(self) -> bool:
        return not self._keys and not self._certificate_tenants

    def authenticate(
        self, presented: str | None, certificate_names: Sequence[str] = ()
    ) -> Principal:
        """`certificate_names`: the CN and subject alternative names of a
        client certificate the TLS layer verified (empty without one)."""
        if self.single_tenant:
            return Principal(DEFAULT_TENANT, "anonymous")
        if presented:
            candidate = presented.encode()
            for key, tenant in self._keys:
                if hmac.compare_digest(key, candidate):
                    return Principal(tenant, key_id(presented))
            raise UnauthenticatedError("unknown API key")
        for name in certificate_names:
            if (mapped := self._certificate_tenants.get(name)) is not None:
                # A certificate name is not secret: the id says which one it was.
                return Principal(mapped, f"x509:{name}")
        if certificate_names:
            raise UnauthenticatedError(
                "the client certificate maps to no tenant: send an API key or use a"
                " certificate named in --tls-client-tenant"
            )
        raise UnauthenticatedError(
            "missing credentials: send an API key in `x-api-key` or `authorization: Bearer`"
        )


def key_id(key: str) -> str:
    """A short, non-reversible id of a key, safe to log."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]
