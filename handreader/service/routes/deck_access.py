"""Who may write and delete calibrated decks, and how many decks the service keeps.

A deck profile changes how every photo that names it is read, dealer verification included, so
writing one (``POST /v1/decks/NAME``) and deleting one (``DELETE /v1/decks/NAME``) need the
operator token as ``Authorization: Bearer <token>``, checked before the request's body is read:

- ``HANDREADER_OPERATOR_TOKEN``: the token; unset, the audit log's ``HANDREADER_AUDIT_TOKEN``
  serves (one operator, one token). With neither, deck writing is off: 403 ``forbidden``.
- ``HANDREADER_OPEN_DECKS=1``: anyone who reaches the service may write and delete decks (a
  service on one's own computer); the quota still holds.

A missing or wrong token is 401 ``unauthorized`` (compared in constant time). Reading decks
(``GET /v1/decks``, the ``deck`` option) needs no token.

Quota: at most ``HANDREADER_MAX_DECKS`` decks (default :data:`DEFAULT_MAX_DECKS`) taking at
most ``HANDREADER_MAX_DECK_STORAGE`` bytes together (default :data:`DEFAULT_MAX_DECK_STORAGE`);
a new deck past either, or a deck made again while the others already fill the storage, is 409
``quota_exceeded`` before anything is calibrated. The quota is checked again as the deck is
saved, under the deck store's write lock (the decks folder's ``flock``, or the database's
advisory lock), so that writes at once, by any number of workers, never pass it together.
"""

from __future__ import annotations

import hmac
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Self

from starlette.requests import Request

from handreader.service.requests import ServiceError
from handreader.service.routes.decks import DECKS
from handreader.service.routes.verification import bearer_token
from handreader.service.token_guard import client_of, guard_for
from handreader.store.audit import TOKEN_ENV
from handreader.tables.wording import counted

__all__ = [
    "DEFAULT_MAX_DECKS",
    "DEFAULT_MAX_DECK_STORAGE",
    "OPEN_DECKS_ENV",
    "OPERATOR_TOKEN_ENV",
    "DeckAccess",
    "DeckQuotaError",
    "DeckWritesOffError",
    "OperatorTokenError",
]

LOG = logging.getLogger("handreader.serve")

OPERATOR_TOKEN_ENV = "HANDREADER_OPERATOR_TOKEN"
"""The environment variable holding the operator token for deck writes."""
OPEN_DECKS_ENV = "HANDREADER_OPEN_DECKS"
"""Set to ``1`` to let anyone write and delete decks."""
DEFAULT_MAX_DECKS = 64
"""Decks kept at most: a deck for every table of a floor, and room to spare."""
DEFAULT_MAX_DECK_STORAGE = 64 * 1024 * 1024
"""Bytes the decks take at most together: a deck calibrated from the largest upload (64
photos) is under 1 MB."""


class OperatorTokenError(ServiceError):
    """A deck write without the operator token, or with a wrong one (401); ``guessed``: a
    token was given, and it was wrong."""

    code = "unauthorized"

    def __init__(self, message: str, *, guessed: bool = True) -> None:
        super().__init__(message)
        self.guessed = guessed


class DeckWritesOffError(ServiceError):
    """A deck write while no operator token is configured and decks are not open (403)."""

    code = "forbidden"


class DeckQuotaError(ServiceError):
    """A deck write past the number of decks or the storage they may take (409)."""

    code = "quota_exceeded"


