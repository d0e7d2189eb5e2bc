"""The store's database on PostgreSQL, through psycopg 3 (the ``postgres`` extra): one
connection, opened again when it broke; see :mod:`handreader.store.database`."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from handreader.store.database_base import (
    FULL_MESSAGE,
    CommitGate,
    Database,
    Dialect,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
    Transaction,
    enter_commit,
)
from handreader.store.database_url import redact_url
from handreader.store.schema import MIGRATIONS, Migration

__all__ = ["IDLE_IN_TRANSACTION_TIMEOUT_S", "PostgresDatabase"]

Result = TypeVar("Result")

IDLE_IN_TRANSACTION_TIMEOUT_S = 3.0
"""How long the server lets a connection of the store sit idle inside a transaction before it
ends the connection (``idle_in_transaction_session_timeout``, set on each connection): a writer
stalled inside a write (a frozen process, a machine lost) gives up the locks it holds, the
audit trail's among them, within these seconds, under the service's 5 s wait for the store.
The store's own transactions send their statements one after the other, never idle that long;
one cut off is rolled back and nothing of it is written."""

LOCK_NOT_AVAILABLE = "55P03"
"""PostgreSQL's SQLSTATE for a lock wait that ran past ``lock_timeout``."""

_PLACEHOLDER = re.compile(r"\?")


def _postgres_sql(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (the store's SQL holds no literal ``%`` or ``?``)."""
    return _PLACEHOLDER.sub("%s", sql)


def _run(connection: Any, sql: str, values: Sequence[object]) -> list[tuple[Any, ...]]:
    """The rows of one statement on ``connection`` (none for a statement that returns none)."""
    cursor = connection.execute(_postgres_sql(sql), tuple(values))
    return list(cursor.fetchall()) if cursor.description is not None else []


class PostgresDatabase(Database):
    """The PostgreSQL database at ``url`` (psycopg 3).

    ``migrate`` False only reads the database to open it (:meth:`Database._open`), and
    ``read_only`` too makes every transaction of its connection read-only
    (``default_transaction_read_only``): every write is refused.
    ``timeout_s`` bounds connecting and waiting for a lock (``lock_timeout``); a transaction
    of its connection idle for :data:`IDLE_IN_TRANSACTION_TIMEOUT_S` is ended by the server.
    """

    dialect: Dialect = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        migrations: Sequence[Migration] = MIGRATIONS,
        migrate: bool = True,
        read_only: bool = False,
    ) -> None:
        super().__init__()
        if read_only and migrate:
            raise StoreError("a database opened read-only cannot be migrated")
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
        self._read_only = read_only
        self._connection: Any = None
        with self._lock:
            self._connect()
        try:
            self._open(migrations, migrate=migrate)
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
        self._connection = self._new_connection()
        return self._connection

    def _new_connection(self) -> Any:
        """A new connection (autocommit) with the store's settings: its lock timeout, its
        idle-in-transaction timeout, read-only transactions for a database opened read-only;
        StoreUnavailableError when it cannot be made."""
        psycopg = self._psycopg
        connection = None
        try:
            connection = psycopg.connect(
                self._url, autocommit=True, connect_timeout=max(1, round(self._timeout_s))
            )
            connection.execute(f"SET lock_timeout = {int(self._timeout_s * 1000)}")
            idle_ms = int(IDLE_IN_TRANSACTION_TIMEOUT_S * 1000)
            connection.execute(f"SET idle_in_transaction_session_timeout = {idle_ms}")
            if self._read_only:
                connection.execute("SET default_transaction_read_only = on")
        except psycopg.Error as error:
            if connection is not None:  # (connected, a setting refused: not left open)
                connection.close()
            reason = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            raise StoreUnavailableError(
                f"cannot reach database {self.location!r}: {reason}"
            ) from None
        return connection

    def _failure(self, doing: str, error: Exception, connection: Any = None) -> StoreError:
        """``error`` in one line: StoreUnavailableError when the server could not be reached
        or ended the connection (a restart, a transaction cut off for idling); ``connection``:
        the one it happened on (None: the shared one)."""
        reason = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        connection = self._connection if connection is None else connection
        broken = connection is not None and bool(connection.broken)
        if broken or isinstance(error, self._psycopg.OperationalError):
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
        self,
        work: Callable[[Transaction], Result],
        *,
        serialize: int | None = None,
        lock_name: str = "its write lock",
    ) -> Result:
        """See :meth:`Database.write`. A connection found broken as the transaction begins
        (the server restarted since the last call) is opened again and the write made on the
        new one; once the transaction has begun, a connection that breaks fails the write
        (StoreUnavailableError), which is never made twice."""
        with self._watched(), self._lock:
            for again in (True, False):
                connection = self._connect()
                begun = False
                gate: CommitGate | None = None
                try:
                    with connection.transaction():
                        begun = True
                        if serialize is not None:
                            self._take_lock(connection, serialize, lock_name)
                        result = work(Transaction(functools.partial(_run, connection)))
                        gate = enter_commit()  # raised inside the block: it rolls back
                    return result  # (committed as the block closed)
                except self._psycopg.Error as error:
                    if again and not begun and connection.broken:
                        continue  # (nothing was sent but BEGIN: a new connection)
                    if getattr(error, "sqlstate", None) == "53100":  # disk_full
                        raise StoreFullError(FULL_MESSAGE) from None
                    raise self._failure("write to", error) from None
                finally:
                    if gate is not None:
                        gate.leave_commit()
            raise AssertionError("unreachable")  # (the second pass returns or raises)

    def _take_lock(self, connection: Any, key: int, lock_name: str) -> None:
        """The transaction-level advisory lock ``key``, waited for up to ``lock_timeout``:
        StoreUnavailableError saying that another writer holds it when the wait runs out (the
        transaction is then rolled back)."""
        try:
            with self._lock_wait(lock_name):
                connection.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
        except self._psycopg.Error as error:
            if getattr(error, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                raise
            raise StoreUnavailableError(
                f"another writer holds {lock_name} of database {self.location!r}: waited "
                f"{self._timeout_s:g} s, nothing was written"
            ) from None

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Transaction]:
        """See :meth:`Database.snapshot`: a ``REPEATABLE READ, READ ONLY`` transaction on a
        connection of its own (so the shared one serves appends meanwhile), which the server
        ends, as any, when it sits idle :data:`IDLE_IN_TRANSACTION_TIMEOUT_S` between two
        statements."""
        connection = self._new_connection()

        def run(sql: str, values: Sequence[object]) -> list[tuple[Any, ...]]:
            try:
                return _run(connection, sql, values)
            except self._psycopg.Error as error:
                raise self._failure("read", error, connection) from None

        try:
            run("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", ())
            yield Transaction(run)
        finally:
            connection.close()  # (the transaction, which wrote nothing, ends with it)

    def integrity_check(self, table: str) -> str:
        """``"ok"``: PostgreSQL has no check of a whole database to ask (nothing is read; a
        check of the records reads each of them anyway)."""
        return "ok"

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
