"""A chain check reads one snapshot of the trail, on both backends: records appended, or a rekey
committed, by another connection while the check is between two of its pages are not seen, and
what it reports (the count, the head, a checkpoint signed from it) is the trail as it stood
when the walk began.

Expectations come from ``handreader/store/audit.py`` (``AuditLog.verify``: "all its pages in
one read snapshot: the report (its count of records, its head) is of the trail as it stood when
the walk began, whatever is appended or rekeyed meanwhile") and
``handreader/store/database_base.py`` (``Database.snapshot``). The walk is stopped between two
pages by the rows it is given: the next page is read only when the last row of one is taken
(``handreader.store.audit_trail.chain_rows``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from test_audit import TOKEN, record

from handreader.store import audit as audit_module
from handreader.store.audit import AuditLog, ChainReport
from handreader.store.audit_trail import walk_chain

PAGE_ROWS = 2
FIRST = 5
"""Records in the trail when the check begins (pages of 2, 2 and 1)."""
SECRET = "operator-checkpoint-secret"


def _between_pages(monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[], None]) -> list[int]:
    """Checks walk pages of :data:`PAGE_ROWS` and run ``meanwhile`` once, after the walk has
    taken the first page's rows and before it reads the second; the rows each walk was given."""
    monkeypatch.setattr(audit_module, "CHAIN_PAGE_ROWS", PAGE_ROWS)
    given: list[int] = []

    def interleaved(rows: Iterable[Any]) -> Iterator[Any]:
        for number, row in enumerate(rows, start=1):
            given.append(int(row[0]))
            yield row
            if number == PAGE_ROWS and len(given) == PAGE_ROWS:  # (the first walk only)
                meanwhile()

    def walking(rows: Iterable[Any], *args: Any, **kwargs: Any) -> ChainReport:
        return walk_chain(interleaved(rows), *args, **kwargs)

    monkeypatch.setattr(audit_module, "walk_chain", walking)
    return given


def _trail(location: str, key: str | None = None) -> tuple[AuditLog, str]:
    """A log of :data:`FIRST` records (``key``: its operator secret) and its head."""
    log = AuditLog(location, token=TOKEN, key=key)
    for _ in range(FIRST):
        record(log)
    return log, log.get(TOKEN, FIRST).record_sha256


@pytest.fixture
def growing(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[AuditLog, str, list[int]]]:
    """A log of :data:`FIRST` records, its head, and the rows each check's walk was given; the
    first walk has 3 records appended by another connection between its first two pages."""
    log, head = _trail(location)
    other = AuditLog(location, token=TOKEN)
    given = _between_pages(monkeypatch, lambda: [record(other) for _ in range(3)])
    yield log, head, given
    log.close()
    other.close()


def test_records_appended_between_two_pages_are_not_counted(
    growing: tuple[AuditLog, str, list[int]],
) -> None:
    log, head, given = growing
    report = log.verify(TOKEN)
    assert report.ok and report.records == FIRST and report.head == head
    assert given == [1, 2, 3, 4, 5]  # the appended 6 to 8 never reached the walk
    assert log.count(TOKEN) == FIRST + 3  # they were committed meanwhile
    assert log.verify(TOKEN).records == FIRST + 3  # and the next check counts them


def test_a_checkpoint_signs_the_head_of_its_snapshot(
    growing: tuple[AuditLog, str, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    log, head, _ = growing
    checkpoint = log.checkpoint(TOKEN, SECRET)
    assert (checkpoint.count, checkpoint.head) == (FIRST, head)
    monkeypatch.setattr(audit_module, "walk_chain", walk_chain)
    assert log.verify(TOKEN, checkpoint, SECRET).ok  # it holds of the trail grown since


def test_a_rekey_committed_between_two_pages_is_not_seen_by_the_check(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk reads the trail as it was chained when it began (without the secret): read
    part before and part after the rekey, record 3 would not follow."""
    plain, head = _trail(location, key="")
    keyed = AuditLog(location, token=TOKEN, key="operator secret")
    rekeyed: list[int] = []
    _between_pages(monkeypatch, lambda: rekeyed.append(keyed.rekey(TOKEN)))
    report = plain.verify(TOKEN)
    assert rekeyed == [FIRST]  # committed while the check was between pages
    assert (report.ok, report.records, report.head) == (True, FIRST, head)
    after = keyed.verify(TOKEN)
    assert after.ok and after.records == FIRST and after.head != head  # chained under the key
    plain.close()
    keyed.close()
