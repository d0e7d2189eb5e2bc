"""Dealer verification: declared results against the scored table, each difference named.

The round: banker ``KH QS 10D 3C 2C`` (Niu 5) against ``JH 9S AD 4C 6H`` (Niu Niu: wins),
``2D 3D 4S 5H 7S`` (Niu 1: loses) and ``KD KC KS 9D 8H`` (Niu 7: wins), trainer profile (seed
002: flat 1x, 5 % commission on winnings), stake 1: nets +0.95, -1, +0.95; banker -0.9.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handreader.store.audit import AuditAuthError, AuditLog, verify_and_log
from handreader.tables.scoring import TableCard, TableOptions, score_codes, score_groups
from handreader.tables.verification import (
    DeclaredRound,
    DifferenceKind,
    Verdict,
    VerifyError,
    image_sha256,
    verify_round,
)
from rules.cards import full_deck
from rules.money import WrittenNumber, json_amount
from vision.detections import CardReading, Reading

HANDS = ["KH QS 10D 3C 2C", "JH 9S AD 4C 6H", "2D 3D 4S 5H 7S", "KD KC KS 9D 8H"]
TABLE = score_codes(HANDS, banker=0)
RIGHT = {"1": "win", "2": "lose", "3": "win"}


def kinds(verification: object) -> list[tuple[str, int | None, str | None, str | None]]:
    return [
        (d.kind.value, d.seat, d.declared, d.computed)
        for d in verification.differences  # type: ignore[attr-defined]
    ]


@pytest.mark.parametrize(
    "declared",
    [
        RIGHT,
        {
            "players": [
                {"seat": 1, "outcome": "win"},
                {"seat": 2, "outcome": "lose"},
                {"seat": 3, "outcome": "WIN"},
            ]
        },
        {
            "1": {"outcome": "win", "payout": 0.95},
            "2": {"outcome": "lose", "payout": -1},
            "3": {"outcome": "win", "payout": "0.95"},
        },
        {**RIGHT, "banker_net": -0.9},
        {"1": {"outcome": "win", "payout": 0.954}, "2": "lose", "3": "win"},  # within 1/2 cent
    ],
)
def test_a_true_declaration_matches(declared: dict[str, object]) -> None:
    result = verify_round(TABLE, declared)
    assert result.verdict is Verdict.MATCH and result.differences == ()


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"2": "win"}, [("outcome", 2, "win", "lose")]),
        ({"1": "tie"}, [("outcome", 1, "tie", "win")]),
        ({"1": {"outcome": "win", "payout": 1}}, [("payout", 1, "1", "0.95")]),
        ({"1": {"outcome": "win", "payout": 0.956}}, [("payout", 1, "0.956", "0.95")]),
        ({"2": {"outcome": "lose", "payout": 1}}, [("payout", 2, "1", "-1")]),
        ({"3": None}, [("missing_player", 3, None, "win")]),
        ({"4": "win"}, [("extra_player", 4, "win", None)]),
        ({"0": "lose"}, [("extra_player", 0, "lose", None)]),
        ({"banker_net": -1}, [("banker_net", None, "-1", "-0.9")]),
        (
            {"1": {"outcome": "lose", "payout": -1}, "3": None, "7": "tie"},
            [
                ("outcome", 1, "lose", "win"),
                ("payout", 1, "-1", "0.95"),
                ("missing_player", 3, None, "win"),
                ("extra_player", 7, "tie", None),
            ],
        ),
    ],
)
def test_a_wrong_declaration_is_a_mismatch_naming_each_difference(
    changes: dict[str, object], expected: list[tuple[str, int | None, str | None, str | None]]
) -> None:
    declared: dict[str, object] = {**RIGHT, **changes}
    declared = {seat: value for seat, value in declared.items() if value is not None}
    result = verify_round(TABLE, declared)
    assert result.verdict is Verdict.MISMATCH
    assert kinds(result) == expected


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"2": "win"}, "seat 2: declared win, computed lose"),
        ({"2": {"outcome": "lose", "payout": 1}}, "negative for a loss"),
        ({"3": None}, "seat 3 is a player on the table but is not declared"),
        ({"0": "lose"}, "seat 0 is declared but is the banker, not a player"),
        ({"9": "win"}, "seat 9 is declared but is not a player on the table"),
    ],
)
def test_each_difference_is_a_sentence_naming_the_player(
    changes: dict[str, object], words: str
) -> None:
    declared = {k: v for k, v in {**RIGHT, **changes}.items() if v is not None}
    messages = [d.message for d in verify_round(TABLE, declared).differences]
    assert words in messages[0]


def _cards(codes: str, uncertain: str = "") -> tuple[TableCard, ...]:
    return tuple(TableCard(code, uncertain=code == uncertain) for code in codes.split())


def test_an_uncertain_player_hand_leaves_the_round_unverified() -> None:
    # table.py: an uncertain hand "takes no part in outcomes, payouts or the winner"
    groups = [_cards(HANDS[0]), _cards(HANDS[1], uncertain="9S"), _cards(HANDS[2])]
    table = score_groups(groups, 0, TableOptions())
    result = verify_round(table, {"1": "win", "2": "lose"})
    assert result.verdict is Verdict.UNVERIFIED
    assert kinds(result) == [("unscored", 1, "win", None)]
    assert "uncertain" in result.differences[0].message
    # a real difference elsewhere still makes it a mismatch
    assert verify_round(table, {"1": "win", "2": "win"}).verdict is Verdict.MISMATCH


def test_an_incomplete_banker_hand_leaves_every_player_unverified() -> None:
    groups = [_cards("KH QS 10D 3C"), _cards(HANDS[1]), _cards(HANDS[2])]
    table = score_groups(groups, 0, TableOptions())
    result = verify_round(table, {"1": "win", "2": "lose"})
    assert result.verdict is Verdict.UNVERIFIED
    assert kinds(result) == [("unscored", 1, "win", None), ("unscored", 2, "lose", None)]
    assert "banker's hand is incomplete" in result.differences[0].message


def test_a_table_without_banker_cannot_verify_a_banker_round() -> None:
    table = score_codes(HANDS[:2], options=TableOptions.create(mode="trainer"))
    result = verify_round(table, {"1": "win"})
    assert result.verdict is Verdict.UNVERIFIED
    assert kinds(result) == [("unscored", 1, "win", None)]


@pytest.mark.parametrize("declared", [{}, {"players": [], "banker_net": 0}])
def test_a_round_with_nothing_to_settle_never_matches(declared: dict[str, object]) -> None:
    # no player declared, so no per-seat difference: the table itself is the unscored one
    unsettled = score_groups([_cards("KH QS 10D 3C"), _cards(HANDS[1])], 0, TableOptions())
    blank = score_groups([], None, TableOptions())
    for table in (unsettled, blank):
        result = verify_round(table, declared)
        assert result.verdict is Verdict.UNVERIFIED
        assert kinds(result) == [("unscored", None, None, None)]
        assert result.differences[0].message.startswith("cannot verify: ")
    assert "banker's hand is incomplete" in verify_round(unsettled, declared).differences[0].message


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"1": "won"}, "unknown outcome 'won'"),
        ({"one": "win"}, "seat must be a whole number, got 'one'"),
        ({"-1": "win"}, "seat must be 0 or more, got '-1'"),
        ({"1": {"outcome": "win", "payout": "abc"}}, "seat 1: payout must be a number, got 'abc'"),
        ({"1": {"outcome": "win", "payout": "19/20"}}, "must be a number, got '19/20'"),
        ({"1": {"outcome": "win", "payout": float("nan")}}, "finite"),
        ({"1": {"outcome": "win", "payout": "Infinity"}}, "finite"),
        ({"1": {"outcome": "win", "payout": True}}, "must be a number, got True"),
        ({"1": {"outcome": "win", "bonus": 2}}, "unknown field 'bonus'"),
        ({"1": {"payout": 2}}, "outcome must be win, lose or tie, got None"),
        (
            {"players": [{"seat": 1, "outcome": "win"}, {"seat": 1, "outcome": "lose"}]},
            "seat 1 is declared more than once",
        ),
        ({"players": "win"}, "players must be a list"),
        ({"players": WrittenNumber("1e400")}, "players must be a list, got inf"),
        (
            {"1": {"outcome": "win", "payout": "1e999999999"}},
            "seat 1: payout '1e999999999' is over the largest amount read, 1,000,000,000,000,000,",
        ),
        ({"1": {"outcome": "win", "payout": WrittenNumber("1e400")}}, "payout 1e400 is over"),
        (
            {"players": [], "banker_net": WrittenNumber("-1e19")},
            "banker_net -1e19 is under the smallest amount read, -1,000,000,000,000,000,000",
        ),
        ({"1": {"outcome": "win", "payout": 1e19}}, "payout 1e19 is over"),  # not 1e+19
        ({"1": {"outcome": "win", "payout": -1e19}}, "payout -1e19 is under the smallest"),
        ({"1": {"outcome": "win", "payout": WrittenNumber("-1e400")}}, "payout -1e400 is under"),
        ({"1": {"outcome": "win", "payout": "-1e999999999"}}, "'-1e999999999' is under"),
        ({"1": {"outcome": "win", "payout": -(10**19)}}, "-10000000000000000000 is under"),
        ({"players": [{"outcome": "win"}]}, "needs a seat"),
        ({"players": [], "dealer": "x"}, "unknown field 'dealer'"),
        ({"players": [], "banker_net": "x"}, "banker_net must be a number"),
        (["win"], "a declaration is an object"),
    ],
)
def test_unreadable_declarations_are_refused(declared: object, message: str) -> None:
    with pytest.raises(VerifyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        verify_round(TABLE, declared)  # type: ignore[arg-type]


def test_a_payout_no_double_carries_is_read_by_its_digits() -> None:
    # as the service reads it from JSON: the float 0.95, keeping the digits written
    payout = WrittenNumber("0.95000000000000000001")
    result = verify_round(TABLE, {**RIGHT, "1": {"outcome": "win", "payout": payout}})
    assert result.verdict is Verdict.MATCH
    assert result.declared.players[0].payout == Decimal("0.95000000000000000001")


def test_both_declaration_forms_read_the_same() -> None:
    flat = DeclaredRound.parse(
        {"2": {"outcome": "lose", "payout": -1}, "1": "win", "banker_net": 0.05}
    )
    listed = DeclaredRound.parse(flat.to_dict())
    assert flat == listed
    assert [p.seat for p in flat.players] == [1, 2]
    assert flat.players[1].payout == Decimal(-1) and flat.banker_net == Decimal("0.05")


def test_verification_to_dict_is_json_with_both_sides() -> None:
    result = verify_round(TABLE, {"1": "win", "2": "win", "3": "win"})
    data = json.loads(json.dumps(result.to_dict()))
    assert data["verdict"] == "mismatch"
    assert data["differences"][0]["kind"] == "outcome"
    assert data["computed"]["players"][0] == {
        "seat": 1,
        "outcome": "win",
        "payout": 0.95,
        "problem": None,
    }
    assert data["computed"]["banker_net"] == -0.9
    assert data["declared"]["players"][2] == {"seat": 3, "outcome": "win", "payout": None}


DECK = [str(card) for card in full_deck()]


@settings(max_examples=40, deadline=None)
@given(
    cards=st.permutations(DECK),
    hands=st.integers(2, 6),
    flip=st.integers(0, 4),
    profile=st.sampled_from(["classic", "trainer", "app"]),
)
def test_property_the_computed_results_match_and_one_flip_is_one_difference(
    cards: list[str], hands: int, flip: int, profile: str
) -> None:
    table = score_codes(
        [cards[5 * i : 5 * i + 5] for i in range(hands)],
        banker=0,
        options=TableOptions.create(profile=profile),
    )
    truth = {
        str(p.seat): {"outcome": p.outcome.value, "payout": str(json_amount(p.settlement.net))}
        for p in table.players
        if p.outcome is not None and p.settlement is not None
    }
    assert verify_round(table, truth).verdict is Verdict.MATCH
    seat = str(1 + flip % (hands - 1))
    wrong = {"win": "lose", "lose": "tie", "tie": "win"}[str(truth[seat]["outcome"])]
    changed = {**truth, seat: {"outcome": wrong}}
    result = verify_round(table, changed)
    assert result.verdict is Verdict.MISMATCH
    assert kinds(result) == [("outcome", int(seat), wrong, truth[seat]["outcome"])]


# --- verify_and_log: the whole of one verification, as the HTTP layer calls it -----------------


def _reading() -> Reading:
    """The round's cards laid out as a photo: banker on top, players in a row below."""
    cards = []
    for seat, hand in enumerate(HANDS):
        top = 40.0 if seat == 0 else 300.0
        left = 200.0 if seat == 0 else 40.0 + 300.0 * (seat - 1)
        for position, code in enumerate(hand.split()):
            x = left + 30.0 * position
            cards.append(CardReading(code, 0.97, (x, top, x + 20.0, top + 30.0)))
    return Reading((1000, 480), tuple(cards))


