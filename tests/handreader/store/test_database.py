"""The store's database layer on both backends: migrations under concurrency, a clear error for
an unreachable database, a broken connection opened again, what ``/health`` reports.

Expectations come from ``handreader/store/database.py``'s docstring and from the product's
requirements: "Schema created and migrated by the service itself (versioned), with a clear error
when the database is unreachable; /health reports the store".
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest
from store_databases import raw

from handreader.store.database import (
    CommitGate,
    SqliteDatabase,
    StoreError,
    StoreUnavailableError,
    Transaction,
    _why_unopened,
    gated,
    open_database,
    redact_url,
)

needs_psycopg = pytest.mark.skipif(
    importlib.util.find_spec("psycopg") is None,
    reason="needs psycopg: pip install -e '.[postgres]'",
)


def test_opening_creates_the_schema_at_the_latest_version(location: str) -> None:
    with open_database(location) as database:
        assert database.schema_version() == 1
        assert database.read("SELECT count(*) FROM verification") == [(0,)]
        report = database.describe()
    assert report["ok"] is True and report["schema_version"] == 1
    assert report["backend"] == ("postgresql" if location.startswith("postgresql") else "sqlite")


def test_processes_opening_together_migrate_once(location: str) -> None:
    errors: list[BaseException] = []

    def open_and_close() -> None:
        try:
            open_database(location).close()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_and_close) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert raw(location, "SELECT version FROM schema_version") == [(1,)]


def test_a_write_is_one_transaction_rolled_back_on_error(location: str) -> None:
    with open_database(location) as database:

        def half_done(transaction: Transaction) -> None:
            transaction.all(
                "INSERT INTO schema_version (version, applied_utc, description) "
                "VALUES (50, 'x', 'y')"
            )
            raise RuntimeError("stopped halfway")

        with pytest.raises(RuntimeError, match="stopped halfway"):
            database.write(half_done, serialize=7)
        assert database.schema_version() == 1  # the insert was rolled back


def test_a_snapshot_reads_one_state_while_writes_go_on_and_writes_nothing(
    location: str,
) -> None:
    """``Database.snapshot``: its queries see the database as its first one did, while the
    database's own connection commits beside it; a write inside it is refused."""
    version = "SELECT max(version) FROM schema_version"

    def add(number: int) -> None:
        def note(transaction: Transaction) -> None:
            transaction.all(
                "INSERT INTO schema_version (version, applied_utc, description) "
                "VALUES (?, 'x', 'y')",
                [number],
            )

        database.write(note)

    with open_database(location) as database:
        with database.snapshot() as snapshot:
            assert snapshot.all(version) == [(1,)]
            add(50)  # committed on the database's own connection
            raw(location, "INSERT INTO schema_version VALUES (51, 'x', 'y')")  # and on another
            assert snapshot.one(version) == (1,)
            with pytest.raises(StoreError, match="cannot read database"):
                snapshot.all("INSERT INTO schema_version VALUES (52, 'x', 'y')")
        assert database.read(version) == [(51,)]
    assert raw(location, "SELECT count(*) FROM schema_version WHERE version = 52") == [(0,)]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@needs_psycopg
def test_an_unreachable_database_is_a_clear_error_without_the_password() -> None:
    url = f"postgresql://floor:s3cret@127.0.0.1:{_closed_port()}/audit"
    with pytest.raises(StoreUnavailableError) as caught:
        open_database(url, timeout_s=2)
    message = str(caught.value)
    assert message.startswith("cannot reach database 'postgresql://floor:***@127.0.0.1:")
    assert "s3cret" not in message


def test_an_sqlite_file_that_cannot_be_opened_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(
        StoreError, match=r"cannot open database .*\(no folder '.*missing'\)"
    ) as error:
        open_database(tmp_path / "missing" / "store.sqlite3")
    assert not isinstance(error.value, StoreUnavailableError)  # a setting: 500, not "wait" (503)
    with pytest.raises(StoreError, match=r"\(it is a folder: name a file\)"):
        open_database(tmp_path)
    (tmp_path / "data").write_text("a file, not the data folder")
    for below in ("data", "data/audit"):
        with pytest.raises(StoreError, match=r"\('.*data' is a file where a folder should be\)"):
            open_database(tmp_path / below / "store.sqlite3")
    assert _why_unopened(tmp_path / "store.sqlite3") == ""  # a writable folder: nothing to say
    # a read-only file system, or a folder the user may not write (root may write any): as
    # access(2) answers for it
    access = os.access
    monkeypatch.setattr(
        "os.access", lambda path, mode: str(path) != str(tmp_path) and access(path, mode)
    )
    message = _why_unopened(tmp_path / "store.sqlite3")
    assert message.startswith(f" (the folder '{tmp_path}' is not writable: a read-only file")


def test_a_broken_postgresql_connection_is_opened_again(postgres_schema: str) -> None:
    with open_database(postgres_schema) as database:
        (pid,) = database.read("SELECT pg_backend_pid()")[0]
        raw(postgres_schema, "SELECT pg_terminate_backend(?)", (pid,))
        assert database.read("SELECT 1") == [(1,)]  # asked again on a new connection
        (again,) = database.read("SELECT pg_backend_pid()")[0]
        assert again != pid
        raw(postgres_schema, "SELECT pg_terminate_backend(?)", (again,))
        assert database.describe()["ok"] is True


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@db.local:5433/h", "postgresql://u:***@db.local:5433/h"),
        ("postgresql://u@db.local/h", "postgresql://u@db.local/h"),
        ("postgres://u:p%40ss@[::1]/h?sslmode=require", "postgres://u:***@[::1]/h?sslmode=require"),
        # libpq also takes the password as a parameter
        (
            "postgresql://u@db/h?sslmode=require&password=pgSECRET&sslpassword=k",
            "postgresql://u@db/h?sslmode=require&password=***&sslpassword=***",
        ),
        ("postgresql://u:pw@db/h?Password=x", "postgresql://u:***@db/h?Password=***"),
    ],
)
def test_urls_are_shown_without_their_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown


