"""Choose the deck profile's weight and temperature on synthetic scenes of the held-out decks.

    python benchmarks/tune_calibration.py --scenes SCENES [--models DIR] [--cache FILE.npz]

``SCENES`` is a folder written by ``handreader synth --config datasets/holdout.yaml --out SCENES
--count N`` (the held-out decks: never trained on). Real photos are never used for tuning: the
real deck in ``realdata/scans`` is the test of the result (``benchmarks/bench_calibration.py``).

Every labelled corner index of every scene is classified once (``Reader.classify`` on the scene
with the label boxes). For each deck, one calibration sample per card is set aside, like a user's
one photo per card: the largest fully visible index of that card (``--sample index``, the
default), or every labelled index of the card that index belongs to (``--sample card``: the
corners a photo of that one card would show). The profile is built from those embeddings with
``vision.calibration.new_profile`` (the code path ``handreader calibrate`` takes), and every
labelled index of the deck's other physical cards is read with and without it
(``combine_with_profile``); the rest of the card a sample comes from is left out, since it
shares the sample's scene, light and blur.

For each (weight, temperature) of the grid the table gives ``w / ((1 - w) T)`` (the weight of
cosine similarity against the classifier's log-probability: among the cards a profile has,
which wins depends on it alone, so pairs with the same value read (nearly) the same cards),
then over all decks: index accuracy before and after the profile, how many right readings the
profile made wrong ("broken") and how many wrong ones it made right ("fixed"), the mean log loss
of the labelled card before and after (how well the confidence the reader reports fits; this is
what separates pairs of the same strength), card accuracy (the card's test indices multiplied,
as the reader merges corners) before and after, and index accuracy after per deck.

Rows are sorted best first by log loss after: a proper score, it rewards right readings and
honest confidence, and being smooth it is not moved by a handful of indices the way accuracy
is, whose peak over strengths is flat. The last lines name the first row (``best``) and, for
comparison, the row of highest index accuracy.

To change the defaults (``vision.calibration.DEFAULT_WEIGHT`` and ``DEFAULT_TEMPERATURE``): run
with ``--sample index`` and ``--sample card``, check that the best pairs agree (or nearly), and
add the old pair to ``vision.calibration.RETIRED_DEFAULTS`` so that profiles saved with it read
with the new one. ``--cache`` keeps the classified crops (checked against the classifier's
sha256 and the scenes), so another grid on the same models takes seconds. ``--features
embedding+probabilities`` measures a candidate rule the product does not use (see
:func:`with_probability_features`).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from vision.calibrate_deck import CalibrationReader, model_sha
from vision.calibration import (
    DEFAULT_TEMPERATURE,
    DEFAULT_WEIGHT,
    DeckProfile,
    combine_with_profile,
    new_profile,
)

WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
TEMPERATURES = (0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2)

Combine = Callable[[NDArray[np.float32], NDArray[np.float32], DeckProfile], NDArray[np.float32]]


@dataclass(frozen=True)
class TuningSet:
    """The labelled index crops of some scenes, classified once (struct of arrays, N rows).

    ``codes`` are indices into ``CARD_CLASSES``; ``cards`` numbers the physical card (scene and
    card) an index belongs to, shared by that card's indices; ``size_px`` is the index box's
    longer side; ``visible`` the share of its area not covered.
    """

    probabilities: NDArray[np.float32]  # (N, 55)
    embeddings: NDArray[np.float32]  # (N, D)
    codes: NDArray[np.int64]  # (N,)
    decks: NDArray[np.str_]  # (N,)
    cards: NDArray[np.int64]  # (N,)
    size_px: NDArray[np.float32]  # (N,)
    visible: NDArray[np.float32]  # (N,)

    def __post_init__(self) -> None:
        count = len(self.codes)
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if len(value) != count:
                raise ValueError(
                    f"TuningSet.{field.name} has {len(value)} rows, expected {count} (codes)"
                )
        if self.probabilities.ndim != 2 or self.probabilities.shape[1] != len(CARD_CLASSES) + 1:
            raise ValueError(
                f"TuningSet.probabilities must be (N, {len(CARD_CLASSES) + 1}), "
                f"got {self.probabilities.shape}"
            )

    def save(self, path: Path, model_sha256: str, source: str) -> None:
        """Write the set to an ``.npz`` file, with the classifier's sha256 it was made with and
        a line naming the scenes (``source``)."""
        arrays = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        np.savez_compressed(
            path, model_sha256=np.array(model_sha256), source=np.array(source), **arrays
        )

    @classmethod
    def load(cls, path: Path, model_sha256: str, source: str) -> TuningSet:
        """Read a set written by :meth:`save`; refuse one made with another classifier or from
        other scenes."""
        with np.load(path) as data:
            made_with, made_from = str(data["model_sha256"]), str(data["source"])
            if made_with != model_sha256:
                raise ValueError(
                    f"cache {str(path)!r} was made with classifier {made_with[:12]!r}, "
                    f"the models have {model_sha256[:12]!r}: delete it or pass another --cache"
                )
            if made_from != source:
                raise ValueError(
                    f"cache {str(path)!r} holds {made_from!r}, not {source!r}: delete it or "
                    f"pass another --cache"
                )
            return cls(**{field.name: data[field.name] for field in dataclasses.fields(cls)})


@dataclass(frozen=True)
class Score:
    """Counts for one deck (or all) at one (weight, temperature)."""

    indices: int = 0
    right_before: int = 0
    right_after: int = 0
    broken: int = 0
    fixed: int = 0
    cards: int = 0
    cards_right_before: int = 0
    cards_right_after: int = 0
    log_loss_before: float = 0.0
    log_loss_after: float = 0.0

    def __add__(self, other: Score) -> Score:
        return Score(
            *(
                getattr(self, field.name) + getattr(other, field.name)
                for field in dataclasses.fields(self)
            )
        )

    @property
    def before(self) -> float:
        """Index accuracy without the profile."""
        return self.right_before / max(self.indices, 1)

    @property
    def after(self) -> float:
        """Index accuracy with the profile."""
        return self.right_after / max(self.indices, 1)

    @property
    def loss_before(self) -> float:
        """Mean log loss of the labelled card (card columns renormalised) without the profile."""
        return self.log_loss_before / max(self.indices, 1)

    @property
    def loss_after(self) -> float:
        """Mean log loss of the labelled card with the profile: how well the confidence the
        reader reports (and flags uncertain below a threshold) fits the truth."""
        return self.log_loss_after / max(self.indices, 1)

    @property
    def cards_before(self) -> float:
        """Card accuracy (indices of one card multiplied) without the profile."""
        return self.cards_right_before / max(self.cards, 1)

    @property
    def cards_after(self) -> float:
        """Card accuracy with the profile."""
        return self.cards_right_after / max(self.cards, 1)


def with_probability_features(tuning: TuningSet) -> TuningSet:
    """The set with each embedding extended by the square roots of its card probabilities
    (then L2-normalised): a candidate rule in which a profile also remembers what the classifier
    said of each sample, so a deck whose clubs the classifier reads as spades is matched by that
    habit. Not what the product does (its profiles hold embeddings only)."""
    roots = np.sqrt(np.clip(tuning.probabilities[:, :-1], 0, 1))
    features = np.concatenate([tuning.embeddings, roots], axis=1)
    features /= np.maximum(np.linalg.norm(features, axis=1, keepdims=True), 1e-12)
    return dataclasses.replace(tuning, embeddings=features.astype(np.float32))


def choose_calibration(tuning: TuningSet, sample: str = "index") -> NDArray[np.bool_]:
    """Which rows are calibration samples: per deck and card, its largest fully visible index
    (the most visible if none is whole), or with ``sample="card"`` every index of that card."""
    if sample not in ("index", "card"):
        raise ValueError(f"unknown calibration sample {sample!r}: use 'index' or 'card'")
    chosen = np.zeros(len(tuning.codes), bool)
    best: dict[tuple[str, int], int] = {}
    for row in range(len(tuning.codes)):
        key = (str(tuning.decks[row]), int(tuning.codes[row]))
        current = best.get(key)
        rank = (min(float(tuning.visible[row]), 1.0), float(tuning.size_px[row]))
        if current is None or rank > (
            min(float(tuning.visible[current]), 1.0),
            float(tuning.size_px[current]),
        ):
            best[key] = row
    rows = np.array(sorted(best.values()), np.int64)
    chosen[rows] = True
    if sample == "card":
        chosen = np.isin(tuning.cards, tuning.cards[rows])
    return chosen


def deck_profiles(
    tuning: TuningSet, calibration: NDArray[np.bool_], weight: float, temperature: float
) -> dict[str, DeckProfile]:
    """One profile per deck from its calibration rows (``new_profile``, then the pair)."""
    profiles = {}
    for deck in sorted(set(tuning.decks[calibration].tolist())):
        rows = np.flatnonzero(calibration & (tuning.decks == deck))
        prototypes: dict[str, list[NDArray[np.float32]]] = {}
        for row in rows:
            prototypes.setdefault(CARD_CLASSES[int(tuning.codes[row])], []).append(
                tuning.embeddings[row]
            )
        profile = new_profile(deck, prototypes, "tuning", [])
        profiles[deck] = dataclasses.replace(profile, weight=weight, temperature=temperature)
    return profiles


def _card_right(
    probabilities: NDArray[np.float32], codes: NDArray[np.int64], cards: NDArray[np.int64]
) -> tuple[int, int]:
    """How many cards, and how many read right when their indices' probabilities multiply."""
    log = np.log(probabilities[:, :-1] + 1e-9)
    _, group = np.unique(cards, return_inverse=True)
    joint = np.zeros((int(group.max()) + 1 if len(group) else 0, log.shape[1]))
    np.add.at(joint, group, log)
    truth = np.zeros(len(joint), np.int64)
    truth[group] = codes
    return len(joint), int((joint.argmax(axis=1) == truth).sum())


