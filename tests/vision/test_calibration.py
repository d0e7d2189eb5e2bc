"""Deck profiles: storage, corrupt files, defaults, the combination with the classifier, grid
checks."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from vision.calibration import (
    DEFAULT_TEMPERATURE,
    DEFAULT_WEIGHT,
    RETIRED_DEFAULTS,
    DeckProfileError,
    code_from_filename,
    combine_with_profile,
    grid_order,
    list_profiles,
    load_profile,
    new_profile,
    save_profile,
)
from vision.detections import Detections


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path))
    return tmp_path


def _unit(rng: np.random.Generator, count: int) -> NDArray[np.float32]:
    vectors = rng.normal(size=(count, 128)).astype(np.float32)
    unit: NDArray[np.float32] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


def test_profile_round_trips_to_disk() -> None:
    rng = np.random.default_rng(1)
    profile = new_profile(
        "my-deck", {"AS": list(_unit(rng, 2)), "10H": list(_unit(rng, 1))}, "abc", ["a.jpg"]
    )
    path = save_profile(profile)
    again = load_profile("my-deck")
    assert path.name == "my-deck.json" and list_profiles() == ["my-deck"]
    assert set(again.prototypes) == {"AS", "10H"} and again.model_sha256 == "abc"
    assert np.allclose(again.prototypes["AS"], profile.prototypes["AS"], atol=1e-4)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "corrupt"),
        ('{"format": 1}', "corrupt: it has no 'prototypes' field$"),
        ('{"name": "x"}', "corrupt: it has no 'format' field$"),  # named, never KeyError(...)
        (
            '{"format": 1, "name": "x", "model_sha256": "", "created": "", "weight": "heavy", '
            '"temperature": 0.05, "prototypes": {"AS": [[1.0]]}}',
            "corrupt: its 'weight' field must be a number, got text$",
        ),
        (
            '{"format": 1, "name": "x", "model_sha256": "", "created": "", "weight": [1], '
            '"temperature": 0.05, "prototypes": {"AS": [[1.0]]}}',
            "corrupt: its 'weight' field must be a number, got a list$",
        ),
        (
            '{"format": 1, "name": {}, "model_sha256": "", "created": "", "weight": 0.7, '
            '"temperature": 0.05, "prototypes": {"AS": [[1.0]]}}',
            "corrupt: its 'name' field must be text, got an object$",
        ),
        (
            '{"format": 1, "name": "x", "model_sha256": "", "created": "", "weight": 0.7, '
            '"temperature": 0.05, "photos": "abc", "prototypes": {"AS": [[1.0]]}}',
            "corrupt: its 'photos' field must be a list of names, got text$",
        ),
        (
            '{"format": 1, "name": "x", "model_sha256": "", "created": "", "weight": 0.7, '
            '"temperature": 0.05, "prototypes": {"AS": [[1.0], [1.0, 2.0]]}}',
            "card AS has bad prototypes$",  # rows of different lengths, never numpy's words
        ),
        ('{"format": 9, "name": "x"}', "format 9"),
        (
            '{"format": 1, "name": "x", "model_sha256": "", "created": "", "weight": 0.7, '
            '"temperature": 0.05, '
            '"prototypes": {"ZZ": [[1.0]]}}',
            "unknown card 'ZZ'",
        ),
        (
            '{"format": 1, "name": "x", "model_sha256": "", "created": "", "weight": 0.7, '
            '"temperature": 0.05, '
            '"prototypes": {"AS": [[NaN]]}}',
            "bad prototypes",
        ),
    ],
)
def test_corrupt_profile_is_refused_clearly(data_dir: Path, body: str, message: str) -> None:
    folder = data_dir / "decks"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "broken.json").write_text(body)
    with pytest.raises(DeckProfileError, match=message):
        load_profile("broken")


def test_unknown_profile_names_the_known_ones() -> None:
    save_profile(new_profile("mine", {"AS": list(_unit(np.random.default_rng(0), 1))}, "", []))
    with pytest.raises(DeckProfileError, match=r"no deck profile 'other' \(known: mine\)"):
        load_profile("other")


@pytest.mark.parametrize("name", ["", "../escape", "a b", "x" * 70])
def test_bad_deck_names_are_refused(name: str) -> None:
    with pytest.raises(DeckProfileError, match="bad deck name"):
        new_profile(name, {"AS": list(_unit(np.random.default_rng(0), 1))}, "", [])


def test_profile_moves_the_reading_toward_the_calibrated_card() -> None:
    """The classifier hesitates between QS and QC; the crop looks like the user's QC."""
    rng = np.random.default_rng(2)
    prototype = _unit(rng, 1)
    profile = new_profile("d", {"QC": list(prototype), "QS": list(_unit(rng, 1))}, "", [])
    probabilities = np.full((1, 55), 0.001, np.float32)
    probabilities[0, CARD_CLASSES.index("QS")] = 0.5
    probabilities[0, CARD_CLASSES.index("QC")] = 0.4
    probabilities /= probabilities.sum()
    combined = combine_with_profile(probabilities, prototype.copy(), profile)
    assert CARD_CLASSES[int(combined[0, :-1].argmax())] == "QC"
    assert combined.sum() == pytest.approx(1.0, abs=1e-5)
    assert combined[0, -1] == pytest.approx(probabilities[0, -1])  # "none" untouched


