"""The database under the store: SQLite (embedded, the default) or PostgreSQL (shared).

:func:`open_database` takes a location: a file path (SQLite, WAL mode, ``synchronous=FULL``)
or a ``postgresql://`` URL (PostgreSQL through psycopg 3, the ``postgres`` extra). Both give a
:class:`Database`: reads, and writes that run as one transaction each and return only once
committed. A write may ask to be *serialized*: on SQLite every write transaction is (``BEGIN
IMMEDIATE``), on PostgreSQL a serialized write first takes a transaction-level advisory lock
(``pg_advisory_xact_lock``), so writers in any number of processes, on any number of machines,
run one after the other; the lock lives in the database, never in a process's memory. A write
that waits for its lock says so when its caller gives up (:meth:`CommitGate.waiting_for`), and
on PostgreSQL the server ends a connection of the store left idle inside a transaction
(:data:`~handreader.store.postgres_database.IDLE_IN_TRANSACTION_TIMEOUT_S`), so a writer stalled
while holding a lock gives it up.

SQL is written once with ``?`` placeholders; the PostgreSQL backend turns them into ``%s``.

The schema is versioned (:mod:`handreader.store.schema`): opening a database applies the
migrations it lacks, one transaction each, recorded in the ``schema_version`` table, under a
lock so that two processes starting together migrate once. A database of a newer schema than
this release knows is refused.

Errors: :class:`StoreUnavailableError` when the database cannot be reached (a server down, a
refused login, a file that cannot be opened), :class:`StoreError` for anything else the
database refuses. A PostgreSQL connection that broke is opened again on the next call; a read,
and a write whose connection is found broken as its transaction begins (the server restarted),
is made on the new connection at once, while a write whose transaction had begun is not made
again.

Threads: one connection per :class:`Database`, guarded by a lock: one object serves a pool.

A caller that stops waiting for a write (the service answers 503 after a few seconds) must not
find it committed later: :class:`CommitGate`, given to the thread that writes
(:func:`gated`), lets a write commit only if the caller has not given up, and a caller give up
only if the commit has not begun; a write given up on is rolled back.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from handreader.store.database_base import (
    FULL_MESSAGE,
    MIGRATION_LOCK,
    CommitGate,
    Database,
    Dialect,
    NotAStoreError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
    Transaction,
    enter_commit,
    gated,
)
from handreader.store.database_url import (
    DATABASE_URL_ENV,
    configured_url,
    is_database_url,
    redact_url,
    url_problem,
)
from handreader.store.postgres_database import PostgresDatabase
from handreader.store.schema import MIGRATIONS, Migration

__all__ = [
    "DATABASE_URL_ENV",
    "FULL_MESSAGE",
    "MIGRATION_LOCK",
    "CommitGate",
    "Database",
    "NotAStoreError",
    "PostgresDatabase",
    "SqliteDatabase",
    "StoreError",
    "StoreFullError",
    "StoreUnavailableError",
    "Transaction",
    "configured_url",
    "gated",
    "is_database_url",
    "open_database",
    "redact_url",
    "url_problem",
]

Result = TypeVar("Result")

# --- SQLite ----------------------------------------------------------------------------------


def _why_unopened(path: Path) -> str:
    """What keeps SQLite from a database file, said after its own "unable to open database
    file" ("" when nothing shows): WAL mode writes two files beside it, so its folder must be
    writable even to read it."""
    folder = path.parent
    if not folder.is_dir():
        there = next((above for above in (folder, *folder.parents) if above.exists()), None)
        if there is not None and not there.is_dir():
            return f" ({str(there)!r} is a file where a folder should be)"
        return f" (no folder {str(folder)!r})"
    if path.is_dir():
        return " (it is a folder: name a file)"
    if not os.access(folder, os.W_OK | os.X_OK):
        return (
            f" (the folder {str(folder)!r} is not writable: a read-only file system or its "
            "permissions; the database and the two files beside it need a writable folder)"
        )
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return " (the file is not readable and writable by the user the process runs as)"
    return ""


def _file_identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``; None when there is none."""
    with contextlib.suppress(OSError):
        found = os.stat(path)
        return (found.st_dev, found.st_ino)
    return None


