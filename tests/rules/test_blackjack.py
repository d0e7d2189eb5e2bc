"""Blackjack: card values, hard and soft totals, the dealer's action, settling player hands.

Expectations come from RULES.md section 3 ("Blackjack") and the settling order documented in
``rules.blackjack`` (standard casino rules), quoted where used.
"""

from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.blackjack import (
    BlackjackOutcome,
    BlackjackRules,
    DealerAction,
    blackjack_value,
    dealer_action,
    evaluate_blackjack_hand,
    play_blackjack_round,
    settle_blackjack_hand,
)
from rules.cards import AnyCard, Card, Joker, Rank, Suit, full_deck, parse_cards
from rules.errors import HandError, IllegalPlayError, ProfileError

DECK = full_deck()
H17 = BlackjackRules(dealer_hits_soft_17=True)


def cards(text: str) -> tuple[AnyCard, ...]:
    return parse_cards(text)


@pytest.mark.parametrize(
    ("rank", "value"),
    [(Rank.ACE, 1), *((Rank(value), value) for value in range(2, 11)), (Rank.JACK, 10),
     (Rank.QUEEN, 10), (Rank.KING, 10)],
)  # fmt: skip
def test_card_values(rank: Rank, value: int) -> None:
    """RULES.md: "2..10 face value, J/Q/K = 10, A = 1 or 11" (1 here; 11 is the soft total)."""
    assert blackjack_value(Card(rank, Suit.SPADES)) == value


@pytest.mark.parametrize(
    ("text", "hard", "total", "soft", "blackjack", "bust", "description"),
    [
        ("AS AD 9C", 11, 21, True, False, False, "soft 21"),  # one ace counts 11, the other 1
        ("AS 6D 10C", 17, 17, False, False, False, "hard 17"),  # A 6 + 10 = hard 17
        ("AS 6D", 7, 17, True, False, False, "soft 17"),
        ("AS AD", 2, 12, True, False, False, "soft 12"),  # two aces: only one counts 11
        ("AS AD AC AH", 4, 14, True, False, False, "soft 14"),
        ("AS AD AC AH 7S", 11, 21, True, False, False, "soft 21"),
        ("AS AD KC", 12, 12, False, False, False, "hard 12"),
        ("AS KD", 11, 21, True, True, False, "blackjack"),  # ace + ten-value in two cards
        ("10S AD", 11, 21, True, True, False, "blackjack"),
        ("AS 5D 5C", 11, 21, True, False, False, "soft 21"),  # 21 in three cards: no blackjack
        ("7S 7D 7C", 21, 21, False, False, False, "hard 21"),
        ("KS QD 2C", 22, 22, False, False, True, "bust (22)"),  # over 21 busts
        ("KS 6D AC 5H", 22, 22, False, False, True, "bust (22)"),  # the ace falls back to 1
        ("9S 7D", 16, 16, False, False, False, "hard 16"),
        ("KS", 10, 10, False, False, False, "hard 10"),  # a dealer's upcard alone
    ],
)
def test_totals(
    text: str, hard: int, total: int, soft: bool, blackjack: bool, bust: bool, description: str
) -> None:
    """Hard and soft totals, blackjack and bust, worked by hand from the card values."""
    hand = evaluate_blackjack_hand(cards(text))
    assert (hand.hard_total, hand.total, hand.soft) == (hard, total, soft)
    assert (hand.blackjack, hand.bust) == (blackjack, bust)
    assert hand.description == description


@pytest.mark.parametrize(
    ("dealer", "stands_on_soft_17", "hits_soft_17"),
    [
        ("KS", DealerAction.HIT, DealerAction.HIT),  # one card: take the second
        ("KS 6D", DealerAction.HIT, DealerAction.HIT),  # 16 hits
        ("KS 7D", DealerAction.STAND, DealerAction.STAND),  # hard 17 stands
        ("AS 6D", DealerAction.STAND, DealerAction.HIT),  # soft 17: the option decides
        ("AS 3D 3C", DealerAction.STAND, DealerAction.HIT),
        ("AS 6D 10C", DealerAction.STAND, DealerAction.STAND),  # hard 17 again
        ("AS 7D", DealerAction.STAND, DealerAction.STAND),  # soft 18 stands
        ("AS AD", DealerAction.HIT, DealerAction.HIT),  # soft 12 hits
        ("AS KD", DealerAction.STAND, DealerAction.STAND),  # blackjack
        ("KS 6D 9C", DealerAction.STAND, DealerAction.STAND),  # bust: nothing left to do
    ],
)
def test_dealer_action(
    dealer: str, stands_on_soft_17: DealerAction, hits_soft_17: DealerAction
) -> None:
    """RULES.md: "dealer stands on 17 (option: hits soft 17)"."""
    assert dealer_action(cards(dealer)) is stands_on_soft_17
    assert dealer_action(cards(dealer), H17) is hits_soft_17


