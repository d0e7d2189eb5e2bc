"""The audit log on both backends (SQLite and PostgreSQL, the ``location`` fixture): durability
under kill -9, operator token, filters, exports, hash chain, appends from many connections.

Expectations come from ``handreader/store/audit.py``'s docstring (quoted per test) and from the
audit log's promises: "Killing the server at any moment loses no committed record and corrupts
nothing"; "Writes to the log need a token set by the operator; reads of the log need it too"; "two
service processes on two ports writing to one database keep one gap-free chain".
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_databases import raw

from handreader.store import audit as audit_module
from handreader.store.audit import (
    TOKEN_ENV,
    AuditAuthError,
    AuditError,
    AuditLog,
    format_time,
)

TOKEN = "operator-secret-token"
SHA = "ab" * 32
T0 = datetime(2026, 11, 29, 15, 0, 0, tzinfo=UTC)


def record(log: AuditLog, **changes: Any) -> int:
    fields: dict[str, Any] = {
        "image_sha256": SHA,
        "reading": {"size": [640, 480], "cards": [{"card": "10H"}]},
        "profile": "trainer",
        "declared": {"players": [{"seat": 1, "outcome": "win", "payout": None}]},
        "computed": {"players": [{"seat": 1, "outcome": "win", "payout": 0.95}]},
        "verdict": "match",
        "differences": [],
    }
    fields.update(changes)
    return log.append(TOKEN, **fields)


@pytest.fixture
def log(location: str) -> AuditLog:
    return AuditLog(location, token=TOKEN)


# --- the operator token --------------------------------------------------------------------------

CALLS = {
    "append": lambda log, token: log.append(
        token,
        image_sha256=SHA,
        reading={},
        profile="trainer",
        declared={},
        computed={},
        verdict="match",
    ),
    "records": lambda log, token: log.records(token),
    "count": lambda log, token: log.count(token),
    "get": lambda log, token: log.get(token, 1),
    "export_csv": lambda log, token: log.export_csv(token),
    "export_json": lambda log, token: log.export_json(token),
    "verify_chain": lambda log, token: log.verify_chain(token),
    "integrity_check": lambda log, token: log.integrity_check(token),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize(
    ("configured", "given", "message"),
    [
        (TOKEN, None, "missing operator token"),
        (TOKEN, "", "missing operator token"),
        (TOKEN, "operator-secret-tokeN", "wrong operator token"),
        (TOKEN, TOKEN + " ", "wrong operator token"),
        (None, TOKEN, "no operator token configured: set HANDREADER_AUDIT_TOKEN"),
    ],
)
def test_every_read_and_write_needs_the_operator_token(
    call: str,
    configured: str | None,
    given: str | None,
    message: str,
    location: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    log = AuditLog(location, token=configured)
    with pytest.raises(AuditAuthError, match=message):
        CALLS[call](log, given)


def test_the_token_may_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "from-env")
    log = AuditLog(tmp_path / "audit.db")
    assert log.count("from-env") == 0
    with pytest.raises(AuditAuthError):
        log.count(TOKEN)


def test_tokens_are_compared_in_constant_time(
    log: AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[bytes, bytes]] = []

    def spy(given: bytes, expected: bytes) -> bool:
        seen.append((given, expected))
        return given == expected

    monkeypatch.setattr(audit_module.hmac, "compare_digest", spy)
    log.count(TOKEN)
    assert seen == [(TOKEN.encode(), TOKEN.encode())]


# --- writing ----------------------------------------------------------------------------------


def test_the_sqlite_database_is_in_wal_mode_with_full_sync(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db", token=TOKEN)
    record(log)
    assert log.path is not None
    with sqlite3.connect(log.path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # synchronous is a per-connection setting: FULL is 2
    assert log.database.read("PRAGMA synchronous") == [(2,)]


def test_the_postgresql_commit_waits_for_the_disk(postgres_schema: str) -> None:
    log = AuditLog(postgres_schema, token=TOKEN)
    # "an acknowledged record is never lost": the commit returns once its WAL is flushed
    assert log.database.read("SHOW synchronous_commit") == [("on",)]
    assert log.database.read("SHOW fsync") == [("on",)]


def test_an_appended_record_reads_back_whole(log: AuditLog) -> None:
    moment = datetime(2026, 11, 29, 16, 30, 5, 123456, tzinfo=timezone(timedelta(hours=1)))
    record_id = record(
        log, time=moment, verdict="mismatch", differences=[{"kind": "outcome", "seat": 1}]
    )
    got = log.get(TOKEN, record_id)
    assert got.time_utc == "2026-11-29T15:30:05.123456Z"  # stored in UTC
    assert (got.image_sha256, got.profile, got.verdict) == (SHA, "trainer", "mismatch")
    assert got.reading == {"size": [640, 480], "cards": [{"card": "10H"}]}
    assert got.computed["players"][0]["payout"] == 0.95
    assert got.differences == [{"kind": "outcome", "seat": 1}]


def test_the_default_time_is_now_in_utc(log: AuditLog) -> None:
    before = format_time(datetime.now(UTC))
    stamp = log.get(TOKEN, record(log)).time_utc
    assert before <= stamp <= format_time(datetime.now(UTC)) and stamp.endswith("Z")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"image_sha256": "AB" * 32}, "64 lower-case hex digits"),
        ({"image_sha256": "ab" * 31}, "64 lower-case hex digits"),
        ({"verdict": "maybe"}, "unknown verdict 'maybe': known are match, mismatch, unverified"),
        ({"profile": " "}, "profile must be a name"),
        ({"reading": {"cards": {1, 2}}}, "reading is not JSON"),
        ({"computed": {"net": float("nan")}}, "computed is not JSON"),
        ({"time": datetime(2026, 1, 1)}, "has no time zone"),
    ],
)
def test_bad_records_are_refused_and_nothing_is_written(
    log: AuditLog, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(AuditError, match=message):
        record(log, **changes)
    assert log.count(TOKEN) == 0


def test_records_persist_across_reopening(location: str) -> None:
    with AuditLog(location, token=TOKEN) as first:
        ids = [record(first) for _ in range(3)]
    with AuditLog(location, token=TOKEN) as second:
        assert [r.record_id for r in second.records(TOKEN)] == ids
        assert second.verify_chain(TOKEN) is None


def test_the_schema_is_versioned_and_migrated_once(location: str) -> None:
    AuditLog(location, token=TOKEN).close()
    AuditLog(location, token=TOKEN).close()  # reopening applies nothing twice
    rows = raw(location, "SELECT version, description FROM schema_version")
    assert [row[0] for row in rows] == [1]
    assert "verification log" in rows[0][1]


def test_a_newer_schema_is_refused(location: str) -> None:
    AuditLog(location, token=TOKEN).close()
    raw(
        location,
        "INSERT INTO schema_version (version, applied_utc, description) VALUES (99, 'x', 'y')",
    )
    with pytest.raises(AuditError, match="schema 99, newer than 1"):
        AuditLog(location, token=TOKEN)


def test_a_log_of_the_release_before_schema_version_opens_as_version_1(tmp_path: Path) -> None:
    # the first release recorded its schema only in SQLite's user_version
    path = tmp_path / "audit.db"
    legacy = (
        "CREATE TABLE verification (id INTEGER PRIMARY KEY AUTOINCREMENT, time_utc TEXT NOT "
        "NULL, image_sha256 TEXT NOT NULL CHECK (length(image_sha256) = 64), profile TEXT NOT "
        "NULL, verdict TEXT NOT NULL, reading TEXT NOT NULL, declared TEXT NOT NULL, computed "
        "TEXT NOT NULL, differences TEXT NOT NULL, record_sha256 TEXT NOT NULL)"
    )
    with sqlite3.connect(path) as connection:
        connection.execute(legacy)
        connection.execute("PRAGMA user_version=1")
    with AuditLog(path, token=TOKEN) as log:
        assert record(log) == 1 and log.verify_chain(TOKEN) is None
    assert raw(str(path), "SELECT version FROM schema_version") == []  # nothing to apply


def test_a_newer_sqlite_user_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version=99")
    with pytest.raises(AuditError, match="schema 99"):
        AuditLog(path, token=TOKEN)


def test_a_database_that_cannot_use_wal_is_refused() -> None:
    with pytest.raises(AuditError, match="cannot use WAL"):
        AuditLog(":memory:", token=TOKEN)


# --- listing, filters, exports -------------------------------------------------------------------


@pytest.fixture
def filled(log: AuditLog) -> AuditLog:
    rows = [  # (minutes after T0, verdict, profile)
        (0, "match", "trainer"),
        (10, "mismatch", "trainer"),
        (20, "match", "classic"),
        (30, "unverified", "app"),
        (40, "mismatch", "classic"),
    ]
    for minutes, verdict, profile in rows:
        record(log, time=T0 + timedelta(minutes=minutes), verdict=verdict, profile=profile)
    return log


@pytest.mark.parametrize(
    ("filters", "ids"),
    [
        ({}, [1, 2, 3, 4, 5]),
        ({"verdict": "mismatch"}, [2, 5]),
        ({"profile": "classic"}, [3, 5]),
        ({"verdict": "match", "profile": "classic"}, [3]),
        ({"since": T0 + timedelta(minutes=10)}, [2, 3, 4, 5]),  # since is inclusive
        ({"until": T0 + timedelta(minutes=20)}, [1, 2]),  # until is exclusive
        # 16:30+01:00 is 15:30 UTC, record 4's time, excluded
        ({"since": "2026-11-29T15:10:00Z", "until": "2026-11-29T16:30:00+01:00"}, [2, 3]),
        ({"since": T0 + timedelta(hours=1)}, []),
        ({"limit": 2}, [1, 2]),
        ({"limit": 2, "offset": 3}, [4, 5]),
        ({"verdict": "mismatch", "limit": 1, "offset": 1}, [5]),
    ],
)
def test_records_filter_by_verdict_time_and_profile(
    filled: AuditLog, filters: dict[str, Any], ids: list[int]
) -> None:
    assert [r.record_id for r in filled.records(TOKEN, **filters)] == ids
    counting = {k: v for k, v in filters.items() if k not in ("limit", "offset")}
    if "limit" not in filters:
        assert filled.count(TOKEN, **counting) == len(ids)


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"verdict": "good"}, "unknown verdict 'good'"),
        ({"since": "yesterday"}, "time 'yesterday' is not ISO 8601"),
        ({"since": "2026-11-29T15:00:00"}, "has no time zone"),
        ({"until": datetime(2026, 11, 29)}, "has no time zone"),
        ({"limit": -1}, "limit and offset must be 0 or more"),
        ({"offset": -2}, "limit and offset must be 0 or more"),
    ],
)
def test_bad_filters_are_refused(filled: AuditLog, filters: dict[str, Any], message: str) -> None:
    with pytest.raises(AuditError, match=message):
        filled.records(TOKEN, **filters)


def test_get_of_a_missing_record_is_an_error(filled: AuditLog) -> None:
    with pytest.raises(AuditError, match="no audit record 99"):
        filled.get(TOKEN, 99)


def test_export_json_is_the_records_as_dicts(filled: AuditLog) -> None:
    exported = json.loads(filled.export_json(TOKEN, verdict="mismatch"))
    assert exported == [r.to_dict() for r in filled.records(TOKEN, verdict="mismatch")]
    assert [row["id"] for row in exported] == [2, 5]


def test_export_csv_has_a_header_and_json_cells(filled: AuditLog) -> None:
    text = filled.export_csv(TOKEN, profile="classic")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == [
        "id",
        "time_utc",
        "image_sha256",
        "profile",
        "verdict",
        "reading",
        "declared",
        "computed",
        "differences",
        "record_sha256",
    ]
    assert [row["id"] for row in rows] == ["3", "5"]
    assert rows[0]["time_utc"] == "2026-11-29T15:20:00.000000Z"
    assert json.loads(rows[0]["computed"])["players"][0]["payout"] == 0.95
    assert json.loads(rows[1]["differences"]) == []


def test_export_csv_cells_are_the_json_stored_as_the_records_decode_it(
    filled: AuditLog, location: str
) -> None:
    """The export writes each JSON field as stored, undecoded: the compact text that decoding
    and encoding again would give, and a damaged field's text as it is."""
    raw(location, "UPDATE verification SET reading = '{not json' WHERE id = 4")
    rows = list(csv.DictReader(io.StringIO(filled.export_csv(TOKEN))))
    records = filled.records(TOKEN)
    assert len(rows) == len(records) == 5
    for row, record in zip(rows, records, strict=True):
        expected = record.to_dict()
        for name in ("reading", "declared", "computed", "differences"):
            value = expected[name]
            if name in record.damaged:
                assert row[name] == value == "{not json"
            else:
                compact = json.dumps(value, sort_keys=True, separators=(",", ":"))
                assert row[name] == compact
        assert row["id"] == str(record.record_id) and row["verdict"] == record.verdict