class SqliteDatabase(Database):
    """The SQLite file ``path`` (created when missing), in WAL mode with ``synchronous=FULL``;
    ``migrate`` False opens the file as it is, only read to open it (no file made, no journal
    mode set, no schema made or migrated: :meth:`Database._open`); ``read_only`` too (with
    ``migrate`` False) opens it read-only (``mode=ro``), for what only checks it: nothing of
    the file or its ``-wal`` is written, not even the ``-wal`` left by a crash or copied with
    a backup, which a read-write connection folds into the file as it closes (SQLite may make
    the ``-shm`` index beside them), and every write is refused (StoreError).

    ``timeout_s`` is how long a write waits for another process's lock. The file or its
    ``-wal`` file removed or replaced while open (a restore moved into place) is found before
    each read and write, which are refused (StoreError), not made where no name reaches any
    more; a restart opens the file now at the path.
    """

    dialect: Dialect = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        timeout_s: float = 30.0,
        migrations: Sequence[Migration] = MIGRATIONS,
        migrate: bool = True,
        read_only: bool = False,
    ) -> None:
        super().__init__()
        if read_only and migrate:
            raise StoreError("a database opened read-only cannot be migrated")
        self.path = Path(path)
        self.location = str(path)
        self._timeout_s = timeout_s
        if not migrate and not self.path.is_file():
            raise StoreError(f"cannot open database {self.location!r}: no such file")
        try:
            connection = sqlite3.connect(
                self.location
                if migrate
                else f"file:{quote(self.location)}?mode={'ro' if read_only else 'rw'}",
                timeout=timeout_s,
                isolation_level=None,
                check_same_thread=False,
                uri=not migrate,
            )
        except sqlite3.Error as error:
            why = _why_unopened(self.path)  # (a setting to mend, not a database to wait for)
            failure = StoreError if why else StoreUnavailableError
            raise failure(f"cannot open database {self.location!r}: {error}{why}") from None
        self.connection, self._identity = connection, _file_identity(self.path)
        self._wal_path = Path(f"{self.location}-wal")
        self._wal: tuple[int, int] | None = None  # (taken when the log is first there)
        try:
            mode = self._pragma_waiting("PRAGMA journal_mode=WAL", timeout_s) if migrate else "wal"
            if str(mode).lower() != "wal":
                raise StoreError(
                    f"database {self.location!r} cannot use WAL (journal mode {mode!r})"
                )
            self.connection.execute("PRAGMA synchronous=FULL")
            legacy = int(self._pragma_waiting("PRAGMA user_version", timeout_s))
            self._open(migrations, legacy, migrate=migrate)
        except (sqlite3.Error, StoreError) as error:
            self.connection.close()
            if isinstance(error, StoreError):
                raise
            raise StoreError(
                f"cannot use database {self.location!r}: {error}{_why_unopened(self.path)}"
            ) from None

    def _check_path(self) -> None:
        """StoreError when the file at the path or its ``-wal`` is not the one open."""
        wal = _file_identity(self._wal_path)
        if self._wal is None:
            self._wal = wal
        if _file_identity(self.path) != self._identity or wal != self._wal:
            raise StoreError(
                f"database {self.location!r} (or its -wal file) was removed or replaced while "
                "open: nothing "
                "more is written to it; restart to open the file now there (restore a "
                "database only while the service is stopped, its -wal file with it)"
            )

    def _pragma_waiting(self, pragma: str, timeout_s: float) -> Any:
        """The first value ``pragma`` returns, waiting up to ``timeout_s`` while another
        connection holds the file: switching a new file to WAL answers "database is locked"
        at once, without SQLite's busy handler, while another process is creating it."""
        deadline = time.monotonic() + timeout_s
        pause_s = 0.005
        while True:
            try:
                return self.connection.execute(pragma).fetchone()[0]
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error):
                    raise
                if time.monotonic() + pause_s > deadline:
                    raise
            time.sleep(pause_s)
            pause_s = min(pause_s * 2, 0.2)

    def read(self, sql: str, values: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        self._check_path()
        with self._lock:
            try:
                return self.connection.execute(sql, tuple(values)).fetchall()
            except sqlite3.Error as error:
                raise StoreError(f"cannot read database {self.location!r}: {error}") from None

    def write(
        self,
        work: Callable[[Transaction], Result],
        *,
        serialize: int | None = None,
        lock_name: str = "its write lock",
    ) -> Result:
        connection = self.connection

        def run(sql: str, values: Sequence[object]) -> list[tuple[Any, ...]]:
            return connection.execute(sql, tuple(values)).fetchall()

        with self._watched(), self._lock:
            try:
                with self._lock_wait(lock_name):  # (another process's write transaction)
                    connection.execute("BEGIN IMMEDIATE")
                try:
                    self._check_path()  # (under the write lock: no write slips past a swap)
                    result = work(Transaction(run))
                    gate = enter_commit()
                    try:
                        connection.execute("COMMIT")
                    finally:
                        if gate is not None:
                            gate.leave_commit()
                except BaseException:
                    if connection.in_transaction:
                        connection.execute("ROLLBACK")
                    raise
            except sqlite3.Error as error:
                if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or (
                    "disk is full" in str(error)
                ):
                    raise StoreFullError(FULL_MESSAGE) from None
                raise StoreError(f"cannot write to database {self.location!r}: {error}") from None
        return result

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Transaction]:
        """See :meth:`Database.snapshot`: a read transaction on a read-only connection of its
        own to the file open (refused, StoreError, when the file or its ``-wal`` at the path is
        not the one open, before each statement as :meth:`read` refuses it)."""
        self._check_path()
        try:
            connection = sqlite3.connect(
                f"file:{quote(self.location)}?mode=ro",
                timeout=self._timeout_s,
                isolation_level=None,
                check_same_thread=False,
                uri=True,
            )
        except sqlite3.Error as error:
            raise StoreError(f"cannot read database {self.location!r}: {error}") from None

        def run(sql: str, values: Sequence[object]) -> list[tuple[Any, ...]]:
            self._check_path()  # (the connection opened on the file open, read from it only)
            try:
                return connection.execute(sql, tuple(values)).fetchall()
            except sqlite3.Error as error:
                raise StoreError(f"cannot read database {self.location!r}: {error}") from None

        try:
            connection.execute("BEGIN")  # (WAL: its first read fixes what it sees until it ends)
            yield Transaction(run)
        finally:
            connection.close()  # (ends the read transaction)

    def integrity_check(self, table: str) -> str:
        """SQLite's ``PRAGMA integrity_check``: ``"ok"``, or what it finds, its rows joined by
        ``"; "``; a file too damaged for the check to run (``database disk image is
        malformed``) answers SQLite's error."""
        self._check_path()
        with self._lock:
            try:
                rows = self.connection.execute("PRAGMA integrity_check").fetchall()
            except sqlite3.DatabaseError as error:
                code = getattr(error, "sqlite_errorcode", 0) & 0xFF
                if code not in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
                    raise StoreError(f"cannot read database {self.location!r}: {error}") from None
                return str(error)
        return "; ".join(str(row[0]) for row in rows)

    def close(self) -> None:
        with self._lock:
            self.connection.close()


