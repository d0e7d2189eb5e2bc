"""benchmarks/eval_twin_corners.py: pairs of certain cards reading twins where one card's
corners would lie, sorted by the labels."""

from __future__ import annotations

from collections import Counter

from benchmark_modules import load_benchmark

from vision.detections import CardReading

twin_corners = load_benchmark("eval_twin_corners")


def _card(code: str, confidence: float, x: float, y: float, corners: int = 1) -> CardReading:
    side = 20.0
    return CardReading(
        code=code,
        confidence=confidence,
        box_xyxy=(x - side / 2, y - side / 2, x + side / 2, y + side / 2),
        corners=corners,
        uncertain=confidence < 0.7,
        index_px=side,
    )


def test_twins_are_one_rank_in_one_colour_or_a_six_and_a_nine() -> None:
    assert twin_corners.twins("10C", "10S") and twin_corners.twins("7H", "7D")
    assert twin_corners.twins("9D", "6D")
    assert not twin_corners.twins("9D", "6H")  # a 6 for a 9 keeps its suit
    assert not twin_corners.twins("7H", "7S")  # another colour
    assert not twin_corners.twins("KC", "KC")
    assert not twin_corners.twins("JB", "JR")


def test_a_pair_lies_across_within_reach_and_the_lone_card_is_the_less_sure() -> None:
    surer = _card("3C", 0.98, 100, 100, corners=2)
    across = _card("3S", 0.86, 160, 150)  # 3.9 index heights away, across
    beside = _card("3S", 0.86, 170, 100)  # in the card's row: not across
    far = _card("3S", 0.86, 300, 300)  # 14 index heights away
    unsure = _card("3S", 0.5, 160, 150)
    reach, slant = (2.2, 5.5), 0.25
    assert twin_corners.pairs([surer, across], reach, slant) == [(across, surer)]
    for other in (beside, far, unsure):
        assert twin_corners.pairs([surer, other], reach, slant) == []
    # the surer of two lone cards is never the one that joins
    less_sure, sure_lone = _card("3C", 0.9, 100, 100), _card("3S", 0.99, 160, 150)
    assert twin_corners.pairs([less_sure, sure_lone], reach, slant) == [(less_sure, sure_lone)]


def test_labels_sort_one_card_read_twice_from_two_cards() -> None:
    labels = Counter(["3C", "KH"])
    assert twin_corners.kind(labels, "3S", "3C") == "one card"
    assert twin_corners.kind(Counter(["3C", "3S"]), "3S", "3C") == "two cards"
    assert twin_corners.kind(labels, "7S", "7C") == "other"


def test_hand_pairs_are_the_pairs_the_hand_level_rule_joins() -> None:
    # a spread hand of five (index boxes 20 px, 25 px apart) and its 6D's other corner, read
    # as a 9H, 2.7 index heights down and across: a group of six
    codes = ("3H", "7S", "KD", "8C", "6D")
    hand = [_card(code, 0.97, 100 + 25 * i, 100) for i, code in enumerate(codes)]
    corner = _card("9H", 0.9, 230, 144)
    assert twin_corners.hand_pairs([*hand, corner]) == [("9H", "6D")]
    assert twin_corners.hand_pairs(hand) == []
