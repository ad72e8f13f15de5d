"""Encryption at rest of sensitive fields: the key ring and the one sealing
component every store wrapper (storage/sealed.py) uses.

Envelope encryption with a data key per value: every sealed value carries a
fresh random 256-bit data key (DEK), wrapped with AES-256-GCM under the
active key-encryption key (KEK) of the ring, and its ciphertext under that
DEK with AES-256-GCM. Why per value rather than per tenant: no table of
wrapped tenant keys to keep consistent between replicas and backends, no key
cache to invalidate, and rotation needs no knowledge of the row: re-wrapping
the 48-byte DEK under the newest KEK is all it takes (the data ciphertext,
bound to its row, is left as it is). The cost is about 100 bytes per value.

Format (text, so that it fits a TEXT column, a JSON string, a Redis hash
field and a BLOB alike; bytes fields store its ASCII bytes)::

    ~sk1~<key id>~<base64url(wrap nonce 12 | wrapped DEK 48 | nonce 12 | ct+tag)>

`~sk1~` is the magic and format version, the key id says which KEK wrapped
the DEK (so rotation can tell old from new without opening anything). The
DEK is wrapped with associated data `sk1-dek|<key id>`; the value is
encrypted with associated data naming the tenant, the field and the row
(`sk1|tenant|field|ids...`), so a ciphertext copied to another row, field or
tenant fails to open: a `SealedValueError`, never garbage.

Values that do not start with the magic are plaintext written before
encryption was enabled and read as they are. A value written by a caller that
itself starts with the magic is always sealed, so a stored value that starts
with it is never taken for plaintext.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import stat
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from statekeeper.core.errors import FailedPreconditionError, InvalidArgumentError
from statekeeper.core.memory import lexical

MAGIC = "~sk1~"
MAGIC_BYTES = MAGIC.encode("ascii")
KEY_BYTES = 32
NONCE_BYTES = 12
WRAPPED_DEK_BYTES = KEY_BYTES + 16
HEADER_BYTES = NONCE_BYTES + WRAPPED_DEK_BYTES + NONCE_BYTES
KEY_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# A sealed value anywhere inside a larger text (a JSON document, a cached
# record): what rotation re-wraps.
TOKEN = re.compile(r"~sk1~([A-Za-z0-9_.-]{1,64})~([A-Za-z0-9_-]+)")
TOKEN_BYTES = re.compile(rb"~sk1~([A-Za-z0-9_.-]{1,64})~([A-Za-z0-9_-]+)")
# Deterministic sealing (fact objects, which the store compares for equality):
# `~sk1d~<key id>~<base64url(AES-256-SIV ciphertext)>`.
DET_MAGIC = "~sk1d~"
DET_TOKEN = re.compile(r"~sk1d~([A-Za-z0-9_.-]{1,64})~([A-Za-z0-9_-]+)")
# Keyed duplicate keys of sensitive episodes.
HASH_MAGIC = "~skh~"
# Context variables are sealed as one JSON document under this single key.
SEALED_KEY = "~sk1"
ALL = "all"


class KeyRingError(ValueError):
    """The key ring cannot be read or is not usable."""


class SealedValueError(FailedPreconditionError):
    """A stored sealed value cannot be opened: its key is not in the ring,
    or it was moved to another row, field or tenant, or it was altered."""

    def __init__(self, field_name: str, why: str) -> None:
        super().__init__(
            f"sealed {field_name} cannot be opened: {why}",
            condition="SEALED_VALUE_UNREADABLE",
            field_name=field_name,
        )


@dataclass(frozen=True)
class KeyRing:
    """Key ids -> 32-byte KEKs. `active` seals new values; all open."""

    keys: Mapping[str, bytes]
    active: str

    def __post_init__(self) -> None:
        if self.active not in self.keys:
            raise KeyRingError(f"active key {self.active!r} is not in the key ring")


def _decode_key(key_id: str, text: str, where: str) -> bytes:
    if not KEY_ID.match(key_id):
        raise KeyRingError(f"{where}: key id {key_id!r} must be 1-64 of A-Z a-z 0-9 _ . -")
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise KeyRingError(f"{where}: key {key_id!r} is not base64") from exc
    if len(raw) != KEY_BYTES:
        raise KeyRingError(f"{where}: key {key_id!r} must be {KEY_BYTES} bytes, not {len(raw)}")
    return raw


def parse_env_keys(
    text: str, where: str = "STATEKEEPER_ENCRYPTION_KEYS"
) -> list[tuple[str, bytes]]:
    """`id1:b64,id2:b64` in order (the last one is the newest)."""
    keys: list[tuple[str, bytes]] = []
    for position, item in enumerate(text.split(","), start=1):
        if not item.strip():
            continue
        key_id, sep, value = item.strip().partition(":")
        if not sep:
            raise KeyRingError(f"{where}: entry {position} is not ID:BASE64")
        keys.append((key_id.strip(), _decode_key(key_id.strip(), value, where)))
    return keys


def read_keys_file(path: Path) -> tuple[list[tuple[str, bytes]], str]:
    """A keys file: TOML (`active = "id"` and a `[keys]` table of id =
    "base64") or lines `ID BASE64` (`#` comments), in order. Refused when
    group or world can read it. Returns the keys and the active id ("" when
    the file names none)."""
    try:
        mode = path.stat().st_mode
        text = path.read_text()
    except OSError as exc:
        raise KeyRingError(f"cannot read encryption keys file {path}: {exc}") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyRingError(
            f"encryption keys file {path} is readable by group or others"
            f" (mode {stat.S_IMODE(mode):o}): chmod 600 it"
        )
    if "[keys]" in text:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise KeyRingError(f"encryption keys file {path}: {exc}") from exc
        table = data.get("keys", {})
        if not isinstance(table, dict):
            raise KeyRingError(f"encryption keys file {path}: [keys] must map ids to keys")
        keys = [(str(k), _decode_key(str(k), str(v), str(path))) for k, v in table.items()]
        return keys, str(data.get("active", ""))
    keys = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise KeyRingError(f"encryption keys file {path}: line {number} is not `ID BASE64`")
        keys.append((parts[0], _decode_key(parts[0], parts[1], f"{path} line {number}")))
    return keys, ""


def load_key_ring(keys_file: str, env_keys: str, active: str) -> KeyRing | None:
    """The ring from the keys file and/or the `id:b64,...` list (file
    first); None when neither gives a key. The active key is `active`, else
    the file's `active`, else the last key listed."""
    ordered: list[tuple[str, bytes]] = []
    file_active = ""
    if keys_file:
        from_file, file_active = read_keys_file(Path(keys_file))
        ordered.extend(from_file)
    if env_keys:
        ordered.extend(parse_env_keys(env_keys))
    if not ordered:
        if active:
            raise KeyRingError("encryption_active_key is set but no encryption key is configured")
        return None
    keys: dict[str, bytes] = {}
    for key_id, raw in ordered:
        if key_id in keys and keys[key_id] != raw:
            raise KeyRingError(f"encryption key id {key_id!r} is given twice with different keys")
        keys[key_id] = raw
    return KeyRing(keys, active or file_active or ordered[-1][0])