def _log_loss(probabilities: NDArray[np.float32], codes: NDArray[np.int64]) -> float:
    """Summed -log of the labelled card's probability among the card columns."""
    cards = probabilities[:, :-1].astype(np.float64)
    truth = cards[np.arange(len(codes)), codes] / np.maximum(cards.sum(axis=1), 1e-12)
    return float(-np.log(np.maximum(truth, 1e-9)).sum())


def evaluate(
    tuning: TuningSet,
    calibration: NDArray[np.bool_],
    weight: float,
    temperature: float,
    combine: Combine = combine_with_profile,
) -> dict[str, Score]:
    """Per deck, the test rows read without and with its profile at this weight and temperature.

    Test rows are the indices of the deck's other cards: a card whose index is a calibration
    sample is left out whole (its other corners share the sample's scene, light and blur, which
    a user's later photos do not)."""
    used = np.isin(tuning.cards, tuning.cards[calibration])
    scores = {}
    for deck, profile in deck_profiles(tuning, calibration, weight, temperature).items():
        rows = np.flatnonzero(~used & (tuning.decks == deck))
        if len(rows) == 0:
            continue
        before = tuning.probabilities[rows]
        after = combine(before, tuning.embeddings[rows], profile)
        codes = tuning.codes[rows]
        right_before = before[:, :-1].argmax(axis=1) == codes
        right_after = after[:, :-1].argmax(axis=1) == codes
        cards, cards_before = _card_right(before, codes, tuning.cards[rows])
        _, cards_after = _card_right(after, codes, tuning.cards[rows])
        scores[deck] = Score(
            len(rows),
            int(right_before.sum()),
            int(right_after.sum()),
            int((right_before & ~right_after).sum()),
            int((~right_before & right_after).sum()),
            cards,
            cards_before,
            cards_after,
            _log_loss(before, codes),
            _log_loss(after, codes),
        )
    return scores