# --- tamper evidence ---------------------------------------------------------------------------


def test_an_edited_record_breaks_the_hash_chain(filled: AuditLog, location: str) -> None:
    assert filled.verify_chain(TOKEN) is None
    raw(location, "UPDATE verification SET verdict = 'match' WHERE id = 2")
    assert filled.verify_chain(TOKEN) == 2


def test_a_record_deleted_from_the_middle_is_named_as_missing(
    filled: AuditLog, location: str
) -> None:
    raw(location, "DELETE FROM verification WHERE id = 3")
    assert filled.verify_chain(TOKEN) == 3  # the record deleted, not the one after it
    report = filled.verify(TOKEN)
    assert not report.ok and report.first_bad == 3 and report.problem == "record 3 is missing"
    raw(location, "DELETE FROM verification WHERE id = 4")
    assert filled.verify(TOKEN).problem == "record 3 is missing (and up to 4)"


SECRET = "operator-checkpoint-secret"


def test_the_newest_records_deleted_show_against_a_signed_checkpoint(
    filled: AuditLog, location: str
) -> None:
    checkpoint = filled.checkpoint(TOKEN, SECRET)
    assert (checkpoint.count, checkpoint.head) == (5, filled.get(TOKEN, 5).record_sha256)
    raw(location, "DELETE FROM verification WHERE id >= 4")
    assert filled.verify(TOKEN).ok  # the chain alone cannot see it
    report = filled.verify(TOKEN, checkpoint, SECRET)
    assert not report.ok and report.first_bad == 4
    assert report.problem == (
        "the checkpoint counted 5 records, the log holds 3: records 4 to 5 were deleted"
    )
    # and the next append reusing id 4 is no cover
    record(filled)
    assert filled.verify(TOKEN, checkpoint, SECRET).first_bad == 5


