"""``handreader audit`` on databases that are not what it expects: another program's database
is refused in one line and left as it was, the checks only read a store, a damaged SQLite file
fails the check, and a checkpoint file that is no JSON one is a one-line error.

Expectations come from docs/cli.md ("Audit trail": exit 1 when the trail does not hold, 2 for a
bad setting or input; no action starts, migrates or writes to what is not an audit store) and
``handreader/store/audit.py`` (``AuditLog``: ``create`` False reads the database only).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest
from store_databases import raw
from test_audit import T0, TOKEN, record

from handreader import cli
from handreader.store.audit import AuditError, AuditLog, format_time
from handreader.store.audit_trail import GENESIS, chain_hash

NOT_A_STORE = "is not a handreader audit store (it has no {table} table): nothing was changed"
COLUMNS = (
    "id, time_utc, image_sha256, profile, verdict, reading, declared, computed, differences, "
    "record_sha256"
)


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """The command's settings: the operator token, no database URL, no operator secret."""
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    monkeypatch.delenv("HANDREADER_DATABASE_URL", raising=False)
    monkeypatch.delenv("HANDREADER_AUDIT_KEY", raising=False)
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path / "data"))
    return monkeypatch


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tables(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as connection:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return sorted(row[0] for row in rows)


def _customers(path: Path, user_version: int = 0) -> Path:
    """Another program's SQLite database: a ``customers`` table, journal mode ``delete``."""
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO customers (name) VALUES ('Ada')")
        connection.execute(f"PRAGMA user_version={user_version}")
        connection.commit()
    return path


def _run(*arguments: str) -> int:
    return cli.main(["audit", *arguments])


@pytest.mark.parametrize(("user_version", "missing"), [(0, "verification"), (1, "verification")])
def test_another_programs_sqlite_database_is_refused_and_left_as_it_was(
    user_version: int,
    missing: str,
    tmp_path: Path,
    environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """It reported "the trail holds: 0 records" (exit 0) after making the store's tables in it
    and switching it to WAL."""
    path = _customers(tmp_path / "crm.db", user_version)
    before = _digest(path)
    environment.setenv("HANDREADER_AUDIT_DB", str(path))
    environment.setenv("HANDREADER_AUDIT_KEY", "operator secret")
    for action in ("verify", "checkpoint", "rekey"):
        assert _run(action) == 2
        err = capsys.readouterr().err
        expected = f"database '{path}' " + NOT_A_STORE.format(table=missing)
        assert err == f"handreader audit: error: {expected}\n"
    assert _digest(path) == before
    assert _tables(path) == ["customers"]
    assert sorted(item.name for item in tmp_path.iterdir()) == ["crm.db"]  # no -wal, no -shm
    with closing(sqlite3.connect(path)) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("delete",)


def test_another_programs_postgresql_schema_is_refused_and_left_as_it_was(
    postgres_schema: str, environment: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    raw(postgres_schema, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    environment.setenv("HANDREADER_DATABASE_URL", postgres_schema)
    assert _run("verify") == 2
    assert NOT_A_STORE.format(table="verification") in capsys.readouterr().err
    tables = raw(
        postgres_schema,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
    )
    assert tables == [("customers",)]


@pytest.mark.parametrize("version", ["'2.0-beta'", "99"])
def test_another_programs_schema_version_table_is_not_read_as_the_stores(
    version: str,
    tmp_path: Path,
    environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Another program may keep a schema_version table of its own: its versions (a text, a
    number above this release's) were read as the store's ("invalid literal for int()",
    "newer than 1: upgrade handreader") before the store was recognised."""
    path = _customers(tmp_path / "crm.db")
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE schema_version (version, applied_utc, description)")
        connection.execute(f"INSERT INTO schema_version VALUES ({version}, 'x', 'y')")
        connection.commit()
    before = _digest(path)
    environment.setenv("HANDREADER_AUDIT_DB", str(path))
    environment.setenv("HANDREADER_AUDIT_KEY", "operator secret")
    for action in ("verify", "checkpoint", "rekey"):
        assert _run(action) == 2
        expected = f"database '{path}' " + NOT_A_STORE.format(table="verification")
        assert capsys.readouterr().err == f"handreader audit: error: {expected}\n"
    assert _digest(path) == before


def test_a_check_leaves_a_leftover_wal_file_as_it_was(
    tmp_path: Path, environment: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store copied while open (or left by a crash) keeps committed records in its -wal
    file: verify and checkpoint read them without folding the -wal into the file (a
    read-write connection did so as it closed, changing the file's bytes and deleting the
    -wal); rekey, which writes, may."""
    live, copy = tmp_path / "live.sqlite3", tmp_path / "copy.sqlite3"
    with AuditLog(live, token=TOKEN, key="operator secret") as log:
        log.database.read("PRAGMA wal_autocheckpoint=0")
        assert record(log) == 1 and record(log) == 2
        for suffix in ("", "-wal"):  # (copied while open: the records are in the -wal)
            Path(f"{copy}{suffix}").write_bytes(Path(f"{live}{suffix}").read_bytes())
    wal = Path(f"{copy}-wal")
    assert wal.stat().st_size > 0
    before = (_digest(copy), _digest(wal))
    environment.setenv("HANDREADER_AUDIT_DB", str(copy))
    environment.setenv("HANDREADER_AUDIT_KEY", "operator secret")
    assert _run("verify") == 0
    assert "the trail holds: 2 records" in capsys.readouterr().out
    assert _run("checkpoint") == 0
    assert '"count": 2' in capsys.readouterr().out
    assert wal.exists() and (_digest(copy), _digest(wal)) == before


def test_a_log_opened_read_only_refuses_every_write(location: str) -> None:
    with AuditLog(location, token=TOKEN, key="") as log:
        assert record(log) == 1
    with AuditLog(location, token=TOKEN, key="", create=False, read_only=True) as log:
        assert log.verify(TOKEN).records == 1
        with pytest.raises(AuditError, match=r"read-only|readonly"):
            record(log)
    with pytest.raises(AuditError, match="read-only cannot create"):
        AuditLog(location, token=TOKEN, read_only=True)
    assert raw(location, "SELECT count(*) FROM verification") == [(1,)]


def test_the_checks_only_read_a_store(
    location: str, environment: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """verify and checkpoint write nothing (an SQLite file keeps its bytes); the service's
    first use makes the store, which no check does."""
    with AuditLog(location, token=TOKEN, key="") as log:  # as the service opens it: made
        assert record(log) == 1
    if location.startswith("postgresql://"):
        environment.setenv("HANDREADER_DATABASE_URL", location)
    else:
        environment.setenv("HANDREADER_AUDIT_DB", location)
        before = _digest(Path(location))
    assert _run("verify") == 0
    assert "the trail holds: 1 record, head " in capsys.readouterr().out  # one: singular
    if not location.startswith("postgresql://"):
        assert _digest(Path(location)) == before
    assert raw(location, "SELECT count(*) FROM verification") == [(1,)]


def test_a_store_of_the_first_release_is_checked_without_being_migrated(
    tmp_path: Path, environment: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first release recorded its schema only in SQLite's user_version: the check reads
    it as it is; the service's start, not the check, adds the schema_version table."""
    path = tmp_path / "audit.sqlite3"
    with AuditLog(path, token=TOKEN, key="") as log:
        record(log)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("DROP TABLE schema_version")
        connection.execute("PRAGMA user_version=1")
        connection.commit()
    environment.setenv("HANDREADER_AUDIT_DB", str(path))
    assert _run("verify") == 0
    assert "the trail holds: 1 record, head " in capsys.readouterr().out  # one: singular
    assert "schema_version" not in _tables(path)
    AuditLog(path, token=TOKEN).close()
    assert "schema_version" in _tables(path)


def test_opening_as_it_is_never_makes_a_file(tmp_path: Path) -> None:
    missing = tmp_path / "audit.sqlite3"
    with pytest.raises(AuditError, match="no such file"):
        AuditLog(missing, token=TOKEN, create=False)
    assert not missing.exists()
    AuditLog(missing, token=TOKEN).close()  # the service's first start makes it
    with AuditLog(missing, token=TOKEN, create=False) as log:
        assert log.count(TOKEN) == 0


# --- a damaged SQLite file -----------------------------------------------------------------------


def _filled(path: Path, records: int = 400) -> None:
    """A store of ``records`` chained records, written in one transaction: enough for the
    table and its time index to span pages below an interior root page."""
    with AuditLog(path, token=TOKEN, key="") as log:
        previous = GENESIS
        rows = []
        for number in range(1, records + 1):
            moment = format_time(T0 + timedelta(seconds=number))
            fields = [moment, "ab" * 32, "trainer", "match", "{}", "{}", "{}", "[]"]
            previous = chain_hash(previous, fields)
            rows.append((number, *fields, previous))
        log.database.write(
            lambda transaction: [
                transaction.all(
                    f"INSERT INTO verification ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                for row in rows
            ]
        )
        assert log.verify(TOKEN).records == records


def _overwrite(path: Path, name: str, *, leaf: bool) -> None:
    """The root page of table or index ``name`` overwritten whole, or (``leaf``) the cells of
    the last page below it (the right-most child the interior root page points to), as a disk
    that lost a block would leave it."""
    with closing(sqlite3.connect(path)) as connection:
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)
        ).fetchone()
        (size,) = connection.execute("PRAGMA page_size").fetchone()
    data = bytearray(path.read_bytes())
    page, start = root, 0
    if leaf:
        assert data[(root - 1) * size] in (0x02, 0x05)  # an interior b-tree page
        page = int.from_bytes(data[(root - 1) * size + 8 : (root - 1) * size + 12], "big")
        start = 8
    data[(page - 1) * size + start : page * size] = b"\x55" * (size - start)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("name", "leaf", "found"),
    [
        ("verification_time", True, r"On tree page \d+ cell \d+: .+ \(and \d+ more\)"),
        ("verification_time", False, "database disk image is malformed"),
        ("verification", True, r".+"),  # the records' own pages: their walk fails too
    ],
)
def test_a_damaged_sqlite_file_fails_the_check_in_one_line(
    name: str,
    leaf: bool,
    found: str,
    tmp_path: Path,
    environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A block of the file overwritten where the walk over the records does not read (an
    index) was reported as a sound trail, exit 0; the check now runs SQLite's integrity check
    and fails, exit 1, in one line."""
    path = tmp_path / "audit.sqlite3"
    _filled(path)
    _overwrite(path, name, leaf=leaf)
    environment.setenv("HANDREADER_AUDIT_DB", str(path))
    assert _run("verify") == 1
    out = capsys.readouterr().out
    assert re.fullmatch(
        f"the trail does not hold: the database does not pass its integrity check: {found}\n",
        out,
    ), out
    assert _run("verify", "--json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["first_bad"] is None
    assert report["problem"].startswith("the database does not pass its integrity check: ")
    environment.setenv("HANDREADER_AUDIT_KEY", "operator secret")
    assert _run("checkpoint") == 2
    err = capsys.readouterr().err
    assert err.startswith("handreader audit: error: the trail does not hold, no checkpoint made")
    assert err.count("\n") == 1


# --- a checkpoint file that is no checkpoint -----------------------------------------------------


DEEP = "--checkpoint '{file}': not a checkpoint (its JSON nests arrays or objects too deeply)"
NOT_JSON = "--checkpoint '{file}': not JSON "


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000, DEEP),
        ('{"a": ' * 100_000, DEEP),
        ("[" * 50 + "]" * 50, "a checkpoint is a JSON object with count, head and signature"),
        ("{", NOT_JSON + "(Expecting property name enclosed in double quotes)"),
    ],
)
def test_a_checkpoint_file_that_is_no_checkpoint_is_one_line_exit_2(
    text: str,
    message: str,
    tmp_path: Path,
    environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A deeply nested file gave a RecursionError traceback (exit 1); the HTTP route answers
    the same body a 400."""
    path = tmp_path / "audit.sqlite3"
    with AuditLog(path, token=TOKEN, key="") as log:
        record(log)
    environment.setenv("HANDREADER_AUDIT_DB", str(path))
    environment.setenv("HANDREADER_AUDIT_KEY", "operator secret")
    kept = tmp_path / "cp.json"
    kept.write_text(text)
    assert _run("verify", "--checkpoint", str(kept)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"handreader audit: error: {message.format(file=kept)}\n"
