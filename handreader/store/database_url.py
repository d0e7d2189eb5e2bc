"""The URL of a shared PostgreSQL store: the environment variable that names it, how it is told
from an SQLite file's path, and how it is shown without its password."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["DATABASE_URL_ENV", "is_database_url", "redact_url"]

DATABASE_URL_ENV = "HANDREADER_DATABASE_URL"
"""The environment variable naming a shared PostgreSQL database (``postgresql://...``)."""


def is_database_url(location: str | Path) -> bool:
    """Whether ``location`` is a PostgreSQL URL (``postgresql://`` or ``postgres://``)."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def redact_url(url: str) -> str:
    """``url`` without its passwords (for messages, logs and ``/health``): the one before the
    ``@`` and libpq's ``password`` and ``sslpassword`` parameters in the query."""
    parts = urlsplit(url)
    if parts.query:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        hidden = [(key, "***" if "password" in key.lower() else value) for key, value in pairs]
        if hidden != pairs:
            parts = parts._replace(query=urlencode(hidden, safe="*"))
    if parts.password is None:
        return urlunsplit(parts)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
