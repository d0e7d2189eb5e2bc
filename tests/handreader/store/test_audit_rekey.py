"""``AuditLog.rekey`` reads and re-chains the trail a page at a time inside its one transaction,
on both backends: whatever the page size it writes the chain that ``chain_hash`` under the
operator secret gives, it never reads more than a page in one query, and a failure midway
(a record that does not follow, the database refusing an update) leaves the trail as it was.

Expectations come from ``handreader/store/audit.py`` (``AuditLog.rekey``: "read and re-chained
CHAIN_PAGE_ROWS records at a time inside that one transaction ... a failure anywhere rolls the
whole of it back") and ``handreader/store/audit_trail.py`` (``chain_hash``, ``rechain``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from store_databases import raw
from test_audit import T0, TOKEN, record

from handreader.store import audit as audit_module
from handreader.store.audit import AuditError, AuditLog
from handreader.store.audit_trail import COLUMNS, GENESIS, chain_hash
from handreader.store.database import StoreError, Transaction

RECORDS = 7
KEY = "operator secret"
PAGE_SIZES = (1, 2, 3, 6, 7, 8, 1000)


def _plain_trail(location: str) -> AuditLog:
    log = AuditLog(location, token=TOKEN, key="")
    for minute in range(RECORDS):
        record(
            log, time=T0 + timedelta(minutes=minute), verdict="mismatch" if minute % 3 else "match"
        )
    return log


def _hashes(location: str) -> list[str]:
    return [
        str(row[0]) for row in raw(location, "SELECT record_sha256 FROM verification ORDER BY id")
    ]


def _keyed_chain(location: str) -> list[str]:
    """The chain under :data:`KEY` of the stored fields, computed from the definition."""
    previous, chain = GENESIS, []
    for row in raw(location, f"SELECT {COLUMNS} FROM verification ORDER BY id"):
        previous = chain_hash(previous, [str(value) for value in row[1:9]], KEY.encode("utf-8"))
        chain.append(previous)
    return chain


@pytest.mark.parametrize("page_rows", PAGE_SIZES)
def test_every_page_size_writes_the_chain_under_the_secret(
    page_rows: int, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plain_trail(location).close()
    expected = _keyed_chain(location)
    monkeypatch.setattr(audit_module, "CHAIN_PAGE_ROWS", page_rows)
    keyed = AuditLog(location, token=TOKEN, key=KEY)
    assert keyed.rekey(TOKEN) == RECORDS
    assert _hashes(location) == expected
    report = keyed.verify(TOKEN)
    assert report.ok and report.records == RECORDS and report.head == expected[-1]
    assert keyed.rekey(TOKEN) == 0  # already chained under it: nothing written
    assert _hashes(location) == expected
    keyed.close()


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows each page query of the store's transactions returns."""
    counts: list[int] = []
    run = Transaction.all

    def counted(self: Transaction, sql: str, values: Any = ()) -> list[tuple[Any, ...]]:
        rows = run(self, sql, values)
        if sql.startswith(f"SELECT {COLUMNS} FROM verification") and "LIMIT" in sql:
            counts.append(len(rows))
        return rows

    monkeypatch.setattr(Transaction, "all", counted)
    return counts


def test_the_rekey_reads_a_page_at_a_time(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _plain_trail(location).close()
    monkeypatch.setattr(audit_module, "CHAIN_PAGE_ROWS", 3)
    keyed = AuditLog(location, token=TOKEN, key=KEY)
    counts = _reads(monkeypatch)
    assert keyed.rekey(TOKEN) == RECORDS
    # the walk under the secret stops at record 1 (a page read), then the re-chaining's pages
    assert counts == [3, 3, 3, 1]
    keyed.close()


def test_a_record_that_does_not_follow_midway_leaves_the_trail_as_it_was(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records 1 to 4 are re-chained (pages of 2) before record 5 is found edited: the
    transaction is rolled back whole."""
    _plain_trail(location).close()
    raw(location, "UPDATE verification SET verdict = 'match' WHERE id = 5")
    before = _hashes(location)
    monkeypatch.setattr(audit_module, "CHAIN_PAGE_ROWS", 2)
    keyed = AuditLog(location, token=TOKEN, key=KEY)
    updates = _updates(monkeypatch)
    with pytest.raises(AuditError, match=r"nothing chained again: record 5 does not follow"):
        keyed.rekey(TOKEN)
    assert updates == [1, 2, 3, 4]  # written, then rolled back
    assert _hashes(location) == before
    keyed.close()


def _updates(monkeypatch: pytest.MonkeyPatch, fail_at: int | None = None) -> list[int]:
    """The ids whose hash the store's transactions update; StoreError for ``fail_at``'s."""
    updated: list[int] = []
    run = Transaction.all

    def watched(self: Transaction, sql: str, values: Any = ()) -> list[tuple[Any, ...]]:
        if sql.startswith("UPDATE verification SET record_sha256"):
            if values[1] == fail_at:
                raise StoreError("the database refused the update")
            updated.append(int(values[1]))
        return run(self, sql, values)

    monkeypatch.setattr(Transaction, "all", watched)
    return updated


def test_an_update_refused_midway_leaves_the_trail_as_it_was(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _plain_trail(location)
    before = _hashes(location)
    monkeypatch.setattr(audit_module, "CHAIN_PAGE_ROWS", 2)
    keyed = AuditLog(location, token=TOKEN, key=KEY)
    updates = _updates(monkeypatch, fail_at=6)
    with pytest.raises(AuditError, match="the database refused the update"):
        keyed.rekey(TOKEN)
    assert updates == [1, 2, 3, 4, 5]
    assert _hashes(location) == before
    monkeypatch.undo()
    assert plain.verify(TOKEN).ok and plain.verify(TOKEN).records == RECORDS
    assert keyed.rekey(TOKEN) == RECORDS  # the trail, as it was, re-chains whole
    assert _hashes(location) == _keyed_chain(location)
    plain.close()
    keyed.close()
