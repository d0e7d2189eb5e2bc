"""What every backend of the store's database shares (:mod:`handreader.store.database` opens
one): the errors, the :class:`Database` interface with its schema migrations, the statements of
a transaction, and the :class:`CommitGate` through which a write commits only while its caller
still waits."""

from __future__ import annotations

import contextlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, TypeVar

from handreader.store.schema import MIGRATIONS, STORE_TABLE, Migration

__all__ = [
    "FULL_MESSAGE",
    "MIGRATION_LOCK",
    "MIGRATION_LOCK_NAME",
    "CommitGate",
    "Database",
    "Dialect",
    "NotAStoreError",
    "StoreError",
    "StoreFullError",
    "StoreUnavailableError",
    "Transaction",
    "enter_commit",
    "gated",
    "thread_gate",
]

MIGRATION_LOCK = 0x68616E6400000001
"""The advisory lock key that serializes migrations on PostgreSQL."""

MIGRATION_LOCK_NAME = "the lock of its migrations"
""":data:`MIGRATION_LOCK` in messages."""

Dialect = Literal["sqlite", "postgresql"]
Result = TypeVar("Result")


class StoreError(ValueError):
    """The store's database refused an operation, or holds what this release cannot use."""


class StoreUnavailableError(StoreError):
    """The store's database cannot be reached or opened."""


class NotAStoreError(StoreError):
    """A database opened as it is (not migrated) lacks a table of the store: another program's
    database, or an empty one; nothing was changed."""

    def __init__(self, location: str, missing: str, kind: str = "handreader store") -> None:
        super().__init__(
            f"database {location!r} is not a {kind} (it has no {missing} table): nothing was "
            "changed"
        )
        self.location, self.missing = location, missing


class StoreFullError(StoreError):
    """The store's disk (or the database's quota) is full: nothing was written. The message
    names no path."""


FULL_MESSAGE = "the store's disk is full: nothing was written"


class CommitGate:
    """Who goes first, a write's commit or its caller giving up; see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "open"
        self._waiting: Callable[[], str | None] | None = None

    def watch(self, waiting: Callable[[], str | None] | None) -> None:
        """What the write waits on while it runs, asked when its caller gives up
        (:meth:`waiting_for`); None: nothing to say."""
        self._waiting = waiting

    def waiting_for(self) -> str | None:
        """What the write waits on now (``"another writer holds the audit trail's lock"``);
        None when it waits on nothing known."""
        waiting = self._waiting
        return waiting() if waiting is not None else None

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


def thread_gate() -> CommitGate | None:
    """The gate this thread's writes commit through (None: no gate)."""
    gate: CommitGate | None = getattr(_GATES, "gate", None)
    return gate


