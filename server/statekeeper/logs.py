"""Structured logging: one JSON object per line (or plain text)."""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any

# Attributes every LogRecord has; anything else came in through `extra=`.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


# A password in a URL's user info (scheme://user:secret@host, scheme://:secret@host)
# and in query or keyword parameters (?password=secret, sslpassword=secret): the
# forms libpq, asyncpg and redis-py accept.
# The user info runs to the LAST `@` before the path (redis-py splits there, so a
# password may itself contain `@`).
_USERINFO_SECRET = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*):[^/?#\s]*@")
_PARAM_SECRET = re.compile(
    r"(?P<head>\b(?:ssl)?pass(?:word|wd)?\s*=\s*)(?:'[^']*'|\"[^\"]*\"|[^&\s'\"]+)",
    re.IGNORECASE,
)
# A credential in a URL's query string (an endpoint configured with
# ?api_key=..., a signed URL's &sig=...).
_QUERY_SECRET = re.compile(
    r"(?P<head>[?&](?:api[_-]?key|key|access[_-]?token|token|secret|sig|signature)=)[^&#\s'\"]+",
    re.IGNORECASE,
)
REDACTED = "***"
# Loggers of libraries that report routine events at INFO.
NOISY_LIBRARIES = ("faiss", "faiss.loader")


def redact(text: str) -> str:
    """`text` with every URL or DSN password replaced by ***, for logs."""
    text = _USERINFO_SECRET.sub(rf"\g<head>:{REDACTED}@", text)
    text = _QUERY_SECRET.sub(rf"\g<head>{REDACTED}", text)
    return _PARAM_SECRET.sub(rf"\g<head>{REDACTED}", text)


class RedactingFilter(logging.Filter):
    """Redacts passwords from every record a handler emits, whoever logged it
    (a library's message or an exception may quote a DSN): the sources redact
    too, this is the net under them."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        for name, value in list(vars(record).items()):
            if name not in _STANDARD and isinstance(value, str):
                setattr(record, name, redact(value))
        return True


def _redacted_exception(formatter: logging.Formatter, exc_info: Any) -> str:
    return redact(formatter.formatException(exc_info))


class _TextFormatter(logging.Formatter):
    def formatException(self, ei: Any) -> str:
        return redact(super().formatException(ei))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = _redacted_exception(self, record.exc_info)
        return json.dumps(entry, default=str)


def configure(level: str, fmt: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(_TextFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The interceptor's own per-call line is for debugging; the access log at
    # INFO is statekeeper.access_log (api/access_log.py, --access-log).
    logging.getLogger("statekeeper.access").setLevel(
        logging.DEBUG if level.upper() == "DEBUG" else logging.WARNING
    )
    # Library noise: faiss reports at INFO each optimised build it could not
    # load ("Could not load library with AVX512 support ..."), which is normal.
    for name in NOISY_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)
