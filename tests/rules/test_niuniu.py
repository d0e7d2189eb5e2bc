"""Niu Niu per-hand scoring, splits, comparison and ranking: seeds 000, 002, 003 and RULES.md."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest

from rules.cards import Suit, parse_cards
from rules.errors import CardError, HandError, ProfileError, RulesError
from rules.niuniu import (
    NiuHand,
    Outcome,
    banker_outcome,
    card_points,
    compare_hands,
    evaluate_hand,
    rank_hands,
    score_hand,
)
from rules.niuniu_profiles import (
    ALL_SPECIAL_HANDS,
    SUIT_ORDER_SHDC,
    BetType,
    NiuProfile,
    NiuScore,
    TieBreak,
    TieRule,
    get_profile,
    get_table,
)

CLASSIC = get_profile("classic")
TRAINER = get_profile("trainer")
APP = get_profile("app")
ALL_SPECIALS = CLASSIC.replace(special_hands=ALL_SPECIAL_HANDS)


def cards_text(cards: tuple[object, ...]) -> str:
    return " ".join(map(str, cards))


# --- seed examples -------------------------------------------------------------------------


def test_seed_000_bull_of_3_7_king_and_rest_8_6_is_niu_4() -> None:
    """Seed 000: a 3, a 7 and a King make a bull (20 points); rest 8 + 6 = 14 gives NIU 4."""
    hand = evaluate_hand("3H 7S KD 8C 6D", "classic")
    assert hand.score is NiuScore.NIU_4
    assert hand.points == 4
    assert hand.split is not None
    assert cards_text(hand.split.bull) == "KD 7S 3H"
    assert cards_text(hand.split.rest) == "8C 6D"


def test_seed_000_niu_niu_when_both_parts_are_multiples_of_ten() -> None:
    """Seed 000: three cards and the last two both multiples of ten: NIU NIU, the best."""
    hand = evaluate_hand("KS QS 5H 5D JD", "classic")
    assert hand.score is NiuScore.NIU_NIU and hand.points == 0
    assert CLASSIC.score_order[-1] is NiuScore.NIU_NIU  # nothing above it in the classic game
    assert hand > evaluate_hand("9S 9H 2D KC 9C", "classic")  # Niu 9


def test_seed_000_ranking_niu_niu_then_9_down_to_1_then_no_niu() -> None:
    """Seed 000: NIU NIU is strongest, then NIU 9 down to NIU 1; no bull is "sans NIU"."""
    hands = [
        "KS QS JS 5H 5D",  # Niu Niu
        "KS QS JS 5H 4D",  # Niu 9
        "KS QS JS AH 2D",  # Niu 3
        "KS QS JS AH KD",  # Niu 1
        "AS 2D 4C 8H 9C",  # no bull
    ]
    scored = [evaluate_hand(hand, "classic") for hand in hands]
    assert [hand.score.value for hand in scored] == ["niu_niu", "niu_9", "niu_3", "niu_1", "no_niu"]
    assert sorted(scored, reverse=True) == scored


def test_seed_000_equal_scores_tie_by_default_and_high_card_is_an_option() -> None:
    """Seed 000: on equal ranks some variants compare the highest card, others replay (tie).

    RULES.md: classic default is a tie; the highest-card option is ``TieBreak.HIGH_CARD``.
    """
    first, second = "KS 7H 10C 3D 7D", "QH 8C 2S 5H 2H"  # both Niu 7, K high vs Q high
    assert compare_hands(evaluate_hand(first, CLASSIC), evaluate_hand(second, CLASSIC)) is (
        Outcome.TIE
    )
    high_card = CLASSIC.replace(tie_break=TieBreak.HIGH_CARD)
    assert compare_hands(evaluate_hand(first, high_card), evaluate_hand(second, high_card)) is (
        Outcome.WIN
    )


def test_seed_002_example_1_niu_4() -> None:
    """Seed 002 example 1: 7 + 3 + 10 + 8 + 6 = 34, last digit 4: Niu 4."""
    hand = evaluate_hand("7C 3S 10H 8D 6S", "trainer")
    assert hand.score is NiuScore.NIU_4
    assert hand.split is not None
    assert sum(map(card_points, hand.split.bull)) % 10 == 0


def test_seed_002_reading_7_plus_8_is_niu_5() -> None:
    """Seed 002: the other two cards give the last digit of their sum: 7 + 8 = 15, Niu 5."""
    assert score_hand("KS QD JH 7C 8C", "trainer") is NiuScore.NIU_5


def test_seed_002_example_2_niu_niu_beats_no_niu() -> None:
    """Seed 002 example 2: Niu Niu beats No Niu."""
    niu_niu = evaluate_hand("KS QS 5H 5D JD", "trainer")
    no_niu = evaluate_hand("AS 2D 4C 8H 9C", "trainer")
    assert (niu_niu.score, no_niu.score) == (NiuScore.NIU_NIU, NiuScore.NO_NIU)
    assert compare_hands(niu_niu, no_niu) is Outcome.WIN
    assert compare_hands(no_niu, niu_niu) is Outcome.LOSE


def test_seed_002_example_3_ultimate_beats_niu_niu() -> None:
    """Seed 002 example 3: five face cards are Ultimate, above any Niu Niu."""
    ultimate = evaluate_hand("JH QH KH JS QS", "trainer")
    niu_niu = evaluate_hand("KS QD 5H 5D JD", "trainer")
    assert ultimate.score is NiuScore.ULTIMATE
    assert ultimate > niu_niu
    assert evaluate_hand("JH QH KH JS QS", "classic").score is NiuScore.NIU_NIU  # seed 000


def test_seed_002_example_4_equal_niu_7_kings_spades_beats_hearts() -> None:
    """Seed 002 example 4: both Niu 7, top cards are kings: spades beats hearts, hand A wins."""
    hand_a = evaluate_hand("KS 7H 10C 3D 7D", "trainer")
    hand_b = evaluate_hand("KH 8C 2S 5H 2H", "trainer")
    assert hand_a.score is hand_b.score is NiuScore.NIU_7
    assert compare_hands(hand_a, hand_b) is Outcome.WIN
    assert rank_hands([hand_b, hand_a], "trainer").winners == (1,)


@pytest.mark.parametrize(
    ("winner", "loser", "why"),
    [
        ("KS 8C 2S 5H 2H", "QS 8D 2D 5C 2C", "K > Q on equal Niu 7"),
        ("10S 5C 5D 3H 4H", "9S 6C 5S 3D 4D", "10 > 9 on equal Niu 7"),
        ("2S 8C KH 5H 2D", "AS 9C KC 5D 2C", "same king: hearts > clubs"),
        ("AS 9C 10H 4H 3D", "AH 9D 10D 4C 3C", "10H > 10D: hearts > diamonds"),
        ("KC 4S 6S AH 2H", "KD 4H 6H AC 2D", "clubs > diamonds"),
        ("KS AH 3D 4C 4D", "QS AD 3H 4H 4S", "two No Niu hands: K > Q"),
    ],
)
def test_seed_002_high_card_then_suit(winner: str, loser: str, why: str) -> None:
    """Seed 002: equal ranks go to the highest card K > Q > J > 10 .. 2 > A, then its suit
    S > H > C > D; this applies to two No Niu hands too."""
    first, second = evaluate_hand(winner, "trainer"), evaluate_hand(loser, "trainer")
    assert first.score is second.score, why
    assert compare_hands(first, second) is Outcome.WIN, why


def test_seed_002_ace_is_the_lowest_high_card() -> None:
    """Seed 002: ranks from high to low K, Q, J, 10, 9 .. 2, A: a 2 beats an ace.

    Only an all-ace hand has an ace as its highest card, so this takes two decks."""
    two_decks = TRAINER.replace(decks=2)
    aces = evaluate_hand("AS AH AD AC AS", two_decks)  # no bull, highest card A
    two_high = evaluate_hand("2C AH AD AC AS", two_decks)  # no bull, highest card 2
    assert aces.score is two_high.score is NiuScore.NO_NIU
    assert compare_hands(two_high, aces) is Outcome.WIN


def test_seed_003_patterns_and_point_examples() -> None:
    """Seed 003: 3 + 4 is worth 7, 7 + 8 is worth 5; patterns rank Ultimate > Niu-Niu > Big Point
    (9 > 8 > 7) > Small Point (6 > .. > 1) > High Card."""
    assert evaluate_hand("KS QS JH 3C 4C", "app").points == 7
    assert evaluate_hand("KS QS JH 7C 8C", "app").points == 5
    ordered = [
        "JH QH KH JS QS",  # Ultimate
        "KS QD 5H 5D JD",  # Niu-Niu
        "KD QC JC 4S 5S",  # Big point 9
        "KC 10D 10C 3S 4S",  # Big point 7
        "10S JS QD 2C 4D",  # Small point 6
        "AS 2D 4C 8H 9C",  # No bull: high card
    ]
    scored = [evaluate_hand(hand, "app") for hand in ordered]
    assert [hand.score.value for hand in scored] == [
        "ultimate", "niu_niu", "niu_9", "niu_7", "niu_6", "no_niu",
    ]  # fmt: skip
    assert all(a > b for a, b in itertools.pairwise(scored))


def test_seed_003_equal_points_are_a_push_whatever_the_cards() -> None:
    """Seed 003: same pattern, same two-card points: a tie, the player's bet is returned."""
    banker = evaluate_hand("KS 7H 10C 3D 7D", "app")
    player = evaluate_hand("QH 8C 2S 5H 2H", "app")
    assert banker_outcome(banker, player) is Outcome.TIE


