"""The PostgreSQL store's connections against a real server: a writer stalled inside an append
is cut off by the server, a write waiting on another writer's lock says so, and a write whose
connection the server dropped before its transaction began is made on a new one.

Expectations come from ``handreader/store/postgres_database.py``
(``IDLE_IN_TRANSACTION_TIMEOUT_S``: "a writer stalled inside a write ... gives up the locks it
holds ... within these seconds"; ``PostgresDatabase.write``) and
``handreader/service/store_guard.py`` (``gated_result``: the 503 says what the write waited
for).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from store_databases import raw
from test_audit import TOKEN, record

from handreader.service.routes import verification as routes
from handreader.store.audit import CHAIN_LOCK, CHAIN_LOCK_NAME, AuditLog
from handreader.store.database import StoreUnavailableError, Transaction
from handreader.store.postgres_database import IDLE_IN_TRANSACTION_TIMEOUT_S

psycopg = pytest.importorskip("psycopg", reason="needs psycopg: pip install -e '.[postgres]'")


def test_the_stores_connections_end_a_transaction_left_idle(postgres_schema: str) -> None:
    with AuditLog(postgres_schema, token=TOKEN) as log:
        setting = log.database.read(
            "SELECT setting, unit FROM pg_settings "
            "WHERE name = 'idle_in_transaction_session_timeout'"
        )
    assert setting == [(str(int(IDLE_IN_TRANSACTION_TIMEOUT_S * 1000)), "ms")]
    assert 1 <= IDLE_IN_TRANSACTION_TIMEOUT_S < routes.STORE_DEADLINE_S  # "a few seconds"


def test_a_writer_stalled_inside_an_append_is_cut_off_and_the_others_append(
    postgres_schema: str,
) -> None:
    """A writer holding the trail's lock stops between two statements (a frozen process):
    the server ends its connection after the idle timeout, its write is rolled back, and
    another log's append, waiting on the lock, goes through then."""
    stalled, other = AuditLog(postgres_schema, token=TOKEN), AuditLog(postgres_schema, token=TOKEN)
    holding, release = threading.Event(), threading.Event()
    outcome: list[str] = []

    def stall(transaction: Transaction) -> None:
        holding.set()
        release.wait(IDLE_IN_TRANSACTION_TIMEOUT_S + 10)
        transaction.all("SELECT 1")

    def writer() -> None:
        try:
            stalled.database.write(stall, serialize=CHAIN_LOCK, lock_name=CHAIN_LOCK_NAME)
            outcome.append("committed")
        except StoreUnavailableError as error:
            outcome.append(str(error))

    thread = threading.Thread(target=writer)
    thread.start()
    assert holding.wait(5)
    started = time.monotonic()
    assert record(other) == 1  # waited for the lock until the server cut the stalled writer
    waited = time.monotonic() - started
    release.set()
    thread.join(10)
    assert waited < IDLE_IN_TRANSACTION_TIMEOUT_S + 2, waited
    assert len(outcome) == 1 and outcome[0].startswith("cannot write to database"), outcome
    assert record(stalled) == 2  # on a new connection
    report = other.verify(TOKEN)
    assert report.ok and report.records == 2
    stalled.close()
    other.close()


def _wait_idle(holder: routes.AuditLogHolder) -> None:
    deadline = time.monotonic() + 10
    while holder._waiting and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_write_waiting_on_another_writers_lock_says_so(
    postgres_schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another connection holds the trail's lock inside its transaction: an append waits for it
    until the database's lock timeout, or the service's deadline, and either answer says
    that another writer holds the trail's lock; nothing is written."""
    log = AuditLog(postgres_schema, token=TOKEN, timeout_s=1)
    holder = routes.AuditLogHolder(
        routes.AuditSettings(tmp_path / "unused.sqlite3", TOKEN, postgres_schema)
    )
    holder.log()  # opened (and migrated) before the lock is taken
    foreign = psycopg.connect(postgres_schema)  # its first statement opens a transaction
    foreign.execute("SELECT pg_advisory_xact_lock(%s)", (CHAIN_LOCK,))
    with pytest.raises(
        StoreUnavailableError,
        match=r"^another writer holds the audit trail's lock of database '.*': waited 1 s, "
        r"nothing was written$",
    ):
        record(log)
    monkeypatch.setattr(routes, "STORE_DEADLINE_S", 0.5)
    answers: list[str] = []

    def call() -> None:
        try:
            holder.call(lambda opened: record(opened))
        except StoreUnavailableError as error:
            answers.append(str(error))

    threads = [threading.Thread(target=call) for _ in range(2)]  # one behind the other
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    told = (
        "the store's database did not answer within 0.5 s (another writer holds the audit "
        "trail's lock): nothing was written"
    )
    assert answers == [told, told]
    foreign.rollback()
    foreign.close()
    _wait_idle(holder)  # the writes given up on got the lock and were rolled back
    assert log.count(TOKEN) == 0
    assert record(log) == 1
    holder.close()
    log.close()


def test_the_first_write_after_a_restart_of_the_server_is_made(postgres_cluster: Any) -> None:
    """``pg_ctl restart -m fast`` ends every connection: the log's next write finds its
    connection broken as its transaction begins and is made on a new one (as a read is)."""
    log = AuditLog(postgres_cluster.url, token=TOKEN)
    assert record(log) == 1
    postgres_cluster.restart()
    assert record(log) == 2
    postgres_cluster.restart()
    assert log.count(TOKEN) == 2
    assert record(log) == 3 and log.verify(TOKEN).records == 3
    log.close()


def test_a_write_whose_connection_breaks_once_begun_is_not_made_again(
    postgres_schema: str,
) -> None:
    """A connection the server ends inside the write's transaction fails that write (503), and
    its work is not run a second time; the connection dropped while idle is not a failure."""
    log = AuditLog(postgres_schema, token=TOKEN)
    (pid,) = log.database.read("SELECT pg_backend_pid()")[0]
    raw(postgres_schema, "SELECT pg_terminate_backend(?, 5000)", (pid,))
    assert record(log) == 1  # dropped while idle: made on a new connection
    runs: list[int] = []

    def cut_off(transaction: Transaction) -> None:
        (backend,) = transaction.one("SELECT pg_backend_pid()") or (None,)
        runs.append(backend)
        raw(postgres_schema, "SELECT pg_terminate_backend(?, 5000)", (backend,))
        transaction.all("SELECT 1")

    with pytest.raises(StoreUnavailableError, match=r"^cannot write to database"):
        log.database.write(cut_off)
    assert len(runs) == 1
    assert record(log) == 2 and log.verify(TOKEN).ok
    log.close()
