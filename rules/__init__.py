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

from rules.niuniu import (
    NiuHand,
    NiuSplit,
    Outcome,
    Ranking,
    banker_outcome,
    compare_hands,
    evaluate_hand,
    rank_hands,
    score_hand,
)
from rules.niuniu_batch import NiuBatch, all_hands, compare_batch, hands_to_indices, score_batch
from rules.niuniu_profiles import (
    DEFAULT_PROFILE,
    MULTIPLIER_TABLES,
    NIU_PROFILES,
    BetRule,
    BetType,
    MultiplierTable,
    NiuProfile,
    NiuScore,
    TieBreak,
    TieRule,
    get_profile,
    get_table,
)
from rules.settlement import RoundResult, Settlement, play_round, settle

__all__ += [
    "DEFAULT_PROFILE",
    "MULTIPLIER_TABLES",
    "NIU_PROFILES",
    "BetRule",
    "BetType",
    "MultiplierTable",
    "NiuBatch",
    "NiuHand",
    "NiuProfile",
    "NiuScore",
    "NiuSplit",
    "Outcome",
    "Ranking",
    "RoundResult",
    "Settlement",
    "TieBreak",
    "TieRule",
    "all_hands",
    "banker_outcome",
    "compare_batch",
    "compare_hands",
    "evaluate_hand",
    "get_profile",
    "get_table",
    "hands_to_indices",
    "play_round",
    "rank_hands",
    "score_batch",
    "score_hand",
    "settle",
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
