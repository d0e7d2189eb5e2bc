"""Saving a deck over one of its name (``DeckStore.save``) on both backends (a folder of files,
the PostgreSQL database): the rule of ``check_replacement`` applied under the store's write
lock, so that two processes saving one name at once run one after the other and the second is
refused when it would lose cards of the deck the first saved.

Expectations come from ``handreader/store/decks.py``'s docstring ("The deck it would replace
is read and judged under the store's write lock ... two processes saving one name at once run
one after the other, and the second judges the deck the first saved") and from the rule's
table in test_decks.py.
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
from handreader.store import decks
from handreader.store.database import open_database
from vision.calibration import DeckProfile

where, cards, mode = sys.argv[1], sys.argv[2].split(), sys.argv[3]
if where.startswith("postgresql://"):
    store = decks.DatabaseDeckStore(open_database(where))
else:
    store = decks.FolderDeckStore(Path(where))
judge = decks._judge

def judging(*args):
    try:
        return judge(*args)
    finally:
        if mode == "pause-after-judging":  # (the store's lock held, the deck not saved yet)
            print("judged", flush=True)
            sys.stdin.readline()

decks._judge = judging
vectors = np.ones((len(cards), 2, 8), np.float32) / np.sqrt(8)
deck = DeckProfile("house", dict(zip(cards, vectors)), "ab" * 32, "2026-12-01T10:00:00Z", ())
print("ready", flush=True)
if mode == "wait-to-start":
    sys.stdin.readline()
try:
    saved = store.save(deck, replace=False)
    print("saved", saved.replaced, flush=True)
except decks.DeckExistsError as error:
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


def _writer(where: str, cards: str, mode: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, where, cards, mode],
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


def test_two_processes_saving_one_deck_at_once_run_one_after_the_other(where: str) -> None:
    """The first process has judged (no deck of the name) and holds the lock; the second
    starts its save then. It waits for the first to save its 3 cards, then judges that deck:
    refused, as it would lose two of them, and the first's deck stays whole."""
    second = _writer(where, "AS", "wait-to-start")
    first = _writer(where, "AS 10H KD", "pause-after-judging")
    assert first.stdout is not None and second.stdout is not None
    assert first.stdout.readline() == "judged\n"
    _tell(second)  # its save begins while the first holds the lock
    time.sleep(0.5)  # (time enough for it to judge and save, were the lock not held)
    assert second.poll() is None  # waiting for the lock
    _tell(first)
    assert first.communicate(timeout=60)[0] == "saved None\n"
    assert second.communicate(timeout=60)[0] == (
        "refused deck 'house' has 3 cards; this calibration has 1 and would lose 10H, KD\n"
    )
    store = _opened(where)
    assert sorted(store.get("house").prototypes) == ["10H", "AS", "KD"]


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
