"""The store's tests run on both backends: ``location`` is an SQLite file or the URL of a fresh
PostgreSQL schema.

PostgreSQL comes from ``$HANDREADER_TEST_DATABASE_URL`` when set (a database the tests may
create schemas in), else from a throw-away cluster started once per session with Debian's
server binaries (``benchmarks/postgres_cluster.py``); without either, or without psycopg, the
PostgreSQL cases skip with the reason, or fail when ``$HANDREADER_TEST_REQUIRE_POSTGRES`` is set
(CI sets it, so that both backends always run there).
"""

from __future__ import annotations

import importlib.util
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from benchmark_modules import load_benchmark
from store_databases import with_schema

TEST_URL_ENV = "HANDREADER_TEST_DATABASE_URL"
REQUIRE_ENV = "HANDREADER_TEST_REQUIRE_POSTGRES"
BACKENDS = ("sqlite", "postgresql")


def _missing(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV):
        pytest.fail(f"{reason} (${REQUIRE_ENV} is set)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server's URL for the session (see the module docstring)."""
    if importlib.util.find_spec("psycopg") is None:
        _missing("PostgreSQL cases need psycopg: pip install -e '.[postgres]'")
    given = os.environ.get(TEST_URL_ENV)
    if given:
        yield given
        return
    cluster = load_benchmark("postgres_cluster")
    if cluster.server_binaries() is None:
        _missing(f"PostgreSQL cases need Debian's postgresql server binaries or ${TEST_URL_ENV}")
    with cluster.throwaway_cluster() as url:
        yield url


@pytest.fixture
def postgres_cluster() -> Iterator[Any]:
    """A throw-away cluster of the test's own, which it may restart (``cluster.url``,
    ``cluster.restart()``: ``benchmarks/postgres_cluster.py``); needs the server binaries even
    when ``$HANDREADER_TEST_DATABASE_URL`` names a server."""
    if importlib.util.find_spec("psycopg") is None:
        _missing("PostgreSQL cases need psycopg: pip install -e '.[postgres]'")
    cluster = load_benchmark("postgres_cluster")
    if cluster.server_binaries() is None:
        _missing("a PostgreSQL restart needs Debian's postgresql server binaries")
    with cluster.running_cluster() as running:
        yield running


@pytest.fixture
def postgres_schema(postgres_url: str) -> Iterator[str]:
    """The URL of a fresh, empty schema, dropped after the test."""
    import psycopg

    schema = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    yield with_schema(postgres_url, schema)
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty store on each backend: an SQLite file's path, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite3")
    return str(request.getfixturevalue("postgres_schema"))