def open_database(
    location: str | Path, *, timeout_s: float = 30.0, migrate: bool = True, read_only: bool = False
) -> Database:
    """The database at ``location``: a ``postgresql://`` URL, or an SQLite file path; the
    schema is migrated to this release's version, or, ``migrate`` False, the database is only
    read to open it (an SQLite file must exist; NotAStoreError when it is no store), and,
    ``read_only`` too, opened read-only (every write refused; SQLite: ``mode=ro``, PostgreSQL:
    ``default_transaction_read_only``).
    StoreUnavailableError when it cannot be reached, StoreError when it cannot be used (a URL
    whose hosts and ports do not read among them:
    :func:`~handreader.store.database_url.url_problem`)."""
    if is_database_url(location):
        problem = url_problem(str(location))
        if problem is not None:
            raise StoreError(f"database URL {redact_url(str(location))!r}: {problem}")
        return PostgresDatabase(
            str(location), timeout_s=timeout_s, migrate=migrate, read_only=read_only
        )
    if isinstance(location, str) and "://" in location:
        raise StoreError(
            f"unsupported database {redact_url(location)!r}: give a postgresql:// URL "
            "or an SQLite file's path"
        )
    return SqliteDatabase(location, timeout_s=timeout_s, migrate=migrate, read_only=read_only)