@dataclass(frozen=True, slots=True)
class DeckAccess:
    """The deck-writing settings (see the module docstring)."""

    token: str | None = field(default=None, repr=False)
    open: bool = False
    max_decks: int = DEFAULT_MAX_DECKS
    max_storage: int = DEFAULT_MAX_DECK_STORAGE

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Self:
        """From ``HANDREADER_OPERATOR_TOKEN`` (else ``HANDREADER_AUDIT_TOKEN``),
        ``HANDREADER_OPEN_DECKS``, ``HANDREADER_MAX_DECKS`` and ``HANDREADER_MAX_DECK_STORAGE``;
        ValueError names a bad value."""

        def count(name: str, default: int) -> int:
            text = environ.get(name)
            if text is None:
                return default
            if not text.strip().isdigit() or int(text) < 1:
                raise ValueError(f"{name}={text!r} must be a whole number of at least 1")
            return int(text)

        flag = environ.get(OPEN_DECKS_ENV, "").strip().lower()
        if flag not in ("", "0", "1", "false", "true", "no", "yes"):
            raise ValueError(f"{OPEN_DECKS_ENV}={flag!r} must be 1 or 0")
        return cls(
            token=environ.get(OPERATOR_TOKEN_ENV) or environ.get(TOKEN_ENV) or None,
            open=flag in ("1", "true", "yes"),
            max_decks=count("HANDREADER_MAX_DECKS", DEFAULT_MAX_DECKS),
            max_storage=count("HANDREADER_MAX_DECK_STORAGE", DEFAULT_MAX_DECK_STORAGE),
        )

    def authorize(self, request: Request) -> None:
        """Let a deck write through, or raise: DeckWritesOffError (no token configured, decks
        not open), OperatorTokenError (no token, or a wrong one)."""
        if self.open:
            return
        if self.token is None:
            raise DeckWritesOffError(
                "writing decks is off: the operator sets HANDREADER_OPERATOR_TOKEN (then sends "
                "it as 'Authorization: Bearer <token>') or HANDREADER_OPEN_DECKS=1"
            )
        given = bearer_token(request)
        if given is None:
            raise OperatorTokenError(
                "writing decks needs the operator token (Bearer)", guessed=False
            )
        guard_for(request).check(client_of(request))
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            raise OperatorTokenError("wrong operator token")

    def is_operator(self, token: str | None) -> bool:
        """Whether ``token`` is the deck-writing token (compared in constant time)."""
        return bool(token and self.token) and hmac.compare_digest(
            str(token).encode("utf-8"), str(self.token).encode("utf-8")
        )

    def check_save(self, name: str, size: int, usage: dict[str, int]) -> None:
        """DeckQuotaError when saving the deck ``name``, ``size`` bytes, would pass the quota,
        the decks taking ``usage`` (bytes by name). The service passes it to
        :meth:`handreader.store.decks.DeckStore.save`, which calls it under the store's write
        lock with the usage the lock finds: writes that passed :meth:`check_quota` at once, in
        one worker or in several, never pass the quota together."""
        self.check_quota(name, usage)
        self.check_room(name, size, usage)

    def check_quota(self, name: str, usage: dict[str, int] | None = None) -> None:
        """DeckQuotaError when writing the deck ``name`` would pass the quota: a new deck
        past the number of decks, or any write while the other decks fill the storage."""
        usage = DECKS.store().usage() if usage is None else usage
        others = {deck: size for deck, size in usage.items() if deck != name}
        if name not in usage and len(others) >= self.max_decks:
            raise DeckQuotaError(
                f"the service keeps at most {counted(self.max_decks, 'deck')}: delete one first "
                "(DELETE /v1/decks/NAME)"
            )
        self.check_room(name, 0, usage)

    def check_room(self, name: str, size: int, usage: dict[str, int] | None = None) -> None:
        """DeckQuotaError when the deck ``name``, ``size`` bytes once saved, and the other
        decks would pass the storage quota together (checked again with the profile made,
        before it is saved: one deck cannot pass the quota either)."""
        usage = DECKS.store().usage() if usage is None else usage
        taken = sum(size for deck, size in usage.items() if deck != name)
        if taken >= self.max_storage or (size and taken + size > self.max_storage):
            raise DeckQuotaError(
                f"the decks take {taken:,} bytes"
                + (f" and this one {size:,}" if size else "")
                + f", the most the service keeps is {self.max_storage:,}: delete one first "
                "(DELETE /v1/decks/NAME)"
            )