def test_cards_the_profile_lacks_keep_their_probability() -> None:
    """A profile of QC and QS only redistributes what the classifier gave those two: a card it
    has no sample of (here 9H, the classifier's favourite) keeps its probability and stays first."""
    rng = np.random.default_rng(3)
    prototype = _unit(rng, 1)
    profile = new_profile("d", {"QC": list(prototype), "QS": list(_unit(rng, 1))}, "", [])
    probabilities = np.full((1, 55), 0.001, np.float32)
    probabilities[0, CARD_CLASSES.index("9H")] = 0.5
    probabilities[0, CARD_CLASSES.index("QS")] = 0.2
    probabilities[0, CARD_CLASSES.index("QC")] = 0.1
    probabilities /= probabilities.sum()
    combined = combine_with_profile(probabilities, prototype.copy(), profile)
    known = [CARD_CLASSES.index("QC"), CARD_CLASSES.index("QS")]
    assert combined[0, CARD_CLASSES.index("9H")] == pytest.approx(
        probabilities[0, CARD_CLASSES.index("9H")], rel=1e-4
    )
    assert combined[0, known].sum() == pytest.approx(probabilities[0, known].sum(), rel=1e-4)
    assert combined[0, CARD_CLASSES.index("QC")] > combined[0, CARD_CLASSES.index("QS")]
    assert CARD_CLASSES[int(combined[0, :-1].argmax())] == "9H"


def test_without_profile_nothing_changes() -> None:
    """Reading without --deck never calls the combination: the reader's path is unchanged."""
    from vision.reader import Reader

    assert Reader.read.__defaults__ == (None,)