def test_verify_and_log_scores_verifies_and_appends_one_record(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db", token="operator-secret")
    digest = image_sha256(b"photo bytes")
    verification, record_id = verify_and_log(
        _reading(),
        {"1": "win", "2": "win", "3": "win"},
        log,
        "operator-secret",
        image_digest=digest,
    )
    assert verification.verdict is Verdict.MISMATCH
    assert kinds(verification) == [("outcome", 2, "win", "lose")]
    record = log.get("operator-secret", record_id)
    assert record.image_sha256 == digest and record.verdict == "mismatch"
    assert record.profile == "trainer"
    assert record.declared == verification.declared.to_dict()
    assert record.computed["players"] == verification.computed()["players"]
    assert record.computed["table"]["banker"] == 0
    assert record.differences[0]["kind"] == DifferenceKind.OUTCOME.value
    assert len(record.reading["cards"]) == 20


def test_verify_and_log_checks_the_token_before_anything(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db", token="operator-secret")
    with pytest.raises(AuditAuthError, match="wrong operator token"):
        verify_and_log(_reading(), RIGHT, log, "guess", image_digest="0" * 64)
    assert log.count("operator-secret") == 0


def test_an_incomplete_banker_hand_is_unverified_whatever_seats_are_declared() -> None:
    # The banker's four cards and a fifth lying apart (a group of one): the seats found are not
    # those the dealer sees, so a seat declared that is no player, or a group left undeclared,
    # is no contradiction: nothing can be settled without the banker's hand.
    groups = [_cards("KH QS 10D 3C"), _cards("2C"), _cards(HANDS[1]), _cards(HANDS[2])]
    table = score_groups(groups, 0, TableOptions())
    result = verify_round(table, {"1": "win", "2": "win", "4": "lose"})
    assert result.verdict is Verdict.UNVERIFIED
    assert [kind for kind, *_ in kinds(result)] == ["unscored"] * 3


def test_an_undeclared_stray_card_is_unscored_not_a_missing_player() -> None:
    groups = [_cards(HANDS[0]), _cards(HANDS[1]), _cards("5D")]
    table = score_groups(groups, 0, TableOptions())
    computed = table.players[0].outcome
    assert computed is not None
    result = verify_round(table, {"1": computed.value})
    assert result.verdict is Verdict.UNVERIFIED
    assert kinds(result) == [("unscored", 2, None, None)]
    assert "1 card (5D)" in result.differences[0].message