def new_key() -> str:
    """A fresh KEK, base64."""
    return base64.b64encode(os.urandom(KEY_BYTES)).decode("ascii")


def _aad(tenant: str, field_name: str, ids: Sequence[str]) -> bytes:
    return "\x1f".join(("sk1", tenant, field_name, *ids)).encode("utf-8")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Sealer:
    """Seals and opens values for the stores. `tenants` are the sensitive
    tenants (or `all`); `boards` the sensitive (tenant, board) pairs of the
    blackboard on top of those."""

    ring: KeyRing | None
    tenants: frozenset[str] = frozenset()
    boards: frozenset[tuple[str, str]] = frozenset()
    _kek_cache: dict[str, AESGCM] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if (self.tenants or self.boards) and self.ring is None:
            raise KeyRingError(
                "sensitive tenants or boards are configured but no encryption key"
                " (--encryption-keys-file or STATEKEEPER_ENCRYPTION_KEYS)"
            )

    def sensitive(self, tenant: str, board: str | None = None) -> bool:
        if ALL in self.tenants or tenant in self.tenants:
            return True
        return board is not None and (tenant, board) in self.boards

    def _kek(self, key_id: str) -> AESGCM:
        aead = self._kek_cache.get(key_id)
        if aead is None:
            if self.ring is None or key_id not in self.ring.keys:
                raise KeyError(key_id)
            aead = AESGCM(self.ring.keys[key_id])
            self._kek_cache[key_id] = aead
        return aead

    # -- the primitive ---------------------------------------------------

    def seal_raw(self, tenant: str, field_name: str, ids: Sequence[str], data: bytes) -> str:
        if self.ring is None:
            raise InvalidArgumentError(
                field_name, f"starts with the reserved prefix {MAGIC!r} (no encryption key)"
            )
        key_id = self.ring.active
        dek = AESGCM.generate_key(bit_length=256)
        wrap_nonce = os.urandom(NONCE_BYTES)
        wrapped = self._kek(key_id).encrypt(wrap_nonce, dek, f"sk1-dek|{key_id}".encode())
        nonce = os.urandom(NONCE_BYTES)
        ct = AESGCM(dek).encrypt(nonce, data, _aad(tenant, field_name, ids))
        return f"{MAGIC}{key_id}~{_b64(wrap_nonce + wrapped + nonce + ct)}"

    def open_raw(self, tenant: str, field_name: str, ids: Sequence[str], token: str) -> bytes:
        match = TOKEN.fullmatch(token)
        if match is None:
            raise SealedValueError(field_name, "malformed sealed value")
        key_id, body = match.group(1), match.group(2)
        try:
            raw = _unb64(body)
        except (binascii.Error, ValueError) as exc:
            raise SealedValueError(field_name, "malformed sealed value") from exc
        if len(raw) < HEADER_BYTES + 16:
            raise SealedValueError(field_name, "malformed sealed value")
        try:
            kek = self._kek(key_id)
        except KeyError:
            raise SealedValueError(field_name, f"key {key_id!r} is not in the key ring") from None
        wrap_nonce = raw[:NONCE_BYTES]
        wrapped = raw[NONCE_BYTES : NONCE_BYTES + WRAPPED_DEK_BYTES]
        nonce = raw[NONCE_BYTES + WRAPPED_DEK_BYTES : HEADER_BYTES]
        try:
            dek = kek.decrypt(wrap_nonce, wrapped, f"sk1-dek|{key_id}".encode())
            return AESGCM(dek).decrypt(nonce, raw[HEADER_BYTES:], _aad(tenant, field_name, ids))
        except InvalidTag:
            raise SealedValueError(
                field_name, "it does not belong to this row and tenant, or was altered"
            ) from None

    def _siv(self, key_id: str, tenant: str) -> AESSIV:
        if self.ring is None or key_id not in self.ring.keys:
            raise KeyError(key_id)
        derived = self._tenant_key("sk1d", key_id, tenant, 64)
        return AESSIV(derived)

    def _tenant_key(self, purpose: str, key_id: str, tenant: str, length: int) -> bytes:
        """A `length`-byte key of one tenant for one purpose ("sk1d": the
        deterministic-sealing SIV key, "sk1i": the blind index, "sk1h": the
        blind duplicate hash), derived from the KEK `key_id` by HKDF-SHA256;
        the purpose names both salt and info, so keys of different purposes
        or tenants never coincide."""
        assert self.ring is not None
        return HKDF(
            algorithm=hashes.SHA256(),
            length=length,
            salt=f"statekeeper-{purpose}".encode(),
            info=f"{purpose}|{key_id}|{tenant}".encode(),
        ).derive(self.ring.keys[key_id])

    def seal_det(self, tenant: str, field_name: str, value: str, key_id: str = "") -> str:
        """Deterministic sealing (AES-256-SIV under a key derived from the
        KEK and the tenant): equal values of a tenant and field seal equal,
        so a store can still compare them; nothing else is revealed."""
        if self.ring is None:
            raise InvalidArgumentError(
                field_name, f"starts with a reserved prefix {DET_MAGIC!r} (no encryption key)"
            )
        key_id = key_id or self.ring.active
        ct = self._siv(key_id, tenant).encrypt(
            value.encode("utf-8"), [_aad(tenant, field_name, ())]
        )
        return f"{DET_MAGIC}{key_id}~{_b64(ct)}"

    def open_det(self, tenant: str, field_name: str, value: str) -> str:
        if not value.startswith(DET_MAGIC):
            return value
        match = DET_TOKEN.fullmatch(value)
        if match is None:
            raise SealedValueError(field_name, "malformed sealed value")
        try:
            siv = self._siv(match.group(1), tenant)
        except KeyError:
            raise SealedValueError(
                field_name, f"key {match.group(1)!r} is not in the key ring"
            ) from None
        try:
            raw = siv.decrypt(_unb64(match.group(2)), [_aad(tenant, field_name, ())])
            return raw.decode("utf-8")
        except (InvalidTag, binascii.Error, ValueError, UnicodeDecodeError):
            raise SealedValueError(
                field_name, "it does not belong to this tenant, or was altered"
            ) from None

    def seal_det_if(self, tenant: str, field_name: str, value: str) -> str:
        if value and (
            self.sensitive(tenant) or value.startswith(DET_MAGIC) or value.startswith(MAGIC)
        ):
            return self.seal_det(tenant, field_name, value)
        return value

    def redet(self, tenant: str, field_name: str, value: str) -> str | None:
        """A deterministic value sealed again under the active key, or None
        when it already is or cannot be opened."""
        match = DET_TOKEN.fullmatch(value)
        if self.ring is None or match is None or match.group(1) == self.ring.active:
            return None
        try:
            plain = self.open_det(tenant, field_name, value)
        except SealedValueError:
            return None
        return self.seal_det(tenant, field_name, plain)

    def rewrap(self, token: str) -> str | None:
        """The same value with its data key wrapped under the active key, or
        None when it already is (or cannot be re-wrapped: unknown key id,
        damaged; left as it is, and `open` reports it)."""
        if self.ring is None:
            return None
        match = TOKEN.fullmatch(token)
        if match is None or match.group(1) == self.ring.active:
            return None
        key_id = match.group(1)
        try:
            raw = _unb64(match.group(2))
            kek = self._kek(key_id)
            dek = kek.decrypt(
                raw[:NONCE_BYTES],
                raw[NONCE_BYTES : NONCE_BYTES + WRAPPED_DEK_BYTES],
                f"sk1-dek|{key_id}".encode(),
            )
        except (KeyError, InvalidTag, binascii.Error, ValueError):
            return None
        active = self.ring.active
        wrap_nonce = os.urandom(NONCE_BYTES)
        wrapped = self._kek(active).encrypt(wrap_nonce, dek, f"sk1-dek|{active}".encode())
        rest = raw[NONCE_BYTES + WRAPPED_DEK_BYTES :]
        return f"{MAGIC}{active}~{_b64(wrap_nonce + wrapped + rest)}"

    def rewrap_text(self, text: str) -> str:
        """Every sealed value inside `text` re-wrapped under the active key."""
        return TOKEN.sub(lambda m: self.rewrap(m.group(0)) or m.group(0), text)

    def rewrap_bytes(self, data: bytes) -> bytes:
        def one(m: re.Match[bytes]) -> bytes:
            new = self.rewrap(m.group(0).decode("ascii"))
            return new.encode("ascii") if new is not None else m.group(0)

        return TOKEN_BYTES.sub(one, data)

    def stale(self, text: str) -> bool:
        """Whether `text` holds a sealed value under a key other than the active one."""
        active = self.ring.active if self.ring else ""
        return any(m.group(1) != active for m in TOKEN.finditer(text))

    # -- typed helpers the store wrappers use ----------------------------

    def seal_text(
        self, tenant: str, field_name: str, ids: Sequence[str], value: str, board: str | None = None
    ) -> str:
        if not value:
            return value
        if self.sensitive(tenant, board) or value.startswith(MAGIC):
            return self.seal_raw(tenant, field_name, ids, value.encode("utf-8"))
        return value

    # -- blind index of sealed episode texts ------------------------------

    def _index_key(self, key_id: str, tenant: str) -> bytes:
        if self.ring is None or key_id not in self.ring.keys:
            raise KeyError(key_id)
        return self._tenant_key("sk1i", key_id, tenant, 32)

    def blind_term(self, index_key: bytes, term: str) -> str:
        """A lexical term as the index stores it for a sealed text: digits
        only (so core.lexical keeps it as it is), from a keyed HMAC."""
        digest = hmac.new(index_key, term.encode("utf-8"), hashlib.sha256).digest()
        return "9" + str(int.from_bytes(digest[:9], "big")).zfill(22)

    def blind_hash(self, tenant: str, digest: str, key_id: str = "") -> str:
        """An episode's duplicate key (SHA-256 of its plaintext) as stored for
        a sensitive tenant: keyed, so that a stored hash cannot confirm a
        guessed text."""
        if self.ring is None:
            return digest
        key_id = key_id or self.ring.active
        key = self._tenant_key("sk1h", key_id, tenant, 32)
        mac = hmac.new(key, digest.encode("ascii"), hashlib.sha256).hexdigest()
        return f"{HASH_MAGIC}{key_id}~{mac}"

    def hash_variants(self, tenant: str, digest: str) -> list[str]:
        """Every form a stored duplicate key of `digest` may have."""
        if self.ring is None:
            return [digest]
        return [digest, *(self.blind_hash(tenant, digest, k) for k in self.ring.keys)]

    def blind_variants(self, tenant: str, terms: Sequence[str]) -> dict[str, list[str]]:
        """Each query term's blind form under every key of the ring (texts
        sealed under a key not rotated yet keep that key's terms)."""
        if self.ring is None:
            return {}
        keys = [self._index_key(key_id, tenant) for key_id in self.ring.keys]
        return {t: [self.blind_term(k, t) for k in keys] for t in terms}

    def seal_indexed_text(
        self, tenant: str, field_name: str, ids: Sequence[str], value: str, force: bool = False
    ) -> str:
        """`seal_text`, followed (when sealed) by the blind terms of the
        plaintext, separated by spaces: the store's lexical index, which
        derives its terms from the stored text, indexes them, so that exact
        terms can still be searched (see `blind_variants`)."""
        if not value:
            return value
        if not (force or self.sensitive(tenant) or value.startswith(MAGIC)):
            return value
        assert self.ring is not None or not force
        token = self.seal_raw(tenant, field_name, ids, value.encode("utf-8"))
        assert self.ring is not None
        key = self._index_key(self.ring.active, tenant)
        blind = [self.blind_term(key, t) for t in lexical.terms(value)]
        return " ".join([token, *blind])

    def open_text(self, tenant: str, field_name: str, ids: Sequence[str], value: str) -> str:
        if not value.startswith(MAGIC):
            return value
        # A sealed episode text carries its blind terms after a space.
        value = value.split(" ", 1)[0]
        raw = self.open_raw(tenant, field_name, ids, value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SealedValueError(field_name, "not text") from None

    def seal_bytes(
        self,
        tenant: str,
        field_name: str,
        ids: Sequence[str],
        value: bytes,
        board: str | None = None,
    ) -> bytes:
        if self.sensitive(tenant, board) or value.startswith(MAGIC_BYTES):
            return self.seal_raw(tenant, field_name, ids, value).encode("ascii")
        return value

    def open_bytes(self, tenant: str, field_name: str, ids: Sequence[str], value: bytes) -> bytes:
        if not value.startswith(MAGIC_BYTES):
            return value
        try:
            token = value.decode("ascii")
        except UnicodeDecodeError:
            raise SealedValueError(field_name, "malformed sealed value") from None
        return self.open_raw(tenant, field_name, ids, token)

    def seal_json_map(
        self, tenant: str, field_name: str, ids: Sequence[str], value: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A JSON object: sealed whole (keys too) as {SEALED_KEY: token}."""
        if not value:
            return dict(value)
        if self.sensitive(tenant) or SEALED_KEY in value:
            data = json.dumps(value, separators=(",", ":"), sort_keys=True)
            return {SEALED_KEY: self.seal_raw(tenant, field_name, ids, data.encode("utf-8"))}
        return dict(value)

    def open_json_map(
        self, tenant: str, field_name: str, ids: Sequence[str], value: Mapping[str, Any]
    ) -> dict[str, Any]:
        token = value.get(SEALED_KEY) if len(value) == 1 else None
        if not isinstance(token, str):
            return dict(value)
        opened = json.loads(self.open_raw(tenant, field_name, ids, token))
        if not isinstance(opened, dict):
            raise SealedValueError(field_name, "not a JSON object")
        return opened


def sealer_from(
    keys_file: str,
    env_keys: str,
    active: str,
    tenants: Iterable[str],
    boards: Iterable[str],
) -> Sealer | None:
    """The sealer the settings describe, or None when encryption is off
    (no key and nothing sensitive): then nothing is wrapped."""
    ring = load_key_ring(keys_file, env_keys, active)
    tenant_set = frozenset(t.strip() for t in tenants if t.strip())
    board_set: set[tuple[str, str]] = set()
    for item in boards:
        if not item.strip():
            continue
        tenant, sep, board = item.strip().partition("/")
        if not sep or not tenant or not board:
            raise KeyRingError(f"sensitive board {item!r} is not TENANT/BOARD")
        board_set.add((tenant, board))
    if ring is None and not tenant_set and not board_set:
        return None
    return Sealer(ring, tenant_set, frozenset(board_set))


def split_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


_SEALERS: dict[tuple[str, ...], Sealer | None] = {}


def sealer_for(settings: Any) -> Sealer | None:
    """The sealer of these settings (`statekeeper.config.Settings`), built
    once per process: every store wrapper of a server shares it."""
    parts = (
        settings.encryption_keys_file,
        settings.encryption_keys,
        settings.encryption_active_key,
        settings.sensitive_tenants,
        settings.sensitive_boards,
    )
    if parts not in _SEALERS:
        _SEALERS[parts] = sealer_from(
            parts[0], parts[1], parts[2], split_list(parts[3]), split_list(parts[4])
        )
    return _SEALERS[parts]
