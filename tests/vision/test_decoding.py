"""Deck-aware decoding (vision.decoding) and the reader's merging with a deck in play, on
constructed readings: duplicates, impossible cards, next-best fallback, several decks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rules.cards import CARD_CLASSES, Rank, parse_cards
from rules.decks import Deck, deck_for_game
from vision.decoding import deck_table, decode_cards, min_cost_assignment, restricted
from vision.detections import CLASSIFIER_CLASSES
from vision.reader import Reader, ReaderSettings

NIUNIU = deck_for_game("niuniu")


def _card(readings: dict[str, float]) -> np.ndarray:
    """One card's probabilities (54,): the readings given, what they leave shared evenly."""
    row = np.full(len(CARD_CLASSES), (1 - sum(readings.values())) / (54 - len(readings)))
    for code, probability in readings.items():
        row[CARD_CLASSES.index(code)] = probability
    return row


def _codes(decoded_codes: np.ndarray) -> list[str]:
    return [CARD_CLASSES[int(code)] for code in decoded_codes]


# -- the assignment --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_assignment_is_the_least_cost_one(seed: int) -> None:
    """Against every way of giving N rows distinct columns (N <= 5, M <= 7: at most 2,520)."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        rows = int(rng.integers(1, 6))
        columns = int(rng.integers(rows, 8))
        cost = rng.choice([0.0, 1.0, 2.5, 7.0], (rows, columns)) + rng.random((rows, columns))
        assigned = min_cost_assignment(cost)
        assert len(set(assigned.tolist())) == rows
        best = min(
            sum(cost[row, chosen[row]] for row in range(rows))
            for chosen in itertools.permutations(range(columns), rows)
        )
        assert cost[np.arange(rows), assigned].sum() == pytest.approx(best)


def test_assignment_needs_a_column_per_row() -> None:
    with pytest.raises(ValueError, match="cannot assign 3 rows to 2 columns"):
        min_cost_assignment(np.zeros((3, 2)))


# -- decoding --------------------------------------------------------------------------------


def test_without_conflict_each_card_keeps_its_best_reading() -> None:
    cards = np.stack([_card({"KD": 0.9}), _card({"QS": 0.6, "QC": 0.3}), _card({"7H": 0.99})])
    decoded = decode_cards(cards, NIUNIU, prior=False)
    assert _codes(decoded.codes) == ["KD", "QS", "7H"]
    assert decoded.placed.all()
    assert decoded.probability == pytest.approx(cards.max(axis=1))


def test_the_surer_of_two_cards_keeps_a_card_of_one_deck() -> None:
    """A picture read as a second KD (0.8, then QD 0.15) loses KD to the card read at 0.99 and
    falls back to its next reading."""
    cards = np.stack([_card({"KD": 0.8, "QD": 0.15}), _card({"KD": 0.99, "KH": 0.005})])
    decoded = decode_cards(cards, NIUNIU, prior=False)
    assert _codes(decoded.codes) == ["QD", "KD"]
    assert decoded.probability == pytest.approx([0.15, 0.99])
    assert decoded.placed.all()


def test_joint_decoding_gives_way_where_it_costs_least() -> None:
    """A: KD 0.6, QD 0.4; B: KD 0.55, then nothing above 0.01. Greedy by confidence gives A
    KD and B a reading of 0.01 (joint 0.006); decoding jointly gives B KD and A QD (0.22)."""
    cards = np.stack([_card({"KD": 0.6, "QD": 0.4}), _card({"KD": 0.55, "2C": 0.01})])
    assert _codes(decode_cards(cards, NIUNIU).codes) == ["QD", "KD"]


def test_a_card_the_deck_lacks_is_never_read() -> None:
    """A joker in Niu Niu: its next reading. As a prior, the deck shares the joker's
    probability out (KH 0.09 of 0.1 left: 0.9); as read, KH keeps 0.09."""
    cards = np.stack([_card({"JR": 0.9, "KH": 0.09, "QH": 0.01})])
    shared = decode_cards(cards, NIUNIU, prior=True)
    as_read = decode_cards(cards, NIUNIU, prior=False)
    assert _codes(shared.codes) == _codes(as_read.codes) == ["KH"]
    assert shared.probability[0] == pytest.approx(0.09 / 0.1)
    assert as_read.probability[0] == pytest.approx(0.09)


def test_pits_keeps_its_jokers_and_pai_gow_has_one() -> None:
    """Pits has one joker of each colour; Pai Gow Poker's one joker is either: the surer
    keeps it (JR at 0.95), the other card falls back."""
    cards = np.stack([_card({"JR": 0.95, "JB": 0.04}), _card({"JB": 0.9, "JR": 0.05})])
    assert _codes(decode_cards(cards, deck_for_game("pits")).codes) == ["JR", "JB"]
    paigow = decode_cards(cards, deck_for_game("paigow"), prior=False)
    assert _codes(paigow.codes)[0] == "JR"
    assert _codes(paigow.codes)[1] not in ("JB", "JR")


@pytest.mark.parametrize(
    ("deck", "kept", "why"),
    [
        (Deck.standard(1), 1, "one deck: one AS"),
        (Deck.standard(2), 2, "two decks: two AS"),
        (Deck.standard(3), 3, "three decks: all three"),
        (Deck.pinochle(), 2, "a pinochle pack holds each card twice"),
    ],
)
def test_copies_follow_the_number_of_decks(deck: Deck, kept: int, why: str) -> None:
    """Three cards read AS (0.97, 0.95, 0.9), then 10S: the surest keep AS, as many as the
    deck holds; the others fall back to other cards, each once."""
    cards = np.stack([_card({"AS": p, "10S": (1 - p) / 2}) for p in (0.97, 0.95, 0.9)])
    codes = _codes(decode_cards(cards, deck).codes)
    assert codes[:kept] == ["AS"] * kept, why
    assert "AS" not in codes[kept:] and len(set(codes[kept:])) == 3 - kept, why
    assert deck.surplus(parse_cards(codes)) == (), why


def test_pinochle_never_reads_a_rank_it_lacks() -> None:
    """An upside-down 9 read as a 6 (0.7, 9S 0.25): a pinochle pack has no 6."""
    decoded = decode_cards(np.stack([_card({"6S": 0.7, "9S": 0.25})]), Deck.pinochle())
    assert _codes(decoded.codes) == ["9S"]


def test_more_cards_than_the_deck_holds_leaves_some_unplaced() -> None:
    """A pack of aces only (4 cards) and five cards read AS: four get the four aces, one is
    left unplaced, with its likeliest card of the deck (AS)."""
    aces = Deck(ranks=frozenset({Rank.ACE}))
    cards = np.stack([_card({"AS": p}) for p in (0.99, 0.98, 0.97, 0.96, 0.95)])
    decoded = decode_cards(cards, aces)
    assert decoded.placed.sum() == 4
    assert sorted(_codes(decoded.codes[decoded.placed])) == ["AC", "AD", "AH", "AS"]
    assert _codes(decoded.codes[~decoded.placed]) == ["AS"]


def test_no_cards_and_bad_shapes() -> None:
    decoded = decode_cards(np.zeros((0, 54)), NIUNIU)
    assert decoded.codes.shape == decoded.probability.shape == decoded.placed.shape == (0,)
    with pytest.raises(ValueError, match=r"probabilities must have shape \(N, 54\)"):
        decode_cards(np.zeros((2, 55)), NIUNIU)


@pytest.mark.parametrize("seed", range(4))
def test_decoding_is_the_likeliest_reading_the_deck_allows(seed: int) -> None:
    """Small packs (two ranks: 8 cards, once or twice each) and up to four cards with random
    readings: the codes chosen respect the deck, and no choice that does has a higher joint
    probability (every choice tried)."""
    rng = np.random.default_rng(seed)
    for trial in range(20):
        deck = Deck(ranks=frozenset({Rank.ACE, Rank.TWO}), decks=int(rng.integers(1, 3)))
        count = int(rng.integers(1, 5))
        cards = rng.dirichlet(np.full(54, 0.05), count)
        decoded = decode_cards(cards, deck, prior=False)
        chosen = [CARD_CLASSES[int(code)] for code in decoded.codes]
        assert deck.surplus(parse_cards(chosen)) == (), trial
        allowed = np.flatnonzero(deck_table(deck).allowed)
        best = max(
            np.log(np.maximum(cards[np.arange(count), list(choice)], 1e-12)).sum()
            for choice in itertools.product(allowed.tolist(), repeat=count)
            if max(np.bincount(choice)) <= deck.decks
        )
        score = np.log(np.maximum(decoded.probability, 1e-12)).sum()
        assert score == pytest.approx(best), trial


@pytest.mark.parametrize("seed", range(4))
def test_decoding_a_full_deck_is_the_likeliest_reading_among_the_candidates(seed: int) -> None:
    """One 52-card deck and up to four cards, each read as one of a few favourite cards (so
    some conflict and some stand alone): no choice of each card's eight likeliest cards that
    the deck allows has a higher joint probability (every choice tried)."""
    rng = np.random.default_rng(100 + seed)
    for trial in range(25):
        count = int(rng.integers(2, 5))
        favourites = rng.choice(52, 3, replace=False)
        cards = rng.dirichlet(np.full(54, 0.05), count)
        cards[np.arange(count), rng.choice(favourites, count)] += rng.uniform(0.5, 3, count)
        cards /= cards.sum(axis=1, keepdims=True)
        decoded = decode_cards(cards, NIUNIU, prior=False)
        assert decoded.placed.all(), trial
        assert len(set(decoded.codes.tolist())) == count, trial
        allowed = deck_table(NIUNIU).allowed
        tops = [[int(c) for c in np.argsort(-np.where(allowed, row, -1))[:8]] for row in cards]
        best = max(
            np.log(np.maximum(cards[np.arange(count), list(choice)], 1e-12)).sum()
            for choice in itertools.product(*tops)
            if len(set(choice)) == count
        )
        score = np.log(np.maximum(decoded.probability, 1e-12)).sum()
        assert score == pytest.approx(best), trial


@pytest.mark.parametrize("seed", range(3))
def test_a_deck_of_every_card_changes_nothing_when_no_card_repeats(seed: int) -> None:
    """Two packs with jokers hold any two cards: the codes are the argmax, as without a deck."""
    rng = np.random.default_rng(seed)
    cards = rng.dirichlet(np.full(54, 0.1), 2)
    decoded = decode_cards(cards, Deck.standard(2, jokers=2))
    assert decoded.codes.tolist() == cards.argmax(axis=1).tolist()
    assert decoded.probability == pytest.approx(cards.max(axis=1))


def test_restricted_rows_sum_to_one_over_the_deck() -> None:
    cards = np.stack([_card({"JR": 0.5, "AS": 0.3}), np.zeros(54)])
    shared = restricted(cards, NIUNIU, prior=True)
    assert shared[0].sum() == pytest.approx(1.0)
    assert shared[0, CARD_CLASSES.index("JR")] == 0.0
    assert shared[1].sum() == 0.0


# -- the reader's merging with a deck in play ------------------------------------------------


def _index(code: str, confidence: float, **others: float) -> np.ndarray:
    """One index's probabilities (55,), the rest of the mass on "none"-free classes evenly."""
    row = np.full(len(CLASSIFIER_CLASSES), 0.0, np.float32)
    row[CLASSIFIER_CLASSES.index(code)] = confidence
    for other, probability in others.items():
        row[CLASSIFIER_CLASSES.index(other)] = probability
    rest = 1 - row.sum()
    row[:-1] += np.where(row[:-1] == 0, rest / (54 - 1 - len(others)), 0.0)
    return row