# --- core rules ----------------------------------------------------------------------------


def test_nine_nine_nine_nine_four_sums_to_forty_but_has_no_bull() -> None:
    """RULES.md: the converse of the last-digit fact is false: 9 9 9 9 4 has no bull."""
    hand = evaluate_hand("9S 9H 9D 9C 4S", "classic")
    assert hand.score is NiuScore.NO_NIU and hand.split is None and hand.points is None


@pytest.mark.parametrize(
    ("cards", "score"),
    [
        ("AS AH 8D KC 5S", NiuScore.NIU_5),  # 1+1+8 = 10, rest K+5
        ("10S JH QD KC AS", NiuScore.NIU_1),
        ("2S 3H 5D 4C 6C", NiuScore.NIU_NIU),  # 2+3+5 = 10, 4+6 = 10
        ("AS AH AD AC 2S", NiuScore.NO_NIU),  # total 6, no triple reaches 10
        ("9S 9H 2D 8C 3C", NiuScore.NIU_1),  # 9+9+2 = 20, 8+3 = 11
    ],
)
def test_core_scores(cards: str, score: NiuScore) -> None:
    """RULES.md core scoring: A = 1, 10/J/Q/K = 10; bull of three, last digit of the rest."""
    assert score_hand(cards, "classic") is score


