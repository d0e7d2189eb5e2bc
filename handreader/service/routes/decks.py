"""Decks in the service: the calibrated deck (the ``deck`` option of the image endpoints) and
the deck in play (``game`` and ``decks``: :func:`with_deck_in_play`).

An image endpoint given ``deck`` (an option like the others: ``?deck=MYDECK`` with a raw body,
``{"deck": "MYDECK"}`` in the multipart ``options`` field; on ``WS /v1/live`` the query or a
``{"deck": ...}`` message) reads the photo with that deck profile: the profiles that
``handreader calibrate`` or ``POST /v1/decks/NAME`` make, found as the CLI's ``--deck NAME``
finds them (``handreader.store.decks``: ``decks/NAME.json`` in the user's data folder, or the
shared PostgreSQL database of ``HANDREADER_DATABASE_URL``), by name only, never by a path.
Without ``deck`` (or with ``null`` or ``""``) the recognizer is called exactly as before: a
profile never changes reading without one.

Profiles are small and cached by the store's stamp (a file's inode, modification time and size;
a database row's SHA-256): a deck calibrated again, through this process or any other, is read
again, the others stay loaded (up to :data:`CACHE_SIZE`).

Errors (``{"error": {"code": "bad_options", "message": ...}}``, 400): a deck no profile has
(the message names it and the known decks), a bad name, a corrupt profile (or one made for
embeddings of another size); the message names the deck, the server keeps serving and reading
without a deck is unaffected. A recognizer that cannot read with a deck (the models did not
load) answers 503 ``not_ready``.

The deck in play (``rules.decks.Deck``, from the options as ``handreader.service.schemas``
reads them) makes the recognizer decode a photo's cards together: no card the deck lacks, none
more often than it holds (``vision.decoding``). It is a setting of the recognizer
(``vision.reader.Reader.with_deck_in_play``, a copy sharing the models); a stand-in recognizer
without that method reads as it does.
"""

from __future__ import annotations

import inspect
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, cast

import numpy as np
from numpy.typing import NDArray

from handreader.service.requests import BadOptionsError, NotReadyError
from handreader.service.store_guard import GuardedDeckStore
from handreader.store.database import DATABASE_URL_ENV, configured_url, redact_url
from handreader.store.decks import DeckStore, FolderDeckStore, open_deck_store
from rules.decks import Deck
from vision.calibration import DeckProfile, DeckProfileError
from vision.detections import Reading
from vision.index_letters import IndexLettersError, deck_letters

__all__ = [
    "CACHE_SIZE",
    "DECKS",
    "DeckCache",
    "DeckOptionError",
    "DeckReader",
    "DeckSwitch",
    "PlainReader",
    "ReaderWithDecks",
    "environment_deck_store",
    "reads_decks",
    "with_deck",
    "with_deck_in_play",
]

CACHE_SIZE = 64
"""Deck profiles kept loaded (each is a few hundred kilobytes at most): as many as the service
keeps by default (``handreader.service.routes.deck_access.DEFAULT_MAX_DECKS``), so listing them
loads each once."""


class DeckOptionError(BadOptionsError):
    """A ``deck`` naming no usable profile: unknown, badly named or corrupt (400)."""


class PlainReader(Protocol):
    """A recognizer as the service calls it (``handreader.service.deps.ReaderLike``)."""

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        """The cards read from a BGR image."""
        ...


class ReaderWithDecks(Protocol):
    """A recognizer that reads with a deck profile (``vision.reader.Reader``)."""

    def read(self, image: NDArray[np.uint8], deck: DeckProfile | None = None) -> Reading:
        """The cards read from a BGR image, with the deck's prototypes when one is given."""
        ...


_STORES: dict[str, DeckStore] = {}
_STORES_LOCK = threading.Lock()


