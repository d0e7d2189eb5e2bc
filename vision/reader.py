"""Read the cards in an image: corner-index detector, then index classifier, then corner merging,
then, for a still image of at most two certain cards, the whole-card classifier.

The ONNX models and ``models/manifest.json`` ship with the project; only onnxruntime, numpy and
OpenCV are used here (no torch). A ``Reader`` holds its inference sessions (two, or three with
the optional whole-card classifier) and nothing per call, so one instance can serve many
threads at once.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES, parse_cards
from rules.decks import Deck
from vision.calibration import DeckProfile, combine_with_profile
from vision.card_evidence import doubted_by_card_face
from vision.corners import fourth_corners, joint_probabilities, other_corners, upright_turns
from vision.crops import CROP_SIZE, crop_index, crops_to_tensor
from vision.dark_faces import VideoFaces, both_ways, looked, negative, negative_boxes
from vision.decoding import deck_table, decode_cards, restricted
from vision.detections import CLASSIFIER_CLASSES, CardReading, Detections, Reading, ReadingFlag
from vision.doubted import black_suits_in_doubt, colourless, unread_letters_in_doubt
from vision.exposure import bgr_image, brightened
from vision.frame_memory import FrameMemory, MemorySettings, Recalled, box_thumbnails
from vision.index_detector import (
    IndexDetector,
    model_input,
    non_max_suppression,
    session,
    softmax,
)
from vision.index_letters import classifier_letters, deck_letters, fold_letters
from vision.model_files import ModelError, default_models_dir, file_sha256, model_paths
from vision.retries import look_again, unsure_rows
from vision.settings import ReaderSettings
from vision.verifier import IndexVerifier
from vision.whole_card import WholeCardClassifier, apply_whole_card

__all__ = [
    "CLASSIFIER_CLASSES",
    "ModelError",
    "Reader",
    "ReaderSettings",
    "apply_whole_card",
    "brightened",
    "default_models_dir",
    "file_sha256",
    "fourth_corners",
    "non_max_suppression",
    "upright_turns",
]


EMBEDDING_WIDTH = 128
"""The index classifier's embedding values per crop."""