def _merger(deck: Deck | None, **overrides: object) -> Reader:
    reader = Reader.__new__(Reader)
    reader.settings = ReaderSettings(in_play=deck, **overrides)  # type: ignore[arg-type]
    return reader


def _far_apart(count: int) -> np.ndarray:
    return np.array([[400 * n, 0, 400 * n + 20, 30] for n in range(count)], np.float32)


def test_a_second_card_of_one_deck_is_uncertain_not_a_duplicate() -> None:
    """KD twice, far apart, in a one-deck game: the surer keeps KD; the other's next reading
    (QD 0.15) is not sure enough, so it is reported uncertain, under its next reading."""
    probabilities = np.stack([_index("KD", 0.99), _index("KD", 0.8, QD=0.15)])
    cards = _merger(NIUNIU).merge_corners(_far_apart(2), probabilities)
    assert [(card.code, card.uncertain) for card in cards] == [("KD", False), ("QD", True)]
    free = _merger(None).merge_corners(_far_apart(2), probabilities)
    assert [(card.code, card.uncertain) for card in free] == [("KD", False), ("KD", False)]
    two = _merger(Deck.standard(2)).merge_corners(_far_apart(2), probabilities)
    assert [(card.code, card.uncertain) for card in two] == [("KD", False), ("KD", False)]


