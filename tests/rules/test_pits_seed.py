"""One test per rule sentence of seed 001 (Pits, French); each docstring quotes its sentence."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from rules.cards import full_deck, parse_cards
from rules.errors import IllegalPlayError
from rules.pits import (
    CombinationError,
    PitsKind,
    PitsRank,
    PitsRound,
    PitsRoundEnd,
    PitsRules,
    can_play,
    classify_combination,
    legal_plays,
    pits_rank,
    verify_play,
)

SINGLES_LOW_TO_HIGH = "3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S JB JR"


def test_goal_first_out_wins() -> None:
    """«L'objectif du jeu est d'être le premier joueur à se débarrasser de toutes ses cartes.»"""
    hands = [parse_cards("5H 9S"), parse_cards("3C 4D"), parse_cards("KH")]
    state = PitsRound.deal(hands).play(parse_cards("5H")).pass_turn().play(parse_cards("KH"))
    assert state.winner == 2 and state.hands[2] == () and state.finished == (2,)
    assert not state.is_over  # by default the others play on for the next places
    quick = PitsRound.deal(hands, rules=PitsRules(round_end=PitsRoundEnd.FIRST_OUT))
    quick = quick.play(parse_cards("5H")).pass_turn().play(parse_cards("KH"))
    assert quick.is_over and quick.winner == 2


def test_deck_is_52_cards_and_2_jokers() -> None:
    """«Le jeu se joue avec un jeu de 52 cartes standard et 2 Jokers.»"""
    ranks = Counter(pits_rank(card) for card in full_deck(jokers=True))
    assert sum(ranks.values()) == 54
    assert all(ranks[rank] == 4 for rank in PitsRank if rank < PitsRank.BLACK_JOKER)
    assert ranks[PitsRank.BLACK_JOKER] == ranks[PitsRank.RED_JOKER] == 1


def test_rank_order_low_to_high() -> None:
    """«Le rang des cartes de bas en haut est 3, 4, 5, 6, 7, 8, 9, 10, Valet, Dame, Roi, As, 2,
    Joker noir, Joker rouge.»
    """
    singles = [classify_combination([card]) for card in parse_cards(SINGLES_LOW_TO_HIGH)]
    for lower, higher in itertools.pairwise(singles):
        assert higher.beats(lower)
        assert not lower.beats(higher)


def test_two_is_highest_after_jokers() -> None:
    """«La chose inhabituelle ici est que le 2 est la carte la plus haute après les Jokers.»"""
    assert can_play(parse_cards("2H"), parse_cards("AS"))
    assert not can_play(parse_cards("2H"), parse_cards("JB"))
    assert can_play(parse_cards("JB"), parse_cards("2C"))


@pytest.mark.parametrize(
    ("cards", "kind"),
    [
        ("7H", PitsKind.SINGLE),
        ("7H 7S", PitsKind.PAIR),
        ("7H 7S 7D", PitsKind.TRIPLE),
        ("7H 7S 7D 7C", PitsKind.QUAD),
        ("4S 5H 6D", PitsKind.SEQUENCE),
        ("3S 3H 4S 4H 5S 5H", PitsKind.DOUBLE_SEQUENCE),
        ("3S 3H 3D 4S 4H 4D 5S 5H 5D", PitsKind.TRIPLE_SEQUENCE),
        ("3S 3H 3D 3C 4S 4H 4D 4C 5S 5H 5D 5C", PitsKind.QUADRUPLE_SEQUENCE),
    ],
)
def test_combinations_a_player_may_lead(cards: str, kind: PitsKind) -> None:
    """«Ce sont: une seule carte, une paire de cartes de même rang, trois cartes de même rang,
    quatre cartes de même rang, une séquence d'au moins 3 cartes (par exemple 4,5,6 [...]),
    une double séquence d'au moins 6 cartes (par exemple 3,3,4,4,5,5), une triple séquence ou une
    quadruple séquence.»
    """
    assert classify_combination(parse_cards(cards)).kind is kind
    assert verify_play(parse_cards(cards), None).kind is kind


def test_sequence_needs_three_cards_and_double_six() -> None:
    """«une séquence d'au moins 3 cartes [...], une double séquence d'au moins 6 cartes»."""
    with pytest.raises(CombinationError, match="no combination"):
        classify_combination(parse_cards("4S 5H"))
    with pytest.raises(CombinationError, match="needs at least 3 ranks"):
        classify_combination(parse_cards("3S 3H 4S 4H"), kind=PitsKind.DOUBLE_SEQUENCE)


def test_sequence_suits_may_differ() -> None:
    """«Les cartes d'une séquence ne doivent pas nécessairement avoir la même couleur.»"""
    sequence = classify_combination(parse_cards("4S 5H 6D"))
    assert sequence.kind is PitsKind.SEQUENCE
    assert sequence.natural and not sequence.one_suit


