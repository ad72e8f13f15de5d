"""Who is calling: API keys map to tenants.

The transport extracts the presented key from call metadata; this module
decides which tenant it belongs to. With no keys configured the server is
single-tenant and every caller is the default tenant.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from statekeeper.core.errors import UnauthenticatedError

DEFAULT_TENANT = "default"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: its tenant and a non-secret key id for logs."""

    tenant: str
    key_id: str


class Authenticator:
    """Maps presented API keys to principals in constant time per key."""

    def __init__(self, api_keys: dict[str, str]) -> None:
        self._keys = [(key.encode(), tenant) for key, tenant in api_keys.items()]

    @property
    def single_tenant(self) -> bool:
        return not self._keys

    def authenticate(self, presented: str | None) -> Principal:
        if self.single_tenant:
            return Principal(DEFAULT_TENANT, "anonymous")
        if not presented:
            raise UnauthenticatedError(
                "missing credentials: send an API key in `x-api-key` or `authorization: Bearer`"
            )
        candidate = presented.encode()
        for key, tenant in self._keys:
            if hmac.compare_digest(key, candidate):
                return Principal(tenant, key_id(presented))
        raise UnauthenticatedError("unknown API key")


def key_id(key: str) -> str:
    """A short, non-reversible id of a key, safe to log."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]
