"""Saving a deck (``DeckStore.save``) on both backends (a folder of files, the PostgreSQL
database): the rule of ``judge_replacement`` and the quota check applied under the store's
write lock, so that two processes saving one name at once run one after the other and the
second is refused when it would lose cards of the deck the first saved, and two processes
saving new decks at once never pass the quota together.

Expectations come from ``handreader/store/decks.py``'s docstring ("The deck it would replace
is read and judged under the store's write lock ... two processes saving one name at once run
one after the other, and the second judges the deck the first saved"; "two processes saving new
decks at once cannot pass a quota together"), from the rule's table in test_decks.py and from
the quota of ``handreader.service.routes.deck_access`` ("at most HANDREADER_MAX_DECKS decks").
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_decks import profile

from handreader.store.database import open_database
from handreader.store.decks import (
    DatabaseDeckStore,
    DeckExistsError,
    DeckStore,
    FolderDeckStore,
    ReplacedDeck,
    SavedDeck,
)

ROOT = Path(__file__).resolve().parents[3]
MADE = "2026-12-01T10:00:00Z"  # test_decks.profile()'s

WRITER = """
import sys
import numpy as np
from pathlib import Path
from handreader.service.routes.deck_access import DeckAccess, DeckQuotaError
from handreader.store import decks
from handreader.store.database import open_database
from vision.calibration import DeckProfile

where, name, cards, mode = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4]
most = int(sys.argv[5]) if len(sys.argv) > 5 else None  # decks the quota allows
if where.startswith("postgresql://"):
    store = decks.DatabaseDeckStore(open_database(where))
else:
    store = decks.FolderDeckStore(Path(where))
judge = decks.judge_replacement

def pause(said):  # (the store's lock held, the deck not saved yet)
    print(said, flush=True)
    sys.stdin.readline()

def judging(*args):
    try:
        return judge(*args)
    finally:
        if mode == "pause-after-judging":
            pause("judged")

def quota(usage):
    DeckAccess(max_decks=most).check_save(name, 1000, usage)
    if mode == "pause-after-checking":
        pause("checked")

decks.judge_replacement = judging
vectors = np.ones((len(cards), 2, 8), np.float32) / np.sqrt(8)
deck = DeckProfile(name, dict(zip(cards, vectors)), "ab" * 32, "2026-12-01T10:00:00Z", ())
print("ready", flush=True)
if mode == "wait-to-start":
    sys.stdin.readline()
try:
    saved = store.save(deck, replace=False, quota=None if most is None else quota)
    print("saved", saved.replaced, flush=True)
except (decks.DeckExistsError, DeckQuotaError) as error:
    print("refused", error, flush=True)
"""


@pytest.fixture(params=["folder", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A deck store's place: a folder, or a PostgreSQL schema's URL (migrated)."""
    if request.param == "folder":
        yield str(tmp_path / "decks")
        return
    url = request.getfixturevalue("postgres_schema")
    open_database(url).close()  # (the deck table made before the writers open it)
    yield url


def _opened(where: str) -> DeckStore:
    if where.startswith("postgresql://"):
        return DatabaseDeckStore(open_database(where))
    return FolderDeckStore(Path(where))


def _writer(
    where: str, cards: str, mode: str, name: str = "house", most: int | None = None
) -> subprocess.Popen[str]:
    """A process saving the deck ``name`` of ``cards``; ``most``: with a quota of that many
    decks (``DeckAccess.check_save``)."""
    quota = [] if most is None else [str(most)]
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, where, name, cards, mode, *quota],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process


def _tell(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.write("go\n")
    process.stdin.flush()


def _one_after_the_other(
    first: subprocess.Popen[str], paused: str, second: subprocess.Popen[str]
) -> str:
    """Once ``first`` says it has ``paused`` holding the lock, ``second`` starts its save; it
    must still be waiting half a second later (time enough to judge and save, were the lock not
    held). Then ``first`` goes on and saves; what ``second`` says in the end."""
    assert first.stdout is not None and second.stdout is not None
    assert first.stdout.readline() == paused + "\n"
    _tell(second)  # its save begins while the first holds the lock
    time.sleep(0.5)
    assert second.poll() is None  # waiting for the lock
    _tell(first)
    assert first.communicate(timeout=60)[0] == "saved None\n"
    return second.communicate(timeout=60)[0]


def test_two_processes_saving_one_deck_at_once_run_one_after_the_other(where: str) -> None:
    """The first process has judged (no deck of the name) and holds the lock; the second
    starts its save then. It waits for the first to save its 3 cards, then judges that deck:
    refused, as it would lose two of them, and the first's deck stays whole."""
    second = _writer(where, "AS", "wait-to-start")
    first = _writer(where, "AS 10H KD", "pause-after-judging")
    assert _one_after_the_other(first, "judged", second) == (
        "refused deck 'house' has 3 cards; this calibration has 1 and would lose 10H, KD\n"
    )
    store = _opened(where)
    assert sorted(store.get("house").prototypes) == ["10H", "AS", "KD"]


def test_two_processes_saving_new_decks_at_once_never_pass_the_quota(where: str) -> None:
    """A quota of one deck: the first process has passed the check (no deck yet) and holds
    the lock; the second starts saving another deck then. It waits for the first to save,
    then checks the usage the lock finds: refused, one deck kept."""
    second = _writer(where, "AS", "wait-to-start", "table-2", most=1)
    first = _writer(where, "AS", "pause-after-checking", "table-1", most=1)
    assert _one_after_the_other(first, "checked", second) == (
        "refused the service keeps at most 1 deck: delete one first (DELETE /v1/decks/NAME)\n"
    )
    assert _opened(where).names() == ["table-1"]


def test_a_save_follows_the_rule_of_replacing_a_deck(where: str) -> None:
    store = _opened(where)
    first = store.save(profile("house", cards=("AS", "10H")))
    assert isinstance(first, SavedDeck) and first.replaced is None
    stamp = store.stamp("house")
    with pytest.raises(DeckExistsError, match=r"deck 'house' has 2 cards; .* would lose 10H"):
        store.save(profile("house", seed=1, cards=("AS",)))
    assert store.stamp("house") == stamp  # refused: nothing saved
    kept = store.save(profile("house", seed=1, cards=("AS", "10H", "KD")))
    assert kept.replaced == ReplacedDeck("house", 2, MADE)
    asked = store.save(profile("house", seed=2, cards=("AS",)), replace=True)
    assert asked.replaced == ReplacedDeck("house", 3, MADE)
    assert list(store.get("house").prototypes) == ["AS"]
    assert store.delete("house") is True and store.delete("house") is False