def test_reading_without_a_deck_never_combines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader with its stages faked (one index read as QS): without a deck the combination
    is never called and the card is the classifier's; with a QC-like profile it is."""
    from vision.reader import Reader, ReaderSettings

    rng = np.random.default_rng(7)
    embedding = _unit(rng, 1)
    probabilities = np.full((1, 55), 0.001, np.float32)
    probabilities[0, CARD_CLASSES.index("QS")] = 0.5
    probabilities[0, CARD_CLASSES.index("QC")] = 0.4
    probabilities /= probabilities.sum()
    reader = Reader.__new__(Reader)
    reader.settings = ReaderSettings(dark_faces=False)  # no detector to read a negative with
    reader.whole_card = None  # models without the whole-card classifier
    box = np.array([[10, 10, 30, 40]], np.float32)
    monkeypatch.setattr(
        reader, "detect", lambda image: Detections(box, np.ones(1, np.float32), np.zeros(1, int))
    )
    monkeypatch.setattr(reader, "classify", lambda image, xyxy: (probabilities, embedding))
    image = np.zeros((60, 60, 3), np.uint8)
    calls: list[int] = []
    real = combine_with_profile

    def counting(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr("vision.reader.combine_with_profile", counting)
    assert [card.code for card in reader.read(image).cards] == ["QS"] and calls == []
    profile = new_profile("d", {"QC": list(embedding), "QS": list(_unit(rng, 1))}, "", [])
    assert [card.code for card in reader.read(image, profile).cards] == ["QC"] and calls == [1]


def test_new_profiles_get_the_tuned_defaults() -> None:
    """The pair chosen by benchmarks/tune_calibration.py on the held-out synthetic decks (lowest
    log loss with one calibration index per card and with a card's indices): weight 0.5,
    temperature 0.03. A new profile carries it, writes it, and reads back with it."""
    assert (DEFAULT_WEIGHT, DEFAULT_TEMPERATURE) == (0.5, 0.03)
    profile = new_profile("tuned", {"AS": list(_unit(np.random.default_rng(4), 1))}, "", [])
    assert (profile.weight, profile.temperature) == (0.5, 0.03)
    body = json.loads(save_profile(profile).read_text())
    assert (body["weight"], body["temperature"]) == (0.5, 0.03)
    again = load_profile("tuned")
    assert (again.weight, again.temperature) == (0.5, 0.03)


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        # the first release's defaults, written by every profile it made: nobody chose them
        # for that deck, so they read as the current defaults
        ((0.7, 0.05), (DEFAULT_WEIGHT, DEFAULT_TEMPERATURE)),
        # any other pair was set on purpose (an edited file): kept as written
        ((0.6, 0.1), (0.6, 0.1)),
        ((0.7, 0.1), (0.7, 0.1)),
        ((0.5, 0.03), (0.5, 0.03)),
        ((1.0, 0.05), (1.0, 0.05)),
    ],
)
def test_stored_weight_and_temperature_on_reading(
    data_dir: Path, stored: tuple[float, float], read: tuple[float, float]
) -> None:
    """A profile file as the first release wrote it (format 1, its own weight and temperature)."""
    folder = data_dir / "decks"
    folder.mkdir(parents=True, exist_ok=True)
    vector = _unit(np.random.default_rng(5), 1)[0]
    body = {
        "format": 1,
        "name": "old",
        "model_sha256": "abc",
        "created": "2026-01-01T00:00:00Z",
        "photos": ["AS.jpg"],
        "weight": stored[0],
        "temperature": stored[1],
        "prototypes": {"AS": [np.round(vector, 5).tolist()]},
    }
    (folder / "old.json").write_text(json.dumps(body))
    profile = load_profile("old")
    assert (profile.weight, profile.temperature) == read
    assert set(profile.prototypes) == {"AS"}


def test_retired_defaults_are_not_the_current_ones() -> None:
    """Otherwise a freshly saved profile would read back as something else."""
    assert (DEFAULT_WEIGHT, DEFAULT_TEMPERATURE) not in RETIRED_DEFAULTS