def test_a_row_edited_and_every_hash_after_it_recomputed_shows_against_a_checkpoint(
    filled: AuditLog, location: str
) -> None:
    checkpoint = filled.checkpoint(TOKEN, SECRET)
    raw(location, "UPDATE verification SET verdict = 'match' WHERE id = 2")
    previous = filled.get(TOKEN, 1).record_sha256
    columns = "time_utc, image_sha256, profile, verdict, reading, declared, computed, differences"
    for row in filled._query(f"SELECT id, {columns} FROM verification ORDER BY id", []):
        if row[0] == 1:
            continue
        digest = audit_module.chain_hash(previous, [str(value) for value in row[1:]])
        raw(location, f"UPDATE verification SET record_sha256 = '{digest}' WHERE id = {row[0]}")
        previous = digest
    assert filled.verify(TOKEN).ok  # a chain without a key is re-hashed at will
    report = filled.verify(TOKEN, checkpoint, SECRET)
    assert not report.ok and report.first_bad == 5 and "rewritten" in str(report.problem)


def _rehash_from(log: AuditLog, location: str, first: int, key: bytes | None) -> None:
    """Every hash from record ``first`` on computed again, as one who can write the
    database but holds ``key`` (None: no secret) would."""
    columns = "time_utc, image_sha256, profile, verdict, reading, declared, computed, differences"
    rows = log._query(f"SELECT id, {columns}, record_sha256 FROM verification ORDER BY id", [])
    previous = audit_module.GENESIS if first == 1 else rows[first - 2][-1]
    for row in rows[first - 1 :]:
        previous = audit_module.chain_hash(previous, [str(value) for value in row[1:-1]], key)
        raw(location, f"UPDATE verification SET record_sha256 = '{previous}' WHERE id = {row[0]}")