@pytest.mark.parametrize(
    ("player", "dealer", "rules", "outcome", "net"),
    [
        # Blackjack pays 3:2 (RULES.md); stake 10.
        ("AS KD", "KS 7D", BlackjackRules(), BlackjackOutcome.BLACKJACK, "15"),
        ("AS KD", "KS 6D", BlackjackRules(), BlackjackOutcome.BLACKJACK, "15"),  # dealer not done
        # A natural against a 2-9 upcard is paid at once: that dealer cannot make a blackjack.
        ("AS KD", "2H", BlackjackRules(), BlackjackOutcome.BLACKJACK, "15"),
        ("10S AD", "9C", BlackjackRules(), BlackjackOutcome.BLACKJACK, "15"),
        ("AS QD", "6H", H17, BlackjackOutcome.BLACKJACK, "15"),
        ("AS KD", "AH QC", BlackjackRules(), BlackjackOutcome.PUSH, "0"),  # blackjack vs blackjack
        ("AS KD", "7H 4C KH", BlackjackRules(), BlackjackOutcome.BLACKJACK, "15"),  # vs 21 in 3
        ("7S 4D KC", "AH QC", BlackjackRules(), BlackjackOutcome.LOSE, "-10"),  # 21 in 3 vs BJ
        ("KS 6D 9C", "KH 6C 8D", BlackjackRules(), BlackjackOutcome.LOSE, "-10"),  # both bust
        ("KS 6D 9C", "KH", BlackjackRules(), BlackjackOutcome.LOSE, "-10"),  # bust before dealer
        ("KS 6D", "KH 6C 8D", BlackjackRules(), BlackjackOutcome.WIN, "10"),  # dealer busts
        ("KS 8D", "KH 7C", BlackjackRules(), BlackjackOutcome.WIN, "10"),
        ("KS 7D", "KH 7C", BlackjackRules(), BlackjackOutcome.PUSH, "0"),
        ("AS 6D", "KH 7C", BlackjackRules(), BlackjackOutcome.PUSH, "0"),  # soft 17 = 17
        ("KS 6D", "KH 7C", BlackjackRules(), BlackjackOutcome.LOSE, "-10"),
        ("7S 7D 7C", "KH 9C", BlackjackRules(), BlackjackOutcome.WIN, "10"),
        ("AS KD", "KS 7D", BlackjackRules(blackjack_pays=Decimal("1.2")),
         BlackjackOutcome.BLACKJACK, "12"),  # a 6:5 table, as an option
    ],
)  # fmt: skip
def test_settle(
    player: str, dealer: str, rules: BlackjackRules, outcome: BlackjackOutcome, net: str
) -> None:
    """The settling order of rules.blackjack: player bust loses first, blackjack vs blackjack
    pushes, a dealer blackjack beats a three-card 21, a dealer bust pays the standing hands."""
    settlement = settle_blackjack_hand(cards(player), cards(dealer), 10, rules)
    assert settlement.outcome is outcome
    assert settlement.net == Decimal(net)


@pytest.mark.parametrize(
    ("player", "dealer", "rules"),
    [
        ("KS 8D", "KH 6C", BlackjackRules()),  # the dealer must still hit 16
        ("AS KD", "AH", BlackjackRules()),  # the hole card may still make a dealer blackjack
        ("AS KD", "KH", BlackjackRules()),  # a ten-value upcard: the same
        ("AS KD", "10C", BlackjackRules()),
        ("KS 8D", "9H", BlackjackRules()),  # no natural: the dealer's hand decides
        ("KS 8D", "AH 6C", H17),  # soft 17 hits under the option
    ],
)
def test_undecided_while_the_dealer_must_draw(
    player: str, dealer: str, rules: BlackjackRules
) -> None:
    """No outcome (None) while the dealer has to draw, unless the player busted or holds a
    natural against an upcard (2-9) that cannot make a dealer blackjack."""
    settlement = settle_blackjack_hand(cards(player), cards(dealer), 10, rules)
    assert settlement.outcome is None and settlement.net is None
    assert settlement.to_dict()["outcome"] is None


@pytest.mark.parametrize(
    ("dealer", "players", "rules", "error", "message"),
    [
        ("KS 7D", ["AS"], BlackjackRules(), HandError, "player hand 1 needs at least 2 cards"),
        ("", ["AS KD"], BlackjackRules(), HandError, "at least 1 card, got 0"),
        ("KS 7D", [], BlackjackRules(), HandError, "at least one player hand"),
        ("KS JR", ["AS KD"], BlackjackRules(), HandError, "joker JR has no value in blackjack"),
        ("KS 7D", ["KS 9D"], BlackjackRules(decks=1), HandError, "duplicate card KS"),
        ("KS 7D 2C", ["9S 9D"], BlackjackRules(), IllegalPlayError,
         "dealer drew 2C on hard 17 \\(KS 7D\\): the dealer stands there"),
        ("AS 6D 2C", ["9S 9D"], BlackjackRules(), IllegalPlayError, "dealer drew 2C on soft 17"),
        ("AS KD 2C", ["9S 9D"], BlackjackRules(), IllegalPlayError, "dealer drew 2C on blackjack"),
        ("KS 7D", ["9S 9D", "KC QC 5H 2D"], BlackjackRules(), IllegalPlayError,
         "player hand 2 drew 2D after busting \\(KC QC 5H\\)"),
        ("10S 7H", ["AD KC 5H"], BlackjackRules(), IllegalPlayError,
         "player hand 1 drew 5H after a blackjack \\(AD KC\\)"),
        ("10S 7H", ["9S 9D", "QC AS AH"], BlackjackRules(), IllegalPlayError,
         "player hand 2 drew AH after a blackjack \\(QC AS\\)"),
    ],
)  # fmt: skip
def test_bad_input(
    dealer: str,
    players: list[str],
    rules: BlackjackRules,
    error: type[Exception],
    message: str,
) -> None:
    """Bad rounds raise with the count, the card or the illegal draw named."""
    with pytest.raises(error, match=message):
        play_blackjack_round(cards(dealer), [cards(text) for text in players], 10, rules)


