"""The database under the store: SQLite (embedded, the default) or PostgreSQL (shared).

:func:`open_database` takes a location: a file path (SQLite, WAL mode, ``synchronous=FULL``)
or a ``postgresql://`` URL (PostgreSQL through psycopg 3, the ``postgres`` extra). Both give a
:class:`Database`: reads, and writes that run as one transaction each and return only once
committed. A write may ask to be *serialized*: on SQLite every write transaction is (``BEGIN
IMMEDIATE``), on PostgreSQL a serialized write first takes a transaction-level advisory lock
(``pg_advisory_xact_lock``), so writers in any number of processes, on any number of machines,
run one after the other; the lock lives in the database, never in a process's memory.

SQL is written once with ``?`` placeholders; the PostgreSQL backend turns them into ``%s``.

The schema is versioned (:mod:`handreader.store.schema`): opening a database applies the
migrations it lacks, one transaction each, recorded in the ``schema_version`` table, under a
lock so that two processes starting together migrate once. A database of a newer schema than
this release knows is refused.

Errors: :class:`StoreUnavailableError` when the database cannot be reached (a server down, a
refused login, a file that cannot be opened), :class:`StoreError` for anything else the
database refuses. A PostgreSQL connection that broke is opened again on the next call.

Threads: one connection per :class:`Database`, guarded by a lock: one object serves a pool.

A caller that stops waiting for a write (the service answers 503 after a few seconds) must not
find it committed later: :class:`CommitGate`, given to the thread that writes
(:func:`gated`), lets a write commit only if the caller has not given up, and a caller give up
only if the commit has not begun; a write given up on is rolled back.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from handreader.store.schema import MIGRATIONS, Migration

__all__ = [
    "DATABASE_URL_ENV",
    "CommitGate",
    "Database",
    "PostgresDatabase",
    "SqliteDatabase",
    "StoreError",
    "StoreUnavailableError",
    "Transaction",
    "gated",
    "is_database_url",
    "open_database",
    "redact_url",
]

DATABASE_URL_ENV = "HANDREADER_DATABASE_URL"
"""The environment variable naming a shared PostgreSQL database (``postgresql://...``)."""

MIGRATION_LOCK = 0x68616E6400000001
"""The advisory lock key that serializes migrations on PostgreSQL."""

Dialect = Literal["sqlite", "postgresql"]
Result = TypeVar("Result")


class StoreError(ValueError):
    """The store's database refused an operation, or holds what this release cannot use."""


class StoreUnavailableError(StoreError):
    """The store's database cannot be reached or opened."""


class StoreFullError(StoreError):
    """The store's disk (or the database's quota) is full: nothing was written. The message
    names no path."""


FULL_MESSAGE = "the store's disk is full: nothing was written"


class CommitGate:
    """Who goes first, a write's commit or its caller giving up; see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "open"

    def give_up(self) -> bool:
        """The caller stops waiting: True when no commit has begun (none will), False when
        one has (its outcome is the write's)."""
        with self._lock:
            if self._state == "committing":
                return False
            self._state = "given up"
            return True

    def enter_commit(self) -> bool:
        """The writer is about to commit: False when the caller has given up (roll back)."""
        with self._lock:
            if self._state == "given up":
                return False
            self._state = "committing"
            return True

    def leave_commit(self) -> None:
        """The commit is over (a call may write again after it: opening a store migrates)."""
        with self._lock:
            if self._state == "committing":
                self._state = "open"


_GATES = threading.local()


@contextlib.contextmanager
def gated(gate: CommitGate) -> Iterator[None]:
    """The writes of this thread, inside the block, commit only through ``gate``."""
    _GATES.gate = gate
    try:
        yield
    finally:
        _GATES.gate = None


def _enter_commit() -> CommitGate | None:
    """The thread's gate, entered for a commit (None: no gate); StoreUnavailableError (the
    write is then rolled back) when the caller gave up."""
    gate: CommitGate | None = getattr(_GATES, "gate", None)
    if gate is not None and not gate.enter_commit():
        raise StoreUnavailableError("the caller stopped waiting: the write was rolled back")
    return gate


def is_database_url(location: str | Path) -> bool:
    """Whether ``location`` is a PostgreSQL URL (``postgresql://`` or ``postgres://``)."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def redact_url(url: str) -> str:
    """``url`` without its passwords (for messages, logs and ``/health``): the one before the
    ``@`` and libpq's ``password`` and ``sslpassword`` parameters in the query."""
    parts = urlsplit(url)
    if parts.query:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        hidden = [(key, "***" if "password" in key.lower() else value) for key, value in pairs]
        if hidden != pairs:
            parts = parts._replace(query=urlencode(hidden, safe="*"))
    if parts.password is None:
        return urlunsplit(parts)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class Transaction:
    """The statements of one transaction (``?`` placeholders in either dialect)."""

    def __init__(self, run: Callable[[str, Sequence[object]], list[tuple[Any, ...]]]) -> None:
        self._run = run

    def all(self, sql: str, values: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Every row of a query."""
        return self._run(sql, values)

    def one(self, sql: str, values: Sequence[object] = ()) -> tuple[Any, ...] | None:
        """The first row of a query, None when there is none."""
        rows = self._run(sql, values)
        return rows[0] if rows else None


class Database(ABC):
    """A store's database; see the module docstring."""

    dialect: Dialect
    location: str
    """Where it is, for messages: a file path or the URL without its password."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @abstractmethod
    def read(self, sql: str, values: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query."""

    @abstractmethod
    def write(
        self, work: Callable[[Transaction], Result], *, serialize: int | None = None
    ) -> Result:
        """Run ``work`` in one transaction and commit it; its result once committed.

        ``serialize``: an advisory lock key (PostgreSQL) taken first, so that writes with the
        same key never overlap; on SQLite every write is serialized anyway.
        """

    @abstractmethod
    def integrity_check(self, table: str) -> str:
        """``"ok"`` when the database reads back sound (SQLite's ``PRAGMA integrity_check``;
        on PostgreSQL every row of ``table`` read back in full)."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection (further calls fail)."""

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def schema_version(self) -> int:
        """The schema version recorded in the database (0: none yet)."""
        row = self.read("SELECT max(version) FROM schema_version")
        return int(row[0][0] or 0) if row else 0

    def check_schema(self, transaction: Transaction) -> None:
        """StoreError, in a write's ``transaction``, when the database has been migrated past
        what this release knows since it was opened (a newer release started beside this
        one): nothing is written under a schema this process does not know."""
        row = transaction.one("SELECT max(version) FROM schema_version")
        current, latest = int(row[0] or 0) if row else 0, MIGRATIONS[-1].version
        if current > latest:
            raise StoreError(
                f"database {self.location!r} has schema {current}, newer than {latest}: "
                "upgrade handreader; nothing was written"
            )

    def describe(self) -> dict[str, object]:
        """What ``/health`` reports: backend, location, schema version, and whether the
        database answered (``ok``) or the reason it did not (``error``)."""
        report: dict[str, object] = {"backend": self.dialect, "location": self.location}
        try:
            report["schema_version"] = version = self.schema_version()
            report["ok"] = version <= MIGRATIONS[-1].version
            if not report["ok"]:
                report["error"] = f"schema {version}, newer than {MIGRATIONS[-1].version}"
        except StoreError as error:
            report["ok"] = False
            report["error"] = str(error)
        return report

    def _migrate(self, migrations: Sequence[Migration], legacy_version: int = 0) -> None:
        """Apply the migrations the database lacks (each in the write transaction that
        :meth:`write` gives, serialized by :data:`MIGRATION_LOCK`). A database already at the
        latest version is only read: a user that may read and insert, not create tables,
        opens it."""
        latest = migrations[-1].version
        try:
            row = self.read("SELECT max(version) FROM schema_version")
        except StoreUnavailableError:
            raise
        except StoreError:  # no such table yet: the migration below makes it
            row = []
        if row and row[0][0] is not None and int(row[0][0]) == latest:
            return

        def migrate(transaction: Transaction) -> None:
            transaction.all(
                "CREATE TABLE IF NOT EXISTS schema_version ("
                "version INTEGER PRIMARY KEY, applied_utc TEXT NOT NULL, description TEXT NOT NULL)"
            )
            row = transaction.one("SELECT max(version) FROM schema_version")
            current = max(int(row[0] or 0) if row else 0, legacy_version)
            if current > latest:
                raise StoreError(
                    f"database {self.location!r} has schema {current}, newer than {latest}: "
                    "upgrade handreader"
                )
            for migration in migrations:
                if migration.version <= current:
                    continue
                for statement in migration.statements(self.dialect):
                    transaction.all(statement)
                transaction.all(
                    "INSERT INTO schema_version (version, applied_utc, description) "
                    "VALUES (?, ?, ?)",
                    (
                        migration.version,
                        datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                        migration.description,
                    ),
                )
                if self.dialect == "sqlite":  # what the first release read its version from
                    transaction.all(f"PRAGMA user_version={int(migration.version)}")

        self.write(migrate, serialize=MIGRATION_LOCK)


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
    """The SQLite file ``path`` (created when missing), in WAL mode with ``synchronous=FULL``.

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
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self.location = str(path)
        try:
            connection = sqlite3.connect(
                self.location, timeout=timeout_s, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            why = _why_unopened(self.path)  # (a setting to mend, not a database to wait for)
            failure = StoreError if why else StoreUnavailableError
            raise failure(f"cannot open database {self.location!r}: {error}{why}") from None
        self.connection, self._identity = connection, _file_identity(self.path)
        self._wal_path = Path(f"{self.location}-wal")
        self._wal: tuple[int, int] | None = None  # (taken when the log is first there)
        try:
            mode = self._pragma_waiting("PRAGMA journal_mode=WAL", timeout_s)
            if str(mode).lower() != "wal":
                raise StoreError(
                    f"database {self.location!r} cannot use WAL (journal mode {mode!r})"
                )
            self.connection.execute("PRAGMA synchronous=FULL")
            legacy = int(self._pragma_waiting("PRAGMA user_version", timeout_s))
            self._migrate(migrations, legacy)
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
        self, work: Callable[[Transaction], Result], *, serialize: int | None = None
    ) -> Result:
        connection = self.connection

        def run(sql: str, values: Sequence[object]) -> list[tuple[Any, ...]]:
            return connection.execute(sql, tuple(values)).fetchall()

        with self._lock:
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    self._check_path()  # (under the write lock: no write slips past a swap)
                    result = work(Transaction(run))
                    gate = _enter_commit()
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

    def integrity_check(self, table: str) -> str:
        rows = self.read("PRAGMA integrity_check")
        return "; ".join(str(row[0]) for row in rows)

    def close(self) -> None:
        with self._lock:
            self.connection.close()


# --- PostgreSQL ------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\?")


def _postgres_sql(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (the store's SQL holds no literal ``%`` or ``?``)."""
    return _PLACEHOLDER.sub("%s", sql)


class PostgresDatabase(Database):
    """The PostgreSQL database at ``url`` (psycopg 3).

    ``timeout_s`` bounds connecting and waiting for a lock (``lock_timeout``).
    """

    dialect: Dialect = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        migrations: Sequence[Migration] = MIGRATIONS,
    ) -> None:
        super().__init__()
        try:
            import psycopg
        except ImportError:
            raise StoreError(
                "a postgresql:// database needs psycopg 3: pip install 'handreader[postgres]'"
            ) from None
        self._psycopg = psycopg
        self._url = url
        self.location = redact_url(url)
        self._timeout_s = timeout_s
        self._connection: Any = None
        with self._lock:
            self._connect()
        try:
            self._migrate(migrations)
        except BaseException:
            self.close()
            raise

    def _connect(self) -> Any:
        """The open connection (opened again when it was closed or broke); call under the lock."""
        connection = self._connection
        if connection is not None and not connection.closed and not connection.broken:
            return connection
        if connection is not None:
            connection.close()
            self._connection = None
        psycopg = self._psycopg
        try:
            connection = psycopg.connect(
                self._url, autocommit=True, connect_timeout=max(1, round(self._timeout_s))
            )
            connection.execute(f"SET lock_timeout = {int(self._timeout_s * 1000)}")
        except psycopg.Error as error:
            reason = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            raise StoreUnavailableError(
                f"cannot reach database {self.location!r}: {reason}"
            ) from None
        self._connection = connection
        return connection

    def _failure(self, doing: str, error: Exception) -> StoreError:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        if isinstance(error, self._psycopg.OperationalError):
            return StoreUnavailableError(f"cannot {doing} database {self.location!r}: {reason}")
        return StoreError(f"cannot {doing} database {self.location!r}: {reason}")

    def read(self, sql: str, values: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query; a connection the server dropped (a restart of PostgreSQL)
        is opened again and the query asked once more, as a read may be."""
        with self._lock:
            for again in (True, False):
                connection = self._connect()
                try:
                    cursor = connection.execute(_postgres_sql(sql), tuple(values))
                    return list(cursor.fetchall()) if cursor.description is not None else []
                except self._psycopg.Error as error:
                    if not (again and connection.broken):
                        raise self._failure("read", error) from None
            raise AssertionError("unreachable")  # (the second pass returns or raises)

    def write(
        self, work: Callable[[Transaction], Result], *, serialize: int | None = None
    ) -> Result:
        with self._lock:
            connection = self._connect()

            def run(sql: str, values: Sequence[object]) -> list[tuple[Any, ...]]:
                cursor = connection.execute(_postgres_sql(sql), tuple(values))
                return list(cursor.fetchall()) if cursor.description is not None else []

            gate: CommitGate | None = None
            try:
                with connection.transaction():
                    if serialize is not None:
                        connection.execute("SELECT pg_advisory_xact_lock(%s)", (serialize,))
                    result = work(Transaction(run))
                    gate = _enter_commit()  # raised inside the block: it rolls back
                return result  # (committed as the block closed)
            except self._psycopg.Error as error:
                if getattr(error, "sqlstate", None) == "53100":  # disk_full
                    raise StoreFullError(FULL_MESSAGE) from None
                raise self._failure("write to", error) from None
            finally:
                if gate is not None:
                    gate.leave_commit()

    def integrity_check(self, table: str) -> str:
        if not re.fullmatch(r"[a-z_]+", table):
            raise StoreError(f"bad table name {table!r}")
        self.read(f"SELECT count(*), sum(length(CAST({table} AS TEXT))) FROM {table}")
        return "ok"

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()


def open_database(location: str | Path, *, timeout_s: float = 30.0) -> Database:
    """The database at ``location``: a ``postgresql://`` URL, or an SQLite file path; the
    schema is migrated to this release's version. StoreUnavailableError when it cannot be
    reached, StoreError when it cannot be used."""
    if is_database_url(location):
        return PostgresDatabase(str(location), timeout_s=timeout_s)
    if isinstance(location, str) and "://" in location:
        raise StoreError(
            f"unsupported database {redact_url(location)!r}: give a postgresql:// URL "
            "or an SQLite file's path"
        )
    return SqliteDatabase(location, timeout_s=timeout_s)
