"""The audit trail kept by a PostgreSQL user of least privilege (deployment.md): once the
tables exist, reading and inserting is all the service needs."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

import pytest

from handreader.store.audit import AuditLog

TOKEN = "operator-secret-token"
FIELDS = {
    "image_sha256": "ab" * 32,
    "reading": {"size": [640, 480], "cards": [{"card": "10H"}]},
    "profile": "trainer",
    "declared": {"players": [{"seat": 1, "outcome": "win", "payout": None}]},
    "computed": {"players": [{"seat": 1, "outcome": "win", "payout": 0.95}]},
    "verdict": "match",
    "differences": [],
}


def test_a_user_that_may_only_read_and_insert_keeps_the_trail(
    postgres_schema: str, postgres_url: str
) -> None:
    """deployment.md's least privilege: once the tables exist, the service's database user
    needs only to read and insert; opening the store must not create anything."""
    psycopg = pytest.importorskip("psycopg")

    AuditLog(postgres_schema, token=TOKEN).close()  # the owner makes the tables
    schema = postgres_schema.rsplit("search_path%3D", 1)[-1]
    role = f"clerk_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {role} LOGIN")
        owner.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        owner.execute(f"GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA {schema} TO {role}")
    parts = urlsplit(postgres_schema)
    clerk_url = parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}").geturl()
    try:
        log = AuditLog(clerk_url, token=TOKEN)
        record_id = log.append(TOKEN, **FIELDS)
        assert log.records(TOKEN)[-1].record_id == record_id
        assert log.verify(TOKEN).ok
        log.close()
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as owner:
            owner.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role}")
            owner.execute(f"REVOKE ALL ON SCHEMA {schema} FROM {role}")
            owner.execute(f"DROP ROLE {role}")