def _keyed(location: str, key: str = SECRET) -> AuditLog:
    log = AuditLog(location, token=TOKEN, key=key)
    for minute in range(4):
        record(log, time=T0 + timedelta(minutes=minute))
    return log


def test_a_keyed_chain_shows_a_row_edited_and_every_hash_after_it_recomputed(
    location: str,
) -> None:
    """Under the operator secret the chain cannot be computed again without it: the edited
    record is named, whether the hashes after it, or all of them, are recomputed."""
    log = _keyed(location)
    assert log.verify(TOKEN).ok
    raw(location, "UPDATE verification SET verdict = 'mismatch' WHERE id = 2")
    _rehash_from(log, location, 2, None)
    report = log.verify(TOKEN)
    assert not report.ok and report.first_bad == 2 and "edited, or re-hashed" in str(report.problem)
    _rehash_from(log, location, 1, None)  # the whole trail as a chain without the secret
    report = log.verify(TOKEN)
    assert not report.ok and report.first_bad == 1
    assert "chained without the operator secret" in str(report.problem)
    _rehash_from(log, location, 1, b"a guessed secret")
    assert log.verify(TOKEN).first_bad == 1
    assert AuditLog(location, token=TOKEN, key="a guessed secret").verify(TOKEN).ok is True


def test_a_trail_is_appended_to_only_as_it_is_chained(location: str) -> None:
    """A log refuses to append to a trail chained the other way (a chain of both kinds would
    not hold); ``rekey`` chains a trail kept without the secret under it, once it holds."""
    plain = AuditLog(location, token=TOKEN, key="")
    for minute in range(3):
        record(plain, time=T0 + timedelta(minutes=minute))
    keyed = AuditLog(location, token=TOKEN, key=SECRET)
    with pytest.raises(AuditError, match=r"chained without the operator secret .*audit rekey"):
        record(keyed)
    assert keyed.verify(TOKEN).first_bad == 1
    raw(location, "UPDATE verification SET verdict = 'mismatch' WHERE id = 2")
    with pytest.raises(AuditError, match="the trail does not hold, nothing chained again"):
        keyed.rekey(TOKEN)
    raw(location, "UPDATE verification SET verdict = 'match' WHERE id = 2")
    assert plain.verify(TOKEN).ok
    with pytest.raises(AuditError, match="needs HANDREADER_AUDIT_KEY"):
        plain.rekey(TOKEN)
    assert keyed.rekey(TOKEN) == 3
    assert keyed.rekey(TOKEN) == 0  # already chained under it
    assert keyed.verify(TOKEN).ok and record(keyed) == 4 and keyed.verify(TOKEN).records == 4
    with pytest.raises(AuditError, match="chained under the operator secret: set"):
        record(AuditLog(location, token=TOKEN, key=""))
    assert "needs HANDREADER_AUDIT_KEY" in str(
        AuditLog(location, token=TOKEN, key="").verify(TOKEN).problem
    )