def test_a_corner_read_as_a_joker_is_no_second_card_for_certain() -> None:
    """A queen's corner read JR (0.8, then QH 0.18) beside its other corner read QH: indices
    are grouped by their own readings, so it stays a card of its own; in Niu Niu it is no
    joker, and QH, its next reading, is the queen's: it is reported uncertain."""
    boxes = np.array([[10, 10, 30, 40], [110, 150, 130, 180]], np.float32)
    probabilities = np.stack([_index("QH", 0.95), _index("JR", 0.8, QH=0.18)])
    cards = _merger(NIUNIU).merge_corners(boxes, probabilities)
    assert (cards[0].code, cards[0].uncertain) == ("QH", False)
    assert cards[1].uncertain and cards[1].code not in ("JB", "JR", "QH")
    free = _merger(None).merge_corners(boxes, probabilities)
    assert [(card.code, card.uncertain) for card in free] == [("QH", False), ("JR", False)]


@pytest.mark.parametrize("seed", range(3))
def test_a_deck_in_play_never_makes_a_card_certain(seed: int) -> None:
    """With the classifier's own probabilities (the default), every card read for certain
    with a deck in play is read for certain, with that code, in the same place without one:
    the deck only takes certainty away. Random tables of 12 indices, some close enough to
    merge, readings peaked on a few cards (so that codes repeat)."""
    rng = np.random.default_rng(seed)
    for trial in range(30):
        count = 12
        corners = rng.uniform(0, 600, (count, 2))
        boxes = np.hstack([corners, corners + np.array([20.0, 30.0])]).astype(np.float32)
        favourites = rng.choice(54, 6, replace=False)
        rows = rng.dirichlet(np.full(55, 0.05), count).astype(np.float32)
        rows[np.arange(count), rng.choice(favourites, count)] += rng.uniform(0, 3, count)
        rows[:, -1] = 0.0
        rows /= rows.sum(axis=1, keepdims=True)
        for deck in (NIUNIU, Deck.pinochle(), deck_for_game("paigow")):
            free = _merger(None).merge_corners(boxes, rows)
            decked = _merger(deck).merge_corners(boxes, rows)
            assert [card.box_xyxy for card in decked] == [card.box_xyxy for card in free]
            for with_deck, without in zip(decked, free, strict=True):
                assert parse_cards(with_deck.code)[0] in deck, trial
                if not with_deck.uncertain:
                    assert (with_deck.code, without.uncertain) == (without.code, False), trial
            certain = parse_cards([card.code for card in decked if not card.uncertain])
            assert deck.surplus(certain) == (), trial


@pytest.mark.parametrize(
    ("prior", "uncertain"),
    [(True, False), (False, True)],
)
def test_a_lone_joker_falls_back_to_its_next_reading(prior: bool, uncertain: bool) -> None:
    """A lone index read JR 0.85, KH 0.14: as read (the default), KH keeps 0.14 (uncertain);
    as a prior the deck makes it KH at 0.93 (certain). Either way no joker is read in Niu
    Niu."""
    probabilities = _index("JR", 0.85, KH=0.14)[None]
    cards = _merger(NIUNIU, deck_prior=prior).merge_corners(_far_apart(1), probabilities)
    assert [(card.code, card.uncertain) for card in cards] == [("KH", uncertain)]
    assert all(code not in ("JB", "JR") for code, _ in cards[0].alternatives)


def test_without_a_deck_merging_is_unchanged() -> None:
    """The default settings have no deck in play."""
    assert ReaderSettings().in_play is None and not ReaderSettings().deck_prior
    probabilities = np.stack([_index("JR", 0.9), _index("AS", 0.9), _index("AS", 0.9)])
    cards = _merger(None).merge_corners(_far_apart(3), probabilities)
    assert [card.code for card in cards] == ["JR", "AS", "AS"]