def test_naturals_against_a_low_upcard_are_paid_while_the_dealer_draws() -> None:
    """Dealer shows a 7 and must draw: the natural is paid 3:2 at once (a 7 cannot make a
    dealer blackjack), the 18 waits for the dealer's hand."""
    round_ = play_blackjack_round(cards("7H"), [cards("AS KD"), cards("KS 8D")], 10)
    assert round_.action is DealerAction.HIT
    assert [player.outcome for player in round_.players] == [BlackjackOutcome.BLACKJACK, None]
    assert [player.to_dict()["net"] for player in round_.players] == [15, None]


def test_dealer_hitting_soft_17_is_legal_under_the_option() -> None:
    """With the option, a dealer soft 17 that drew is no error."""
    round_ = play_blackjack_round(cards("AS 6D 2C"), [cards("9S KD")], 10, H17)
    assert round_.action is DealerAction.STAND
    assert round_.dealer.description == "soft 19"
    assert round_.players[0].outcome is BlackjackOutcome.PUSH  # 19 against 19


def test_bad_rules_and_stake() -> None:
    """Inconsistent options are ProfileErrors; the stake must be positive."""
    with pytest.raises(ProfileError, match="blackjack payout 0"):
        BlackjackRules(blackjack_pays=Decimal(0))
    with pytest.raises(ProfileError, match="decks 0"):
        BlackjackRules(decks=0)
    with pytest.raises(HandError, match="stake 0 must be positive"):
        settle_blackjack_hand(cards("KS 7D"), cards("KH 7C"), 0)
    with pytest.raises(HandError, match="joker JB"):
        blackjack_value(Joker.BLACK)


def test_round_to_dict_is_json_ready() -> None:
    """The endpoint form: dealer with its action, each player settled; plain JSON types."""
    round_ = play_blackjack_round(cards("KS 7D"), [cards("AS KD"), cards("9C 9D")], 10)
    data = round_.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["dealer"]["action"] == "stand"
    assert [player["outcome"] for player in data["players"]] == ["blackjack", "win"]
    assert [player["net"] for player in data["players"]] == [15, 10]


@given(st.lists(st.sampled_from(DECK), min_size=2, max_size=6), st.data())
def test_totals_ignore_order(hand: list[AnyCard], data: st.DataObject) -> None:
    """Property: totals never depend on the card order; soft means an ace counted 11."""
    shuffled = data.draw(st.permutations(hand))
    first, second = evaluate_blackjack_hand(hand), evaluate_blackjack_hand(shuffled)
    assert (first.hard_total, first.total, first.soft, first.blackjack, first.bust) == (
        second.hard_total,
        second.total,
        second.soft,
        second.blackjack,
        second.bust,
    )
    assert first.total == first.hard_total + (10 if first.soft else 0)
    has_ace = any(isinstance(card, Card) and card.rank is Rank.ACE for card in hand)
    assert first.soft is (has_ace and first.hard_total <= 11)
    assert first.bust is (first.total > 21)


@pytest.mark.parametrize("rules", [BlackjackRules(), H17], ids=["S17", "H17"])
def test_dealer_following_its_action_ends_legal(rules: BlackjackRules) -> None:
    """5,000 seeded 6-deck draws: a dealer that hits while told to ends on 17+ (or bust),
    passes the draw check, and stands."""
    rng = np.random.default_rng(21)
    shoe_cards = list(DECK) * 6
    for _ in range(5_000):
        shoe = [shoe_cards[index] for index in rng.choice(len(shoe_cards), 12, replace=False)]
        dealer = [shoe.pop(), shoe.pop()]
        while dealer_action(dealer, rules) is DealerAction.HIT:
            dealer.append(shoe.pop())
        hand = evaluate_blackjack_hand(dealer)
        assert hand.total >= 17
        round_ = play_blackjack_round(dealer, [[shoe.pop(), shoe.pop()]], 1, rules)
        assert round_.action is DealerAction.STAND
        assert round_.players[0].outcome is not None