def test_two_never_part_of_a_sequence() -> None:
    """«Un 2 ne peut jamais faire partie d'une séquence.»"""
    with pytest.raises(CombinationError, match="a 2 cannot be part of a single sequence"):
        classify_combination(parse_cards("AS 2H 3D"))
    with pytest.raises(CombinationError, match="a 2 cannot be part of a single sequence"):
        classify_combination(parse_cards("KS AH 2D"))


def test_follow_same_kind_with_higher_rank() -> None:
    """«Une fois qu'un joueur a sorti une combinaison, les autres joueurs doivent essayer de jouer
    le même type de combinaison avec un rang plus élevé.»
    """
    assert can_play(parse_cards("9S 9H"), parse_cards("7S 7H"))
    with pytest.raises(IllegalPlayError, match="a triple cannot beat a pair"):
        verify_play(parse_cards("9S 9H 9D"), parse_cards("7S 7H"))
    with pytest.raises(IllegalPlayError, match="5 does not beat 7"):
        verify_play(parse_cards("5S 5H"), parse_cards("7S 7H"))


def test_pass_when_unable() -> None:
    """«Si un joueur ne peut pas jouer une combinaison de rang supérieur du même type, il doit
    dire Passer.»
    """
    state = PitsRound.deal([parse_cards("2S 4H"), parse_cards("3C 5D")])
    state = state.play(parse_cards("2S"))
    assert state.to_move == 1 and state.legal_plays() == ()
    assert state.pass_turn().to_move == 0


def test_all_pass_clears_the_table() -> None:
    """«Si aucun joueur ne peut sortir une combinaison supérieure à celle qui est sur la table,
    ils disent tous Passer et les cartes sont retirées de la table.»
    """
    state = PitsRound.deal([parse_cards("2S 4H"), parse_cards("3C 5D"), parse_cards("6C 7D")])
    state = state.play(parse_cards("2S")).pass_turn().pass_turn()
    assert state.table is None and state.passed == frozenset()


def test_last_player_leads_anything() -> None:
    """«Le joueur qui avait la dernière combinaison sur la table peut jouer ensuite et peut jouer
    n'importe quelle combinaison qu'il veut, puisque la table est maintenant vide.»
    """
    hands = [parse_cards("3S 4H 5D 6C 8H"), parse_cards("9C 3C"), parse_cards("10D")]
    state = PitsRound.deal(hands)
    state = state.play(parse_cards("3S")).play(parse_cards("9C")).pass_turn().pass_turn()
    assert state.to_move == 1 and state.leads  # player 1 made the last play
    state = PitsRound.deal(hands).play(parse_cards("3S")).pass_turn().pass_turn()
    assert state.to_move == 0 and state.leads
    assert state.play(parse_cards("4H 5D 6C")).table is not None  # a sequence after a single


def test_may_pass_even_when_able() -> None:
    """«Un joueur est autorisé à passer même s'il a des cartes qu'il pourrait jouer.»"""
    state = PitsRound.deal([parse_cards("3S 4S"), parse_cards("KC KD"), parse_cards("5H")])
    state = state.play(parse_cards("3S"))
    assert state.legal_plays()  # player 1 could beat the 3 ...
    assert state.pass_turn().to_move == 2  # ... and passes all the same


def test_once_passed_keeps_passing_until_cleared() -> None:
    """«Cependant, s'il le fait, il devra continuer à passer jusqu'à ce que les cartes actuelles
    aient été effacées de la table.»
    """
    hands = [parse_cards("3S 4S 8S"), parse_cards("KC KD"), parse_cards("5H 9H 10C")]
    state = PitsRound.deal(hands).play(parse_cards("3S")).pass_turn()  # player 1 passes
    state = state.play(parse_cards("5H"))  # player 2
    assert state.to_move == 0
    state = state.play(parse_cards("8S"))  # player 0; player 1 is skipped
    assert state.to_move == 2
    with pytest.raises(IllegalPlayError, match="player 1 has passed and must keep passing"):
        state.play(parse_cards("KC"), player=1)
    state = state.play(parse_cards("9H")).pass_turn()  # player 2 plays, player 0 passes
    assert state.table is None and state.to_move == 2 and state.passed == frozenset()
    assert state.play(parse_cards("10C")).to_move == 0  # player 0 may follow again


def test_same_rank_groups_compare_highest_card() -> None:
    """«Pour une combinaison de cartes de même rang, vous pouvez jouer une autre combinaison de
    cartes de même rang si la plus haute carte de est supérieure à la plus haute carte de la
    combinaison sur la table.»
    """
    assert can_play(parse_cards("QS QH QD"), parse_cards("JS JH JD"))
    assert not can_play(parse_cards("JS JH JD"), parse_cards("QS QH QD"))


