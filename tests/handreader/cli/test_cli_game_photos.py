"""``handreader baccarat|blackjack|paigow PHOTO``: a game read from a photo, with a fake reader.

The fake (tests/web_fakes.py) "reads" given hands at fractions of any image, so the layouts are
the HTTP tests' (tests/handreader/service/test_games_api.py). Expectations: a photo's ``--json``
line is ``{"image": PHOTO}`` and exactly what ``POST /v1/GAME`` answers for the same image and
options (without ``timings_ms``); its text is what the command prints for the same cards given
as codes; a layout that makes no round prints the groups and the problem; a photo that cannot
be read is reported with exit status 2 while the others are still read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from web_fakes import FakeReader, fake_client, image_bytes

from handreader import cli
from vision.detections import Reading

BACCARAT = {"9H 5C 3D": (0.1, 0.4), "KD 6S": (0.7, 0.4)}
BLACKJACK = {"10S 7H": (0.4, 0.05), "9C 9D 3H": (0.6, 0.6), "AS KD": (0.1, 0.6)}
PAIGOW = {"AS KD 9C 9D 5H 3S JR": (0.1, 0.7), "QS QH 8D 7C 4S 3D 2H": (0.1, 0.1)}


class CliFakeReader(FakeReader):
    """The web tests' fake, called as the commands call the reader (with a deck profile)."""

    def read(self, image_bgr: NDArray[np.uint8], deck: object = None) -> Reading:
        return super().read(image_bgr)


@pytest.fixture(autouse=True)
def only_game_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "COMMANDS", ("baccarat", "blackjack", "paigow"))


def _use(monkeypatch: pytest.MonkeyPatch, hands: dict[str, tuple[float, float]]) -> CliFakeReader:
    reader = CliFakeReader(hands)
    monkeypatch.setattr("vision.reader.Reader.load", lambda *args, **kwargs: reader)
    return reader


