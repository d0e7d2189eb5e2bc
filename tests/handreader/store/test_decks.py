"""The deck store on both backends (a folder of files, the PostgreSQL database): list, get, save,
delete, the stamp that changes with every write, errors that name the deck.

Expectations come from ``handreader/store/decks.py``'s docstring and from the product's
requirements: "a deck calibrated through one [replica] is used by the others".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from store_databases import raw

from handreader.store.database import StoreError, open_database
from handreader.store.decks import (
    DatabaseDeckStore,
    DeckExistsError,
    DeckStore,
    FolderDeckStore,
    ReplacedDeck,
    load_deck,
    open_deck_store,
)
from rules.cards import CARD_CLASSES
from vision.calibration import DeckProfile, DeckProfileError, save_profile


def profile(name: str, seed: int = 0, cards: tuple[str, ...] = ("AS", "10H")) -> DeckProfile:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(len(cards), 2, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=2, keepdims=True)
    prototypes = {code: vectors[i] for i, code in enumerate(cards)}
    return DeckProfile(name, prototypes, "ab" * 32, "2026-12-01T10:00:00Z", ("a.jpg",))


@pytest.fixture(params=["folder", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DeckStore]:
    if request.param == "folder":
        yield FolderDeckStore(tmp_path / "decks")
        return
    database = open_database(request.getfixturevalue("postgres_schema"))
    yield DatabaseDeckStore(database)
    database.close()


def same(first: DeckProfile, second: DeckProfile) -> bool:
    return (first.name, first.model_sha256, first.created, first.photos) == (
        second.name, second.model_sha256, second.created, second.photos,
    ) and all(
        np.allclose(first.prototypes[code], second.prototypes[code], atol=1e-5)
        for code in first.prototypes
    ) and set(first.prototypes) == set(second.prototypes)  # fmt: skip


def test_an_empty_store_has_no_deck(store: DeckStore) -> None:
    assert store.names() == []
    assert store.stamp("house") is None
    with pytest.raises(DeckProfileError, match=r"no deck profile 'house' \(known: none\)"):
        store.get("house")
    assert store.delete("house") is False


def test_a_deck_saved_reads_back_whole(store: DeckStore) -> None:
    store.save(profile("house"))
    store.save(profile("blue-back.2", seed=1))
    assert store.names() == ["blue-back.2", "house"]
    assert same(store.get("house"), profile("house"))
    with pytest.raises(DeckProfileError, match=r"known: blue-back\.2, house"):
        store.get("red")


def test_the_stamp_changes_when_a_deck_is_written_again(store: DeckStore) -> None:
    store.save(profile("house", seed=1))
    first = store.stamp("house")
    store.save(profile("house", seed=2))
    second = store.stamp("house")
    assert first is not None and second is not None and first != second
    assert same(store.get("house"), profile("house", seed=2))


def test_usage_is_each_decks_size(store: DeckStore) -> None:
    store.save(profile("house"))
    store.save(profile("big", cards=("AS", "2S", "3S", "4S")))
    usage = store.usage()
    assert set(usage) == {"big", "house"}
    assert usage["big"] > usage["house"] > 500  # bytes of the profile's JSON text


def test_a_deleted_deck_is_gone(store: DeckStore) -> None:
    store.save(profile("house"))
    assert store.delete("house") is True
    assert store.names() == [] and store.stamp("house") is None


@pytest.mark.parametrize("name", ["../etc", "", "-x", "a/b", "x" * 65])
def test_bad_names_are_refused(store: DeckStore, name: str) -> None:
    with pytest.raises(DeckProfileError, match="bad deck name"):
        store.get(name)
    with pytest.raises(DeckProfileError, match="bad deck name"):
        store.save(profile(name))


def test_a_corrupt_profile_is_a_clear_error(postgres_schema: str) -> None:
    with open_database(postgres_schema) as database:
        store = DatabaseDeckStore(database)
        store.save(profile("house"))
        raw(postgres_schema, "UPDATE deck_profile SET body = '{\"format\": 1}'")
        with pytest.raises(
            DeckProfileError, match=r"^deck profile 'house' is corrupt: (?!.*postgresql)"
        ):
            store.get("house")


def test_two_stores_on_one_database_see_each_others_decks(postgres_schema: str) -> None:
    with open_database(postgres_schema) as one, open_database(postgres_schema) as other:
        DatabaseDeckStore(one).save(profile("house"))
        assert same(DatabaseDeckStore(other).get("house"), profile("house"))


def test_an_sqlite_database_keeps_no_decks(tmp_path: Path) -> None:
    with (
        open_database(tmp_path / "store.sqlite3") as database,
        pytest.raises(StoreError, match="PostgreSQL only"),
    ):
        DatabaseDeckStore(database)


def test_the_environment_picks_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path))
    folder = open_deck_store({})
    assert isinstance(folder, FolderDeckStore) and folder.folder == tmp_path / "decks"
    save_profile(profile("house"))  # what handreader calibrate writes is what the store reads
    assert folder.names() == ["house"] and same(load_deck("house"), profile("house"))
    assert same(load_deck(str(tmp_path / "decks" / "house.json")), profile("house"))
    with pytest.raises(StoreError, match="must be a postgresql:// URL"):
        open_deck_store({"HANDREADER_DATABASE_URL": "mysql://floor/decks"})


def test_the_database_url_picks_the_database(
    postgres_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HANDREADER_DATABASE_URL", postgres_schema)
    store = open_deck_store()
    assert isinstance(store, DatabaseDeckStore)
    store.save(profile("house"))
    assert same(load_deck("house"), profile("house"))


def test_two_writers_of_one_deck_at_once_never_fail_nor_leave_it_half_written(
    tmp_path: Path,
) -> None:
    """Each write has a temporary file of its own: two writers (two service workers, or the
    command line beside the service) and a reader meanwhile see a whole profile every time."""
    import json
    import threading

    store = FolderDeckStore(tmp_path / "decks")
    store.save(profile("same", seed=1))
    failures: list[BaseException] = []
    stop = threading.Event()

    def write(seed: int) -> None:
        try:
            for _ in range(60):
                store.save(profile("same", seed=seed))
        except BaseException as error:  # gathered for the assertion
            failures.append(error)

    def read() -> None:
        while not stop.is_set():
            text = (tmp_path / "decks" / "same.json").read_text(encoding="utf-8")
            try:
                json.loads(text)
            except ValueError as error:
                failures.append(error)

    threads = [threading.Thread(target=write, args=(seed,)) for seed in (2, 3)]
    reader = threading.Thread(target=read)
    reader.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    stop.set()
    reader.join(10)
    assert failures == []
    assert store.names() == ["same"] and list((tmp_path / "decks").iterdir()) == [
        tmp_path / "decks" / "same.json"
    ]


def test_a_folder_in_the_way_and_a_huge_file_are_named_errors(tmp_path: Path) -> None:
    from handreader.store.decks import MAX_PROFILE_BYTES

    folder = tmp_path / "decks"
    (folder / "odd.json").mkdir(parents=True)
    store = FolderDeckStore(folder)
    assert store.names() == []  # a folder is no deck
    with pytest.raises(StoreError, match="cannot save deck 'odd': a folder of its file") as error:
        store.save(profile("odd"))
    assert str(tmp_path) not in str(error.value)
    with pytest.raises(StoreError, match="cannot delete deck 'odd'"):
        store.delete("odd")
    with (folder / "big.json").open("wb") as big:
        big.truncate(MAX_PROFILE_BYTES + 1)
    with pytest.raises(DeckProfileError, match="over the 16,777,216 a profile takes at most"):
        store.get("big")


def test_a_profile_file_copied_under_another_name_is_that_names_deck(tmp_path: Path) -> None:
    import shutil

    store = FolderDeckStore(tmp_path / "decks")
    store.save(profile("original"))
    shutil.copyfile(tmp_path / "decks" / "original.json", tmp_path / "decks" / "clone.json")
    assert store.names() == ["clone", "original"]
    assert store.get("clone").name == "clone" and store.get("original").name == "original"


def test_a_folder_that_cannot_be_listed_is_no_empty_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decks the service cannot see are an error naming why, never "no decks" (which would
    send an operator to calibrate again a deck that is there)."""
    (tmp_path / "data").write_text("a file where the data folder should be")
    store = FolderDeckStore(tmp_path / "data" / "decks")
    for attempt in (store.names, store.usage, lambda: store.get("table")):
        with pytest.raises(StoreError, match="or the data folder holding it, is no folder"):
            attempt()
    readable = FolderDeckStore(tmp_path / "decks")
    readable.save(profile("table"))

    def refused(path: object) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("os.scandir", refused)
    with pytest.raises(StoreError, match="cannot list the decks: Permission denied"):
        readable.names()
    monkeypatch.undo()
    assert readable.names() == ["table"]
    assert FolderDeckStore(tmp_path / "not yet made").names() == []  # no folder yet: no decks
    (tmp_path / "unmounted").symlink_to(tmp_path / "share not mounted")
    for folder in ("unmounted", "unmounted/decks"):
        with pytest.raises(StoreError, match="their folder is a link to nothing"):
            FolderDeckStore(tmp_path / folder).names()