def environment_deck_store() -> DeckStore:
    """The deck store the environment names now (``handreader.store.decks.open_deck_store``):
    a database store is opened once per URL and kept, each call bounded in time and its errors
    told without the database's user or host (``handreader.service.store_guard``); the folder
    store follows ``$HANDREADER_DATA``."""
    url = configured_url(os.environ)
    if url is None:
        return FolderDeckStore()
    with _STORES_LOCK:
        if url not in _STORES:
            _STORES[url] = GuardedDeckStore(
                lambda: open_deck_store({DATABASE_URL_ENV: url}), redact_url(url)
            )
        return _STORES[url]


class DeckCache:
    """Loaded deck profiles by name, loaded again when the store's stamp changes; thread-safe.

    ``store`` gives the deck store to use (default: :func:`environment_deck_store`)."""

    def __init__(
        self, size: int = CACHE_SIZE, store: Callable[[], DeckStore] = environment_deck_store
    ) -> None:
        self._size = size
        self.store = store
        self._entries: OrderedDict[tuple[str, str], tuple[str, DeckProfile]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, name: str) -> DeckProfile:
        """The profile called ``name``; DeckOptionError (naming it) when it is unknown, badly
        named or corrupt; the store's errors (StoreUnavailableError) when it cannot answer."""
        store = self.store()
        try:
            stamp = store.stamp(name)
        except DeckProfileError as error:
            raise DeckOptionError(f"deck {name!r}: {error}") from None
        if stamp is None:
            known = ", ".join(store.names()) or "none"
            raise DeckOptionError(
                f"unknown deck {name!r}: no such deck profile (known: {known}); "
                "calibrate it first (POST /v1/decks/NAME or handreader calibrate)"
            )
        key = (store.location, name)
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] == stamp:
                self._entries.move_to_end(key)
                return found[1]
        try:
            profile = store.get(name)
        except DeckProfileError as error:
            reason = str(error)
            if isinstance(store, FolderDeckStore):
                reason = reason.replace(repr(str(store.folder / f"{name}.json")), repr(name))
            raise DeckOptionError(
                f"deck {name!r} cannot be used: {reason}; calibrate it again"
            ) from None
        with self._lock:
            self._entries[key] = (stamp, profile)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return profile

    def clear(self) -> None:
        """Forget every loaded profile."""
        with self._lock:
            self._entries.clear()


DECKS = DeckCache()
"""The service's cache of deck profiles (empty until a request names a deck)."""


_TAKES_DECK: dict[type, bool] = {}


def reads_decks(reader: object) -> bool:
    """Whether ``reader.read`` takes a ``deck`` (known per type after the first look)."""
    kind = type(reader)
    if kind not in _TAKES_DECK:
        read = getattr(reader, "read", None)
        try:
            takes = read is not None and "deck" in inspect.signature(read).parameters
        except (TypeError, ValueError):
            takes = False
        _TAKES_DECK[kind] = takes
    return _TAKES_DECK[kind]


RECHECK_S = 1.0
"""How often a reader kept over many frames (a live stream) asks whether its deck was
calibrated again or deleted."""


@dataclass(slots=True)
class DeckReader:
    """The recognizer reading with one deck profile: ``read(image)`` is
    ``reader.read(image, deck=profile)``. With its deck's ``name``, a reader kept over many
    frames follows the store: a deck calibrated again is read with from the next frame after
    :data:`RECHECK_S`, and a deck deleted makes each frame a DeckOptionError (400)."""

    reader: ReaderWithDecks
    profile: DeckProfile
    name: str | None = None
    checked: float = field(default_factory=time.monotonic)

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        """The cards read from a BGR image with the deck's prototypes; DeckOptionError when
        the deck is gone or does not fit the classifier (made for other models)."""
        if self.name is not None and time.monotonic() - self.checked >= RECHECK_S:
            self.profile = DECKS.get(self.name)
            self.checked = time.monotonic()
        try:
            return self.reader.read(image_bgr, deck=self.profile)
        except DeckProfileError as error:
            raise DeckOptionError(f"deck {self.profile.name!r} cannot be used: {error}") from None


