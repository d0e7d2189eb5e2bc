"""Score readings against labelled photos (manifests of JSON lines, one photo a line).

A manifest is JSON lines: ``{"image": "file.jpg", "cards": ["10H", "K?", "JOKER"], ...}``.
``"K?"`` is a rank without its suit (matched by rank only); ``"JOKER"`` a joker of either colour.
An entry may also list ``"optional"`` cards: cards that show only in part (in the synthetic
scenes, a card none of whose indices is labelled but one of which shows, see
:func:`scenes_manifest`). Reading one is neither required nor counted wrong, as a "difficult"
object in PASCAL VOC. Only cards read with confidence count as answers: an uncertain card is
reported, not guessed.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES

if TYPE_CHECKING:
    from vision.detections import Reading

__all__ = [
    "LABELS",
    "EvalTotals",
    "ManifestEntry",
    "confusion_image",
    "drop_optional",
    "f1_score",
    "load_manifest",
    "manifest_lines",
    "match_cards",
    "optional_cards",
    "scenes_manifest",
    "score_manifest",
]


@dataclass(frozen=True)
class ManifestEntry:
    """One labelled photo."""

    image: Path
    cards: tuple[str, ...]
    split: str | None = None
    optional: tuple[str, ...] = ()
    """Cards that may be read or not (they show only in part)."""


_RANK_LABELS = frozenset(code[:-1] + "?" for code in CARD_CLASSES)
LABELS = frozenset(CARD_CLASSES) | _RANK_LABELS | {"JOKER"}
"""What a manifest may label a card: its code (``10H``, ``JB``), its rank alone (``K?``, the
suit not shown) or ``JOKER`` (either joker)."""


def _label_problem(cards: object, name: str) -> str | None:
    """Why ``cards`` is no list of card labels (None when it is one)."""
    if not isinstance(cards, list) or not all(isinstance(card, str) for card in cards):
        return f"{name!r} must be a list of card codes, got {cards!r}"
    unknown = [card for card in cards if card not in LABELS]
    if unknown:
        named = ", ".join(map(repr, unknown))
        return f"{name!r} holds {named}: not a card code, a rank and ?, or JOKER"
    return None


def _pixel_number(value: object) -> bool:
    """Whether ``value`` is a finite number a float holds (a JSON whole number past the
    largest double is none)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _objects_problem(objects: object) -> str | None:
    """Why ``objects`` (a row's labelled boxes) is no list of objects each with a
    ``box_xyxy`` of four finite pixel numbers (None when it is one)."""
    if not isinstance(objects, list):
        return f"'objects' must be a list, got {objects!r}"
    for number, item in enumerate(objects, start=1):
        if not isinstance(item, dict) or "box_xyxy" not in item:
            return f"object {number} has no 'box_xyxy'"
        box = item["box_xyxy"]
        numbers = isinstance(box, list) and len(box) == 4
        if not numbers or not all(map(_pixel_number, box)):
            wanted = "four numbers [x1, y1, x2, y2]"
            return f"object {number}'s 'box_xyxy' must be {wanted}, got {box!r}"
    return None


