"""A chain check reads the trail a page at a time, on both backends: whatever the page size, it
names the same first bad or missing record as a walk over the whole trail read at once, and it
never reads more than a page in one query.

Expectations come from ``handreader/store/audit.py`` (``AuditLog.verify``: "names the first bad
or missing record"; "read a page of CHAIN_PAGE_ROWS records at a time") and the messages of
``handreader/store/audit_trail.py`` (``walk_chain``), as test_audit.py checks them on whole
trails.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from store_databases import raw
from test_audit import T0, TOKEN, record

from handreader.store import audit as audit_module
from handreader.store.audit import AuditLog, Checkpoint
from handreader.store.audit_trail import ChainReport, chain_hash, walk_chain
from handreader.store.database import Transaction

SECRET = "operator-checkpoint-secret"
RECORDS = 7
PAGE_SIZES = (1, 2, 3, 6, 7, 8, 1000)
COLUMNS = (
    "id, time_utc, image_sha256, profile, verdict, reading, declared, computed, differences, "
    "record_sha256"
)


def _trail(location: str) -> AuditLog:
    log = AuditLog(location, token=TOKEN, key="")
    for minute in range(RECORDS):
        record(log, time=T0 + timedelta(minutes=minute))
    return log


def _rehash_after(log: AuditLog, location: str, edited: int) -> None:
    """Every hash from record ``edited`` on computed again (a chain without a secret)."""
    rows = log._query(f"SELECT {COLUMNS} FROM verification ORDER BY id", [])
    previous = rows[edited - 2][9]
    for row in rows[edited - 1 :]:
        previous = chain_hash(previous, [str(value) for value in row[1:9]])
        raw(location, f"UPDATE verification SET record_sha256 = '{previous}' WHERE id = {row[0]}")


Tamper = Callable[[AuditLog, str], Checkpoint | None]


def _sound(log: AuditLog, location: str) -> None:
    return None


def _edited(log: AuditLog, location: str) -> None:
    raw(location, "UPDATE verification SET verdict = 'mismatch' WHERE id = 5")


def _first_edited(log: AuditLog, location: str) -> None:
    raw(location, "UPDATE verification SET profile = 'app' WHERE id = 1")


def _deleted(log: AuditLog, location: str) -> None:
    raw(location, "DELETE FROM verification WHERE id = 3")


def _two_deleted_across_a_page(log: AuditLog, location: str) -> None:
    raw(location, "DELETE FROM verification WHERE id IN (3, 4)")


def _newest_deleted(log: AuditLog, location: str) -> Checkpoint:
    checkpoint = log.checkpoint(TOKEN, SECRET)
    raw(location, "DELETE FROM verification WHERE id >= 6")
    return checkpoint


def _rewritten(log: AuditLog, location: str) -> Checkpoint:
    checkpoint = log.checkpoint(TOKEN, SECRET)
    raw(location, "UPDATE verification SET verdict = 'mismatch' WHERE id = 2")
    _rehash_after(log, location, 2)
    return checkpoint


CASES: dict[str, tuple[Tamper, int, int | None, str | None]] = {
    # name: (tamper, records read as sound, first bad, problem)
    "sound": (_sound, 7, None, None),
    "edited": (
        _edited, 4, 5, "record 5 does not follow from the records before it (edited, or re-hashed)"
    ),
    "first edited": (
        _first_edited, 0, 1, "record 1 does not follow from the records before it (a trail "
        "chained under the operator secret needs HANDREADER_AUDIT_KEY)"
    ),
    "deleted": (_deleted, 2, 3, "record 3 is missing"),
    "two deleted": (_two_deleted_across_a_page, 2, 3, "record 3 is missing (and up to 4)"),
    "newest deleted": (
        _newest_deleted, 5, 6,
        "the checkpoint counted 7 records, the log holds 5: records 6 to 7 were deleted",
    ),
    "rewritten": (
        _rewritten, 6, 7, "record 7 is not the one the checkpoint signed (rewritten)"
    ),
}  # fmt: skip


def _whole(log: AuditLog, checkpoint: Checkpoint | None) -> ChainReport:
    """The walk over the whole trail read in one query (the check before it read in pages)."""
    rows = log._query(f"SELECT {COLUMNS} FROM verification ORDER BY id", [])
    return walk_chain(rows, None, checkpoint)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_page_size_gives_the_report_of_the_whole_trail(
    case: str, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tamper, records, first_bad, problem = CASES[case]
    log = _trail(location)
    checkpoint = tamper(log, location)
    whole = _whole(log, checkpoint)
    assert (whole.records, whole.first_bad, whole.problem) == (records, first_bad, problem)
    for page_rows in PAGE_SIZES:
        monkeypatch.setattr(audit_module, "CHAIN_PAGE_ROWS", page_rows)
        if checkpoint is None:
            assert log.verify(TOKEN) == whole, page_rows
        else:
            assert log.verify(TOKEN, checkpoint, SECRET) == whole, page_rows
    log.close()


def _page_reads(log: AuditLog, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows each query of the walk returns, as the log's read snapshot reads them."""
    counts: list[int] = []
    snapshot = log.database.snapshot

    @contextlib.contextmanager
    def counted() -> Iterator[Transaction]:
        with snapshot() as statements:

            def run(sql: str, values: Any = ()) -> list[tuple[Any, ...]]:
                rows = statements.all(sql, values)
                if sql.startswith(f"SELECT {COLUMNS} FROM verification") and "LIMIT" in sql:
                    counts.append(len(rows))
                return rows

            yield Transaction(run)

    monkeypatch.setattr(log.database, "snapshot", counted)
    return counts


@pytest.mark.parametrize(
    ("page_rows", "pages"),
    [(3, [3, 3, 1]), (7, [7, 0]), (1, [1] * 7 + [0]), (1000, [7])],
)
def test_the_walk_reads_a_page_at_a_time(
    page_rows: int, pages: list[int], location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _trail(location)
    monkeypatch.setattr(audit_module, "CHAIN_PAGE_ROWS", page_rows)
    counts = _page_reads(log, monkeypatch)
    assert log.verify(TOKEN).records == RECORDS
    assert counts == pages  # never more than a page in one query
    log.close()


def test_the_walk_stops_reading_at_the_first_bad_record(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _trail(location)
    raw(location, "UPDATE verification SET verdict = 'mismatch' WHERE id = 2")
    monkeypatch.setattr(audit_module, "CHAIN_PAGE_ROWS", 3)
    counts = _page_reads(log, monkeypatch)
    assert log.verify(TOKEN).first_bad == 2
    assert counts == [3]
    log.close()