def _photo(folder: Path, name: str = "table.jpg") -> Path:
    path = folder / name
    path.write_bytes(image_bytes())  # 640 x 480, the HTTP tests' image
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``handreader ARGV`` (argparse usage errors exit)."""
    try:
        status = cli.main(list(argv))
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _http_answer(game: str, hands: dict[str, tuple[float, float]], options: dict[str, Any]) -> Any:
    """What ``POST /v1/GAME`` answers for the same image and options, without timings."""
    with fake_client(FakeReader(hands)) as client:
        files = {"image": ("table.jpg", image_bytes(), "image/jpeg")}
        response = client.post(f"/v1/{game}", files=files, data={"options": json.dumps(options)})
    assert response.status_code == 200, response.text
    body = response.json()
    del body["timings_ms"]
    return body


@pytest.mark.parametrize(
    ("game", "hands", "argv", "options"),
    [
        ("baccarat", BACCARAT, ["--stake", "100"], {"stake": 100}),
        ("baccarat", BACCARAT, ["--player-side", "right", "--bet", "tie"],
         {"player_side": "right", "bet": "tie"}),
        ("baccarat", BACCARAT, ["--player-region", "0.5,0,1,1", "--banker-region", "0,0,0.5,1"],
         {"player_region": [0.5, 0, 1, 1], "banker_region": [0, 0, 0.5, 1]}),
        ("blackjack", BLACKJACK, ["--stake", "10"], {"stake": 10}),
        ("blackjack", BLACKJACK, ["--dealer-side", "bottom"], {"dealer_side": "bottom"}),
        ("paigow", PAIGOW, ["--stake", "100"], {"stake": 100}),
        ("paigow", {"AS KD 9C 9D 5H 3S JR": (0.1, 0.7)}, [], {}),
        ("paigow", PAIGOW, ["--house-way", "gold-star", "--player-side", "top"],
         {"house_way": "gold-star", "player_side": "top"}),
    ],
)  # fmt: skip
def test_photo_json_is_the_http_answer(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    game: str,
    hands: dict[str, tuple[float, float]],
    argv: list[str],
    options: dict[str, Any],
) -> None:
    _use(monkeypatch, hands)
    photo = _photo(tmp_path)
    status, out, err = run(capsys, game, str(photo), *argv, "--json")
    assert status == 0 and err == ""
    (line,) = out.splitlines()
    answer = json.loads(line)
    assert answer == {"image": str(photo)} | _http_answer(game, hands, options)
    assert answer["result"] is not None and answer["problem"] is None


@pytest.mark.parametrize(
    ("game", "hands", "codes"),
    [
        # the Player's group is the one nearest the left edge (default)
        ("baccarat", BACCARAT, ["--player", "9H 5C 3D", "--banker", "KD 6S"]),
        # the dealer's group nearest the top; the players in reading order (left first)
        ("blackjack", BLACKJACK, ["--dealer", "10S 7H", "--player", "AS KD",
                                  "--player", "9C 9D 3H"]),
        # the player's group nearest the bottom (default), set by the house way
        ("paigow", PAIGOW, ["--cards", "AS KD 9C 9D 5H 3S JR",
                            "--banker", "QS QH 8D 7C 4S 3D 2H"]),
    ],
)  # fmt: skip
def test_photo_text_is_the_codes_text(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    game: str,
    hands: dict[str, tuple[float, float]],
    codes: list[str],
) -> None:
    _use(monkeypatch, hands)
    status, from_photo, _ = run(capsys, game, str(_photo(tmp_path)), "--stake", "100")
    assert status == 0
    status, from_codes, _ = run(capsys, game, *codes, "--stake", "100")
    assert status == 0
    assert from_photo == from_codes and from_photo.count("\n") >= 2


def test_baccarat_photo_text_of_the_bets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """9+5+3 = 7 against K+6 = 6 (the Banker stands on 6 after a player's 3): Player wins."""
    _use(monkeypatch, BACCARAT)
    status, out, _ = run(capsys, "baccarat", str(_photo(tmp_path)), "--stake", "100")
    assert status == 0
    assert out.splitlines()[:3] == [
        "player: 9H 5C 3D   total 7",
        "banker: KD 6S      total 6",
        "result: player",
    ]
    assert "bet player 100: win +100" in out and "bet banker 100: lose -100" in out


def test_photo_that_makes_no_round_prints_the_groups_and_the_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use(monkeypatch, {"9H 5C": (0.1, 0.4), "KD 6S": (0.5, 0.4), "2C 3C": (0.8, 0.8)})
    status, out, _ = run(capsys, "baccarat", str(_photo(tmp_path)))
    assert status == 0  # read and reported, as the HTTP API answers 200
    lines = out.splitlines()
    assert lines[:3] == ["hand 0: 9H 5C", "hand 1: KD 6S", "hand 2: 2C 3C"]
    assert lines[3].startswith("problem: found 3 groups of cards (9H 5C | KD 6S | 2C 3C)")
    # the command line's own option names, not the API's
    assert lines[3].endswith("give --player-region and --banker-region")
    status, out, _ = run(capsys, "baccarat", str(_photo(tmp_path)), "--json")
    assert status == 0
    assert json.loads(out)["problem"].endswith("give --player-region and --banker-region")


def test_uncertain_card_and_left_over_cards_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reader = _use(monkeypatch, {**BACCARAT, "2C": (0.5, 0.9)})
    reader.uncertain = ["6S"]
    regions = ["--player-region", "0,0,0.4,0.6", "--banker-region", "0.6,0,1,0.6"]
    status, out, _ = run(capsys, "baccarat", str(_photo(tmp_path)), *regions)
    assert status == 0
    lines = out.splitlines()
    # an uncertain card decides nothing: no result, the card marked wherever it is printed
    assert not any(line.startswith("result:") for line in lines)
    # named as the command names the sides for card codes: no seat number for a side alone
    assert lines[:2] == ["player: 9H 5C 3D", "banker: KD 6S?"]
    assert (
        "problem: unverified: uncertain reading of 6S? (0.40); no result until it is read for "
        "certain" in lines
    )
    assert lines[-1] == "left over (in no hand): 2C 0.95"
    status, out, _ = run(capsys, "baccarat", str(_photo(tmp_path)), *regions, "--json")
    body = json.loads(out)
    assert body["result"] is None
    assert [card["uncertain"] for card in body["hands"][1]["cards"]] == [False, True]


@pytest.mark.parametrize(
    ("game", "hands", "uncertain", "named"),
    [
        # Pai Gow's one hand of seven is the player's, as --cards names it: no "player 0"
        ("paigow", {"AS KD 9C 9D 5H 3S JR": (0.1, 0.7)}, "9C", ["player"]),
        # blackjack's players are counted from 1 after the dealer, as --player is
        ("blackjack", BLACKJACK, "9C", ["dealer", "player 1", "player 2"]),
    ],
)
def test_hands_without_a_result_are_named_as_for_card_codes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    game: str,
    hands: dict[str, tuple[float, float]],
    uncertain: str,
    named: list[str],
) -> None:
    reader = _use(monkeypatch, hands)
    reader.uncertain = [uncertain]
    status, out, _ = run(capsys, game, str(_photo(tmp_path)))
    assert status == 0
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines[: len(named)]] == named
    status, out, _ = run(capsys, game, str(_photo(tmp_path)), "--json")
    # the JSON's seat stays the hand's place in "hands", from 0, as the HTTP API's
    assert [hand["seat"] for hand in json.loads(out)["hands"]] == list(range(len(named)))