def manifest_lines(path: Path) -> list[str]:
    """The lines of a manifest: UTF-8 text, a byte-order mark at its start allowed (a file
    saved by a Windows editor); ValueError naming the file when it is not UTF-8."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}: not UTF-8 text (byte 0x{data[error.start]:02x} at position {error.start})"
        ) from None
    return text.splitlines()


def load_manifest(path: Path, split: str | None = None) -> list[ManifestEntry]:
    """The entries of a JSON-lines manifest (images relative to its folder), maybe one split;
    ValueError names a line that is no entry, labels a card with no code of :data:`LABELS` or
    gives ``objects`` without a ``box_xyxy`` of four numbers each (the object's number named),
    both lines of a photo named twice (whatever their splits), or a file that is not UTF-8
    text (:func:`manifest_lines`)."""
    entries = []
    first_line: dict[str, int] = {}  # each photo's line, by its path as normalised
    for number, line in enumerate(manifest_lines(path), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            image, cards = raw["image"], raw["cards"]
            optional = raw.get("optional", [])
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise ValueError(f"{path}: line {number} is not a manifest entry: {error}") from error
        problem = _label_problem(cards, "cards") or _label_problem(optional, "optional")
        if problem is None and "objects" in raw:
            problem = _objects_problem(raw["objects"])
        if problem is not None or not isinstance(image, str):
            problem = problem or f"'image' must be a file name, got {image!r}"
            raise ValueError(f"{path}: line {number}: {problem}")
        seen = first_line.setdefault(os.path.normpath(image), number)
        if seen != number:
            raise ValueError(
                f"{path}: lines {seen} and {number} both name the photo {image!r} "
                "(a photo is listed once)"
            )
        if split is not None and raw.get("split") != split:
            continue
        entries.append(
            ManifestEntry(path.parent / image, tuple(cards), raw.get("split"), tuple(optional))
        )
    return entries


def _rank(code: str) -> str:
    return code[:-1]


def match_cards(
    truth: Sequence[str], predicted: Sequence[str]
) -> tuple[int, list[tuple[str, str]]]:
    """Matched count and the confusions (truth, predicted) between two card lists.

    Exact codes match first, then rank-only labels (``"K?"``) by rank, then ``"JOKER"`` with
    either joker; left-overs are paired in order as confusions (a truth with no partner pairs
    with ``"-"``, i.e. missed; a prediction with none pairs as ``("-", code)``, i.e. extra).
    """
    left_truth = list(truth)
    left_pred = list(predicted)
    matched = 0
    for rule in ("exact", "rank", "joker"):
        for label in list(left_truth):
            for guess in left_pred:
                ok = (
                    (rule == "exact" and label == guess)
                    or (rule == "rank" and label.endswith("?") and _rank(label) == _rank(guess))
                    or (rule == "joker" and label == "JOKER" and guess in ("JB", "JR"))
                )
                if ok:
                    left_truth.remove(label)
                    left_pred.remove(guess)
                    matched += 1
                    break
    confusions = []
    for i in range(max(len(left_truth), len(left_pred))):
        confusions.append(
            (
                left_truth[i] if i < len(left_truth) else "-",
                left_pred[i] if i < len(left_pred) else "-",
            )
        )
    return matched, confusions


def drop_optional(
    truth: Sequence[str], predicted: Sequence[str], optional: Sequence[str]
) -> tuple[list[str], int]:
    """``predicted`` less the readings of ``optional`` cards (each at most once) among those
    that match no ``truth`` card, and how many were dropped."""
    _, confusions = match_cards(truth, predicted)
    spare = list(optional)
    kept = list(predicted)
    for _, guess in confusions:
        if guess != "-" and guess in spare:
            spare.remove(guess)
            kept.remove(guess)
    return kept, len(predicted) - len(kept)


def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall (0 when both are 0)."""
    total = precision + recall
    return 2 * precision * recall / total if total else 0.0


@dataclass
class EvalTotals:
    """Running totals over photos."""

    photos: int = 0
    exact_photos: int = 0
    truth_cards: int = 0
    predicted_cards: int = 0
    matched: int = 0
    uncertain: int = 0
    failed: int = 0
    single_photos: int = 0
    top1_right: int = 0
    optional_read: int = 0
    """Certain readings of optional cards, left out of the figures."""
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(
        self,
        truth: Sequence[str],
        predicted: Sequence[str],
        uncertain: int = 0,
        surest: str | None = None,
        optional: Sequence[str] = (),
    ) -> None:
        """Add one photo's labels and certain predictions.

        ``surest`` is the most confident card read, certain or not: on photos of one labelled
        card it gives the top-1 accuracy (the classifier's own answer, as for a crop dataset).
        A prediction left over after matching ``truth`` that names one of the ``optional``
        cards (each once) is dropped: neither a match nor an extra card.
        """
        if len(truth) == 1:
            self.single_photos += 1
            self.top1_right += int(surest is not None and match_cards(truth, [surest])[0] == 1)
        if optional:
            predicted, dropped = drop_optional(truth, predicted, optional)
            self.optional_read += dropped
        matched, confusions = match_cards(truth, predicted)
        self.photos += 1
        self.truth_cards += len(truth)
        self.predicted_cards += len(predicted)
        self.matched += matched
        self.uncertain += uncertain
        self.exact_photos += int(matched == len(truth) == len(predicted))
        self.confusions.update(confusions)

    def add_reading(self, entry: ManifestEntry, reading: Reading) -> None:
        """Add one photo as the reader read it: its certain cards are the answers, its uncertain
        ones are counted, its most confident card (certain or not) gives the top-1."""
        certain = [card.code for card in reading.cards if not card.uncertain]
        surest = max(reading.cards, key=lambda card: card.confidence, default=None)
        self.add(
            entry.cards,
            certain,
            sum(card.uncertain for card in reading.cards),
            surest.code if surest else None,
            entry.optional,
        )

    def add_unreadable(self, entry: ManifestEntry) -> None:
        """Add a photo that could not be decoded: failed, and every labelled card missed."""
        self.failed += 1
        self.add(entry.cards, [])

    @property
    def precision(self) -> float:
        """Share of certain predictions that are right."""
        return self.matched / self.predicted_cards if self.predicted_cards else 0.0

    @property
    def wrong(self) -> int:
        """Certain predictions that match no labelled card: cards misread, or read where none
        is (the readings of optional cards left out)."""
        return self.predicted_cards - self.matched

    @property
    def recall(self) -> float:
        """Share of labelled cards read right."""
        return self.matched / self.truth_cards if self.truth_cards else 0.0

    @property
    def top1(self) -> float | None:
        """Share of one-card photos whose most confident reading is the card (None if none)."""
        return self.top1_right / self.single_photos if self.single_photos else None

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        return f1_score(self.precision, self.recall)

    def summary(self, top: int = 10) -> dict[str, object]:
        """The figures as a JSON-able dict."""
        return {
            "photos": self.photos,
            "failed": self.failed,
            "cards": self.truth_cards,
            "predicted": self.predicted_cards,
            "uncertain": self.uncertain,
            "wrong": self.wrong,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "exact_photos": round(self.exact_photos / self.photos, 4) if self.photos else 0.0,
            "one_card_photos": self.single_photos,
            "top1": None if self.top1 is None else round(self.top1, 4),
            "optional_read": self.optional_read,
            "confusions": [[t, p, n] for (t, p), n in self.confusions.most_common(top)],
        }


def confusion_image(
    confusions: Iterable[tuple[tuple[str, str], int]], cell: int = 14
) -> NDArray[np.uint8]:
    """A confusion-matrix picture (truth rows, prediction columns) of the non-matching pairs."""
    labels = [*CARD_CLASSES, "-"]
    extra = sorted({t for (t, _), _ in confusions if t not in labels} | set())
    labels += extra
    position = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), np.float32)
    for (truth, predicted), count in confusions:
        if truth in position and predicted in position:
            matrix[position[truth], position[predicted]] += count
    margin = 40
    size = margin + cell * len(labels)
    image = np.full((size, size, 3), 255, np.uint8)
    peak = max(float(matrix.max()), 1.0)
    for row in range(len(labels)):
        for column in range(len(labels)):
            value = matrix[row, column]
            if value:
                shade = int(255 * (1 - value / peak))
                y, x = margin + row * cell, margin + column * cell
                cv2.rectangle(image, (x, y), (x + cell - 1, y + cell - 1), (shade, shade, 255), -1)
    for i, label in enumerate(labels):
        cv2.putText(
            image,
            label,
            (2, margin + i * cell + cell - 3),
            cv2.FONT_HERSHEY_PLAIN,
            0.7,
            (0, 0, 0),
            1,
        )
        cv2.putText(
            image,
            label[:3],
            (margin + i * cell, 12 + (i % 3) * 9),
            cv2.FONT_HERSHEY_PLAIN,
            0.6,
            (0, 0, 0),
            1,
        )
    return image


