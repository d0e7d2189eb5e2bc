"""Where deck profiles are kept: a folder of files (the default) or the shared database.

A :class:`DeckStore` lists, gets, saves and deletes :class:`vision.calibration.DeckProfile`
values by name. Two backends:

- :class:`FolderDeckStore`: ``decks/NAME.json`` in the user's data folder
  (``vision.calibration``: ``$HANDREADER_DATA``, else ``$XDG_DATA_HOME/handreader``), written
  atomically; what ``handreader calibrate`` and ``--deck NAME`` have always used.
- :class:`DatabaseDeckStore`: the ``deck_profile`` table of the store's PostgreSQL database
  (``HANDREADER_DATABASE_URL``), one row per deck holding the profile's JSON text and its
  SHA-256, so that every service process, on every machine, reads the decks calibrated
  through any of them.

:func:`open_deck_store` picks the backend from the environment. :meth:`DeckStore.stamp` is a
cheap token that changes whenever a deck is written (the file's identity and time, or the
text's SHA-256), so that callers may keep loaded profiles until it changes.

:meth:`DeckStore.save` saves a deck under the one rule for saving over a deck of the same name,
which ``handreader calibrate`` and ``POST /v1/decks/NAME`` both follow: the deck is replaced
when the new profile keeps every card it has, otherwise (or when it cannot be read) only when
asked. The deck it would replace is read and judged under the store's write lock, the one
every write of a deck takes (the folder's ``flock``; on PostgreSQL, the transaction-level
advisory lock :data:`DECK_LOCK`), and the new one saved before the lock is let go: two
processes saving one name at once run one after the other, and the second judges the deck the
first saved. A save may also be given a quota check (``quota``), run first under the same lock
with the bytes each deck takes then: two processes saving new decks at once cannot pass a
quota together, as the second sees the deck the first saved.

Errors: DeckProfileError for a bad name, an unknown deck (the message names the known ones) or
a corrupt profile; StoreError when the database refuses, StoreUnavailableError when it cannot be
reached or another writer holds the lock past its wait; DeckExistsError for a replacement that
would lose cards, not asked for.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import os
import stat
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

from handreader.store.database import (
    FULL_MESSAGE,
    Database,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
    Transaction,
    configured_url,
    open_database,
)
from handreader.tables.wording import counted
from rules.cards import CARD_CLASSES
from vision.calibration import (
    DeckProfile,
    DeckProfileError,
    check_deck_name,
    data_dir,
    load_profile,
    parse_profile,
    profile_json,
)

__all__ = [
    "DECK_LOCK",
    "LOCK_WAIT_S",
    "LOST_NAMED",
    "MAX_PROFILE_BYTES",
    "DatabaseDeckStore",
    "DeckExistsError",
    "DeckStore",
    "FolderDeckStore",
    "QuotaCheck",
    "ReplacedDeck",
    "SavedDeck",
    "judge_replacement",
    "load_deck",
    "open_deck_store",
]


DECK_LOCK = 0x68616E6400000003
"""The PostgreSQL advisory lock key that serializes the writes of decks."""

DECK_LOCK_NAME = "the decks' lock"
""":data:`DECK_LOCK` in messages."""

LOCK_WAIT_S = 30.0
"""How long a write of a deck in a folder waits for another writer's lock."""

QuotaCheck = Callable[[dict[str, int]], None]
"""A save's check of the decks' quota (:meth:`DeckStore.save`'s ``quota``): called under the
store's write lock with the bytes each deck takes, by name; it raises to refuse the save."""