def test_a_deck_file_that_cannot_be_read_is_the_stores_fault_not_corrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from handreader import cli

    store = FolderDeckStore(tmp_path / "decks")
    store.save(profile("table"))
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path))
    monkeypatch.delenv("HANDREADER_DATABASE_URL", raising=False)
    read_text = Path.read_text

    def refused(path: Path, *args: object, **kwargs: object) -> str:
        if path.suffix == ".json" and path.parent == tmp_path / "decks":  # the deck's own file
            raise PermissionError(13, "Permission denied")
        return read_text(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", refused)
    with pytest.raises(StoreError, match="cannot read deck 'table': Permission denied"):
        store.get("table")
    assert cli.main(["decks"]) == 2
    assert (
        "table: unusable (cannot read deck 'table': Permission denied)" in capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("./nosuch.json", "--deck './nosuch.json': no such profile file"),
        ("kept/nosuch.json", "--deck 'kept/nosuch.json': no such profile file"),
        (
            "nosuch.json",  # a deck could have that name: both named
            "--deck 'nosuch.json': no such profile file, nor a deck of that name (known: house)",
        ),
        ("./kept/house", "no deck has that name, and a profile file's name ends in .json"),
        ("nobody", "no deck profile 'nobody' (known: house)"),
        ("a b", "bad deck name 'a b'"),
    ],
)
def test_a_deck_option_naming_nothing_says_what_it_looked_for(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    given: str,
    message: str,
) -> None:
    """A missing profile file was called a bad deck name."""
    from handreader import cli

    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path))
    monkeypatch.delenv("HANDREADER_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    save_profile(profile("house"))
    with pytest.raises(DeckProfileError) as error:
        load_deck(given)
    assert message in str(error.value)
    photo = tmp_path / "hand.png"
    photo.write_bytes(b"")
    assert cli.main(["read", str(photo), "--deck", given]) == 2  # named before any photo
    assert capsys.readouterr().err == f"handreader read: error: {error.value}\n"


# --- replacing a deck (DeckStore.save: the rule of handreader calibrate and POST /v1/decks) ---

FULL = tuple(CARD_CLASSES[:52])
"""A deck of 52 cards, S, H, D, C from A to K (rules.cards)."""


@pytest.mark.parametrize(
    ("old", "new", "replace", "expected"),
    [
        (None, ("AS",), False, None),  # a new deck replaces nothing
        (("AS", "10H"), ("AS", "10H", "KD"), False, 2),  # keeps every card: replaced
        (("AS", "10H"), ("10H", "AS"), False, 2),  # the same cards
        (("AS", "10H"), ("AS",), False, "would lose 10H"),
        (("AS", "10H"), ("AS",), True, 2),  # asked for: replaced
        (FULL, ("AS",), False, "has 52 cards; this calibration has 1 and would lose 2S, 3S, "
         "4S, 5S, 6S, 7S and 45 more"),  # six named (LOST_NAMED), the rest counted
        (("JB", "AS"), ("AS",), False, "would lose JB"),  # a joker is a card too
    ],
)  # fmt: skip
def test_a_deck_is_replaced_only_when_it_loses_no_card_or_when_asked(
    store: DeckStore,
    old: tuple[str, ...] | None,
    new: tuple[str, ...],
    replace: bool,
    expected: int | str | None,
) -> None:
    if old is not None:
        store.save(profile("house", cards=old))
    stamp = store.stamp("house")
    if isinstance(expected, str):
        with pytest.raises(DeckExistsError) as error:
            store.save(profile("house", seed=1, cards=new), replace)
        assert str(error.value).startswith(f"deck 'house' has {len(old or ())} cards; ")
        assert expected in str(error.value)
        assert error.value.name == "house" and set(error.value.lost) == set(old or ()) - set(new)
        assert store.stamp("house") == stamp  # refused: nothing saved
    else:
        saved = store.save(profile("house", seed=1, cards=new), replace)
        made = "2026-12-01T10:00:00Z"  # profile()'s
        assert saved.replaced == (
            None if expected is None else ReplacedDeck("house", expected, made)
        )
        assert store.stamp("house") != stamp
        assert same(store.get("house"), profile("house", seed=1, cards=new))


def test_a_deck_that_cannot_be_read_is_replaced_only_when_asked(tmp_path: Path) -> None:
    store = FolderDeckStore(tmp_path / "decks")
    (tmp_path / "decks").mkdir()
    (tmp_path / "decks" / "house.json").write_text("{not json")
    with pytest.raises(DeckExistsError, match=r"deck 'house' exists but cannot be read \(deck "):
        store.save(profile("house"), replace=False)
    assert (tmp_path / "decks" / "house.json").read_text() == "{not json"
    found = store.save(profile("house"), replace=True).replaced
    assert found is not None and found.cards is None and "corrupt" in str(found.problem)
    assert str(found) == "a profile that could not be read"
    assert same(store.get("house"), profile("house"))