def test_split_choice_is_strongest_first_and_documented() -> None:
    """The module docstring: among bulls, the first triple of the cards sorted strongest first
    (rank, then suit order) — the face cards go in the bull."""
    hand = evaluate_hand("5H KS 5D JD QS", "classic")
    assert hand.split is not None
    assert cards_text(hand.split.bull) == "KS QS JD"
    assert cards_text(hand.split.rest) == "5H 5D"
    assert str(hand) == "5H KS 5D JD QS: Niu Niu (KS QS JD | 5H 5D)"


# --- house options -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "specials", "score"),
    [
        ("AS AH 2D 2C 4S", ALL_SPECIAL_HANDS, NiuScore.FIVE_SMALL),  # total 10, all under 5
        ("AS AH 2D 2C 4S", (), NiuScore.NO_NIU),  # a triple of them never reaches 10
        ("AS AH 2D 3C 4S", ALL_SPECIAL_HANDS, NiuScore.NO_NIU),  # total 11: not five small
        ("AS AH AD AC 2S", ALL_SPECIAL_HANDS, NiuScore.FIVE_SMALL),  # five small > bomb
        ("9S 9H 9D 9C 4S", ALL_SPECIAL_HANDS, NiuScore.BOMB),
        ("KS KH KD KC QS", ALL_SPECIAL_HANDS, NiuScore.BOMB),  # bomb > five face
        ("KS KH KD QC QS", ALL_SPECIAL_HANDS, NiuScore.ULTIMATE),
        ("KS KH KD QC 10S", ALL_SPECIAL_HANDS, NiuScore.FOUR_FACE),
        ("KS KH KD QC 10S", (NiuScore.ULTIMATE,), NiuScore.NIU_NIU),
        ("KS KH KD 10C 10S", ALL_SPECIAL_HANDS, NiuScore.NIU_NIU),  # two tens: no special
        ("KS KH KD QC 9S", ALL_SPECIAL_HANDS, NiuScore.NIU_9),
    ],
)
def test_special_hands_switchable_and_ordered(
    cards: str, specials: tuple[NiuScore, ...], score: NiuScore
) -> None:
    """RULES.md: five small (under 5, total <= 10) > bomb > five face > four face + one 10 >
    Niu Niu, each a switch."""
    assert score_hand(cards, CLASSIC.replace(special_hands=specials)) is score