class DeckStore(ABC):
    """Deck profiles by name; see the module docstring."""

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the profiles are: a folder, or the database's URL without its password."""

    @abstractmethod
    def names(self) -> list[str]:
        """The decks' names, sorted."""

    @abstractmethod
    def stamp(self, name: str) -> str | None:
        """A token that changes whenever the deck is written; None when there is no such
        deck. DeckProfileError for a bad name."""

    @abstractmethod
    def _load(self, name: str) -> DeckProfile | None:
        """The deck, None when there is none."""

    @abstractmethod
    def usage(self) -> dict[str, int]:
        """The bytes each deck's profile takes, by name (for quotas)."""

    @abstractmethod
    def save(
        self, profile: DeckProfile, replace: bool = False, quota: QuotaCheck | None = None
    ) -> SavedDeck:
        """Save ``profile`` under its name by the rule of replacing a deck (see the module
        docstring), under the store's write lock, so that no other writer's deck slips in
        between: first ``quota`` (when given) called with :meth:`usage` as the lock finds it
        (whatever it raises, nothing is saved), then the deck of its name read and judged
        (:func:`judge_replacement`), then the profile saved. DeckExistsError, nothing saved,
        for a deck that would lose cards or cannot be read, unless ``replace``; where the
        profile went and the deck it replaced."""

    @abstractmethod
    def delete(self, name: str) -> bool:
        """Remove the deck; whether there was one."""

    def get(self, name: str) -> DeckProfile:
        """The deck called ``name``; DeckProfileError when it is badly named, unknown or
        corrupt. The deck is named as the store names it (a profile file copied under another
        name is that name's deck)."""
        check_deck_name(name)
        profile = self._load(name)
        if profile is None:
            known = ", ".join(self.names()) or "none"
            raise DeckProfileError(f"no deck profile {name!r} (known: {known})")
        return profile if profile.name == name else dataclasses.replace(profile, name=name)


MAX_PROFILE_BYTES = 16 * 1024 * 1024
"""The largest profile file read (one calibrated from the most photos is under 1 MB): a larger
file dropped in the folder is refused as corrupt, unread, and never stalls a listing."""


NOT_A_FOLDER = "the decks folder, or the data folder holding it, is no folder"