@dataclass(frozen=True)
class GridRow:
    """One (weight, temperature) of the grid: the total and the per-deck scores."""

    weight: float
    temperature: float
    total: Score
    decks: dict[str, Score]

    @property
    def strength(self) -> float:
        """``w / ((1 - w) T)``: the weight of cosine similarity against the classifier's
        log-probability. Which of the profile's cards wins depends on this alone; how sure the
        reading is, on the pair."""
        return self.weight / max((1 - self.weight) * self.temperature, 1e-12)

    def key(self) -> tuple[float, float, int]:
        """Sort key, best first: lowest log loss after, then index accuracy, then fewest
        broken."""
        return (self.total.loss_after, -self.total.after, self.total.broken)


def grid(
    tuning: TuningSet,
    calibration: NDArray[np.bool_],
    weights: Iterable[float] = WEIGHTS,
    temperatures: Iterable[float] = TEMPERATURES,
    combine: Combine = combine_with_profile,
) -> list[GridRow]:
    """Every (weight, temperature) scored, best first (see :meth:`GridRow.key`)."""
    rows = []
    for weight, temperature in itertools.product(tuple(weights), tuple(temperatures)):
        decks = evaluate(tuning, calibration, weight, temperature, combine)
        total = sum(decks.values(), Score())
        rows.append(GridRow(weight, temperature, total, decks))
    return sorted(rows, key=GridRow.key)