def test_special_hand_order_is_data() -> None:
    """The order of special hands is the profile's tuple, strongest first."""
    hands = [evaluate_hand(h, ALL_SPECIALS) for h in ("AS AH 2D 2C 4S", "9S 9H 9D 9C 4S")]
    assert hands[0] > hands[1]  # five small > bomb
    reordered = CLASSIC.replace(special_hands=(NiuScore.BOMB, NiuScore.FIVE_SMALL))
    hands = [evaluate_hand(h, reordered) for h in ("AS AH 2D 2C 4S", "9S 9H 9D 9C 4S")]
    assert hands[0] < hands[1]


def test_higher_bomb_wins() -> None:
    """Between two bombs the higher four of a kind wins (a product choice, documented)."""
    assert evaluate_hand("9S 9H 9D 9C 4S", ALL_SPECIALS) > evaluate_hand(
        "8S 8H 8D 8C KS", ALL_SPECIALS
    )


def test_ten_as_face_card() -> None:
    """RULES.md: some houses count 10 as a face card for five face cards."""
    ten_face = TRAINER.replace(ten_is_face=True)
    assert score_hand("KS 10H QD 10C JS", ten_face) is NiuScore.ULTIMATE
    assert score_hand("KS 10H QD 10C JS", TRAINER) is NiuScore.NIU_NIU


def test_suit_order_option_shdc() -> None:
    """RULES.md: suit order S > H > C > D by default, or S > H > D > C."""
    clubs, diamonds = "KC 7H 10C 3D 7D", "KD 8C 2S 5H 2H"  # both Niu 7, K high
    assert compare_hands(evaluate_hand(clubs, TRAINER), evaluate_hand(diamonds, TRAINER)) is (
        Outcome.WIN
    )
    shdc = TRAINER.replace(suit_order=SUIT_ORDER_SHDC)
    assert compare_hands(evaluate_hand(clubs, shdc), evaluate_hand(diamonds, shdc)) is (
        Outcome.LOSE
    )


