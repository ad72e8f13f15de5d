"""Who is calling: API keys and client certificates map to tenants.

The transport extracts the presented key from call metadata and, under
mTLS, the names of the client certificate gRPC verified (its subject CN
and subject alternative names); this module decides which tenant they
belong to. A presented key decides alone (a wrong key is refused even with
a good certificate); without one, a certificate name mapped to a tenant
authenticates. With neither keys nor certificate mappings configured (and
no keys file) the server is single-tenant and every caller is the default
tenant.

Keys are held by their SHA-256 digest only, whether they were configured in
plain (`--api-key KEY=TENANT`) or by hash (a keys file of `sha256:<hex>
TENANT` lines, see statekeeper/keys.py). A presented key is hashed and
looked up in a dict: the lookup compares digests, never the key, so its
timing says nothing usable about any key (finding a key from its digest
is a preimage attack on SHA-256). A fast hash is enough because the keys
`statekeeper keys create` makes are 32 random bytes: nobody can guess one
from its digest, however many digests a second an attacker computes; a
slow hash (scrypt, argon2) only protects low-entropy secrets such as
passwords, and would cost every call its time.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from statekeeper.core.errors import UnauthenticatedError

DEFAULT_TENANT = "default"
HASH_SCHEME = "sha256:"
_HASH_PATTERN = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: its tenant and a non-secret key id for logs."""

    tenant: str
    key_id: str


def hash_key(key: str) -> str:
    """The form a keys file holds: `sha256:` and the hex digest of the key."""
    return HASH_SCHEME + hashlib.sha256(key.encode()).hexdigest()


def is_key_hash(text: str) -> bool:
    return _HASH_PATTERN.fullmatch(text) is not None


def key_id(key: str) -> str:
    """A short, non-reversible id of a key, safe to log: the first 12 hex
    digits of its SHA-256 (so a key keeps its id, in the audit trail too,
    when it moves from --api-key to a keys file)."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


class Authenticator:
    """Maps presented API keys (by their digest) and verified client
    certificate names to principals.

    `hashed_keys` maps `sha256:<hex>` digests to tenants (a keys file);
    `replace_hashed_keys` swaps them for a new set at once (a reload), which
    affects the calls authenticated from then on: open streams keep the
    principal they were admitted with. `keys_file` says a keys file is
    configured, so the server authenticates even while that file holds no
    key (never single-tenant by an empty file).
    """

    def __init__(
        self,
        api_keys: Mapping[str, str],
        certificate_tenants: Mapping[str, str] | None = None,
        hashed_keys: Mapping[str, str] | None = None,
        keys_file: bool = False,
    ) -> None:
        self._plain = {hash_key(key): tenant for key, tenant in api_keys.items()}
        self._certificate_tenants = dict(certificate_tenants or {})
        self._keys_file = keys_file
        self._keys: dict[bytes, str] = {}
        self.replace_hashed_keys(hashed_keys or {})

    def replace_hashed_keys(self, hashed_keys: Mapping[str, str]) -> None:
        """Takes a new set of hashed keys (plain keys from the settings stay).
        A plain key configured again by hash keeps the tenant of its plain form."""
        for digest in hashed_keys:
            if not is_key_hash(digest):
                raise ValueError("a hashed key must be sha256: and 64 lowercase hex digits")
        merged = {**hashed_keys, **self._plain}
        # One assignment: a call sees the old set or the new one, never a mix.
        self._keys = {bytes.fromhex(d[len(HASH_SCHEME) :]): t for d, t in merged.items()}

    @property
    def key_count(self) -> int:
        return len(self._keys)

    @property
    def single_tenant(self) -> bool:
        return not self._keys and not self._certificate_tenants and not self._keys_file

    def authenticate(
        self, presented: str | None, certificate_names: Sequence[str] = ()
    ) -> Principal:
        """`certificate_names`: the CN and subject alternative names of a
        client certificate the TLS layer verified (empty without one)."""
        if self.single_tenant:
            return Principal(DEFAULT_TENANT, "anonymous")
        if presented:
            digest = hashlib.sha256(presented.encode()).digest()
            tenant = self._keys.get(digest)
            if tenant is not None:
                return Principal(tenant, digest.hex()[:12])
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