def test_sequences_compare_top_card() -> None:
    """«Pour les séquences, vous pouvez jouer une autre séquence si la plus haute carte de votre
    séquence est supérieure à la plus haute carte de la séquence sur la table.»
    """
    assert can_play(parse_cards("5S 6H 7D"), parse_cards("4S 5H 6D"))
    message = "a sequence up to 6 does not beat a sequence up to 7"
    with pytest.raises(IllegalPlayError, match=message):
        verify_play(parse_cards("4S 5H 6D"), parse_cards("5C 6H 7D"))


def test_same_number_of_cards() -> None:
    """«Les combinaisons et les séquences doivent avoir le même nombre de cartes.»"""
    with pytest.raises(IllegalPlayError, match="a 3-card sequence cannot beat a 4-card sequence"):
        verify_play(parse_cards("JS QH KD"), parse_cards("3S 4H 5D 6C"))
    with pytest.raises(IllegalPlayError, match="a 4-card sequence cannot beat a 3-card sequence"):
        verify_play(parse_cards("JS QH KD AC"), parse_cards("3S 4H 5D"))


def test_two_is_wild_in_same_rank_groups() -> None:
    """«La carte "2" peut être utilisée en combinaison de cartes de même rang au lieu de n'importe
    quelle carte.»
    """
    triple = classify_combination(parse_cards("9S 2H 2D"))
    assert (triple.kind, triple.rank, triple.natural) == (PitsKind.TRIPLE, PitsRank.NINE, False)


def test_two_is_wild_in_double_triple_quadruple_sequences() -> None:
    """«Il peut également être utilisé en séquence double, triple et quadruple.»"""
    double = classify_combination(parse_cards("3S 3H 4S 2H 5S 5H"))
    assert (double.kind, double.rank, double.natural) == (
        PitsKind.DOUBLE_SEQUENCE,
        PitsRank.FIVE,
        False,
    )
    triple = classify_combination(parse_cards("3S 3H 3D 4S 4H 2H 5S 5H 2D"))
    assert triple.kind is PitsKind.TRIPLE_SEQUENCE
    quadruple = classify_combination(parse_cards("3S 3H 3D 3C 4S 4H 4D 2H 5S 5H 5D 2D"))
    assert quadruple.kind is PitsKind.QUADRUPLE_SEQUENCE


def test_jokers_are_wild_in_same_rank_groups() -> None:
    """«Les jokers peuvent être utilisés en combinaison de cartes de même rang au lieu de
    n'importe quelle carte.»
    """
    pair = classify_combination(parse_cards("9S JR"))
    assert (pair.kind, pair.rank, pair.natural) == (PitsKind.PAIR, PitsRank.NINE, False)


def test_jokers_are_wild_in_any_sequence() -> None:
    """«Ils peuvent également être utilisés dans n'importe quel ordre de la même manière.»
    (RULES.md: a joker may stand for any card in any sequence.)
    """
    single = classify_combination(parse_cards("5S JB 7D"))
    assert (single.kind, single.rank, single.natural) == (PitsKind.SEQUENCE, PitsRank.SEVEN, False)
    double = classify_combination(parse_cards("5S 5H JB 6D 7D 7C"))
    assert (double.kind, double.rank) == (PitsKind.DOUBLE_SEQUENCE, PitsRank.SEVEN)


def test_natural_beats_wild_between_equal_combinations() -> None:
    """«En cas de mêmes combinaisons de cartes avec le même rang ou les mêmes séquences, celles
    sans cartes "2" et Jokers (bien qu'utilisées à la place d'autres cartes uniquement) sont plus
    fortes.»
    """
    assert can_play(parse_cards("9S 9H"), parse_cards("9D 2C"))
    with pytest.raises(IllegalPlayError, match="the one without wild cards is stronger"):
        verify_play(parse_cards("9D 2C"), parse_cards("9S 9H"))
    assert can_play(parse_cards("5S 6H 7D"), parse_cards("5C JB 7H"))
    # "used in place of other cards only": a pair of 2s played as 2s is natural.
    assert can_play(parse_cards("2S 2H"), parse_cards("2D JB"))


def test_one_suit_sequence_beats_mixed_suits() -> None:
    """«Bien que la couleur ne soit pas pertinente dans ce jeu, toute séquence unique de la même
    couleur est plus forte que n'importe quelle séquence unique avec des cartes de deux couleurs
    ou plus.»
    """
    assert can_play(parse_cards("3H 4H 5H"), parse_cards("QS KD AC"))
    with pytest.raises(IllegalPlayError, match="of two or more suits does not beat"):
        verify_play(parse_cards("QS KD AC"), parse_cards("3H 4H 5H"))
    # Otherwise suits are not relevant: equal singles of two suits do not beat each other.
    assert not can_play(parse_cards("7H"), parse_cards("7S"))
    assert not can_play(parse_cards("7S 7D"), parse_cards("7H 7C"))
    assert legal_plays(parse_cards("7H 7S"), parse_cards("7D")) == ()