def score_manifest(
    entries: Sequence[ManifestEntry],
    read: Callable[[NDArray[np.uint8]], Reading],
    progress: str | None = None,
    unreadable: Callable[[ManifestEntry, Exception], None] | None = None,
) -> EvalTotals:
    """Read every entry's photo with ``read`` and add it to new totals; a photo that cannot be
    decoded counts as failed (and is given to ``unreadable`` with its error). Photos are
    decoded as ``handreader read`` decodes them (:func:`vision.imageio.load_reduced`: upright,
    a huge one reduced on decoding). ``progress`` names a progress bar (None: no bar)."""
    from tqdm import tqdm

    from vision.imageio import ImageError, load_reduced

    totals = EvalTotals()
    for entry in tqdm(entries, desc=progress, unit="photo", leave=False, disable=progress is None):
        try:
            image = load_reduced(entry.image).image
        except ImageError as error:
            totals.add_unreadable(entry)
            if unreadable is not None:
                unreadable(entry, error)
            continue
        totals.add_reading(entry, read(image))
    return totals


def optional_cards(meta: dict[str, Any], legible_only: bool = False) -> list[str]:
    """The cards of a synthetic scene's metadata that show only through unlabelled indices
    (its "partial" ones), one code per physical card, sorted. With ``legible_only``, also the
    cards whose labelled indices are all too small or too hidden for a person to read (their
    ``legible`` key false; a scene written before the key existed counts every labelled index
    as legible)."""
    required = {
        int(item["card_index"])
        for item in meta["indices"]
        if not legible_only or item.get("legible", True)
    }
    optional: dict[int, str] = {}
    shown = (
        [*meta["indices"], *meta.get("partial", [])] if legible_only else meta.get("partial", [])
    )
    for item in shown:
        if int(item["card_index"]) not in required:
            optional[int(item["card_index"])] = str(item["card"])
    return sorted(optional.values())


