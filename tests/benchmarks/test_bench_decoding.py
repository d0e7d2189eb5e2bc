"""The decoding benchmark's helpers (``benchmarks/bench_decoding.py``): the conflicting photos
it times must conflict, and its timing wrapper must time the wrapped call and pass its result."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest
from benchmark_modules import load_benchmark

from rules.decks import Deck
from vision.decoding import decode_cards


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_decoding")


def test_constructed_cards_claim_one_card_per_pair(bench: ModuleType) -> None:
    """Each pair of rows claims one card (0.6-0.99 of it), so one deck keeps half of them."""
    cards = bench.conflicting_cards(6, np.random.default_rng(0))
    assert cards.shape == (6, 54)
    assert cards.sum(axis=1) == pytest.approx(np.ones(6))
    assert cards.argmax(axis=1).tolist() == [0, 0, 1, 1, 2, 2]
    decoded = decode_cards(cards, Deck.standard())
    assert len(set(decoded.codes.tolist())) == 6


def test_the_timer_passes_results_and_counts_time(bench: ModuleType) -> None:
    bench._spent[0] = 0.0
    timed = bench._timed(lambda value: value + 1)
    assert timed(1) == 2
    assert bench._spent[0] >= 0.0
    assert bench.time_decoder(4, Deck.standard(), runs=3) >= 0.0