def _os_failure(doing: str, name: str, error: OSError) -> StoreError:
    """A deck file's operating-system error in words that name the deck, not the path: a full
    disk as :class:`StoreFullError`."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreFullError(FULL_MESSAGE)
    if isinstance(error, IsADirectoryError):
        return StoreError(f"cannot {doing} deck {name!r}: a folder of its file's name is there")
    if isinstance(error, NotADirectoryError | FileExistsError):
        return StoreError(f"cannot {doing} deck {name!r}: {NOT_A_FOLDER}")
    return StoreError(f"cannot {doing} deck {name!r}: {error.strerror or error}")


class FolderDeckStore(DeckStore):
    """Profiles as ``NAME.json`` files in ``folder`` (None: ``decks/`` in the data folder,
    looked up on every call, so that a change of ``$HANDREADER_DATA`` is followed)."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder

    @property
    def folder(self) -> Path:
        """The folder of the profile files."""
        return self._folder if self._folder is not None else data_dir() / "decks"

    @property
    def location(self) -> str:
        return str(self.folder)

    def _path(self, name: str) -> Path:
        return self.folder / f"{check_deck_name(name)}.json"

    def _files(self) -> list[os.DirEntry[str]]:
        """The folder's ``*.json`` files; none when there is no folder yet; StoreError when
        the folder cannot be listed (its permissions, a file where a folder should be), so
        that decks there are never taken for no decks."""
        try:
            with os.scandir(self.folder) as entries:
                return [
                    entry for entry in entries if entry.name.endswith(".json") and entry.is_file()
                ]
        except FileNotFoundError:
            # no folder yet, or a link to nothing (a share not mounted): decks not there to see
            missing = self.folder
            while not os.path.lexists(missing) and missing != missing.parent:
                missing = missing.parent
            if os.path.islink(missing):
                raise StoreError(
                    "cannot list the decks: their folder is a link to nothing"
                ) from None
            return []
        except NotADirectoryError:
            raise StoreError(f"cannot list the decks: {NOT_A_FOLDER}") from None
        except OSError as error:
            raise StoreError(f"cannot list the decks: {error.strerror or error}") from None

    def names(self) -> list[str]:
        return sorted(entry.name.removesuffix(".json") for entry in self._files())

    def stamp(self, name: str) -> str | None:
        try:
            status = self._path(name).stat()
        except OSError:
            return None
        return f"{status.st_ino}:{status.st_mtime_ns}:{status.st_size}"

    def usage(self) -> dict[str, int]:
        sizes: dict[str, int] = {}
        for entry in self._files():
            try:
                sizes[entry.name.removesuffix(".json")] = entry.stat().st_size
            except OSError:
                continue  # removed meanwhile
        return sizes

    def _load(self, name: str) -> DeckProfile | None:
        path = self._path(name)
        try:
            status = path.stat()
        except FileNotFoundError:
            return None
        except OSError as error:  # (a folder that cannot be searched is no missing deck)
            raise _os_failure("read", name, error) from None
        if not stat.S_ISREG(status.st_mode):
            return None
        size = status.st_size
        if size > MAX_PROFILE_BYTES:
            raise DeckProfileError(
                f"deck profile {name!r} is corrupt: {size:,} bytes, over the "
                f"{MAX_PROFILE_BYTES:,} a profile takes at most"
            )
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:  # (the file's permissions: not what it holds)
            raise _os_failure("read", name, error) from None
        except UnicodeDecodeError as error:
            raise DeckProfileError(f"deck profile {name!r} is corrupt: {error}") from None
        return parse_profile(text, name)  # named as its deck: no path in an answer

    @contextlib.contextmanager
    def _writing(self, name: str, doing: str = "save") -> Iterator[None]:
        """The folder's write lock, held in the block: an exclusive ``flock`` on the decks
        folder itself (made when missing), which every write of a deck, in any process, takes;
        waited for up to :data:`LOCK_WAIT_S` (StoreUnavailableError past it). The system lets it
        go when the process ends, however it ends."""
        folder = self.folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError as error:
            raise _os_failure(doing, name, error) from None
        try:
            deadline, pause_s = time.monotonic() + LOCK_WAIT_S, 0.005
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() + pause_s > deadline:
                        raise StoreUnavailableError(
                            f"cannot {doing} deck {name!r}: another writer holds the decks' "
                            f"lock (waited {LOCK_WAIT_S:g} s, nothing was changed)"
                        ) from None
                except OSError as error:
                    raise _os_failure(doing, name, error) from None
                time.sleep(pause_s)
                pause_s = min(pause_s * 2, 0.1)
            yield
        finally:
            os.close(handle)  # (lets the lock go)

    def save(
        self, profile: DeckProfile, replace: bool = False, quota: QuotaCheck | None = None
    ) -> SavedDeck:
        name = check_deck_name(profile.name)
        with self._writing(name):
            if quota is not None:
                quota(self.usage())
            replaced = judge_replacement(profile, replace, lambda: self._load(name))
            return SavedDeck(self._write(profile), replaced)

    def _write(self, profile: DeckProfile) -> str:
        """Write ``profile``'s file in place atomically (call under :meth:`_writing`)."""
        path = self._path(profile.name)
        partial: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # a file of its own for each writer: two writes of one deck at once never share one
            handle, partial = tempfile.mkstemp(
                prefix=f".{profile.name}.", suffix=".part", dir=path.parent
            )
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(profile_json(profile))
            os.replace(partial, path)  # a crash leaves the old file or the new one, never half
            partial = None
        except OSError as error:
            raise _os_failure("save", profile.name, error) from None
        finally:
            if partial is not None:
                with contextlib.suppress(OSError):
                    os.unlink(partial)
        return str(path)

    def delete(self, name: str) -> bool:
        path = self._path(name)
        try:
            os.lstat(path)  # (no deck: nothing to lock, no folder made)
        except FileNotFoundError:
            return False
        except OSError as error:
            raise _os_failure("delete", name, error) from None
        with self._writing(name, "delete"):
            try:
                path.unlink()
            except FileNotFoundError:
                return False
            except OSError as error:
                raise _os_failure("delete", name, error) from None
        return True