_PROBABILITY_ROWS = st.lists(
    st.floats(1e-4, 1.0), min_size=len(CARD_CLASSES) + 1, max_size=len(CARD_CLASSES) + 1
)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(_PROBABILITY_ROWS, min_size=1, max_size=4),
    known=st.sets(st.integers(0, len(CARD_CLASSES) - 1), min_size=1, max_size=8),
    seed=st.integers(0, 2**16),
    weight=st.sampled_from([0.3, DEFAULT_WEIGHT, 0.7, 0.9]),
    temperature=st.sampled_from([0.02, DEFAULT_TEMPERATURE, 0.05, 0.2]),
)
def test_combination_keeps_what_the_profile_does_not_cover(
    rows: list[list[float]], known: set[int], seed: int, weight: float, temperature: float
) -> None:
    """For any classifier output and profile (the tuned pair among others): rows still sum to
    1, the "none" column and every card the profile lacks keep their probability, and the cards
    it has keep their total share (combine_with_profile's contract)."""
    rng = np.random.default_rng(seed)
    probabilities = np.array(rows, np.float32)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    codes = sorted(known)
    profile = new_profile("p", {CARD_CLASSES[code]: list(_unit(rng, 1)) for code in codes}, "", [])
    profile = replace(profile, weight=weight, temperature=temperature)
    combined = combine_with_profile(probabilities, _unit(rng, len(rows)), profile)
    lacking = [code for code in range(len(CARD_CLASSES)) if code not in known] + [-1]
    assert combined.sum(axis=1) == pytest.approx(np.ones(len(rows)), abs=1e-4)
    assert combined[:, lacking] == pytest.approx(probabilities[:, lacking], rel=1e-3, abs=1e-7)
    assert combined[:, codes].sum(axis=1) == pytest.approx(
        probabilities[:, codes].sum(axis=1), rel=1e-3
    )


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    strength=st.sampled_from([10.0, 100 / 3, 60.0]),
    weights=st.tuples(st.floats(0.3, 0.8), st.floats(0.3, 0.8)),
)
def test_the_card_read_depends_on_the_strength_alone(
    seed: int, strength: float, weights: tuple[float, float]
) -> None:
    """With a profile of every card, two (weight, temperature) pairs with the same
    w / ((1 - w) T) pick the same card: the reason tune_calibration lists that strength and
    separates pairs of one strength by log loss. Embeddings lie in a narrow cone, as the
    classifier's do (cosines near 0.94 here; 0.8 to 0.95 on held-out decks), so no probability
    falls under the 1e-9 floor of the logarithms."""
    rng = np.random.default_rng(seed)
    probabilities = rng.dirichlet(np.ones(len(CARD_CLASSES) + 1), size=6).astype(np.float32)
    common = _unit(rng, 1)

    def near(count: int) -> NDArray[np.float32]:
        vectors = common + 0.25 * _unit(rng, count)
        unit: NDArray[np.float32] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return unit

    profile = new_profile("p", {code: list(near(1)) for code in CARD_CLASSES}, "", [])
    embeddings = near(6)
    picks, combinations = [], []
    for weight in weights:
        temperature = weight / ((1 - weight) * strength)
        paired = replace(profile, weight=weight, temperature=temperature)
        combined = combine_with_profile(probabilities, embeddings, paired)
        combinations.append(combined)
        picks.append(combined[:, :-1].argmax(axis=1).tolist())
    for row, (first, second) in enumerate(zip(*picks, strict=True)):
        if first != second:  # only a tie in float32 may pick otherwise
            for combined in combinations:
                assert combined[row, first] == pytest.approx(combined[row, second], rel=1e-4)


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("10C_00.jpg", "10C"),
        ("qs.png", "QS"),
        ("JR-1.jpg", "JR"),
        ("ts_2.jpg", "10S"),
        ("photo.jpg", None),
        ("AHX.jpg", None),
    ],
)
def test_card_from_file_name(name: str, code: str | None) -> None:
    assert code_from_filename(Path(name)) == code