def test_several_photos_and_one_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder stands for its photos; a broken one is reported, the others still read."""
    _use(monkeypatch, BLACKJACK)
    folder = tmp_path / "round"
    folder.mkdir()
    first, second = _photo(folder, "a.jpg"), _photo(folder, "b.jpg")
    broken = folder / "c.jpg"
    broken.write_bytes(b"not an image")
    status, out, err = run(capsys, "blackjack", str(folder))
    assert status == 2
    assert f"== {first}" in out and f"== {second}" in out and out.count("dealer: 10S 7H") == 2
    assert err.startswith("handreader blackjack: error: ") and err.count("\n") == 1
    status, out, _ = run(capsys, "blackjack", str(folder), "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert status == 2
    assert [line["image"] for line in lines] == [str(first), str(second), str(broken)]
    assert lines[2]["error"]["code"] and "result" not in lines[2]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["baccarat", "PHOTO", "--player", "9H 5C"], "give either --player and --banker or photos"),
        (["baccarat"], "give --player and --banker (the cards dealt), or photos"),
        (["blackjack", "PHOTO", "--dealer", "KS 7H"], "give either --dealer and --player"),
        (["blackjack", "--player", "AS KD"], "give --dealer and --player (the cards dealt)"),
        (["paigow", "PHOTO", "--banker", "QS QH 8D 7C 4S 3D 2H"], "give either cards"),
        (["paigow", "PHOTO", "--house-way", "bellagio"], "--house-way: invalid choice: 'bellagio'"),
        (["baccarat", "PHOTO", "--player-region", "0,0,1"], "--player-region: '0,0,1'"),
        (["blackjack", "PHOTO", "--dealer-region", "a,b,c,d"], "--dealer-region: 'a,b,c,d'"),
    ],
)  # fmt: skip
def test_bad_photo_arguments(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    """Exit status 2 and one message naming the conflict or the bad value; nothing read."""
    reader = _use(monkeypatch, BACCARAT)
    photo = str(_photo(tmp_path))
    status, out, err = run(capsys, *[photo if arg == "PHOTO" else arg for arg in argv])
    assert status == 2 and out == ""
    assert message in err
    assert reader.sizes == []


def test_one_region_alone_is_named_in_words_the_command_line_and_the_api_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use(monkeypatch, BACCARAT)
    status, _, err = run(capsys, "baccarat", str(_photo(tmp_path)), "--player-region", "0.5,0,1,1")
    assert status == 2
    assert "give the player's and the banker's regions together, or neither" in err


def test_a_third_card_read_out_of_deal_order_is_taken_as_the_third(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Casinos lay the third card sideways, under the first two: read left to right, AS 5C 3H
    would be AS 5C (6, stands) and an illegal 3H. Dealt AS 3H (4, draws) then 5C: 9 against
    KD 6D's 6 (the Banker stands on 6 after a player's 5): the Player wins."""
    _use(monkeypatch, {"AS 5C 3H": (0.1, 0.4), "KD 6D": (0.7, 0.4)})
    status, out, _ = run(capsys, "baccarat", str(_photo(tmp_path)), "--stake", "100")
    assert status == 0
    assert out.splitlines()[:3] == [
        "player: AS 3H 5C   total 9",
        "banker: KD 6D      total 6",
        "result: player",
    ]


def test_a_photos_coup_that_breaks_the_tableau_says_how_in_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """3H 3C 3D: every two of them make 6, on which the Player stands, so no order of the deal
    allows a third card; the text names the breach as ``--json``'s ``problem`` does."""
    _use(monkeypatch, {"3H 3C 3D": (0.1, 0.4), "KD 6D": (0.7, 0.4)})
    status, out, _ = run(capsys, "baccarat", str(_photo(tmp_path)))
    assert status == 0
    result = out.splitlines()[2]
    assert result.startswith("result: none, the cards break the drawing rules: player drew a third")
    assert "not over yet" not in out