def scenes_manifest(
    scene_dir: Path, out: Path, limit: int | None = None, legible_only: bool = False
) -> Path:
    """A manifest of synthetic scenes (``training.synth.generate``): the cards with a visible index.

    A card counts when at least one of its indices is labelled (on top, inside the frame, big
    enough); one card per physical card, so a two-deck scene may list a code twice. A card
    none of whose indices is labelled but one of which shows in part (the scene's "partial"
    indices) is listed as ``optional``. With ``legible_only``, a card counts only when one of
    its labelled indices is legible (a person reads it: ``SceneConfig.legibility``), and a
    card labelled only where it is not is ``optional`` too. With ``limit``, only the first
    ``limit`` scenes (in the order of their file names) are listed. ``out`` must lie in a
    folder beside ``images/`` (``scene_dir/manifest/``): the images are named relative to it.
    """
    lines = []
    for meta_path in sorted((scene_dir / "meta").glob("*.json"))[:limit]:
        meta = json.loads(meta_path.read_text())
        cards: dict[int, str] = {}
        for item in meta["indices"]:
            if not legible_only or item.get("legible", True):
                cards[int(item["card_index"])] = str(item["card"])
        image = Path("..") / "images" / f"{meta_path.stem}.jpg"
        row: dict[str, object] = {"image": str(image), "cards": sorted(cards.values())}
        optional = optional_cards(meta, legible_only)
        if optional:
            row["optional"] = optional
        lines.append(json.dumps(row))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out
