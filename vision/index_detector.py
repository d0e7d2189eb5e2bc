"""The corner-index detector alone: an ONNX YOLO model with one class, letterbox in, boxes out.

Used by :class:`vision.reader.Reader`, and on its own where only the indices' places matter
(finding the indices of labelled card photos for training). Stateless after loading.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import Detections
from vision.letterbox import PAD_VALUE, Letterbox, letterbox
from vision.model_files import ModelError
from vision.settings import PANORAMA, ReaderSettings

__all__ = ["Glance", "IndexDetector", "ModelError", "box_iou", "non_max_suppression", "session"]


STRIDE = 32
"""The detector's largest stride (YOLOv8): its input sides must be multiples of it."""

TILE_SHARE = 0.6
"""A large photo's four overlapping tiles are each this share of its width and height."""
WIDE_PIXELS = 4.0
"""A large panorama is shrunk to at most this many times the pixels of a 4:3 photo of its
length (:meth:`IndexDetector._shrunk`): it is read at up to four times the cost."""


def box_iou(
    box: NDArray[np.floating[Any]], boxes: NDArray[np.floating[Any]]
) -> NDArray[np.float64]:
    """Intersection over union of one (x1, y1, x2, y2) box with each of (N, 4) boxes; ``box``
    may also be (4, M, 1) coordinates and ``boxes`` (1, N, 4), for the (M, N) overlaps."""
    ix = np.clip(np.minimum(box[2], boxes[..., 2]) - np.maximum(box[0], boxes[..., 0]), 0, None)
    iy = np.clip(np.minimum(box[3], boxes[..., 3]) - np.maximum(box[1], boxes[..., 1]), 0, None)
    inter = ix * iy
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    result: NDArray[np.float64] = inter / (area + areas - inter + 1e-9)
    return result


def non_max_suppression(
    xyxy: NDArray[np.float32], scores: NDArray[np.float32], iou: float
) -> NDArray[np.int64]:
    """Indices of the boxes kept by greedy NMS, best score first: a box goes when it overlaps
    a kept, better one by more than ``iou``. The overlaps are computed at once, one row of
    them per box (:func:`box_iou`'s arithmetic, so the same boxes are kept)."""
    order = np.argsort(-scores, kind="stable")
    boxes = xyxy[order]
    overlaps = box_iou(boxes.T[:, :, None], boxes[None])  # (N, N): row i is box i's
    removed = np.zeros(len(order), bool)
    keep: list[int] = []
    for i in range(len(order)):
        if removed[i]:
            continue
        keep.append(int(order[i]))
        removed[i + 1 :] |= overlaps[i, i + 1 :] > iou
    return np.array(keep, np.int64)


def session(path: Path, threads: int | None = None) -> Any:
    """An onnxruntime CPU session for the model at ``path``, its operators run on ``threads``
    threads (None: one a core); ModelError if it cannot load."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    if threads is not None:
        options.intra_op_num_threads = threads
    # idle worker threads sleep instead of spinning: on a small machine shared with the video
    # decoder, the web server or other readers, spinning threads steal the cores they wait for
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own exception types
        raise ModelError(f"cannot load model {str(path)!r}: {error}") from error


def model_input(model: Any, name: str, shape: tuple[int, int, int], what: str) -> str:
    """The name of an onnxruntime session's first input, checked to be ``name`` of shape
    (N, *shape); ModelError naming ``what`` otherwise."""
    first = model.get_inputs()[0]
    if first.name != name or list(first.shape[1:]) != list(shape):
        expected = ", ".join(str(side) for side in shape)
        raise ModelError(
            f"{what} input is {first.name} {first.shape}, expected {name} [N, {expected}]"
        )
    return str(first.name)


def softmax(logits: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
    """Row-wise probabilities (N, C) from a classifier's logits (N, C)."""
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities: NDArray[np.float32] = (shifted / shifted.sum(axis=1, keepdims=True)).astype(
        np.float32
    )
    return probabilities


def _union(first: Detections, second: Detections, iou: float) -> Detections:
    """``first``'s boxes, then those of ``second`` that overlap none of them by more than
    ``iou``: a second reading of one image adds what the first missed and replaces nothing."""
    if not len(first):
        return second
    overlaps = box_iou(second.xyxy.T[:, :, None], first.xyxy[None])  # (len(second), len(first))
    new = overlaps.max(axis=1) <= iou
    return Detections(
        np.concatenate([first.xyxy, second.xyxy[new]]).astype(np.float32),
        np.concatenate([first.confidence, second.confidence[new]]).astype(np.float32),
        np.concatenate([first.class_id, second.class_id[new]]),
    )


