"""Scoring a table (handreader/tables/scoring.py, handreader/tables/pits.py).

Where the expectations come from: RULES.md section 1 (the split, scores, banker game, trainer
2 to 4 hands), seed 002 (Double bet 100, Niu Niu beats No Niu: +285; Equal: +95), the
``handreader score`` documentation (3H 7S KD 8C 6D is Niu 4, split KD 7S 3H | 8C 6D), RULES.md
section 2 for Pits, and the module docstrings for the choices this product makes (incomplete
groups never scored, uncertain hands provisional, banker nearest the top edge).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handreader.service.schemas import PitsOut, TableOut
from handreader.tables.grouping import GroupingError, Region
from handreader.tables.pits import judge_play, judge_reading
from handreader.tables.scoring import (
    BankerRule,
    HandStatus,
    Role,
    TableCard,
    TableMode,
    TableOptions,
    score_codes,
    score_reading,
)
from rules.errors import CardError, HandError, ProfileError, RulesError
from rules.niuniu import Outcome
from rules.niuniu_profiles import get_profile
from rules.pits import CombinationError
from vision.detections import CardReading, Reading, ReadingFlag

NIU_4 = "3H 7S KD 8C 6D"  # handreader score docs: Niu 4, split KD 7S 3H | 8C 6D
NIU_NIU = "KS QS 10S 5C 5S"  # 30 in the bull, 5 + 5 = 10: Niu Niu
NO_NIU = "AS 2S 3S 4S 8S"  # no three of these sum to a multiple of 10
NIU_9 = "2C 3C 5H 9H 10D"  # 5 + 3 + 2 = 10, 10 + 9 = 19: Niu 9
ULTIMATE = "JC QC KC JD QD"  # five face cards: Ultimate in the trainer profile


def _hand(codes: str, x: float, y: float, uncertain: str = "") -> list[CardReading]:
    """A spread hand of index boxes 24 x 40 px, 30 px apart, from (x, y)."""
    return [
        CardReading(code, 0.3 if code in uncertain.split() else 0.97,
                    (x + 30 * i, y, x + 30 * i + 24, y + 40),
                    uncertain=code in uncertain.split())
        for i, code in enumerate(codes.split())
    ]  # fmt: skip


def _reading(*hands: list[CardReading], size: tuple[int, int] = (1000, 800)) -> Reading:
    return Reading(size, tuple(card for hand in hands for card in hand))


# --- a photo of a banker game --------------------------------------------------------------------


def test_banker_nearest_the_top_and_seed_payouts() -> None:
    reading = _reading(_hand(NIU_NIU, 100, 500), _hand(NO_NIU, 400, 50), _hand(NIU_4, 700, 500))
    result = score_reading(reading, TableOptions.create(bet="double", stake=100))
    assert result.mode is TableMode.BANKER
    assert [hand.role for hand in result.hands] == [Role.BANKER, Role.PLAYER, Role.PLAYER]
    assert result.banker == 0
    assert [" ".join(c.code for c in hand.cards) for hand in result.hands] == [
        NO_NIU, NIU_NIU, NIU_4,
    ]  # fmt: skip
    niu_niu, niu_4 = result.players
    # seed 002: Double bet 100, Niu Niu beats No Niu: 3 x 100 - 5% = +285
    assert niu_niu.outcome is Outcome.WIN and niu_niu.settlement is not None
    assert niu_niu.settlement.net == 285 and niu_niu.settlement.commission == 15
    # Niu 4 beats No Niu; the winning hand (Niu 4) sets the multiple: 1 x 100 - 5%
    assert niu_4.settlement is not None and niu_4.settlement.net == 95
    assert result.banker_net == -380
    assert result.flags == ReadingFlag.NONE and result.problem is None


def test_seed_equal_bet() -> None:
    # seed 002: Equal bet 100, Niu Niu beats No Niu: +95
    result = score_codes([NO_NIU, NIU_NIU], 0, TableOptions.create(bet="equal", stake=100))
    assert result.players[0].settlement is not None
    assert result.players[0].settlement.net == 95


def test_the_split_is_reported_per_card() -> None:
    result = score_codes([NIU_4], None)
    (hand,) = result.hands
    assert hand.role is Role.HAND and hand.status is HandStatus.SCORED
    assert hand.hand is not None and hand.hand.label == "Niu 4"
    assert hand.parts() == ("bull", "bull", "bull", "rest", "rest")  # 3H 7S KD | 8C 6D
    score = hand.to_dict()["score"]
    assert score == {
        "score": "niu_4", "label": "Niu 4", "points": 4, "rank": 4,
        "bull": ["KD", "7S", "3H"], "rest": ["8C", "6D"], "swapped": [],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (BankerRule.TOP, NO_NIU),
        (BankerRule.BOTTOM, NIU_NIU),
        (BankerRule.LEFT, "3H 7S KD 8C 6D"),
        (BankerRule.RIGHT, "2C 3C 5H 9H 10D"),
    ],
)
def test_banker_rules(rule: BankerRule, expected: str) -> None:
    reading = _reading(
        _hand(NO_NIU, 400, 20), _hand(NIU_4, 20, 300), _hand(NIU_9, 800, 300),
        _hand(NIU_NIU, 400, 700),
    )  # fmt: skip
    result = score_reading(reading, TableOptions.create(banker=rule))
    assert result.banker is not None
    assert " ".join(card.code for card in result.hands[result.banker].cards) == expected


def test_regions_define_banker_and_players() -> None:
    # The banker's hand sits at the bottom here: the region, not the edge rule, decides.
    reading = _reading(_hand(NIU_4, 100, 100), _hand(NIU_9, 600, 100), _hand(NO_NIU, 350, 650))
    options = TableOptions.create(
        banker_region=Region.parse([0, 0.7, 1, 1]),
        player_regions=[Region.parse([0, 0, 0.5, 0.5]), Region.parse([0.5, 0, 1, 0.5])],
    )
    result = score_reading(reading, options)
    assert result.banker == 0
    assert [hand.hand.label for hand in result.hands if hand.hand] == ["No Niu", "Niu 4", "Niu 9"]
    assert [player.outcome for player in result.players] == [Outcome.WIN, Outcome.WIN]


@pytest.mark.parametrize("rule", list(BankerRule))
def test_an_empty_player_region_is_never_the_banker(rule: BankerRule) -> None:
    # the empty region lies nearest every edge's side in turn: a region without cards has no
    # place on the table, so the hand that holds cards is the banker
    reading = _reading(_hand(NIU_4, 400, 400))
    for empty in ([0, 0, 0.05, 0.05], [0.95, 0.95, 1, 1]):
        regions = [Region.parse(empty), Region.parse([0.2, 0.2, 0.9, 0.9])]
        result = score_reading(reading, TableOptions.create(banker=rule, player_regions=regions))
        assert result.banker == 1
        assert " ".join(card.code for card in result.hands[1].cards) == NIU_4
        assert result.hands[0].cards == ()


def test_cards_outside_the_player_regions_are_left_over() -> None:
    reading = _reading(_hand(NIU_4, 100, 100), _hand("QH", 900, 700))
    options = TableOptions.create(player_regions=[Region.parse([0, 0, 0.5, 0.5])])
    result = score_reading(reading, options)
    assert [card.code for card in result.left_over] == ["QH"]
    assert len(result.hands) == 1 and result.banker is None  # one hand: a single hand


def test_an_uncertain_reading_beside_a_full_hand_is_left_over_not_a_seat() -> None:
    hand = _hand(NIU_4, 100, 100)
    stray = [CardReading("JH", 0.36, (150, 110, 174, 150), uncertain=True)]
    result = score_reading(_reading(hand, stray))
    assert [card.code for card in result.left_over] == ["JH"]
    assert len(result.hands) == 1 and result.hands[0].hand is not None
    assert sorted(card.code for card in result.hands[0].cards) == sorted(NIU_4.split())


def test_a_lone_uncertain_reading_at_the_top_is_no_phantom_banker() -> None:
    """A 0.27 "KC" off a phone screen at the top edge: left over, the banker is the real hand
    nearest the top, and every player is settled."""
    phantom = [CardReading("KC", 0.27, (480, 5, 504, 45), uncertain=True)]
    reading = _reading(phantom, _hand(NO_NIU, 400, 300), _hand(NIU_4, 20, 600))
    result = score_reading(reading, TableOptions.create(stake=10))
    assert [card.code for card in result.left_over] == ["KC"]
    assert result.left_over[0].to_dict()["uncertain"] is True
    assert [" ".join(c.code for c in hand.cards) for hand in result.hands] == [NO_NIU, NIU_4]
    assert result.banker == 0 and result.problem is None
    assert result.players[0].outcome is Outcome.WIN


def test_an_incomplete_group_is_reported_never_scored() -> None:
    reading = _reading(_hand(NO_NIU, 400, 20), _hand(NIU_4, 20, 400), _hand("9H 9S 2C", 700, 400))
    result = score_reading(reading)
    incomplete = result.hands[2]
    assert incomplete.status is HandStatus.INCOMPLETE and incomplete.hand is None
    assert incomplete.problem == "3 cards (9H 9S 2C): a Niu Niu hand is 5 cards"
    assert result.players[1].outcome is None and result.players[1].settlement is None
    assert result.players[0].outcome is Outcome.WIN  # the complete player is still settled
    assert ReadingFlag.WRONG_COUNT in result.flags


def test_an_incomplete_banker_settles_nobody() -> None:
    reading = _reading(_hand("AH 2D", 400, 20), _hand(NIU_4, 20, 400))
    result = score_reading(reading)
    assert result.hands[0].role is Role.BANKER
    assert result.players[0].outcome is None
    assert result.problem == "the banker's hand is incomplete: no player can be settled"


def test_an_uncertain_hand_is_provisional_and_never_settled() -> None:
    reading = _reading(_hand(NO_NIU, 400, 20), _hand(NIU_4, 20, 400, uncertain="KD"))
    result = score_reading(reading, TableOptions.create(stake=10))
    hand = result.hands[1]
    assert hand.status is HandStatus.UNCERTAIN and not hand.scored
    assert hand.hand is not None and hand.hand.label == "Niu 4"  # provisional score shown
    assert hand.problem == "unverified: uncertain reading of KD? (0.30); the score is provisional"
    assert result.players[0].outcome is None
    assert result.players[0].problem == f"this hand is uncertain: {hand.problem}"
    assert ReadingFlag.LOW_CONFIDENCE in result.flags
    assert result.banker_net is None


def test_a_joker_makes_a_hand_invalid() -> None:
    result = score_reading(_reading(_hand("JR 2D 3C 4S 8C", 0, 0)))
    assert result.hands[0].status is HandStatus.INVALID
    assert "without jokers" in (result.hands[0].problem or "")


def test_a_card_on_two_hands_invalidates_both() -> None:
    reading = _reading(_hand(NO_NIU, 400, 20), _hand("AS 7H KH 8D 6S", 20, 400))
    result = score_reading(reading)
    assert [hand.status for hand in result.hands] == [HandStatus.INVALID] * 2
    assert "duplicate card AS" in (result.hands[0].problem or "")
    assert ReadingFlag.DUPLICATE in result.flags


def test_no_cards_no_hands() -> None:
    result = score_reading(_reading())
    assert result.hands == () and result.players == () and result.banker is None
    assert result.problem == "no cards found"  # a blank photo says so, as the CLI does
    lone = score_reading(_reading([CardReading("KC", 0.27, (10, 10, 34, 50), uncertain=True)]))
    assert lone.hands == () and lone.problem == "no hand found: only cards left over"


# --- trainer -------------------------------------------------------------------------------------


def test_trainer_names_the_winner() -> None:
    reading = _reading(_hand(NIU_4, 20, 20), _hand(NIU_9, 400, 20), _hand(NO_NIU, 20, 400))
    result = score_reading(reading, TableOptions.create(mode="trainer"))
    assert all(hand.role is Role.HAND for hand in result.hands)
    assert result.winners == (1,) and not result.is_tie
    assert result.places == (2, 1, 3)


def test_trainer_tie_is_explicit() -> None:
    # classic profile: equal ranks tie (RULES.md section 1); two Niu 4 hands
    options = TableOptions.create(mode="trainer", profile="classic")
    result = score_codes([NIU_4, "3D 7C KH 8S 6H"], None, options)
    assert result.winners == (0, 1) and result.is_tie and result.to_dict()["tie"] is True


def test_trainer_tie_break_by_high_card() -> None:
    # trainer profile: equal ranks go to the highest card, K of spades beats K of hearts
    result = score_codes([NIU_4, "3D 7C KS 8S 6H"], None, TableOptions.create(mode="trainer"))
    assert result.winners == (1,)


@pytest.mark.parametrize("count", [1, 5])
def test_trainer_needs_two_to_four_hands_in_a_photo(count: int) -> None:
    hands = [NIU_4, NIU_9, NO_NIU, NIU_NIU, ULTIMATE][:count]
    reading = _reading(*(_hand(hand, 20 + 300 * (i % 3), 20 + 300 * (i // 3))
                         for i, hand in enumerate(hands)))  # fmt: skip
    result = score_reading(reading, TableOptions.create(mode="trainer"))
    assert (
        result.winners == () and result.problem == f"the trainer ranks 2 to 4 hands, found {count}"
    )


def test_trainer_gives_no_winner_over_an_uncertain_hand() -> None:
    reading = _reading(_hand(NIU_4, 20, 20), _hand(NIU_9, 400, 20, uncertain="9H"))
    result = score_reading(reading, TableOptions.create(mode="trainer"))
    assert result.winners == () and result.problem == "no winner: seat 1 is uncertain"


# --- card codes (strict) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hands", "banker", "mode", "error", "words"),
    [
        ([["3H", "7S", "KD", "8C", "XX"]], 0, "banker", CardError, "unknown card 'XX'"),
        (["3H 7S KD 8C"], 0, "banker", HandError, "hand 0: a Niu Niu hand is 5 cards, got 4"),
        ([NIU_4, "3H 2S 4D 5C 6D"], 0, "banker", HandError, "duplicate card 3H"),
        ([NIU_4], None, "trainer", HandError, "the trainer ranks 2 to 4 hands, got 1"),
        ([NIU_4, NIU_9], 2, "banker", RulesError, "banker seat 2 is out of range"),
        ([], 0, "banker", HandError, "no hands"),
    ],
)
def test_bad_codes(
    hands: list[object], banker: int | None, mode: str, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        score_codes(hands, banker, TableOptions.create(mode=mode))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"profile": "nope"}, ProfileError, "unknown Niu Niu profile 'nope'"),
        ({"bet": "triple"}, RulesError, "unknown bet 'triple'"),
        ({"profile": "app", "bet": "double"}, ProfileError, "offers no 'double' bet"),
        ({"stake": -5}, RulesError, "stake must be a positive number"),
        ({"stake": "ten"}, RulesError, "stake must be a positive number, got 'ten'"),
        ({"mode": "poker"}, RulesError, "unknown mode 'poker'"),
        ({"banker": "middle"}, RulesError, "unknown banker rule 'middle'"),
    ],
)
def test_bad_options(options: dict[str, object], error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        TableOptions.create(**options)  # type: ignore[arg-type]


def test_a_bet_stays_one_the_profile_offers_when_the_options_are_changed() -> None:
    """Options replaced (a live stream given another profile) are checked as made ones are."""
    from dataclasses import replace

    double = TableOptions.create(profile="classic", bet="double")
    with pytest.raises(ProfileError, match="profile 'app' offers no 'double' bet"):
        replace(double, profile=get_profile("app"))
    assert replace(double, profile=get_profile("trainer")).bet == double.bet


def test_exact_stakes() -> None:
    result = score_codes([NO_NIU, NIU_4], 0, TableOptions.create(stake="0.10"))
    settled = result.players[0].settlement
    assert settled is not None and settled.net == Decimal("0.095")  # 0.10 - 5%
    assert result.to_dict()["players"][0]["net"] == 0.095  # type: ignore[index]


# --- JSON matches the documented schema ----------------------------------------------------------


def test_every_table_json_matches_the_api_schema() -> None:
    reading = _reading(
        _hand(NO_NIU, 400, 20), _hand(NIU_4, 20, 400, uncertain="KD"),
        _hand("9H 9S", 700, 400), _hand("JR 2H 3D 4C 5D", 20, 700),
    )  # fmt: skip
    for options in (TableOptions.create(), TableOptions.create(mode="trainer")):
        TableOut.model_validate(score_reading(reading, options).to_dict())
    TableOut.model_validate(score_codes([NO_NIU, NIU_4, NIU_9], 1).to_dict())
    TableOut.model_validate(
        score_codes([NIU_4, NIU_9], None, TableOptions.create(mode="trainer")).to_dict()
    )


@settings(max_examples=40, deadline=None)
@given(st.permutations(list(range(15))))
def test_card_order_in_the_photo_never_changes_the_result(order: list[int]) -> None:
    reading = _reading(_hand(NO_NIU, 400, 20), _hand(NIU_4, 20, 400), _hand(NIU_9, 700, 400))
    shuffled = Reading(reading.size_wh, tuple(reading.cards[i] for i in order))
    assert score_reading(shuffled).to_dict() == score_reading(reading).to_dict()


# --- Pits ----------------------------------------------------------------------------------------


def _cards(text: str, uncertain: str = "") -> list[TableCard]:
    return [TableCard(code, uncertain=code in uncertain.split()) for code in text.split()]


@pytest.mark.parametrize(
    ("play", "table", "legal", "kind", "reason"),
    [
        # RULES.md section 2: same kind, same count, higher rank
        ("7H 7S", "5H 5D", True, "pair", None),
        ("7H 7S", "9H 9D", False, "pair", "7 does not beat 9"),
        ("7H 7S", "4H 5D 6C", False, "pair", "a pair cannot beat a sequence"),
        ("5H 6H 7H", "", True, "sequence", None),
        ("2H", "AS", True, "single", None),  # 2 ranks above A
        ("3H 9S", "", False, None, "3H 9S is no combination"),
    ],
)
def test_pits_verdicts(
    play: str, table: str, legal: bool, kind: str | None, reason: str | None
) -> None:
    result = judge_play(_cards(play), _cards(table))
    assert result.legal is legal
    assert (result.combination.kind.value if result.combination else None) == kind
    if reason is None:
        assert result.reason is None
    else:
        assert reason in (result.reason or "")
    PitsOut.model_validate(result.to_dict())


def test_pits_uncertain_card_gives_no_verdict() -> None:
    result = judge_play(_cards("7H 7S", uncertain="7S"), _cards("5H 5D"))
    assert result.legal is None and result.combination is not None
    assert result.reason == "uncertain reading of 7S"
    assert ReadingFlag.LOW_CONFIDENCE in result.flags


def test_pits_table_given_must_be_a_combination() -> None:
    with pytest.raises(CombinationError, match="the table play 3H 9S is no combination"):
        judge_play(_cards("7H 7S"), _cards("3H 9S"))
    with pytest.raises(CardError):
        judge_play(_cards("7H ZZ"))


def test_pits_from_a_photo_with_a_table_region() -> None:
    reading = _reading(_hand("9H 9D", 100, 50), _hand("JH JS", 100, 600))
    result = judge_reading(reading, table_region=Region.parse([0, 0, 1, 0.3]))
    assert [card.code for card in result.table] == ["9H", "9D"]
    assert result.legal is True and result.combination is not None
    assert result.combination.describe() == "pair of jacks"


def test_pits_table_read_from_the_photo_that_is_no_combination_is_reported() -> None:
    reading = _reading(_hand("3H 9S", 100, 50), _hand("JH JS", 100, 600))
    result = judge_reading(reading, table_region=Region.parse([0, 0, 1, 0.3]))
    assert result.legal is None and "no combination" in (result.reason or "")


def test_pits_from_a_photo_with_table_codes() -> None:
    result = judge_reading(_reading(_hand("5H 6H 7H", 100, 50)), table=["4S", "5S", "6D"])
    assert result.legal is True and result.combination is not None
    assert result.combination.describe() == "3-card sequence up to 7 all of one suit"


def test_pits_table_codes_that_the_photo_also_plays_are_refused_as_for_codes() -> None:
    reading = _reading(_hand("KC KD KS KH", 100, 50))
    with pytest.raises(HandError, match="duplicate card KH: more copies than one deck holds"):
        judge_reading(reading, table=["KH"])
    assert judge_reading(reading, table=["KH"], copies=2).legal is False  # two packs hold two
    with pytest.raises(HandError, match="given twice: as cards and as a region"):
        judge_reading(reading, table=["5H"], table_region=Region.parse([0, 0, 1, 0.3]))


def test_a_table_that_is_no_combination_is_named_once() -> None:
    result = judge_reading(
        _reading(_hand("3H 3S 4H 4S", 100, 50), _hand("5H", 100, 600)),
        table_region=Region.parse([0, 0, 1, 0.3]),
    )
    assert (result.reason or "").startswith("the table play 3H 3S 4H 4S is no combination: not")


def test_region_errors_are_value_errors() -> None:
    with pytest.raises(GroupingError):
        TableOptions.create(banker_region=Region.parse([1, 1, 0, 0]))


def test_a_card_whose_other_corner_read_otherwise_says_so_in_json() -> None:
    from vision.detections import CardReading

    reading = CardReading("KC", 0.95, (0.0, 0.0, 20.0, 30.0), corners=2, other_corners=("10S",))
    card = TableCard.from_reading(reading)
    assert card.to_dict()["other_corners"] == ["10S"]
    assert card.to_dict()["uncertain"] is False
    assert (
        "other_corners"
        not in TableCard.from_reading(CardReading("KC", 0.95, (0.0, 0.0, 20.0, 30.0))).to_dict()
    )
