"""The URL of a shared PostgreSQL store: the environment variable that names it, how it is told
from an SQLite file's path, whether its hosts and ports read, and how it is shown without its
password.

A URL is checked where it is read (:func:`configured_url`: the service at its start, the
command line, the deck store): a port out of range or an IPv6 address left open is one line
naming ``HANDREADER_DATABASE_URL`` and the problem, in words that hold nothing of the URL (a
password may sit anywhere in a malformed one).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from handreader.store.database_base import StoreError

__all__ = [
    "DATABASE_URL_ENV",
    "URL_FORM",
    "configured_url",
    "is_database_url",
    "redact_url",
    "url_problem",
]

DATABASE_URL_ENV = "HANDREADER_DATABASE_URL"
"""The environment variable naming a shared PostgreSQL database (``postgresql://...``)."""

URL_FORM = "postgresql://user:password@host:5432/name"
"""The form of a database URL, shown with a problem found in one."""


def is_database_url(location: str | Path) -> bool:
    """Whether ``location`` is a PostgreSQL URL (``postgresql://`` or ``postgres://``)."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def _after_scheme(url: str) -> str:
    """What follows ``scheme://`` (the whole text when there is no ``://``)."""
    head, separator, rest = url.partition("://")
    return rest if separator else head


def _end_of(text: str, marks: str) -> int:
    """The index of the first of ``marks`` in ``text`` (its length when there is none)."""
    found = [index for index in (text.find(mark) for mark in marks) if index >= 0]
    return min(found, default=len(text))


def _hosts_at(rest: str) -> int:
    """Where the hosts of ``rest`` (a URL after ``scheme://``) begin, as libpq reads it: after
    the first ``@`` that comes before any ``/`` (the user and password before it may hold
    ``?`` or ``#``), else at its start."""
    at = _end_of(rest, "@/")
    return at + 1 if rest[at : at + 1] == "@" else 0


def url_problem(url: str) -> str | None:
    """What keeps the hosts and ports of ``url`` (a ``postgresql://`` URL) from reading as
    libpq reads them, in words that hold nothing of the URL; None when they read. Each host of
    the comma-separated list is a name, an IPv4 address or an IPv6 address in brackets, each
    port (optional) a number from 1 to 65535."""
    rest = _after_scheme(url)
    hosts = rest[_hosts_at(rest) :]
    for host in hosts[: _end_of(hosts, "/?")].split(","):
        if host.startswith("["):
            close = host.find("]")
            if close < 0:
                return "an IPv6 address opens '[' without its ']'"
            after = host[close + 1 :]
            if after and not after.startswith(":"):
                return "an IPv6 address in brackets is followed by something other than ':port'"
            port = after[1:]
        elif "[" in host or "]" in host:
            return "a host holds '[' or ']' outside an IPv6 address in brackets"
        else:
            port = host.rpartition(":")[2] if ":" in host else ""
        if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
            return "a port is not a number from 1 to 65535"
    return None


def configured_url(environ: Mapping[str, str] = os.environ) -> str | None:
    """The database URL ``HANDREADER_DATABASE_URL`` sets (None when unset or empty);
    StoreError, one line naming the variable and the problem (never the password), when it is
    no ``postgresql://`` URL or its hosts and ports do not read (:func:`url_problem`)."""
    url = environ.get(DATABASE_URL_ENV) or None
    if url is None:
        return None
    if not is_database_url(url):
        raise StoreError(f"{DATABASE_URL_ENV} must be a postgresql:// URL")
    problem = url_problem(url)
    if problem is not None:
        raise StoreError(f"{DATABASE_URL_ENV} is not a usable URL: {problem} (give {URL_FORM})")
    return url


def redact_url(url: str) -> str:
    """``url`` without its passwords (for messages, logs and ``/health``): the one before the
    ``@`` that ends the user and password as libpq reads them (the first ahead of any ``/``),
    and libpq's ``password`` and ``sslpassword`` parameters in the query. Any text is shown so,
    a malformed URL too."""
    head = url[: len(url) - len(_after_scheme(url))]
    rest = _after_scheme(url)
    at = _hosts_at(rest) - 1
    if at >= 0 and ":" in rest[:at]:
        rest = rest[:at].partition(":")[0] + ":***" + rest[at:]
    before, mark, after = rest.partition("?")
    if mark:
        query, hash_mark, fragment = after.partition("#")
        pairs = parse_qsl(query, keep_blank_values=True)
        hidden = [(key, "***" if "password" in key.lower() else value) for key, value in pairs]
        if hidden != pairs:
            query = urlencode(hidden, safe="*")
        rest = f"{before}?{query}{hash_mark}{fragment}"
    return head + rest
