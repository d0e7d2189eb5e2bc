"""Wrong operator tokens, counted per client address: slowed, then refused, logged in groups.

Each worker counts the refused tokens of each client address over a sliding window of
``WINDOW_S`` seconds:

- the first ``FREE_REFUSALS`` in the window are answered at once;
- each one after waits before its 401 is sent, twice as long as the one before, from
  ``FIRST_DELAY_S`` up to ``MAX_DELAY_S`` (the wait holds no thread: the answer is sent from
  the event loop after it);
- from ``LOCK_AFTER`` refusals in the window, every request of that address that carries a
  token is answered 429 ``too_many_attempts`` with ``Retry-After`` before its token is compared,
  so a guessing client learns nothing more until the window has moved on (a right token from
  that address waits as well);
- the first refusal of an address in a window is logged in one line; the next ones are
  counted and logged as one line every ``LOG_EVERY`` refusals.

A wrong token of the operator is thus answered at once; a guesser asking one request after
another gets an answer every 2 s at most, and one asking many at once gets ``LOCK_AFTER``
answers a minute from each worker, the rest 429: a token counted once the address is held
off (one whose request passed the check before the others were refused) is answered 429 too.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from starlette.requests import HTTPConnection

from handreader.service.requests import ServiceError

__all__ = [
    "FIRST_DELAY_S",
    "FREE_REFUSALS",
    "LOCK_AFTER",
    "LOG_EVERY",
    "MAX_DELAY_S",
    "WINDOW_S",
    "Refusal",
    "TokenGuard",
    "TooManyAttemptsError",
    "client_of",
    "guard_for",
    "note_refusal",
    "printable",
]

WINDOW_S = 60.0
FREE_REFUSALS = 5
FIRST_DELAY_S = 0.25
MAX_DELAY_S = 2.0
LOCK_AFTER = 30
LOG_EVERY = 100

LOG = logging.getLogger("handreader.serve")


class TooManyAttemptsError(ServiceError):
    """A token from an address with too many wrong tokens in the window (429)."""

    code = "too_many_attempts"

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(
            f"too many wrong operator tokens from this address: try again in {retry_after_s} s"
        )
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class Refusal:
    """What to do about one refused token: wait ``delay_s`` before answering; log ``line``
    (None: counted, not logged); ``retry_after_s`` not None: the address was already held off
    when this token was counted (its check came before the refusals of requests sent with it),
    so the answer is 429 with that ``Retry-After``, at once, and the token is not counted."""

    delay_s: float
    line: str | None
    retry_after_s: int | None = None


@dataclass
class TokenGuard:
    """The refused tokens of each client address (see the module's docstring); thread-safe."""

    window_s: float = WINDOW_S
    free: int = FREE_REFUSALS
    lock_after: int = LOCK_AFTER
    log_every: int = LOG_EVERY
    clock: Callable[[], float] = time.monotonic
    _refused: dict[str, deque[float]] = field(default_factory=dict, init=False)
    _unlogged: dict[str, int] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._refused.setdefault(client, deque())
        while times and times[0] <= now - self.window_s:
            times.popleft()
        return times

    def _retry_after(self, times: deque[float], now: float) -> int:
        """Whole seconds until fewer than ``lock_after`` refusals are left in the window."""
        return max(1, math.ceil(times[len(times) - self.lock_after] + self.window_s - now))

    def check(self, client: str) -> None:
        """TooManyAttemptsError when ``client`` has ``lock_after`` refusals in the window."""
        with self._lock:
            now = self.clock()
            times = self._recent(client, now)
            if len(times) < self.lock_after:
                if not times:
                    self._refused.pop(client, None)
                return
            wait = self._retry_after(times, now)
        raise TooManyAttemptsError(wait)

    def refused(self, client: str, what: str) -> Refusal:
        """Count a refused token of ``client`` (``what``: the request and the reason, for the
        log line) and say how long to wait before answering and what to log."""
        with self._lock:
            now = self.clock()
            times = self._recent(client, now)
            if len(times) >= self.lock_after:
                return Refusal(0.0, None, self._retry_after(times, now))
            times.append(now)
            count = len(times)
            if count == 1:
                self._unlogged[client] = 0
                line: str | None = f"{what} from {client} refused"
            else:
                unlogged = self._unlogged.get(client, 0) + 1
                self._unlogged[client] = unlogged
                line = None
                if unlogged >= self.log_every:
                    self._unlogged[client] = 0
                    line = (
                        f"{unlogged} more wrong operator tokens from {client} "
                        f"({count} in the last {self.window_s:g} s); the latest: {what}"
                    )
            over = count - self.free
            delay = 0.0 if over <= 0 else min(MAX_DELAY_S, FIRST_DELAY_S * 2 ** (over - 1))
            if len(self._refused) > 10_000:  # many addresses: forget the quiet ones
                quiet = [
                    key
                    for key, value in self._refused.items()
                    if not value or value[-1] <= now - self.window_s
                ]
                for other in quiet:
                    self._refused.pop(other, None)
                    self._unlogged.pop(other, None)
        return Refusal(delay, line)


_CREATING = threading.Lock()


def guard_for(request: HTTPConnection) -> TokenGuard:
    """The guard of the app serving ``request`` (one per app, so per worker), shared by every
    route that checks the operator token; made on first use."""
    state = request.app.state
    guard = getattr(state, "token_guard", None)
    if guard is None:
        with _CREATING:
            guard = getattr(state, "token_guard", None)
            if guard is None:
                guard = state.token_guard = TokenGuard()
    return cast(TokenGuard, guard)


def note_refusal(request: HTTPConnection, what: str) -> Refusal:
    """Count a wrong token of ``request``'s client with its app's guard (``what``: the request
    and the reason) and log what the guard says to log; the guard's answer."""
    refusal = guard_for(request).refused(client_of(request), what)
    if refusal.line is not None:
        LOG.warning("%s", refusal.line)
    return refusal


def client_of(request: HTTPConnection) -> str:
    """The address a request came from ("?" when the server does not say), printable: a
    forwarded address is the client's own text."""
    return printable(request.client.host) if request.client else "?"


def printable(text: str) -> str:
    """``text`` with every character that is not printable (a control character, an escape,
    a line or paragraph separator) written as its escape: a client's text logged cannot start
    a line of its own or rewrite one on a terminal."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)