class _LockedTwice:
    """A connection whose first two statements find the file locked."""

    def __init__(self) -> None:
        self.calls = 0

    def execute(self, sql: str) -> _LockedTwice:
        self.calls += 1
        if self.calls <= 2:
            raise sqlite3.OperationalError("database is locked")
        return self

    def fetchone(self) -> tuple[str]:
        return ("wal",)


def test_a_pragma_waits_while_another_connection_holds_the_file() -> None:
    database = SqliteDatabase.__new__(SqliteDatabase)
    database.connection = _LockedTwice()  # type: ignore[assignment]
    assert database._pragma_waiting("PRAGMA journal_mode=WAL", timeout_s=5.0) == "wal"
    assert database.connection.calls == 3  # type: ignore[attr-defined]


def test_a_pragma_gives_up_when_the_file_stays_locked() -> None:
    database = SqliteDatabase.__new__(SqliteDatabase)
    database.connection = _LockedTwice()  # type: ignore[assignment]
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        database._pragma_waiting("PRAGMA journal_mode=WAL", timeout_s=0.0)


def test_a_gate_lets_a_write_commit_or_its_caller_give_up_never_both(location: str) -> None:
    """A caller that gave up before the commit finds nothing written, on either backend."""
    base = open_database(location)
    base.write(lambda t: t.all("CREATE TABLE item (n INTEGER)"))
    started, release = threading.Event(), threading.Event()
    outcome: list[object] = []

    def slow(transaction: Transaction) -> None:
        transaction.all("INSERT INTO item VALUES (1)")
        started.set()
        release.wait(5)

    def writer(gate: CommitGate) -> None:
        with gated(gate):
            try:
                base.write(slow)
                outcome.append("committed")
            except StoreUnavailableError as error:
                outcome.append(str(error))

    given_up = CommitGate()
    thread = threading.Thread(target=writer, args=(given_up,))
    thread.start()
    assert started.wait(5)
    assert given_up.give_up() is True  # before the commit: none will happen
    release.set()
    thread.join(5)
    assert outcome == ["the caller stopped waiting: the write was rolled back"]
    assert base.read("SELECT count(*) FROM item") == [(0,)]

    committing = CommitGate()
    assert committing.enter_commit() is True
    assert committing.give_up() is False  # the commit began: its outcome is the answer
    base.close()


def _insert(database: SqliteDatabase, name: str) -> None:
    def note(transaction: Transaction) -> None:
        transaction.all("CREATE TABLE IF NOT EXISTS note (name TEXT NOT NULL)")
        transaction.all("INSERT INTO note (name) VALUES (?)", [name])

    database.write(note)


def _snapshot_read(database: SqliteDatabase) -> None:
    with database.snapshot() as snapshot:
        snapshot.all("SELECT 1")


def _names(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as connection:
        return [row[0] for row in connection.execute("SELECT name FROM note ORDER BY name")]


def test_an_sqlite_file_removed_or_replaced_while_open_is_refused(tmp_path: Path) -> None:
    """A write after the file at the path was replaced (a restore moved into place) or
    removed is refused, naming it, rather than made to a file no name reaches any more
    (acknowledged, then lost on restart); the file now at the path is left as it is."""
    path = tmp_path / "store.sqlite3"
    database = SqliteDatabase(path)
    _insert(database, "before")
    backup = tmp_path / "backup.sqlite3"
    with closing(sqlite3.connect(path)) as source, closing(sqlite3.connect(backup)) as copy:
        source.backup(copy)
    _insert(database, "stored")
    os.replace(backup, path)  # a restore, moved into place while the service runs
    for attempt in (
        lambda: _insert(database, "lost"),
        lambda: database.read("SELECT 1"),
        lambda: _snapshot_read(database),
    ):
        with pytest.raises(StoreError, match="was removed or replaced while open"):
            attempt()
    for leftover in tmp_path.glob("store.sqlite3*"):
        leftover.unlink()  # the whole file removed
    with pytest.raises(StoreError, match="was removed or replaced while open"):
        _insert(database, "lost")
    assert not path.exists()  # (no new file made behind the operator's back)
    database.close()
    reopened = SqliteDatabase(path)  # a restart opens the file now at the path
    _insert(reopened, "after the restart")
    assert _names(path) == ["after the restart"]
    reopened.close()


def test_an_sqlite_log_removed_while_open_is_refused(tmp_path: Path) -> None:
    """Its -wal file removed under a running service: what it took and what would follow
    live in a file no name reaches (lost at the next start), so the next write is refused."""
    path = tmp_path / "store.sqlite3"
    database = SqliteDatabase(path)
    _insert(database, "before")
    for beside in ("-wal", "-shm"):
        Path(f"{path}{beside}").unlink()
    with pytest.raises(StoreError, match=r"\(or its -wal file\) was removed or replaced"):
        _insert(database, "lost")
    database.close()