def enter_commit() -> CommitGate | None:
    """The thread's gate, entered for a commit (None: no gate); StoreUnavailableError (the
    write is then rolled back) when the caller gave up."""
    gate = thread_gate()
    if gate is not None and not gate.enter_commit():
        raise StoreUnavailableError("the caller stopped waiting: the write was rolled back")
    return gate


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
        self._waiting_for: str | None = None

    @abstractmethod
    def read(self, sql: str, values: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query."""

    @abstractmethod
    def write(
        self,
        work: Callable[[Transaction], Result],
        *,
        serialize: int | None = None,
        lock_name: str = "its write lock",
    ) -> Result:
        """Run ``work`` in one transaction and commit it; its result once committed.

        ``serialize``: an advisory lock key (PostgreSQL) taken first, so that writes with the
        same key never overlap; on SQLite every write is serialized anyway. ``lock_name`` names
        the lock in messages: while the write waits for it, a caller that gives up is told
        that another writer holds it (:meth:`CommitGate.waiting_for`). A wait past the
        database's lock timeout is, on PostgreSQL, StoreUnavailableError saying that another
        writer holds ``lock_name``; on SQLite, StoreError with SQLite's own "database is
        locked" (no holder named).
        """

    @abstractmethod
    def snapshot(self) -> contextlib.AbstractContextManager[Transaction]:
        """The statements of one read-only transaction that sees the database as it was when
        its first statement ran, whatever other connections commit meanwhile: a read of many
        queries (a chain check's pages) reads one state. SQLite: a read transaction on a
        connection of its own, opened read-only (``mode=ro``; in WAL mode, writers of other
        connections go on beside it); PostgreSQL: a ``REPEATABLE READ, READ ONLY``
        transaction on a connection of its own. The block holds it; nothing is written.
        StoreError when a statement fails (StoreUnavailableError when the database cannot be
        reached)."""

    @abstractmethod
    def integrity_check(self, table: str) -> str:
        """``"ok"`` when the database reads back sound, else what is found: SQLite's ``PRAGMA
        integrity_check``; PostgreSQL has none to ask and answers ``"ok"`` without reading
        (a check of ``table``'s rows, such as a chain walk, reads each of them)."""

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

    def has_table(self, name: str) -> bool:
        """Whether the database has the table ``name`` (on PostgreSQL, one its search path
        finds); only read."""
        if self.dialect == "sqlite":
            sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
        else:
            sql = "SELECT CAST(to_regclass(CAST(? AS text)) IS NOT NULL AS integer)"
        rows = self.read(sql, [name])
        return bool(rows and rows[0][0])

    def _open(
        self, migrations: Sequence[Migration], legacy_version: int = 0, *, migrate: bool = True
    ) -> None:
        """Make the schema this release knows (:meth:`_migrate`), or, ``migrate`` False, only
        check the database as it is: NotAStoreError when it records no schema version (no
        table of the store), StoreError when its version is not this release's (newer:
        upgrade; older: the service's start migrates it). The store's own table
        (:data:`~handreader.store.schema.STORE_TABLE`) is looked for first, so another
        program's database is NotAStoreError whatever versions it records. Nothing is written
        then."""
        if migrate:
            self._migrate(migrations, legacy_version)
            return
        if not self.has_table(STORE_TABLE):
            raise NotAStoreError(self.location, STORE_TABLE)
        latest = migrations[-1].version
        current = legacy_version
        if self.has_table("schema_version"):
            row = self.read("SELECT max(version) FROM schema_version")
            found = row[0][0] if row else None
            try:
                current = max(int(found or 0), legacy_version)
            except (TypeError, ValueError):
                raise StoreError(
                    f"database {self.location!r} records schema version {found!r}, not a "
                    "number: not a schema of handreader"
                ) from None
        if current == 0:
            raise NotAStoreError(self.location, "schema_version")
        if current > latest:
            raise StoreError(
                f"database {self.location!r} has schema {current}, newer than {latest}: "
                "upgrade handreader"
            )
        if current < latest:
            raise StoreError(
                f"database {self.location!r} has schema {current}, older than {latest}: the "
                "service migrates it when it starts"
            )

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

        self.write(migrate, serialize=MIGRATION_LOCK, lock_name=MIGRATION_LOCK_NAME)

    @contextlib.contextmanager
    def _watched(self) -> Iterator[None]:
        """Inside the block, a caller of this thread's write that gives up learns what the
        database waits for (:meth:`_lock_wait`), also while the write waits for the
        connection's lock behind another thread's write that waits for a database lock."""
        gate = thread_gate()
        if gate is None:
            yield
            return
        gate.watch(lambda: self._waiting_for)
        try:
            yield
        finally:
            gate.watch(None)

    @contextlib.contextmanager
    def _lock_wait(self, lock_name: str) -> Iterator[None]:
        """The block waits for ``lock_name``, which another writer may hold (call holding
        the connection's lock)."""
        self._waiting_for = f"another writer holds {lock_name}"
        try:
            yield
        finally:
            self._waiting_for = None
