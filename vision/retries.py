"""Second looks at the index crops the classifier was unsure of: other quarter turns and a
tighter cut, the surest view kept (:meth:`vision.reader.Reader.classify`).

The classifier was trained on indices at every angle: it tells a 6 from an upside-down 9 by
where the suit pip sits. A crop whose surest card is below ``settings.retry_below`` is also
shown turned by quarter turns (``settings.turns``; with four, only the two that stand its box
upright when ``settings.upright_turns``), unless a sure crop nearby reads the same card
(``settings.retry_agreeing``). With ``settings.retry_contexts`` it is also cut again with those
margins and read the same way (with ``settings.staged_retry``, only when its turns left it
unsure); its probabilities are then the mean of each cut's surest turn, and its embedding the
surest view's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from vision.corners import upright_turns
from vision.crops import CROP_CONTEXT, crop_index
from vision.settings import ReaderSettings

__all__ = ["ClassifierRun", "agreeing", "look_again", "unsure_rows"]

ClassifierRun = Callable[[NDArray[np.uint8]], tuple[NDArray[np.float32], NDArray[np.float32]]]
"""The classifier on (N, S, S, 3) crops: probabilities (N, 55) and embeddings (N, 128)."""


def unsure_rows(
    xyxy: NDArray[np.float32],
    probabilities: NDArray[np.float32],
    settings: ReaderSettings,
    candidates: NDArray[np.bool_] | None = None,
) -> NDArray[np.intp]:
    """The rows worth a second look: surest card below ``settings.retry_below`` and "none"
    below ``settings.retry_none_below``, among ``candidates`` (None: every row), less those a
    sure crop nearby reads alike unless ``settings.retry_agreeing``."""
    wanted = (probabilities[:, :-1].max(axis=1) < settings.retry_below) & (
        probabilities[:, -1] < settings.retry_none_below
    )
    if candidates is not None:
        wanted &= candidates
    rows = np.flatnonzero(wanted)
    if len(rows) and not settings.retry_agreeing:
        rows = rows[~agreeing(xyxy, probabilities, rows, settings)]
    return rows


def agreeing(
    xyxy: NDArray[np.float32],
    probabilities: NDArray[np.float32],
    rows: NDArray[np.intp],
    settings: ReaderSettings,
) -> NDArray[np.bool_]:
    """For each of ``rows``, whether a crop read for sure (``settings.retry_below``) as the
    same card lies within ``settings.merge_distance`` of it (the reach of one card's indices
    in :meth:`vision.reader.Reader.merge_corners`)."""
    cards = probabilities[:, :-1]
    codes = cards.argmax(axis=1)
    sure = np.flatnonzero(cards.max(axis=1) >= settings.retry_below)
    found = np.zeros(len(rows), bool)
    if len(sure) == 0:
        return found
    sides = np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1])
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    for number, row in enumerate(rows.tolist()):
        same = sure[codes[sure] == codes[row]]
        if len(same):
            reach = settings.merge_distance * np.maximum(sides[same], sides[row])
            distance = np.linalg.norm(centres[same] - centres[row], axis=1)
            found[number] = bool((distance <= reach).any())
    return found


def look_again(
    run: ClassifierRun,
    image: NDArray[np.uint8],
    xyxy: NDArray[np.float32],
    crops: NDArray[np.uint8],
    probabilities: NDArray[np.float32],
    embeddings: NDArray[np.float32],
    unsure: NDArray[np.intp],
    settings: ReaderSettings,
) -> None:
    """Read the crops of the rows ``unsure`` again (see the module docstring) and write their
    new probabilities and embeddings into ``probabilities`` and ``embeddings``."""
    turns = max(1, settings.turns)
    if len(unsure) == 0 or (turns == 1 and not settings.retry_contexts):
        return
    cuts = [crops[unsure]] + [
        np.stack([crop_index(image, xyxy[i], context=CROP_CONTEXT * share) for i in unsure])
        for share in settings.retry_contexts
    ]
    count = len(unsure)
    shown = np.ones((len(cuts), turns, count), bool)  # which views of each crop are read
    if turns == 4 and settings.upright_turns:
        shown[:] = upright_turns(xyxy[unsure])
        shown[0, 0] = True  # the first look, already read, stays a candidate
    seen = np.zeros((len(cuts), turns, count, probabilities.shape[1]), np.float32)
    seen_embeddings = np.zeros((len(cuts), turns, count, embeddings.shape[1]), np.float32)
    seen[0, 0], seen_embeddings[0, 0] = probabilities[unsure], embeddings[unsure]

    def look(wanted: NDArray[np.bool_]) -> None:
        views = [(c, k, j) for c, k, j in zip(*np.nonzero(wanted), strict=True) if c or k]
        if not views:
            return
        more, more_embeddings = run(np.stack([np.rot90(cuts[c][j], k) for c, k, j in views]))
        at = tuple(np.array(views).T)
        seen[at], seen_embeddings[at] = more, more_embeddings

    if settings.staged_retry and len(cuts) > 1:
        first = shown.copy()
        first[1:] = False
        look(first)  # the other turns of the first cut
        settled = (
            np.where(first[0], seen[0, ..., :-1].max(axis=2), -1.0).max(axis=0)
            >= settings.retry_below
        )
        shown[1:, :, settled] = False  # a crop the turns settled is not cut again
        look(shown & ~first)
    else:
        look(shown)
    sureness = np.where(shown, seen[..., :-1].max(axis=3), -1.0)  # (cuts, turns, crops)
    best_turn = sureness.argmax(axis=1)  # (cuts, crops)
    columns = np.arange(count)
    surest = np.stack([seen[c, best_turn[c], columns] for c in range(len(cuts))])
    cut_shown: NDArray[np.bool_] = np.asarray(shown.any(axis=1))  # (cuts, crops): read in
    weights = cut_shown[..., None].astype(np.float32)
    probabilities[unsure] = (surest * weights).sum(axis=0) / weights.sum(axis=0)
    flat = sureness.reshape(len(cuts) * turns, count).argmax(axis=0)
    embeddings[unsure] = seen_embeddings.reshape(len(cuts) * turns, count, -1)[flat, columns]