def test_ngau_three_six_swap() -> None:
    """RULES.md (Malaysian Ngau): a 3 may count as 6 and a 6 as 3, whichever helps."""
    swap = CLASSIC.replace(swap_three_six=True)
    # No triple of 6 5 2 A A sums to 10; with the 6 counted as 3, 3 + 5 + 2 does.
    assert score_hand("6S 5H 2D AC AD", CLASSIC) is NiuScore.NO_NIU
    hand = evaluate_hand("6S 5H 2D AC AD", swap)
    assert hand.score is NiuScore.NIU_2
    assert hand.split is not None and [str(c) for c in hand.split.swapped] == ["6S"]
    # 3 counted as 6 in the rest: 3 + 4 = 7 becomes 6 + 4 = 10, Niu Niu.
    assert score_hand("KS QH JD 3C 4C", swap) is NiuScore.NIU_NIU


def test_ngau_three_of_a_kind_bull() -> None:
    """RULES.md (Ngau): three of a kind also makes a bull."""
    triple = CLASSIC.replace(triple_bull=True)
    assert score_hand("4S 4H 4D 8C AC", CLASSIC) is NiuScore.NO_NIU
    assert score_hand("4S 4H 4D 8C AC", triple) is NiuScore.NIU_9


def test_ngau_double_ox_prefers_a_pair_in_the_rest() -> None:
    """RULES.md (Ngau): last two cards forming a pair outrank ordinary scores; the split
    choice then matters."""
    double_ox = CLASSIC.replace(double_ox=True)
    hand = evaluate_hand("8S 8H 4D 3C 3D", double_ox)  # 3+3+4 = 10 leaves 8 8
    assert hand.score is NiuScore.DOUBLE_OX
    assert hand.split is not None and cards_text(hand.split.rest) == "8S 8H"
    assert hand > evaluate_hand("KS QS 5H 5D JD", double_ox.replace(decks=1))  # > Niu Niu
    assert evaluate_hand("9S 9H 4D 3C 3H", double_ox) > hand  # higher pair
    assert score_hand("8S 8H 4D 3C 3D", CLASSIC) is NiuScore.NIU_6


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "profile", "error", "message"),
    [
        ("3H 7S KD 8C", "classic", HandError, "5 cards, got 4"),
        ("3H 7S KD 8C 6D 2S", "classic", HandError, "5 cards, got 6"),
        ("3H 7S KD 8C JR", "classic", HandError, "without jokers, got JR"),
        ("3H 3H KD 8C 6D", "classic", HandError, "duplicate card 3H"),
        ("3H 7S KD 8C 1D", "classic", CardError, "'1D'"),
        ("3H 7S KD 8C 6D", "poker", ProfileError, "'poker'"),
    ],
)
def test_bad_hands(cards: str, profile: str, error: type[RulesError], message: str) -> None:
    """Bad input raises a ValueError subclass whose message names the bad token or count."""
    with pytest.raises(error, match=message):
        evaluate_hand(cards, profile)


def test_duplicates_allowed_with_several_decks() -> None:
    """RULES.md: with several decks two hands (and one hand) can hold identical cards."""
    two_decks = CLASSIC.replace(decks=2)
    assert score_hand("7H 7H 6D 8C 3D", two_decks) is NiuScore.NIU_1  # 7 + 7 + 6 | 8 + 3
    with pytest.raises(HandError, match="3H"):
        score_hand("3H 3H 3H 8C 6D", two_decks)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"decks": 0}, "decks"),
        ({"suit_order": (Suit.SPADES, Suit.SPADES, Suit.CLUBS, Suit.DIAMONDS)}, "suit order"),
        ({"commission_rate": Decimal(1)}, "commission"),
        ({"commission_rate": "abc"}, "commission rate must be a number"),
        ({"special_hands": (NiuScore.BOMB, NiuScore.BOMB)}, "twice"),
        ({"special_hands": (NiuScore.NIU_9,)}, "not special"),
        ({"default_bet": BetType.DOUBLE, "bets": {}}, None),
    ],
)
def test_profile_validation(changes: dict[str, object], message: str | None) -> None:
    """Inconsistent options are a ProfileError at construction."""
    if message is None:
        assert isinstance(APP.replace(**changes), NiuProfile)
        return
    with pytest.raises(ProfileError, match=message):
        CLASSIC.replace(**changes)


