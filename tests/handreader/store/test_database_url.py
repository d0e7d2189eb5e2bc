"""``HANDREADER_DATABASE_URL`` is checked where it is read: a URL whose port is out of range or
not a number, or whose IPv6 address is left open, stops the service at its start and the
command line at once, in one line naming the variable and the problem, never the password.

Expectations come from ``handreader/store/database_url.py`` (``url_problem``: "each port
(optional) a number from 1 to 65535"; libpq refuses port 0 too) and docs/deployment.md (the
variable's form: ``postgresql://user:password@host:5432/name``, libpq's URL).
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from handreader import cli
from handreader.service.routes.verification import AuditSettings
from handreader.store.database import (
    DATABASE_URL_ENV,
    StoreError,
    configured_url,
    open_database,
    redact_url,
)

PASSWORD = "pw-s3cret"
PORT = "a port is not a number from 1 to 65535"
OPEN_IPV6 = "an IPv6 address opens '[' without its ']'"

MALFORMED = [  # (URL, the problem named)
    (f"postgresql://u:{PASSWORD}@127.0.0.1:99999/hr", PORT),
    (f"postgresql://u:{PASSWORD}@host:abc/hr", PORT),
    ("postgresql://u@host:abc/hr", PORT),
    (f"postgresql://u:{PASSWORD}@[::1/hr", OPEN_IPV6),
    ("postgresql://[::1/hr", OPEN_IPV6),
    (f"postgresql://u:{PASSWORD}@db:0/hr", PORT),  # libpq: "invalid port number"
    (f"postgres://u:{PASSWORD}@db:-5/hr", PORT),
    (f"postgresql://u:{PASSWORD}@db1:5432,db2:70000/hr", PORT),
    (f"postgresql://u:{PASSWORD}@[::1]x/hr", "an IPv6 address in brackets is followed by "
     "something other than ':port'"),
    (f"postgresql://u:{PASSWORD}@db]:5432/hr", "a host holds '[' or ']' outside an IPv6 "
     "address in brackets"),
]  # fmt: skip

WELL_FORMED = [
    f"postgresql://u:{PASSWORD}@db.floor.lan:5432/handreader",
    "postgresql://u@127.0.0.1/hr?sslmode=require",
    "postgresql:///hr",  # libpq's local socket
    "postgresql://u@[::1]:5432/hr",
    "postgresql://u@[2001:db8::7]/hr",
    "postgresql://u@db1:5432,db2:5433/hr",  # libpq's list of hosts
    "postgresql://u@db1,db2/hr",
    "postgresql://u@db:/hr",  # an empty port: the default
    "postgres://u@db:65535/hr?options=-csearch_path%3Dfloor",
    f"postgresql://u:{PASSWORD}?x@db:5432/hr",  # libpq: the password holds '?' and '#'
    f"postgresql://u:{PASSWORD}#x@db/hr",
]


@pytest.mark.parametrize(("url", "problem"), MALFORMED)
def test_a_malformed_url_is_refused_naming_the_variable_never_the_password(
    url: str, problem: str
) -> None:
    with pytest.raises(StoreError) as refused:
        configured_url({DATABASE_URL_ENV: url})
    assert str(refused.value) == (
        f"HANDREADER_DATABASE_URL is not a usable URL: {problem} "
        "(give postgresql://user:password@host:5432/name)"
    )
    with pytest.raises(StoreError) as unopened:  # a URL given to the store directly
        open_database(url, timeout_s=1)
    assert str(unopened.value).endswith(f": {problem}")
    assert PASSWORD not in str(unopened.value)
    assert PASSWORD not in redact_url(url)  # shown without it however malformed


@pytest.mark.parametrize("url", WELL_FORMED)
def test_a_well_formed_url_is_taken_as_it_is(url: str) -> None:
    assert configured_url({DATABASE_URL_ENV: url}) == url
    assert PASSWORD not in redact_url(url)


def test_the_hosts_and_the_password_are_told_apart_as_libpq_tells_them() -> None:
    """libpq ends the user and password at the first '@' ahead of any '/': a password may hold
    '?' or '#' (``psycopg.conninfo.conninfo_to_dict`` reads such a URL's host and port)."""
    conninfo = pytest.importorskip("psycopg.conninfo")
    for url in WELL_FORMED[-2:]:
        assert conninfo.conninfo_to_dict(url)["host"] == "db"
    assert redact_url(f"postgresql://u:{PASSWORD}?x@db:5432/hr") == "postgresql://u:***@db:5432/hr"
    assert redact_url(f"postgresql://u:{PASSWORD}#x@db/hr") == "postgresql://u:***@db/hr"


def test_an_unset_or_empty_variable_is_no_database_and_another_scheme_is_refused() -> None:
    assert configured_url({}) is None and configured_url({DATABASE_URL_ENV: ""}) is None
    with pytest.raises(StoreError, match=r"^HANDREADER_DATABASE_URL must be a postgresql://"):
        configured_url({DATABASE_URL_ENV: "mysql://u@db/hr"})


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(("url", "problem"), MALFORMED[:4])
def test_the_service_and_the_command_line_refuse_it_in_one_line(
    url: str,
    problem: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The service does not start (it answered 500 to every request, /health included), and
    ``handreader audit verify`` names the variable (it printed libpq's "Port out of range")."""
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", "operator-token")
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path))
    expected = f"HANDREADER_DATABASE_URL is not a usable URL: {problem}"
    assert cli.main(["serve", "--port", str(_free_port())]) == 2
    assert cli.main(["audit", "verify"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"handreader serve: error: {expected} (give postgresql://user:password@host:5432/name)",
        f"handreader audit: error: {expected} (give postgresql://user:password@host:5432/name)",
    ]
    assert PASSWORD not in err
    with pytest.raises(StoreError, match="is not a usable URL"):
        AuditSettings.from_env()  # the app's settings, read as it is made