def _clip(xyxy: NDArray[np.float32], width: int, height: int) -> NDArray[np.float32]:
    """Boxes (N, 4) clipped to an image of ``width`` x ``height``, in place."""
    xyxy[:, [0, 2]] = xyxy[:, [0, 2]].clip(0, width)
    xyxy[:, [1, 3]] = xyxy[:, [1, 3]].clip(0, height)
    return xyxy


@dataclass(frozen=True, eq=False, slots=True)
class Glance:
    """A glance at another view of an image (:meth:`IndexDetector.detect_and_glance`): the
    boxes found, in image pixels, and the view they were found in, ``factor`` times smaller
    than the image (at the image's own size, factor 1, when it is not large)."""

    found: Detections
    small: NDArray[np.uint8]
    factor: float


class IndexDetector:
    """``IndexDetector(path, imgsz, settings).detect(image_bgr) -> Detections``."""

    def __init__(
        self,
        path: Path,
        imgsz: int,
        settings: ReaderSettings | None = None,
        threads: int | None = None,
    ) -> None:
        self.settings = settings or ReaderSettings()
        self._session = session(path, threads)
        self._input = self._session.get_inputs()[0].name
        shape = self._session.get_inputs()[0].shape
        self.dynamic = not isinstance(shape[2], int)
        """Whether the model takes any input size (then small indices get a finer pass)."""
        self.size = imgsz if self.dynamic else int(shape[2])
        metadata = self._session.get_modelmeta().custom_metadata_map
        names = ast.literal_eval(metadata["names"]) if "names" in metadata else None
        if names is not None and names != {0: "index"}:
            raise ModelError(f"detector {str(path)!r} has classes {names}, expected {{0: 'index'}}")

    def input_tensor(
        self, image: NDArray[np.uint8], size: int | None = None
    ) -> tuple[NDArray[np.float32], Letterbox]:
        """The network's input for ``image`` at ``size`` (default: the detector's), and the
        transform back: a network that takes any size gets the image padded only to a multiple
        of its stride when ``settings.rect_input``, else to a square."""
        stride = STRIDE if self.dynamic and self.settings.rect_input else 0
        return letterbox(image, size or self.size, stride)

    def _detect_once(
        self,
        image: NDArray[np.uint8],
        offset: tuple[float, float] = (0.0, 0.0),
        size: int | None = None,
    ) -> Detections:
        tensor, transform = self.input_tensor(image, size)
        output = self._session.run(None, {self._input: tensor})[0][0]  # (5, anchors)
        scores = output[4]
        keep = scores >= self.settings.detection_threshold
        if not keep.any():
            return Detections.empty()
        cx, cy, w, h = output[0][keep], output[1][keep], output[2][keep], output[3][keep]
        xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1).astype(np.float32)
        xyxy = transform.to_image(xyxy)
        xyxy[:, [0, 2]] += offset[0]
        xyxy[:, [1, 3]] += offset[1]
        confidence = scores[keep].astype(np.float32)
        return Detections(xyxy, confidence, np.zeros(len(confidence), np.int64))

    def detect(self, image: NDArray[np.uint8]) -> Detections:
        """Corner-index boxes in image pixels, after NMS.

        The whole image is read; a large photo (longer side above ``tile_above_px``) that is
        not a close-up is also read at a finer scale, the one at which four overlapping tiles
        (each 0.6 of its width and height) fill the network's input: in one pass when the
        network takes any input size, else as those four tiles. A large photo is first shrunk
        once, to that scale (:meth:`_shrunk`): every pass sees it at that scale or coarser.

        A close-up (no index found, or one as big as ``closeup_index_share`` of the image's
        shorter side, and found about as surely as the smaller ones, ``closeup_surest_share``:
        a card filling the frame) is read again inside a grey margin, and that
        second reading is the answer (unless ``settings.closeups`` is off, or the photo is a
        panorama, over ``vision.settings.PANORAMA`` times as long as it is high); see
        :class:`vision.settings.ReaderSettings`. A large panorama is shrunk by its height, as a
        4:3 photo of that height is, to at most :data:`WIDE_PIXELS` times its pixels.

        Indices that the network sees small (median side under ``settings.fine_below_px`` of its
        input) in an image that is not tiled are read again at ``settings.fine_imgsz``, and
        that reading is the answer (unless ``settings.fine`` is off, or the model has a fixed
        input size).
        """
        return self._detect(image, *self._shrunk(image))

    def detect_and_glance(
        self, image: NDArray[np.uint8], other: Callable[[NDArray[np.uint8]], NDArray[np.uint8]]
    ) -> tuple[Detections, Glance]:
        """:meth:`detect` of ``image``, and :meth:`glance` at ``other`` of it (its negative, for
        one), both in image pixels: the glance is taken at ``other`` of the copy that a large
        photo is shrunk to for :meth:`detect`, so the photo is shrunk once for both."""
        small, factor = self._shrunk(image)
        found = self._detect(image, small, factor)
        height, width = image.shape[:2]
        shown = other(small)
        glanced = self._detect_shrunk(shown, factor, width, height, tiles=False)
        return found, Glance(glanced, shown, factor)

    def detect_glanced(self, image: NDArray[np.uint8], glance: Glance) -> Detections:
        """:meth:`detect` of ``image``, the other image a :class:`Glance` was taken at (the
        photo's negative, at full size), from the copy the glance read and with the glance's
        boxes as that copy's pass at the network's size: neither is made again. The boxes are
        :meth:`detect`'s, up to rounding in the shrunk copy and, where a large photo's finer
        pass joins, the order of non-maximum suppression (the glance's boxes come suppressed
        already, as the close-up pass takes the whole pass's). ValueError for an image of
        another size than the glance's."""
        height, width = image.shape[:2]
        small_h, small_w = glance.small.shape[:2]
        if (round(width / glance.factor), round(height / glance.factor)) != (small_w, small_h):
            raise ValueError(
                f"a glance at a {small_w}x{small_h} copy is not of a {width}x{height} image"
            )
        return self._detect(image, glance.small, glance.factor, first=glance.found)

    def _detect(
        self,
        image: NDArray[np.uint8],
        small: NDArray[np.uint8],
        factor: float,
        first: Detections | None = None,
    ) -> Detections:
        """:meth:`detect` of ``image``, from its :meth:`_shrunk` copy ``small`` (and ``first``,
        that copy's pass at the network's size in image pixels, when already made)."""
        height, width = image.shape[:2]
        large = max(height, width) > self.settings.tile_above_px
        # a panorama is no close-up: no card fills a frame that wide
        closeups = self.settings.closeups and max(height, width) <= PANORAMA * min(height, width)
        share = self.settings.closeup_index_share * min(height, width)

        def sides_of(found: Detections) -> NDArray[np.float32]:
            xyxy = found.xyxy
            return np.asarray(np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]))

        # a large close-up shows in the whole-image pass alone, and its tiles would be read for
        # nothing (the framed pass below is the answer): they are read only when it is not one
        found = self._detect_shrunk(
            small, factor, width, height, tiles=large and not closeups, first=first
        )
        if closeups and large and not self._frames(found, sides_of(found), share):
            found = self._detect_shrunk(small, factor, width, height, first=found)
        sides = sides_of(found)
        closeup = not len(found) or self._frames(found, sides, share)
        if not (closeups and closeup):
            return self._fine(image, found, sides) if len(found) else found
        # the margin goes round the photo as already shrunk: framing the full-size photo and
        # shrinking that again cost a 12 MP photo about 8 ms more for the same pixels
        margin = max(1, round(self.settings.closeup_margin * max(small.shape[:2])))
        framed = cv2.copyMakeBorder(
            small, margin, margin, margin, margin, cv2.BORDER_CONSTANT, value=(PAD_VALUE,) * 3
        )
        # indices big enough to call it a close-up need no tiles; with none found, look everywhere
        again = self._detect_whole(cast(NDArray[np.uint8], framed), tiles=not len(found))
        xyxy = _clip((again.xyxy - np.float32(margin)) * np.float32(factor), width, height)
        framed_found = Detections(xyxy, again.confidence, again.class_id)
        least = self.settings.closeup_union_from
        if least <= 0 or len(framed_found) < least or not len(found):
            return framed_found
        return _union(framed_found, found, self.settings.nms_iou)

    def glance(self, image: NDArray[np.uint8]) -> Detections:
        """One pass over the whole image at the network's size, no tiles, close-up or finer
        pass: a quick look at whether an image shows indices at all."""
        return self._detect_whole(image, tiles=False)

    def _frames(self, found: Detections, sides: NDArray[np.float32], share: float) -> bool:
        """Whether ``found`` (longer sides ``sides``) holds an index at least ``share`` pixels
        long, scored at least ``settings.closeup_surest_share`` of its surest smaller index:
        a card filling the frame, not a stack of chips seen as one huge, doubtful index."""
        big = sides >= share
        if not big.any():
            return False
        smaller = found.confidence[~big]
        if not len(smaller):
            return True
        surest = float(found.confidence[big].max())
        return surest >= self.settings.closeup_surest_share * float(smaller.max())

    def _fine(
        self, image: NDArray[np.uint8], found: Detections, sides: NDArray[np.float32]
    ) -> Detections:
        """``found``, or the reading at ``settings.fine_imgsz`` when its indices are small."""
        settings = self.settings
        longer = max(image.shape[:2])
        seen = float(np.median(sides)) * self.size / longer
        if (
            not settings.fine
            or not self.dynamic
            or longer > settings.tile_above_px  # large photos are read in tiles instead
            or longer < settings.fine_imgsz  # the finer pass would not enlarge the indices
            or seen >= settings.fine_below_px
        ):
            return found
        again = self._detect_once(image, size=settings.fine_imgsz)
        if not len(again):
            return found
        return self._settled([again], image.shape[1], image.shape[0])

    def _settled(
        self, parts: list[Detections], width: int, height: int, factor: float = 1.0
    ) -> Detections:
        """The parts' boxes scaled by ``factor`` into an image of ``width`` x ``height``,
        clipped to it, after NMS."""
        xyxy = np.concatenate([p.xyxy for p in parts]) * np.float32(factor)
        confidence = np.concatenate([p.confidence for p in parts])
        if len(confidence) == 0:
            return Detections.empty()
        xyxy = _clip(xyxy, width, height)
        keep = non_max_suppression(xyxy, confidence, self.settings.nms_iou)[
            : self.settings.max_detections
        ]
        return Detections(xyxy[keep], confidence[keep], np.zeros(len(keep), np.int64))

    def _shrunk(self, image: NDArray[np.uint8]) -> tuple[NDArray[np.uint8], float]:
        """``image`` when its longer side is at most ``settings.tile_above_px`` (factor 1.0);
        else ``image`` shrunk (area averaging) to where a tile, ``TILE_SHARE`` of its sides,
        fills the network's input (534 px for 320), and the factor it was shrunk by."""
        height, width = image.shape[:2]
        longer = max(height, width)
        if longer <= self.settings.tile_above_px:
            return image, 1.0
        target = math.ceil(self.size / TILE_SHARE)
        factor = max(1.0, longer / target)
        if longer > PANORAMA * min(height, width):
            # a panorama is shrunk by its height, as a 4:3 photo of that height is, so that its
            # cards are no smaller (by its length they would vanish), up to WIDE_PIXELS times
            # the pixels of a 4:3 copy
            factor = max(1.0, min(height, width) / (target * 3 / 4))
            most = WIDE_PIXELS * target * target * 3 / 4
            if width * height / factor**2 > most:
                factor = math.sqrt(width * height / most)
        size = (max(1, round(width / factor)), max(1, round(height / factor)))
        shrunk = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        return cast(NDArray[np.uint8], shrunk), factor

    def _detect_whole(self, image: NDArray[np.uint8], tiles: bool = True) -> Detections:
        """The whole image (and its tiles when large and ``tiles``), boxes clipped to it, after
        NMS. Without tiles, a large image goes to the network's input in one resize."""
        small, factor = self._shrunk(image) if tiles else (image, 1.0)
        return self._detect_shrunk(
            small, factor, image.shape[1], image.shape[0], tiles=tiles and factor > 1
        )

    def _detect_shrunk(
        self,
        small: NDArray[np.uint8],
        factor: float,
        width: int,
        height: int,
        tiles: bool = True,
        first: Detections | None = None,
    ) -> Detections:
        """:meth:`_detect_whole` of a ``width`` x ``height`` image from its :meth:`_shrunk`
        copy ``small`` (``factor`` times smaller): the copy at the network's size, and with
        ``tiles`` the copy again at its own size, the scale at which four overlapping tiles
        (each ``TILE_SHARE`` of its width and height) fill the network's input. A network that
        takes any input size reads it in one pass; one of a fixed size reads the four tiles.
        ``first``: the copy's reading at the network's
        size, already made, not made again."""
        if first is None:
            parts = [self._detect_once(small)]
        else:
            parts = [Detections(first.xyxy / np.float32(factor), first.confidence, first.class_id)]
        if tiles and self.dynamic:
            # one pass over the whole copy (534 x 400, padded to 544 x 416, for a 4:3 photo):
            # about 30 ms less than four tiles for a 12 MP table photo, with no tile edges
            parts.append(self._detect_once(small, size=max(small.shape[:2])))
        elif tiles:
            small_h, small_w = small.shape[:2]
            tile_w, tile_h = int(small_w * TILE_SHARE), int(small_h * TILE_SHARE)
            for top in (0, small_h - tile_h):
                for left in (0, small_w - tile_w):
                    tile = small[top : top + tile_h, left : left + tile_w]
                    parts.append(self._detect_once(tile, (float(left), float(top))))
        return self._settled(parts, width, height, factor)