def test_unknown_table_and_missing_score() -> None:
    with pytest.raises(ProfileError, match="'mega'"):
        get_table("mega")
    with pytest.raises(ProfileError, match="bomb"):
        CLASSIC.tier(NiuScore.BOMB)


# --- comparison and ranking ----------------------------------------------------------------


def test_hands_of_different_profiles_do_not_compare() -> None:
    with pytest.raises(HandError, match="profiles"):
        compare_hands(
            evaluate_hand("3H 7S KD 8C 6D", CLASSIC), evaluate_hand("3H 7S KD 8C 6D", APP)
        )


def test_identical_hands_with_two_decks_tie_in_the_trainer() -> None:
    """RULES.md: with several decks the suit tie-break can still leave a tie: say tie."""
    two_decks = TRAINER.replace(decks=2)
    ranking = rank_hands(["KS 7H 10C 3D 7D", "KS 7H 10C 3D 7D", "QS 8C 2S 5H 2H"], two_decks)
    assert ranking.places == (1, 1, 3)
    assert ranking.winners == (0, 1) and ranking.is_tie
    assert ranking.order == (0, 1, 2)


def test_ranking_two_to_four_hands() -> None:
    """Seed 002: the trainer ranks 2 to 4 hands and names the winner."""
    hands = ["AS 2D 4C 8H 9C", "KS QS 5H 5D JD", "3H 7S KD 8C 6D", "JH QH KH JC QC"]
    ranking = rank_hands(hands, "trainer")
    assert ranking.places == (4, 2, 3, 1)
    assert ranking.winners == (3,) and not ranking.is_tie
    assert ranking.order == (3, 1, 2, 0)


@pytest.mark.parametrize(
    ("hands", "message"),
    [
        (["3H 7S KD 8C 6D"], "at least 2"),
        (["3H 7S KD 8C 6D", "3H 2S 2D 8D 6C"], "duplicate card 3H"),
    ],
)
def test_ranking_errors(hands: list[str], message: str) -> None:
    """A one-deck game cannot deal a card twice across the hands."""
    with pytest.raises(HandError, match=message):
        rank_hands(hands, "trainer")


def test_banker_wins_ties_option() -> None:
    """RULES.md: push on full ties, or banker wins ties."""
    banker = evaluate_hand("KS 7H 10C 3D 7D", CLASSIC)
    player = evaluate_hand("QH 8C 2S 5H 2H", CLASSIC)
    assert banker_outcome(banker, player) is Outcome.TIE
    strict = CLASSIC.replace(ties=TieRule.BANKER_WINS)
    assert (
        banker_outcome(evaluate_hand(banker.cards, strict), evaluate_hand(player.cards, strict))
        is Outcome.LOSE
    )


def test_results_are_frozen_and_compared_by_strength_only() -> None:
    """STYLE.md: ordered frozen records; the label and cards are excluded from comparison."""
    first = evaluate_hand("KS 7H 10C 3D 7D", CLASSIC)
    second = evaluate_hand("QH 8C 2S 5H 2H", CLASSIC)
    assert first == second and first.cards != second.cards
    assert max([first, evaluate_hand("KS QS 5H 5D JD", CLASSIC)]).score is NiuScore.NIU_NIU
    with pytest.raises(AttributeError):
        first.score = NiuScore.NIU_1  # type: ignore[misc]
    assert isinstance(first, NiuHand) and first.label == "Niu 7"


def test_input_forms() -> None:
    """Cards may be given as card objects, as text, in any spelling."""
    assert score_hand(parse_cards("3h 7♠ kd 8c 6d"), "classic") is NiuScore.NIU_4
