"""API keys configured by hash: the keys file, `statekeeper keys create`,
and reloading the file while the server runs.

The keys file (`--api-keys-file PATH`, STATEKEEPER_API_KEYS_FILE,
`api_keys_file` in the config file) holds one key a line:

    # comment
    sha256:<64 hex digits> TENANT   # a comment may follow

Only digests: a plain key is refused (a file of secrets is what this
replaces). `statekeeper keys create --tenant T` prints a new key (32 random
bytes, URL-safe base64) once and its line for the file.

A running server re-reads the file on SIGHUP and when its mtime, size or
inode changes (polled every second, as statekeeper/tls.py does for
certificates). A file that does not parse keeps the keys in use, with one
warning per state of the file; calls already open (Watch and other
streams) keep running either way: a reload changes only who authenticates
from then on.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path

from statekeeper.core.tasks import cancel_and_wait
from statekeeper.core.tenancy import Authenticator, hash_key, is_key_hash

log = logging.getLogger("statekeeper.keys")

KEY_BYTES = 32
POLL_SECONDS = 1.0
_TENANT = re.compile(r"[A-Za-z0-9._:@-]{1,128}")

# (mtime_ns, size, inode) of the file: what says it changed on disk.
_Stamp = tuple[int, int, int]


class KeysFileError(ValueError):
    """The keys file cannot be used; the message names the file and line
    but never repeats a line's text (it could be a key pasted by mistake)."""


def new_key() -> str:
    """32 random bytes, URL-safe base64 without padding (43 characters)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(KEY_BYTES)).rstrip(b"=").decode()


def file_line(key: str, tenant: str) -> str:
    return f"{hash_key(key)} {tenant}"


def check_tenant(tenant: str) -> str:
    if not _TENANT.fullmatch(tenant):
        raise KeysFileError("a tenant is 1-128 characters of letters, digits and . _ : @ -")
    return tenant


def parse(text: str, path: Path | str = "keys file") -> dict[str, str]:
    """`sha256:<hex>` digest -> tenant, from a keys file's text."""
    keys: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        where = f"{path}: line {number}"
        if len(parts) != 2:
            raise KeysFileError(f"{where}: expected `sha256:<64 hex digits> TENANT`")
        digest, tenant = parts
        if not is_key_hash(digest.lower()):
            raise KeysFileError(
                f"{where}: the key must be given as sha256:<64 hex digits> (a hash, never the"
                " key itself; `statekeeper keys create` prints the line)"
            )
        try:
            check_tenant(tenant)
        except KeysFileError as exc:
            raise KeysFileError(f"{where}: {exc}") from None
        if keys.get(digest.lower(), tenant) != tenant:
            raise KeysFileError(f"{where}: this key is given to another tenant on an earlier line")
        keys[digest.lower()] = tenant
    return keys


def read(path: Path) -> dict[str, str]:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise KeysFileError(f"api_keys_file: cannot read {path}: {reason}") from exc
    return parse(text, path)


def _stamp(path: Path) -> _Stamp | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None  # being replaced (removed, then renamed in): look again later
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def _warn_if_writable(path: Path) -> None:
    """Whoever can write the file can give themselves a key."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if mode & 0o022:
        log.warning(
            "API keys file %s is writable by its group or by others: anyone who can write it"
            " can add a key (chmod go-w)",
            path,
        )


class KeysFile:
    """Keeps an Authenticator's hashed keys in step with the keys file."""

    def __init__(
        self,
        path: Path,
        authenticator: Authenticator,
        poll_seconds: float = POLL_SECONDS,
        on_reload: Callable[[dict[str, str]], None] | None = None,
    ) -> None:
        self.path = path
        self._authenticator = authenticator
        self._poll_seconds = poll_seconds
        self._on_reload = on_reload
        self._stamp = _stamp(path)
        self._failed: _Stamp | None = None
        self._pending: _Stamp | None = None
        self._task: asyncio.Task[None] | None = None
        # A file that does not load at start is a startup error.
        self._install(read(path))

    def _install(self, keys: dict[str, str]) -> None:
        _warn_if_writable(self.path)
        self._authenticator.replace_hashed_keys(keys)
        if self._on_reload is not None:
            self._on_reload(keys)

    def reload(self, reason: str) -> bool:
        """Reads the file again; True when its keys are now in use. On any
        error the keys in use stay, and one warning says why."""
        stamp = _stamp(self.path)
        try:
            keys = read(self.path)
        except Exception as exc:
            if stamp is None or stamp != self._failed or reason == "SIGHUP":
                self._failed = stamp
                log.warning(
                    "API keys file not reloaded (%s); keeping the keys in use: %s", reason, exc
                )
            return False
        self._stamp, self._failed = stamp, None
        self._install(keys)
        log.info(
            "API keys file reloaded (%s): %d key(s) for %d tenant(s)",
            reason,
            len(keys),
            len(set(keys.values())),
            extra={"keys": len(keys), "tenants": len(set(keys.values()))},
        )
        return True

    def check(self) -> None:
        """Reloads when the file changed on disk and then stayed the same
        for one poll (a file caught while being written in place is not
        taken half-written)."""
        stamp = _stamp(self.path)
        if stamp is None or stamp == self._stamp or stamp == self._failed:
            self._pending = None
            return
        if stamp != self._pending:
            self._pending = stamp
            return
        self._pending = None
        self.reload("file changed")

    def start(self) -> None:
        self._task = asyncio.create_task(self._poll_forever(), name="api-keys-file")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait([task])

    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(self._poll_seconds)
            try:
                self.check()
            except Exception:
                log.exception("API keys file check failed; will retry")
