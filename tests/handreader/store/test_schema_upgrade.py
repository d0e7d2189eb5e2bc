"""A store opened by this release and migrated past it by a newer one while open (a rolling
upgrade): its writes are refused, on both backends, and ``/health`` says why.

Expectation from ``handreader/store/database.py``: "A database of a newer schema than this
release knows is refused", which holds after opening as well as at it.
"""

from __future__ import annotations

import pytest
from store_databases import raw
from test_audit import TOKEN, record

from handreader.store.audit import AuditError, AuditLog
from handreader.store.database import StoreError, open_database
from handreader.store.decks import DatabaseDeckStore
from handreader.store.schema import MIGRATIONS

NEWER = MIGRATIONS[-1].version + 1


def _migrate_past(location: str) -> None:
    raw(
        location,
        "INSERT INTO schema_version (version, applied_utc, description) "
        f"VALUES ({NEWER}, '2027-01-01T00:00:00Z', 'a newer release')",
    )


def test_an_open_log_writes_nothing_once_a_newer_release_migrated_it(location: str) -> None:
    log = AuditLog(location, token=TOKEN)
    assert record(log) == 1
    _migrate_past(location)
    with pytest.raises(AuditError, match=f"schema {NEWER}, newer than {NEWER - 1}"):
        record(log)
    assert log.count(TOKEN) == 1  # nothing written under the schema it does not know
    state = log.database.describe()
    assert state["ok"] is False and f"schema {NEWER}" in str(state["error"])
    log.close()


def test_an_open_deck_store_writes_nothing_once_a_newer_release_migrated_it(
    postgres_schema: str,
) -> None:
    from test_decks import profile

    store = DatabaseDeckStore(open_database(postgres_schema))
    store.save(profile("before"))
    _migrate_past(postgres_schema)
    for write in (lambda: store.save(profile("after")), lambda: store.delete("before")):
        with pytest.raises(StoreError, match="newer than"):
            write()
    assert store.names() == ["before"]