def test_a_checkpoint_under_another_secret_or_malformed_is_refused(filled: AuditLog) -> None:
    checkpoint = filled.checkpoint(TOKEN, SECRET)
    with pytest.raises(AuditError, match="signature does not hold"):
        filled.verify(TOKEN, checkpoint, "another secret")
    forged = audit_module.Checkpoint(9, checkpoint.head, checkpoint.signature)
    with pytest.raises(AuditError, match="signature does not hold"):
        filled.verify(TOKEN, forged, SECRET)
    with pytest.raises(AuditError, match="needs the operator secret"):
        filled.verify(TOKEN, checkpoint, None)
    with pytest.raises(AuditError, match="checkpoint head must be 64 hex digits"):
        audit_module.Checkpoint.from_dict({"count": 1, "head": "x", "signature": "0" * 64})
    assert audit_module.Checkpoint.from_dict(checkpoint.to_dict()) == checkpoint


def test_a_row_whose_stored_json_is_damaged_is_flagged_and_the_export_goes_on(
    filled: AuditLog, location: str
) -> None:
    raw(location, "UPDATE verification SET reading = '{not json' WHERE id = 2")
    records = filled.records(TOKEN)
    assert [r.record_id for r in records] == [1, 2, 3, 4, 5]
    assert records[1].damaged == ("reading",) and records[1].reading == "{not json"
    assert records[0].damaged == ()
    exported = json.loads(filled.export_json(TOKEN))
    assert exported[1]["damaged"] == ["reading"] and "damaged" not in exported[0]
    assert filled.export_csv(TOKEN).count("\r\n") == 6
    assert filled.verify(TOKEN).first_bad == 2  # and the edit breaks the chain