class _GridReader:
    """Detections on a 13 x 4 grid with chosen cells left empty; the classifier reads every
    cell as its grid card except where told."""

    def __init__(self, missing: set[int], reads: dict[int, str]) -> None:
        self.missing, self.reads, self.manifest = missing, reads, {"classifier": {"sha256": "x"}}
        boxes = []
        self.cells: list[int] = []
        for cell in range(52):
            if cell in missing:
                continue
            row, column = divmod(cell, 13)
            x, y = 100 * column, 150 * row
            boxes += [[x, y, x + 15, y + 25], [x + 55, y + 95, x + 70, y + 120]]
            self.cells += [cell, cell]
        self.boxes = np.array(boxes, np.float32)

    def detect(self, image: Any) -> Detections:
        count = len(self.boxes)
        return Detections(self.boxes, np.ones(count, np.float32), np.zeros(count, np.int64))

    def classify(self, image: Any, xyxy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        probabilities = np.zeros((len(xyxy), 55), np.float32)
        for row, cell in enumerate(self.cells):
            code = self.reads.get(cell, grid_order()[cell])
            probabilities[row, CARD_CLASSES.index(code)] = 1.0
        return probabilities, _unit(np.random.default_rng(3), len(xyxy))


def _grid_photo(tmp_path: Path) -> Path:
    import cv2

    path = tmp_path / "deck.png"
    cv2.imwrite(str(path), np.full((700, 1400, 3), 200, np.uint8))
    return path


def test_grid_calibration_assigns_every_card(tmp_path: Path) -> None:
    from vision.calibrate_deck import calibrate

    result = calibrate(_GridReader(set(), {}), "grid", [_grid_photo(tmp_path)], grid=True)
    assert set(result.profile.prototypes) == set(grid_order())
    assert all(len(v) == 2 for v in result.profile.prototypes.values())


def test_grid_with_a_missing_card_names_its_position(tmp_path: Path) -> None:
    from vision.calibrate_deck import CalibrationError, calibrate

    reader = _GridReader({13 + 6}, {})  # hearts row, 7th column: 7H
    with pytest.raises(CalibrationError, match=r"no card found at row 2, column 7 \(7H\)"):
        calibrate(reader, "grid", [_grid_photo(tmp_path)], grid=True)


def test_grid_with_a_card_twice_names_both_positions(tmp_path: Path) -> None:
    from vision.calibrate_deck import CalibrationError, calibrate

    reader = _GridReader(set(), {1: "AS"})  # the 2S place holds a second AS
    with pytest.raises(
        CalibrationError, match=r"AS at row 1, column 1 \(AS\) and row 1, column 2 \(2S\)"
    ):
        calibrate(reader, "grid", [_grid_photo(tmp_path)], grid=True)


def test_read_command_refuses_an_unknown_deck_clearly(capsys: pytest.CaptureFixture[str]) -> None:
    """`--deck` names a profile that does not exist: exit 2 and a message, no traceback."""
    from handreader.cli import main
    from vision.reader import default_models_dir

    if not (default_models_dir() / "manifest.json").is_file():
        pytest.skip("no shipped models")
    example = Path(__file__).resolve().parents[2] / "examples" / "hand.jpg"
    assert main(["read", str(example), "--deck", "nobody"]) == 2
    assert "no deck profile 'nobody'" in capsys.readouterr().err


def test_reading_with_a_profile_runs_end_to_end(tmp_path: Path) -> None:
    """A profile made from the example photo itself is accepted by the reader."""
    from vision.calibrate_deck import calibrate
    from vision.imageio import load_image
    from vision.reader import Reader, default_models_dir

    if not (default_models_dir() / "manifest.json").is_file():
        pytest.skip("no shipped models")
    example = Path(__file__).resolve().parents[2] / "examples" / "hand.jpg"
    named = tmp_path / "2D.jpg"
    named.write_bytes(example.read_bytes())
    reader = Reader.load()
    result = calibrate(reader, "example", [named])
    assert set(result.profile.prototypes) == {"2D"} and result.path.is_file()
    assert result.sheet.ndim == 3
    reading = reader.read(load_image(example), load_profile("example"))
    assert reading.size_wh == (640, 480)


def test_one_photo_given_twice_counts_once(tmp_path: Path) -> None:
    from vision.calibrate_deck import calibrate
    from vision.reader import Reader, default_models_dir

    if not (default_models_dir() / "manifest.json").is_file():
        pytest.skip("no shipped models")
    example = Path(__file__).resolve().parents[2] / "examples" / "hand.jpg"
    named, copy = tmp_path / "2D.jpg", tmp_path / "copy" / "2D.jpg"
    copy.parent.mkdir()
    for path in (named, copy):
        path.write_bytes(example.read_bytes())
    reader = Reader.load()
    once = calibrate(reader, "once", [named], save=lambda _: "")
    twice = calibrate(reader, "twice", [named, named, copy], save=lambda _: "")
    assert len(twice.profile.prototypes["2D"]) == len(once.profile.prototypes["2D"]) > 0
    assert twice.warnings[-2:] == (
        f"{named}: the same photo as {named}; taken once",
        f"{copy}: the same photo as {named}; taken once",
    )
    other = tmp_path / "3D.jpg"  # the same photo for another card: kept, with a question
    other.write_bytes(example.read_bytes())
    both = calibrate(reader, "both", [named, other], save=lambda _: "")
    assert set(both.profile.prototypes) == {"2D", "3D"}
    assert f"{other}: the same photo as {named}, taken for 2D: is it the photo of 3D?" in (
        both.warnings
    )
