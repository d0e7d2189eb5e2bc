"""Zheng Shangyou / Pits (seed 001, RULES.md section 2): the public face of the rules engine.

- ``classify_combination`` / ``combination_readings``: read cards as a combination
  (``rules.pits_combos``, where the wild-card and reading choices are documented).
- ``verify_play`` / ``can_play``: may a play go on the table, and why not (``rules.pits_beats``).
- ``legal_plays``: every distinct combination a hand may play (``rules.pits_plays``).
- ``PitsRound``: a round as frozen states, passing and clearing the table (``rules.pits_round``).
- ``PitsRules``: the options, defaults being the product's choices.
"""

from __future__ import annotations

from rules.pits_beats import Playable, can_play, play_readings, verify_play, why_not
from rules.pits_combos import (
    DEFAULT_PITS_RULES,
    Combination,
    CombinationError,
    MixedWildRank,
    PitsKind,
    PitsRank,
    PitsRoundEnd,
    PitsRules,
    classify_combination,
    combination_readings,
    pits_rank,
    sort_pits_cards,
)
from rules.pits_plays import legal_plays
from rules.pits_round import PitsRound

__all__ = [
    "DEFAULT_PITS_RULES",
    "Combination",
    "CombinationError",
    "MixedWildRank",
    "PitsKind",
    "PitsRank",
    "PitsRound",
    "PitsRoundEnd",
    "PitsRules",
    "Playable",
    "can_play",
    "classify_combination",
    "combination_readings",
    "legal_plays",
    "pits_rank",
    "play_readings",
    "sort_pits_cards",
    "verify_play",
    "why_not",
]