def classify_scenes(reader: CalibrationReader, folder: Path, limit: int | None = None) -> TuningSet:
    """Classify every labelled index of the scenes in ``folder`` (``meta/*.json`` and
    ``images/*.jpg`` as ``handreader synth`` writes them) with ``reader.classify``."""
    from tqdm import tqdm

    from vision.imageio import load_image

    metas = sorted((folder / "meta").glob("*.json"))[:limit]
    if not metas:
        raise SystemExit(f"no scenes in {str(folder)!r} (expected meta/*.json and images/)")
    parts: dict[str, list[NDArray[np.generic]]] = {
        field.name: [] for field in dataclasses.fields(TuningSet)
    }
    card_number = 0
    for meta_path in tqdm(metas, desc="classifying labelled indices", unit="scene"):
        indices = json.loads(meta_path.read_text(encoding="utf-8"))["indices"]
        if not indices:
            continue
        image = load_image(folder / "images" / f"{meta_path.stem}.jpg")
        boxes = np.array([item["box_xyxy"] for item in indices], np.float32)
        probabilities, embeddings = reader.classify(image, boxes)
        parts["probabilities"].append(probabilities)
        parts["embeddings"].append(embeddings)
        parts["codes"].append(np.array([CARD_CLASSES.index(i["card"]) for i in indices]))
        parts["decks"].append(np.array([i["deck"] for i in indices], np.str_))
        parts["cards"].append(np.array([card_number + int(i["card_index"]) for i in indices]))
        card_number += 1 + max(int(i["card_index"]) for i in indices)
        parts["size_px"].append(np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]))
        parts["visible"].append(np.array([i["visible"] for i in indices], np.float32))
    return TuningSet(
        probabilities=np.concatenate(parts["probabilities"]).astype(np.float32),
        embeddings=np.concatenate(parts["embeddings"]).astype(np.float32),
        codes=np.concatenate(parts["codes"]).astype(np.int64),
        decks=np.concatenate(parts["decks"]).astype(np.str_),
        cards=np.concatenate(parts["cards"]).astype(np.int64),
        size_px=np.concatenate(parts["size_px"]).astype(np.float32),
        visible=np.concatenate(parts["visible"]).astype(np.float32),
    )