class Reader:
    """The card reader: ``Reader.load().read(image_bgr) -> Reading``."""

    verifier: IndexVerifier | None = None
    """The index verifier, when the models include one (:meth:`verified_cards`)."""
    memory: FrameMemory | None = None
    """The readings of one video's last frame (:meth:`for_stream`); None reads each image
    on its own."""
    faces: VideoFaces | None = None
    """Which way one video's cards are printed (:meth:`for_stream`)."""

    def __init__(
        self,
        detector_path: Path,
        classifier_path: Path,
        manifest: dict[str, Any],
        settings: ReaderSettings | None = None,
        card_classifier_path: Path | None = None,
        verifier_path: Path | None = None,
        threads: int | None = None,
    ) -> None:
        self.settings = settings or ReaderSettings()
        self.manifest = manifest
        self.whole_card = (
            WholeCardClassifier(card_classifier_path, threads)
            if card_classifier_path is not None
            else None
        )
        self.verifier = IndexVerifier(verifier_path, threads) if verifier_path is not None else None
        self.detector = IndexDetector(
            detector_path, int(manifest["detector"]["imgsz"]), self.settings, threads
        )
        self._classifier = session(classifier_path, threads)
        self.index_letters = classifier_letters(manifest)
        """The letters the classifier reads, with their ranks (:mod:`vision.index_letters`)."""
        if self.settings.indices is not None:
            deck_letters(self.settings.indices)  # IndexLettersError for an unknown name
        classes = tuple(manifest["classifier"]["classes"])
        if classes != CLASSIFIER_CLASSES:
            raise ModelError(
                "classifier classes in the manifest differ from the project's label table "
                f"(expected {len(CLASSIFIER_CLASSES)} classes ending with 'none')"
            )
        metadata = self._classifier.get_modelmeta().custom_metadata_map
        if "classes" in metadata and tuple(json.loads(metadata["classes"])) != CLASSIFIER_CLASSES:
            raise ModelError(
                f"classifier {str(classifier_path)!r} names classes that differ from the "
                "project's label table"
            )
        self._classifier_input = model_input(
            self._classifier, "crops", (3, CROP_SIZE, CROP_SIZE), "classifier"
        )
        outputs = [output.name for output in self._classifier.get_outputs()]
        if outputs[:2] != ["logits", "embedding"]:
            raise ModelError(f"classifier outputs are {outputs}, expected ['logits', 'embedding']")
        if self._classifier.get_outputs()[0].shape[1] != len(CLASSIFIER_CLASSES):
            raise ModelError(
                f"classifier has {self._classifier.get_outputs()[0].shape[1]} outputs, "
                f"expected {len(CLASSIFIER_CLASSES)}"
            )

    @classmethod
    def load(
        cls,
        models_dir: Path | None = None,
        settings: ReaderSettings | None = None,
        verify_hashes: bool = True,
        threads: int | None = None,
    ) -> Reader:
        """Load the models named by ``models_dir/manifest.json``, the folder checked first
        (:func:`vision.model_files.model_paths`: ModelError; their hashes too unless
        ``verify_hashes`` is off); each model runs on ``threads`` threads (None: one a core; 1
        when several readings share the cores, as the live overlay's frames read at once do)."""
        manifest, paths = model_paths(models_dir, verify_hashes)
        return cls(
            paths["detector"],
            paths["classifier"],
            manifest,
            settings,
            card_classifier_path=paths.get("card_classifier"),
            verifier_path=paths.get("verifier"),
            threads=threads,
        )

    def with_settings(self, settings: ReaderSettings) -> Reader:
        """This reader with other settings, sharing its models (no second load)."""
        other = copy.copy(self)
        other.settings = settings
        other.detector = copy.copy(self.detector)
        other.detector.settings = settings
        return other

    def for_frames(self) -> Reader:
        """This reader as the live overlay reads video frames: one detector pass (no close-up
        or finer pass, no pass over the negative, no whole-card reading, no card-face check),
        to keep a frame's time."""
        return self.with_settings(
            dataclasses.replace(
                self.settings,
                closeups=False,
                fine=False,
                whole_card=False,
                card_evidence=False,
                dark_faces=False,
            )
        )

    def for_stream(self, settings: MemorySettings | None = None) -> Reader:
        """This reader as :meth:`for_frames`, with a memory of one video's last frame
        (:mod:`vision.frame_memory`): an index that has not changed since is neither classified
        nor verified again. One such reader (and the readers made from it by
        :meth:`with_settings`, :meth:`with_indices` and :meth:`with_deck_in_play`, which share
        its memory) serves one video; frames may be read from several threads at once. A
        video of cards printed light on dark is read in its frames' negatives from the first
        glance at them that shows more indices (:class:`vision.dark_faces.VideoFaces`), unless
        this reader's ``settings.dark_faces`` is off."""
        other = self.for_frames()
        other.memory = FrameMemory(settings)
        other.faces = VideoFaces() if self.settings.dark_faces else None
        return other

    def with_indices(self, indices: str | None) -> Reader:
        """This reader reading the index letters of the deck ``indices`` (None: the letters
        that stand for one rank in every deck; ``ReaderSettings.indices``), sharing its
        models; itself when it reads those already. IndexLettersError for an unknown name."""
        if indices is not None:
            deck_letters(indices)
            indices = indices.strip().lower()
        if indices == self.settings.indices:
            return self
        return self.with_settings(dataclasses.replace(self.settings, indices=indices))

    def with_deck_in_play(self, deck: Deck | None) -> Reader:
        """This reader decoding each photo's cards with ``deck`` in play (None: any card;
        ``ReaderSettings.in_play``), sharing its models; itself when that deck is in play."""
        if deck == self.settings.in_play:
            return self
        return self.with_settings(dataclasses.replace(self.settings, in_play=deck))

    # -- stages -------------------------------------------------------------------------------

    def prepare(self, image: NDArray[np.uint8]) -> NDArray[np.uint8]:
        """The image as :meth:`read` passes it to the stages below: brightened when dim
        (:func:`brightened`, ``ReaderSettings.exposure_target``). Code that runs
        :meth:`detect` and :meth:`classify` itself calls this first to see what read() sees."""
        return brightened(image, self.settings.exposure_target)

    def detect(self, image: NDArray[np.uint8]) -> Detections:
        """Corner-index boxes in image pixels, after NMS (see :class:`IndexDetector`)."""
        return self.detector.detect(image)

    def classify(
        self,
        image: NDArray[np.uint8],
        xyxy: NDArray[np.float32],
        recalled: Recalled | None = None,
        crops: NDArray[np.uint8] | None = None,
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Class probabilities (N, 55) and embeddings (N, 128) of the crops around the boxes
        (``crops``, when already cut: :func:`vision.crops.crop_index` of each box).

        The classifier was trained on indices at every angle; a crop it is unsure of is read
        again at other turns and cut again (:mod:`vision.retries`). The rows ``recalled``
        knows (:class:`vision.frame_memory.FrameMemory`) keep their remembered readings and
        are neither read nor read again.
        """
        if len(xyxy) == 0:
            empty = np.zeros((0, len(CLASSIFIER_CLASSES)), np.float32)
            return empty, np.zeros((0, EMBEDDING_WIDTH), np.float32)
        if crops is None:
            crops = np.stack([crop_index(image, box) for box in xyxy])
        fresh: NDArray[np.bool_] | None = None
        if recalled is None:
            probabilities, embeddings = self._run_classifier(crops)
        else:
            probabilities, embeddings = recalled.probabilities.copy(), recalled.embeddings.copy()
            fresh = ~recalled.known
            if fresh.any():
                probabilities[fresh], embeddings[fresh] = self._run_classifier(crops[fresh])
        unsure = unsure_rows(xyxy, probabilities, self.settings, fresh)
        look_again(
            self._run_classifier, image, xyxy, crops, probabilities, embeddings, unsure,
            self.settings,
        )  # fmt: skip
        return probabilities, embeddings

    def _run_classifier(
        self, crops: NDArray[np.uint8]
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        logits, embedding = self._classifier.run(
            None, {self._classifier_input: crops_to_tensor(crops)}
        )
        return softmax(logits), embedding.astype(np.float32)

    def verified_cards(
        self,
        image: NDArray[np.uint8],
        xyxy: NDArray[np.float32],
        probabilities: NDArray[np.float32],
        believed: NDArray[np.bool_] | None = None,
        dark: NDArray[np.bool_] | None = None,
        negative_image: NDArray[np.uint8] | None = None,
    ) -> list[CardReading]:
        """The cards of :meth:`merge_corners`, less those the index verifier believes none of
        the boxes of (below ``settings.verify_below`` each): their boxes are read as "none"
        and the cards are merged again. A card's boxes are shown in the order of the
        classifier's confidence, first each card's surest, then the rest of those cards whose
        surest it doubts, so most cards cost one look (a 12 MP table photo
        has a hundred boxes, most of them pips read as their own card). Uncertain cards are
        shown the same way unless ``settings.verify_uncertain`` is off. Without a verifier,
        the merged cards. With ``settings.card_evidence``, the same cards also go when none of
        their boxes has a card's face around it (:func:`vision.card_evidence.card_evidence`).
        ``believed`` (N,), when given, marks the boxes the verifier is known to believe (they
        are not shown to it again) and gets the boxes it is shown and believes marked. The boxes
        ``dark`` marks were found in ``negative_image`` (:mod:`vision.dark_faces`): both
        checks look at them there."""
        merged = self._merge(xyxy, probabilities)
        cards = [card for card, _ in merged]
        show_uncertain = self.settings.verify_uncertain
        groups = [
            boxes
            for card, boxes in merged
            if (show_uncertain or not card.uncertain)
            and not self._corroborated(boxes, probabilities)
        ]
        doubted = self._doubted_by_verifier(image, xyxy, groups, believed, dark, negative_image)
        if self.settings.card_evidence:
            kept = {id(group) for group in doubted}
            others = [group for group in groups if id(group) not in kept]
            doubted += doubted_by_card_face(image, xyxy, others, dark, negative_image)
        if not doubted:
            return cards
        probabilities = probabilities.copy()
        dropped = np.concatenate(doubted)
        probabilities[dropped] = 0.0
        probabilities[dropped, -1] = 1.0
        return self.merge_corners(xyxy, probabilities)

    def _corroborated(self, boxes: NDArray[np.intp], probabilities: NDArray[np.float32]) -> bool:
        """Whether ``settings.verify_corroborated`` spares the card of ``boxes`` (its rows, the
        surest first) the verifier and the card-face check: two or more of its boxes read for
        sure (``settings.retry_below``) as its card, a card other than a joker."""
        if not self.settings.verify_corroborated or len(boxes) < 2:
            return False
        cards = probabilities[boxes, :-1]
        code = int(cards[0].argmax())
        if CLASSIFIER_CLASSES[code] in ("JB", "JR"):
            return False  # the word "Joker" is printed on menus and score sheets, often twice
        sure = (cards.argmax(axis=1) == code) & (cards.max(axis=1) >= self.settings.retry_below)
        return int(sure.sum()) >= 2

    def _doubted_by_verifier(
        self,
        image: NDArray[np.uint8],
        xyxy: NDArray[np.float32],
        groups: list[NDArray[np.intp]],
        believed: NDArray[np.bool_] | None = None,
        dark: NDArray[np.bool_] | None = None,
        negative_image: NDArray[np.uint8] | None = None,
    ) -> list[NDArray[np.intp]]:
        """The cards' box groups none of whose boxes the index verifier believes (each card's
        surest box first, the others only for the cards it doubts); none without a verifier.
        A box ``believed`` marks is believed without a look; those it believes are marked. A box
        ``dark`` marks is looked at in ``negative_image``."""
        threshold = self.settings.verify_below
        verifier = self.verifier
        if verifier is None or threshold <= 0 or not groups:
            return []

        def probability(rows: NDArray[np.intp]) -> NDArray[np.float32]:
            marks = None if dark is None else dark[rows]
            return looked(verifier.index_probability, image, xyxy[rows], marks, negative_image)

        known = np.zeros(len(xyxy), bool) if believed is None else believed
        surest = np.array([group[0] for group in groups])
        asked = surest[~known[surest]]
        if len(asked):
            known[asked] = probability(asked) >= threshold
        doubted = [group for group in groups if not known[group[0]]]
        if not doubted:
            return []
        rest = np.concatenate([group[1:] for group in doubted])
        rest = rest[~known[rest]]
        if len(rest):
            known[rest] = probability(rest) >= threshold
        return [group for group in doubted if not known[group[1:]].any()]

    def merge_corners(
        self, xyxy: NDArray[np.float32], probabilities: NDArray[np.float32]
    ) -> list[CardReading]:
        """Group the indices of one card (same reading, close together) into one CardReading."""
        return [card for card, _ in self._merge(xyxy, probabilities)]

    def _merge(
        self, xyxy: NDArray[np.float32], probabilities: NDArray[np.float32]
    ) -> list[tuple[CardReading, NDArray[np.intp]]]:
        """:meth:`merge_corners`' cards, each with the boxes (rows of ``xyxy``) whose
        readings it joined, the surest first, then its corners read otherwise (the fourth and
        other corners: the verifier is shown them with the card, and drops them with it)."""
        settings = self.settings
        is_index = probabilities[:, -1] < settings.none_above
        rows = np.flatnonzero(is_index)
        xyxy, probabilities = xyxy[is_index], probabilities[is_index, :-1]
        if len(xyxy) == 0:
            return []
        codes = probabilities.argmax(axis=1)
        heights = np.maximum(xyxy[:, 3] - xyxy[:, 1], xyxy[:, 2] - xyxy[:, 0])
        centers = (xyxy[:, :2] + xyxy[:, 2:]) / 2
        order = np.argsort(-probabilities.max(axis=1), kind="stable")
        used = np.zeros(len(xyxy), bool)
        groups: list[list[int]] = []
        same_code = {code: order[codes[order] == code] for code in np.unique(codes).tolist()}
        for first in order:
            if used[first]:
                continue
            used[first] = True
            # no cap on the count: a card may show four indices, and the detector also fires
            # on its pips, which the classifier then reads as the card itself
            others = same_code[int(codes[first])]
            others = others[~used[others]]
            reach = settings.merge_distance * np.maximum(heights[first], heights[others])
            near = others[np.linalg.norm(centers[others] - centers[first], axis=1) <= reach]
            used[near] = True
            groups.append([int(first), *near.tolist()])  # surest first, as ``order``
        absorbed = fourth_corners(groups, codes, centers, heights) if settings.fourth_corner else {}
        failed: dict[int, list[int]] = {}  # a card's fourth corners read otherwise
        named: dict[int, list[int]] = {}  # a card's other corners' own readings
        for lone, owner in absorbed.items():
            failed.setdefault(owner, []).extend(groups[lone])
        # corners of one card are independent looks at it: multiply their probabilities
        # (a fourth corner read otherwise is a look that failed: it only adds its box)
        group_joints = [joint_probabilities(probabilities[group]) for group in groups]
        if settings.other_corner:
            # an unsure lone index at another corner of a card read for certain is that card's
            # corner: named among its readings (with ``other_corner_votes``, also a look at it)
            others_of = other_corners(
                groups,
                np.array([joint.max() for joint in group_joints]),
                probabilities.max(axis=1),
                centers,
                heights,
                sure=settings.uncertain_below,
                reach=settings.other_corner_reach,
                slant=settings.other_corner_slant,
                skip=frozenset(absorbed) | frozenset(absorbed.values()),
            )
            for lone, owner in others_of.items():
                if settings.other_corner_votes:
                    groups[owner] = groups[owner] + groups[lone]
                    group_joints[owner] = joint_probabilities(probabilities[groups[owner]])
                else:
                    failed.setdefault(owner, []).extend(groups[lone])
                absorbed[lone] = owner
                named.setdefault(owner, []).append(int(codes[groups[lone][0]]))
        kept = [number for number in range(len(groups)) if number not in absorbed]
        joints = np.stack([group_joints[number] for number in kept])
        # with a deck in play the cards are decoded together (vision.decoding), but grouped
        # by their indices' own readings as without one: grouping an index by its likeliest
        # card of the deck (in a pinochle pack, an index read 3C beside one read AC) would
        # multiply two doubtful looks into a sure one (realdata/pinochle: 4 cards read wrong
        # for certain that way, 3 this way)
        deck = settings.in_play
        if deck is None:
            bests = joints.argmax(axis=1)
            placed = np.ones(len(kept), bool)
        else:
            decoded = decode_cards(joints, deck, settings.deck_prior)
            bests, placed = decoded.codes, decoded.placed
            joints = restricted(joints, deck, settings.deck_prior)
        cards: list[tuple[CardReading, NDArray[np.intp]]] = []
        for joint, best, sure, number in zip(joints, bests.tolist(), placed, kept, strict=True):
            group = groups[number]
            if deck is None:
                ranked = np.argsort(-joint)[1:3]
            else:
                others = np.argsort(-joint, kind="stable")
                ranked = others[(others != best) & deck_table(deck).allowed[others]][:2]
            # a corner that read otherwise is named among the card's readings
            for other in named.get(number, []):
                if other != best and other not in ranked.tolist():
                    ranked = np.array([*ranked.tolist()[:1], other])
            boxes = xyxy[group + failed.get(number, [])]
            box = (
                float(boxes[:, 0].min()),
                float(boxes[:, 1].min()),
                float(boxes[:, 2].max()),
                float(boxes[:, 3].max()),
            )
            confidence = float(joint[best])
            reading = CardReading(
                code=CARD_CLASSES[best],
                confidence=confidence,
                box_xyxy=box,
                corners=len(boxes),
                uncertain=confidence < settings.uncertain_below or not sure,
                index_px=float(heights[group].max()),
                alternatives=tuple(
                    (CARD_CLASSES[int(i)], round(float(joint[i]), 4)) for i in ranked
                ),
                other_corners=tuple(
                    dict.fromkeys(CARD_CLASSES[c] for c in named.get(number, []) if c != best)
                ),
            )
            cards.append((reading, rows[group + failed.get(number, [])]))
        cards.sort(key=lambda pair: (pair[0].center_xy[0], pair[0].center_xy[1]))
        return cards

    def _with_whole_card(
        self, image: NDArray[np.uint8], cards: list[CardReading]
    ) -> list[CardReading]:
        """:func:`apply_whole_card` with the whole-card classifier's reading of the image, which
        is only run when the rule can use it (at most two certain cards)."""
        if self.whole_card is None or sum(not card.uncertain for card in cards) > 2:
            return cards
        probabilities = self.whole_card.probabilities(image)[:-1]
        deck = self.settings.in_play
        if deck is not None:
            probabilities = restricted(probabilities, deck, self.settings.deck_prior)
        return apply_whole_card(
            cards, probabilities, (image.shape[1], image.shape[0]), self.settings
        )

    def read(self, image: NDArray[np.uint8], deck: DeckProfile | None = None) -> Reading:
        """All the cards in a BGR uint8 image (H, W, 3), optionally with a calibrated deck."""
        started = time.perf_counter()
        image = self.prepare(bgr_image(image))
        memory, recalled, crops, believed = self.memory, None, None, None
        faces = self.faces if memory is not None else None
        frame = image
        image, way = faces.shown(frame) if faces is not None else (frame, False)
        if self.settings.dark_faces and memory is None:  # a glance at the photo's negative too
            detections, glanced = self.detector.detect_and_glance(image, negative)
        else:
            detections, glanced = self.detect(image), None
        if faces is not None and memory is not None and faces.due():
            other = frame if way else negative(frame)  # the frame the other way
            if faces.turn(detections, self.detector.glance(other), self.settings, way):
                memory.clear()  # what it remembers was seen the other way
                image, detections = other, self.detect(other)
        xyxy = detections.xyxy
        found, negative_image, dark = Detections.empty(), None, None  # dark: rows of the negative
        if glanced is not None and len(negative_boxes(glanced.found, detections, self.settings)[0]):
            negative_image = negative(image)  # it shows indices: look at it as at a photo
            seen = self.detector.detect_glanced(negative_image, glanced)
            found, partners = negative_boxes(seen, detections, self.settings)
        detected = time.perf_counter()
        if memory is not None:
            thumbs = box_thumbnails(image, xyxy)
            recalled = memory.recall(xyxy, thumbs, len(CLASSIFIER_CLASSES), EMBEDDING_WIDTH)
            believed = recalled.believed.copy()
            crops = np.zeros((len(xyxy), CROP_SIZE, CROP_SIZE, 3), np.uint8)
            for row in np.flatnonzero(~recalled.known):  # only the rows the classifier reads
                crops[row] = crop_index(image, xyxy[row])
        if recalled is None:
            probabilities, embeddings = self.classify(image, xyxy)
            if len(found) and negative_image is not None:  # one index read where surest
                more = self.classify(negative_image, found.xyxy)
                xyxy, probabilities, embeddings, dark = both_ways(
                    (xyxy, probabilities, embeddings), (found.xyxy, *more), partners
                )
        else:
            probabilities, embeddings = self.classify(image, xyxy, recalled, crops)
        read_probabilities = probabilities
        indices = self.settings.indices
        if indices is not None:
            probabilities = fold_letters(probabilities, indices, self.index_letters)
        if deck is not None:
            probabilities = combine_with_profile(probabilities, embeddings, deck)
        classified = time.perf_counter()
        cards = self.verified_cards(image, xyxy, probabilities, believed, dark, negative_image)
        if memory is not None and recalled is not None and believed is not None:
            memory.keep(recalled, xyxy, thumbs, read_probabilities, embeddings, believed)
        if self.whole_card is not None and self.settings.whole_card:
            whole = image  # a photo read mostly in its negative shows a deck printed light on dark
            if dark is not None and negative_image is not None and 2 * dark.sum() > len(dark):
                whole = negative_image
            cards = self._with_whole_card(whole, cards)
        if indices is not None:
            cards = unread_letters_in_doubt(cards, indices, self.index_letters)
        flags = ReadingFlag.NONE
        if len(cards) > 2 and colourless(image):  # vision.doubted
            cards, flags = black_suits_in_doubt(cards), ReadingFlag.COLOURLESS
        if any(card.uncertain for card in cards):
            flags |= ReadingFlag.LOW_CONFIDENCE
        codes = [card.code for card in cards if not card.uncertain]
        in_play = self.settings.in_play
        if (
            len(codes) != len(set(codes))
            if in_play is None
            else in_play.surplus(parse_cards(codes))
        ):
            flags |= ReadingFlag.DUPLICATE
        timings = {
            "detect": (detected - started) * 1000,
            "classify": (classified - detected) * 1000,
            "total": (time.perf_counter() - started) * 1000,
        }
        return Reading((image.shape[1], image.shape[0]), tuple(cards), flags, timings)