def with_deck(reader: PlainReader, deck: object) -> PlainReader:
    """``reader`` itself when ``deck`` is None or ``""``; else the reader with that profile
    (:class:`DeckReader`). DeckOptionError for a deck that is no name or no usable profile;
    NotReadyError when the recognizer cannot read with a deck (its models did not load)."""
    if deck is None or deck == "":
        return reader
    if not isinstance(deck, str):
        raise DeckOptionError(f"deck must be a deck's name (text), got {deck!r}")
    profile = DECKS.get(deck)
    if not reads_decks(reader):
        reason = getattr(reader, "reason", None)
        raise NotReadyError(
            "the recognizer cannot read with a deck" + (f": {reason}" if reason else "")
        )
    return DeckReader(cast(ReaderWithDecks, reader), profile, deck)


def with_deck_in_play(reader: PlainReader, deck: Deck | None) -> PlainReader:
    """``reader`` decoding each photo's cards with ``deck`` in play; ``reader`` itself for
    None, or when it cannot (it has no ``with_deck_in_play``: a stand-in)."""
    if deck is None:
        return reader
    switch = getattr(reader, "with_deck_in_play", None)
    return reader if switch is None else cast(PlainReader, switch(deck))


def with_indices(reader: PlainReader, indices: object) -> PlainReader:
    """``reader`` reading the index letters ``indices`` names (``vision.index_letters``);
    ``reader`` itself for None, or when it cannot (it has no ``with_indices``: a stand-in).
    BadOptionsError (a 400) for a name of no letters."""
    if indices is None:
        return reader
    try:
        if not isinstance(indices, str):
            raise IndexLettersError(f"indices must be a name of letters, got {indices!r}")
        deck_letters(indices)  # the name is checked whatever the reader
    except IndexLettersError as error:
        raise BadOptionsError(str(error)) from error
    switch = getattr(reader, "with_indices", None)
    return reader if switch is None else cast(PlainReader, switch(indices))


class DeckSwitch:
    """The live stream's recognizer: reads with the deck chosen last (:meth:`choose`), or
    without one, the deck in play chosen last (:meth:`play`) and the index letters chosen last
    (:meth:`letters`); switching takes effect from the next frame."""

    def __init__(
        self,
        reader: PlainReader,
        deck: object = None,
        in_play: Deck | None = None,
        indices: str | None = None,
    ) -> None:
        self._plain = reader
        self.deck: str | None = deck if isinstance(deck, str) and deck else None
        self.in_play = in_play
        self.indices = indices
        self._reader = self._made(deck, in_play, indices)

    def _made(self, deck: object, in_play: Deck | None, indices: str | None) -> PlainReader:
        """The plain reader with the letters ``indices``, the deck in play and ``deck``
        (errors as :func:`with_indices` and :func:`with_deck`)."""
        lettered = with_indices(self._plain, indices)
        return with_deck(with_deck_in_play(lettered, in_play), deck)

    def choose(self, deck: object) -> None:
        """Read with ``deck`` from now on (None or ``""``: without a deck); errors as
        :func:`with_deck`, leaving the deck in use unchanged."""
        self._reader = self._made(deck, self.in_play, self.indices)
        self.deck = deck if isinstance(deck, str) and deck else None

    def play(self, in_play: Deck | None) -> None:
        """Decode with ``in_play`` from now on (None: any card)."""
        self._reader = self._made(self.deck, in_play, self.indices)
        self.in_play = in_play

    def letters(self, indices: str | None) -> None:
        """Read the index letters ``indices`` names from now on (None: the default reading);
        errors as :func:`with_indices`, leaving the letters in use unchanged."""
        self._reader = self._made(self.deck, self.in_play, indices)
        self.indices = indices

    def switch(self, deck: object, in_play: Deck | None, indices: str | None) -> None:
        """Read with ``deck``, ``in_play`` and ``indices`` at once from now on; errors as
        :meth:`choose` and :meth:`letters`, leaving all three unchanged."""
        self._reader = self._made(deck, in_play, indices)
        self.deck = deck if isinstance(deck, str) and deck else None
        self.in_play, self.indices = in_play, indices

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        """The cards read from a BGR image (with the chosen deck)."""
        return self._reader.read(image_bgr)