class DatabaseDeckStore(DeckStore):
    """Profiles in the ``deck_profile`` table of ``database`` (PostgreSQL; see
    :mod:`handreader.store.schema`)."""

    def __init__(self, database: Database) -> None:
        if database.dialect != "postgresql":
            raise StoreError(
                f"deck profiles are kept in a database on PostgreSQL only, not in "
                f"{database.location!r}: use the data folder (FolderDeckStore)"
            )
        self.database = database

    @property
    def location(self) -> str:
        return self.database.location

    def names(self) -> list[str]:
        return sorted(str(row[0]) for row in self.database.read("SELECT name FROM deck_profile"))

    def stamp(self, name: str) -> str | None:
        rows = self.database.read(
            "SELECT body_sha256 FROM deck_profile WHERE name = ?", (check_deck_name(name),)
        )
        return str(rows[0][0]) if rows else None

    def usage(self) -> dict[str, int]:
        rows = self.database.read("SELECT name, octet_length(body) FROM deck_profile")
        return {str(name): int(size) for name, size in rows}

    def _load(self, name: str) -> DeckProfile | None:
        rows = self.database.read("SELECT body FROM deck_profile WHERE name = ?", (name,))
        if not rows:
            return None
        return parse_profile(str(rows[0][0]), name)  # named without the database's address

    def save(
        self, profile: DeckProfile, replace: bool = False, quota: QuotaCheck | None = None
    ) -> SavedDeck:
        """See :meth:`DeckStore.save`: one transaction under :data:`DECK_LOCK`, the usage and
        the deck of its name read by that transaction (after the lock: another writer's deck
        is seen)."""
        name = check_deck_name(profile.name)
        body = profile_json(profile)
        digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
        updated = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

        def stored(transaction: Transaction) -> DeckProfile | None:
            row = transaction.one("SELECT body FROM deck_profile WHERE name = ?", (name,))
            return None if row is None else parse_profile(str(row[0]), name)

        def upsert(transaction: Transaction) -> ReplacedDeck | None:
            self.database.check_schema(transaction)
            if quota is not None:
                rows = transaction.all("SELECT name, octet_length(body) FROM deck_profile")
                quota({str(deck): int(size) for deck, size in rows})
            replaced = judge_replacement(profile, replace, lambda: stored(transaction))
            transaction.all(
                "INSERT INTO deck_profile (name, body, body_sha256, updated_utc) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET body = excluded.body, "
                "body_sha256 = excluded.body_sha256, updated_utc = excluded.updated_utc",
                (name, body, digest, updated),
            )
            return replaced

        replaced = self.database.write(upsert, serialize=DECK_LOCK, lock_name=DECK_LOCK_NAME)
        return SavedDeck(f"{self.location} (deck {name})", replaced)

    def delete(self, name: str) -> bool:
        check_deck_name(name)

        def remove(transaction: Transaction) -> bool:
            self.database.check_schema(transaction)
            rows = transaction.all(
                "DELETE FROM deck_profile WHERE name = ? RETURNING name", (name,)
            )
            return bool(rows)

        return self.database.write(remove, serialize=DECK_LOCK, lock_name=DECK_LOCK_NAME)


LOST_NAMED = 6
"""Cards a refused replacement names (the rest are counted)."""


