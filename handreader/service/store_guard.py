"""A deck store on a shared database as the service uses it: every call within a deadline, and
no database detail in an answer.

:class:`GuardedDeckStore` wraps a deck store on PostgreSQL. Each call runs in a small pool of
its own and is waited for at most :data:`DECK_STORE_DEADLINE_S`: a database that stops
answering gives 503 ``store_unavailable`` in time (a write given up on is rolled back, as the
audit log's are: ``handreader.store.database.CommitGate``), and the threads that read photos
are never held. An error of the database (a refused login, a missing table) is answered in
words that name neither the database's user nor its host, which anyone may ask the deck
routes; the whole message goes to the server's log, and ``GET /health`` with the operator
token shows where the store is.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from handreader.store.database import (
    CommitGate,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
    gated,
)
from handreader.store.decks import DeckStore, QuotaCheck, SavedDeck
from vision.calibration import DeckProfile

__all__ = [
    "COMMIT_WAIT_S",
    "DECK_STORE_DEADLINE_S",
    "DECK_STORE_THREADS",
    "GuardedDeckStore",
    "gated_result",
    "submit_gated",
]

LOG = logging.getLogger("handreader.serve")

DECK_STORE_DEADLINE_S = 5.0
"""The longest a request waits for the deck store's database (as for the audit log's)."""
DECK_STORE_THREADS = 4
"""Threads of the deck store's own pool: at most this many calls wait on its database."""
COMMIT_WAIT_S = 30.0
"""How long a call that ran out of time while its write was committing waits still."""

_T = TypeVar("_T")
DECK_STORE = "the deck store's database"


def submit_gated(pool: ThreadPoolExecutor, work: Callable[[], _T]) -> tuple[Future[_T], CommitGate]:
    """``work()`` queued in ``pool``, its writes committing through the gate returned."""
    gate = CommitGate()

    def run() -> _T:
        with gated(gate):
            return work()

    return pool.submit(run), gate


def gated_result(
    future: Future[_T], gate: CommitGate, deadline_s: float, store: str, shows: str
) -> _T:
    """The result of a :func:`submit_gated` call, waited for at most ``deadline_s``:
    StoreUnavailableError naming ``store`` when it runs out of time before its write begins to
    commit (nothing is written: the write rolls back when it gets there), saying what the write
    waited for when the database told (another writer holding a lock); a commit under way
    then is waited for up to :data:`COMMIT_WAIT_S` more, and its outcome is the answer, else a
    503 that says the write may have happened (``shows``: where to look)."""
    try:
        return future.result(timeout=deadline_s)
    except FutureTimeout:
        waiting = gate.waiting_for()
        if gate.give_up():
            why = f" ({waiting})" if waiting else ""
            raise StoreUnavailableError(
                f"{store} did not answer within {deadline_s:g} s{why}: nothing was written"
            ) from None
    try:
        return future.result(timeout=COMMIT_WAIT_S)
    except FutureTimeout:
        raise StoreUnavailableError(
            f"{store} did not confirm a write within {COMMIT_WAIT_S:g} s more: it may have "
            f"been written ({shows})"
        ) from None


class GuardedDeckStore(DeckStore):
    """The store ``opener`` opens (on first use), every call bounded in time and its database
    errors told without the database's user or host (see the module docstring)."""

    def __init__(
        self,
        opener: Callable[[], DeckStore],
        location: str,
        deadline_s: float = DECK_STORE_DEADLINE_S,
    ) -> None:
        self._opener = opener
        self._opened: DeckStore | None = None
        self._opening = threading.Lock()
        self._location = location
        self._deadline_s = deadline_s
        self._pool = ThreadPoolExecutor(DECK_STORE_THREADS, thread_name_prefix="deck-store")

    @property
    def location(self) -> str:
        """The database's URL without its password (the store is opened on first use)."""
        return self._location

    @property
    def _store(self) -> DeckStore:
        """The store, opened on first use, within a call's deadline (its errors as a call's)."""
        with self._opening:
            if self._opened is None:
                self._opened = self._opener()
            return self._opened

    def _call(self, work: Callable[[], _T]) -> _T:
        future, gate = submit_gated(self._pool, work)
        try:
            return gated_result(
                future, gate, self._deadline_s, DECK_STORE, "GET /v1/decks lists the decks"
            )
        except StoreFullError:
            raise
        except StoreError as error:
            if str(error).startswith(DECK_STORE):
                raise
            LOG.warning("deck store: %s", error)
            kind = type(error)
            what = "cannot be reached" if kind is StoreUnavailableError else "refused the call"
            raise kind(f"{DECK_STORE} {what} (the server's log says why)") from None

    def names(self) -> list[str]:
        return self._call(lambda: self._store.names())

    def stamp(self, name: str) -> str | None:
        return self._call(lambda: self._store.stamp(name))

    def _load(self, name: str) -> DeckProfile | None:
        return self._call(lambda: self._store._load(name))

    def usage(self) -> dict[str, int]:
        return self._call(lambda: self._store.usage())

    def save(
        self, profile: DeckProfile, replace: bool = False, quota: QuotaCheck | None = None
    ) -> SavedDeck:
        return self._call(lambda: self._store.save(profile, replace, quota))

    def delete(self, name: str) -> bool:
        return self._call(lambda: self._store.delete(name))