# --- threads -----------------------------------------------------------------------------------


def test_threads_and_two_connections_append_without_losing_a_record(location: str) -> None:
    logs = [AuditLog(location, token=TOKEN), AuditLog(location, token=TOKEN)]
    ids: list[int] = []
    lock = threading.Lock()

    def writer(number: int) -> None:
        for _ in range(25):
            record_id = record(logs[number % 2], profile=f"p{number}")
            with lock:
                ids.append(record_id)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(ids) == list(range(1, 201))
    assert logs[0].count(TOKEN) == 200
    assert logs[1].verify_chain(TOKEN) is None  # the chain is serial across connections
    assert logs[0].integrity_check(TOKEN) == "ok"


# --- durability: kill -9 during a stream of writes ------------------------------------------------

WRITER = """
import sys
from handreader.store.audit import AuditLog

log = AuditLog(sys.argv[1], token=sys.argv[2])
print("ready", flush=True)
while True:
    record_id = log.append(
        sys.argv[2], image_sha256="cd" * 32, reading={"cards": [{"card": "10H"}] * 20},
        profile="trainer", declared={"players": []}, computed={"players": [], "pad": "x" * 2000},
        verdict="match",
    )
    print(record_id, flush=True)
"""


def test_kill_9_during_writes_loses_no_committed_record_and_corrupts_nothing(
    location: str,
) -> None:
    rng = np.random.default_rng(20261129)
    committed: list[int] = []
    for _ in range(6):
        process = subprocess.Popen(
            [sys.executable, "-c", WRITER, location, TOKEN],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[3],
        )
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        wanted = int(rng.integers(5, 60))
        while wanted > 0:
            line = process.stdout.readline()
            assert line.endswith("\n"), "the writer died on its own"
            committed.append(int(line))
            wanted -= 1
        time.sleep(float(rng.uniform(0.0, 0.02)))  # land the kill anywhere in the next write
        os.kill(process.pid, signal.SIGKILL)
        committed += [int(line) for line in process.stdout.read().split() if line.isdigit()]
        process.stdout.close()
        assert process.wait() == -signal.SIGKILL
        if not location.startswith("postgresql://"):
            assert raw(location, "PRAGMA integrity_check") == [("ok",)]
        present = {row[0] for row in raw(location, "SELECT id FROM verification")}
        assert set(committed) <= present
        assert present == set(range(1, len(present) + 1))  # no gap
    with AuditLog(location, token=TOKEN) as log:
        assert log.integrity_check(TOKEN) == "ok"
        assert log.verify_chain(TOKEN) is None
        assert log.count(TOKEN) >= len(committed) > 6 * 5