class DeckExistsError(ValueError):
    """A save over the deck of its name refused: the new profile lacks cards that deck has
    (``lost``, in the order of ``rules.cards.CARD_CLASSES``), or that deck cannot be read
    (``lost`` empty). The message names the deck and the cards, not how to ask for the
    replacement: each caller adds that in its own terms."""

    def __init__(self, message: str, name: str, lost: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.name = name
        self.lost = lost


@dataclasses.dataclass(frozen=True, slots=True)
class ReplacedDeck:
    """The deck a save replaces: its name and number of cards and when it was made, or, for
    a profile that could not be read, ``problem`` (why) with ``cards`` and ``created`` None."""

    name: str
    cards: int | None = None
    created: str | None = None
    problem: str | None = None

    def __str__(self) -> str:
        if self.problem is not None:
            return "a profile that could not be read"
        return f"{counted(self.cards or 0, 'card')}, made {self.created}"


@dataclasses.dataclass(frozen=True, slots=True)
class SavedDeck:
    """A save's outcome (:meth:`DeckStore.save`): where the profile went, and the deck it
    replaced (None: there was none of its name)."""

    location: str
    replaced: ReplacedDeck | None


def judge_replacement(
    profile: DeckProfile, replace: bool, stored: Callable[[], DeckProfile | None]
) -> ReplacedDeck | None:
    """What saving ``profile`` replaces, judged on the deck of its name that ``stored()`` reads
    (None: there is none; DeckProfileError: it cannot be read): None when there is none, else
    that deck. DeckExistsError, unless ``replace``, when that deck has cards the new profile
    lacks (calibrating again from fewer photos would lose them) or cannot be read (what it
    holds is unknown). :meth:`DeckStore.save` applies it under the store's write lock."""
    name = profile.name
    try:
        old = stored()
    except DeckProfileError as error:
        if not replace:
            raise DeckExistsError(
                f"deck {name!r} exists but cannot be read ({error})", name
            ) from None
        return ReplacedDeck(name, problem=str(error))
    if old is None:
        return None
    lost = tuple(
        code for code in CARD_CLASSES if code in old.prototypes and code not in profile.prototypes
    )
    if lost and not replace:
        shown = ", ".join(lost[:LOST_NAMED]) + (
            f" and {len(lost) - LOST_NAMED} more" if len(lost) > LOST_NAMED else ""
        )
        raise DeckExistsError(
            f"deck {name!r} has {counted(len(old.prototypes), 'card')}; this calibration has "
            f"{len(profile.prototypes)} and would lose {shown}",
            name,
            lost,
        )
    return ReplacedDeck(name, len(old.prototypes), old.created)


def open_deck_store(environ: Mapping[str, str] = os.environ) -> DeckStore:
    """The deck store the environment names: the PostgreSQL database of
    ``HANDREADER_DATABASE_URL`` when set, else the data folder's ``decks/``."""
    url = configured_url(environ)
    if url is None:
        return FolderDeckStore()
    return DatabaseDeckStore(open_database(url))


def load_deck(name_or_path: str) -> DeckProfile:
    """A deck for the command line's ``--deck``: a profile file's path (``*.json``), else a
    deck's name in the store of :func:`open_deck_store`. DeckProfileError for an empty name, a
    folder named as a profile file, a profile file that is not there (named as the file, not as
    a bad deck name), or no such deck."""
    if not name_or_path.strip():
        raise DeckProfileError("--deck is empty: name a calibrated deck (handreader decks)")
    path = Path(name_or_path)
    if path.suffix == ".json" and path.is_file():
        return load_profile(path)
    if path.suffix == ".json" and path.is_dir():
        raise DeckProfileError(f"--deck {name_or_path!r} is a folder: name a profile file")
    named = _is_deck_name(name_or_path)
    if path.suffix == ".json" and not named:
        raise DeckProfileError(f"--deck {name_or_path!r}: no such profile file")
    if not named and ("/" in name_or_path or os.sep in name_or_path):
        raise DeckProfileError(
            f"--deck {name_or_path!r}: no deck has that name, and a profile file's name ends "
            "in .json"
        )
    store = open_deck_store()
    if path.suffix == ".json" and name_or_path not in store.names():
        known = ", ".join(store.names()) or "none"
        raise DeckProfileError(
            f"--deck {name_or_path!r}: no such profile file, nor a deck of that name "
            f"(known: {known})"
        )
    return store.get(name_or_path)


def _is_deck_name(text: str) -> bool:
    """Whether ``text`` can name a deck (:func:`vision.calibration.check_deck_name`)."""
    try:
        check_deck_name(text)
    except DeckProfileError:
        return False
    return True