def format_table(rows: Sequence[GridRow], top: int | None = None) -> list[str]:
    """The grid as text lines, best first, the current defaults marked with ``*``."""
    decks = sorted(rows[0].decks) if rows else []
    head = (
        f"{'weight':>6} {'temp':>5}  {'w/(1-w)T':>8}  {'before':>6} {'after':>6} {'broken':>6} "
        f"{'fixed':>5}  {'loss':>5} {'after':>5}  {'cards':>6} {'after':>6}  "
        + " ".join(f"{deck[:10]:>10}" for deck in decks)
    )
    lines = [head]
    for row in rows[:top]:
        mark = (
            "*"
            if np.isclose(row.weight, DEFAULT_WEIGHT)
            and np.isclose(row.temperature, DEFAULT_TEMPERATURE)
            else " "
        )
        total = row.total
        lines.append(
            f"{row.weight:>6.2f} {row.temperature:>5.3f}{mark} {row.strength:>8.1f}  "
            f"{total.before:>6.4f} {total.after:>6.4f} {total.broken:>6} {total.fixed:>5}  "
            f"{total.loss_before:>5.3f} {total.loss_after:>5.3f}  "
            f"{total.cards_before:>6.4f} {total.cards_after:>6.4f}  "
            + " ".join(f"{row.decks[deck].after:>10.4f}" for deck in decks)
        )
    return lines


def _summary(label: str, row: GridRow) -> str:
    total = row.total
    return (
        f"{label}: weight {row.weight} temperature {row.temperature} (strength "
        f"{row.strength:.1f}): index accuracy {total.before:.4f} -> {total.after:.4f} "
        f"({total.broken} broken, {total.fixed} fixed), log loss {total.loss_before:.3f} -> "
        f"{total.loss_after:.3f}, cards {total.cards_before:.4f} -> {total.cards_after:.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenes", type=Path, required=True, help="a handreader synth folder")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument("--cache", type=Path, help="an .npz keeping the classified crops")
    parser.add_argument("--limit", type=int, help="use only the first N scenes")
    parser.add_argument(
        "--sample", choices=("index", "card"), default="index", help="calibration sample per card"
    )
    parser.add_argument(
        "--weights", type=float, nargs="+", default=list(WEIGHTS), help="weights tried"
    )
    parser.add_argument(
        "--temperatures",
        type=float,
        nargs="+",
        default=list(TEMPERATURES),
        help="temperatures tried",
    )
    parser.add_argument(
        "--features",
        choices=("embedding", "embedding+probabilities"),
        default="embedding",
        help="what prototypes hold: the classifier's embedding (the product), or a candidate "
        "that adds the square roots of its card probabilities",
    )
    parser.add_argument("--top", type=int, help="rows printed (default: all)")
    args = parser.parse_args()

    from vision.reader import Reader

    reader = Reader.load(args.models)
    sha = model_sha(reader.manifest)
    source = f"{args.scenes.resolve()}, first {args.limit or 'all'} scenes"
    try:
        if args.cache is not None and args.cache.exists():
            tuning = TuningSet.load(args.cache, sha, source)
        else:
            tuning = classify_scenes(reader, args.scenes, args.limit)
            if args.cache is not None:
                tuning.save(args.cache, sha, source)
    except ValueError as error:
        raise SystemExit(f"tune_calibration: {error}") from error
    calibration = choose_calibration(tuning, args.sample)
    if args.features == "embedding+probabilities":
        tuning = with_probability_features(tuning)
    rows = grid(tuning, calibration, args.weights, args.temperatures)
    decks = sorted(set(tuning.decks.tolist()))
    print(
        f"{len(tuning.codes)} labelled indices of {len(decks)} decks ({', '.join(decks)}); "
        f"{int(calibration.sum())} calibration samples ({args.sample}, {args.features}), "
        f"{int((~np.isin(tuning.cards, tuning.cards[calibration])).sum())} test indices; "
        f"classifier {sha[:12]}"
    )
    print(
        "strength w/(1-w)T; index accuracy before/after the profile; right made wrong (broken),\n"
        "wrong made right (fixed); mean log loss before/after; card accuracy before/after;\n"
        "per-deck index accuracy after. Best first; * = the current defaults."
    )
    for line in format_table(rows, args.top):
        print(line)
    print(_summary("best", rows[0]))
    print(_summary("highest accuracy", min(rows, key=lambda row: (-row.total.after, row.key()))))


if __name__ == "__main__":
    main()
