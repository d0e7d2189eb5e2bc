"""handreader's rules engine: cards, Niu Niu, Zheng Shangyou / Pits and the other casino games."""

from rules.cards import CARD_CLASSES, AnyCard, Card, Joker, Rank, Suit, parse_card, parse_cards
from rules.errors import CardError, HandError, IllegalPlayError, ProfileError, RulesError

__all__ = [
    "CARD_CLASSES",
    "AnyCard",
    "Card",
    "CardError",
    "HandError",
    "IllegalPlayError",
    "Joker",
    "ProfileError",
    "Rank",
    "RulesError",
    "Suit",
    "parse_card",
    "parse_cards",
]

from rules.pits import (
    DEFAULT_PITS_RULES,
    Combination,
    CombinationError,
    MixedWildRank,
    PitsKind,
    PitsRank,
    PitsRound,
    PitsRoundEnd,
    PitsRules,
    can_play,
    classify_combination,
    combination_readings,
    legal_plays,
    verify_play,
)

__all__ += [
    "DEFAULT_PITS_RULES",
    "Combination",
    "CombinationError",
    "MixedWildRank",
    "PitsKind",
    "PitsRank",
    "PitsRound",
    "PitsRoundEnd",
    "PitsRules",
    "can_play",
    "classify_combination",
    "combination_readings",
    "legal_plays",
    "verify_play",
]
