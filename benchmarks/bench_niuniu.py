"""Benchmark: score all 2,598,960 one-deck Niu Niu hands, vectorised and hand by hand.

Run: ``.venv/bin/python benchmarks/bench_niuniu.py [--profile trainer] [--sample 50000]``.

The batch API (:func:`rules.niuniu_batch.score_batch`) scores the whole enumeration; the
straightforward loop (:func:`rules.niuniu.evaluate_hand` per hand) is timed on an evenly spaced
sample of the same hands and extrapolated to the whole enumeration (the output says so). Both
answers are checked against each other on the sample, and the plain counts against the golden
figures of RULES.md. Targets: the whole enumeration under 0.5 s (>= 5 M hands/s) and
at least 30x the loop.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from rules.cards import Card, full_deck
from rules.niuniu import evaluate_hand
from rules.niuniu_batch import ONE_DECK_HANDS, all_hands, score_batch
from rules.niuniu_profiles import NIU_PROFILES, get_profile

TARGET_SECONDS = 0.5
TARGET_RATIO = 30.0
GOLDEN_NO_NIU = 872_128


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; exit status 1 when a target is missed or the answers disagree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--profile", choices=sorted(NIU_PROFILES), default="classic")
    parser.add_argument("--sample", type=int, default=50_000, help="hands for the per-hand loop")
    parser.add_argument("--repeat", type=int, default=5, help="batch runs; the best one counts")
    args = parser.parse_args(argv)
    profile = get_profile(args.profile)

    started = time.perf_counter()
    hands = all_hands()
    print(f"enumerated {len(hands):,} hands in {time.perf_counter() - started:.3f} s (not timed)")

    score_batch(hands[:1000], profile)  # warm-up
    batch_seconds = float("inf")
    for _ in range(max(1, args.repeat)):
        started = time.perf_counter()
        batch = score_batch(hands, profile)
        batch_seconds = min(batch_seconds, time.perf_counter() - started)
    batch_rate = ONE_DECK_HANDS / batch_seconds
    print(
        f"batch API : {ONE_DECK_HANDS:,} hands in {batch_seconds:.3f} s "
        f"= {batch_rate / 1e6:.1f} M hands/s (best of {args.repeat}, profile {profile.name})"
    )

    step = max(1, ONE_DECK_HANDS // args.sample)
    sample = hands[::step][: args.sample]
    deck = [card for card in full_deck() if isinstance(card, Card)]
    sample_cards = [[deck[index] for index in row] for row in sample.tolist()]
    started = time.perf_counter()
    loop_results = [evaluate_hand(cards, profile) for cards in sample_cards]
    loop_seconds = time.perf_counter() - started
    loop_rate = len(sample) / loop_seconds
    print(
        f"loop      : {len(sample):,} sampled hands (one in {step:,}) in {loop_seconds:.2f} s "
        f"= {loop_rate:,.0f} hands/s; extrapolated to all hands: "
        f"{ONE_DECK_HANDS / loop_rate:.1f} s"
    )
    ratio = batch_rate / loop_rate
    print(f"ratio     : batch is {ratio:,.0f}x the per-hand loop")

    sample_scores = batch.scores()[::step][: args.sample]
    agree = sample_scores == [hand.score for hand in loop_results]
    no_niu = int(np.count_nonzero(batch.tier == 0))
    print(f"check     : loop and batch agree on the sample: {agree}; No Niu {no_niu:,}")

    failures = []
    if not agree:
        failures.append("batch and loop disagree")
    if no_niu != GOLDEN_NO_NIU:
        failures.append(f"No Niu count {no_niu:,} != {GOLDEN_NO_NIU:,}")
    if batch_seconds > TARGET_SECONDS:
        failures.append(f"batch took {batch_seconds:.3f} s > {TARGET_SECONDS} s")
    if ratio < TARGET_RATIO:
        failures.append(f"ratio {ratio:.0f}x < {TARGET_RATIO:.0f}x")
    print("targets   : " + ("met" if not failures else "MISSED: " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
