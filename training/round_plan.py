"""The plan of a training round (:mod:`training.round`) and what its stages share: the log
line and the pseudo-labels of the real table photos."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["RoundPlan", "log", "pseudo_labelled"]


@dataclass(frozen=True)
class RoundPlan:
    """What one training round draws and trains; the defaults fit about two hours on a 2-core
    CPU (``docs/training.md`` gives the measured stage times)."""

    work_dir: Path
    realdata: Path | None = None
    """The real-photo folders (``boxes/``, ``tables/``...); None trains on synthetic data
    alone."""
    shipped_models: Path = Path("models")
    table_scenes: int = 400
    casino_scenes: int = 300
    closeup_scenes: int = 100
    val_scenes: int = 60
    """Held-out-deck scenes the detector's fine-tune validates on (they choose no epoch: the
    last is kept)."""
    first_scene: int = 3_000_000
    """Scene number the round's synthetic scenes start from (new scenes, not the shipped
    models' own)."""
    real_copies: int = 3
    """Each real training photo is used this many times: as it is and degraded."""
    verifier_scenes: int = 600
    """Scenes of ``datasets/verifier.yaml`` (cards on printed pages) for the verifier."""
    detector_epochs: int = 8
    detector_batch: int = 16
    detector_imgsz: int = 320
    detector_learning_rate: float = 0.001
    detector_freeze: int = 0
    """0: the whole detector is fine-tuned. N: its first N layers (YOLOv8n's backbone is layers
    0 to 9) keep their weights and only the rest learns."""
    classifier_epochs: int = 4
    classifier_learning_rate: float = 0.001
    student_width: int = 0
    """0: the shipped index classifier is fine-tuned. N: a smaller one is distilled from it
    instead, from scratch, with widths N, 2N, 4N, 4N (:mod:`training.distill`)."""
    classifier_strided: int = 0
    """0: the classifier's blocks pool as the shipped one's do. N (1 to 3): its first N blocks
    halve the map with a strided convolution instead (``training.classifier._network``), for
    fewer products a crop; the shipped classifier teaches it, and it starts from the shipped
    weights unless ``student_width`` distils it from scratch."""
    distill_weight: float = 0.7
    distill_temperature: float = 2.0
    """A distilled classifier's share of the loss that follows the shipped one, and the
    temperature of its softened readings (:func:`training.distill.distillation_loss`)."""
    glyph_crops: int = 8000
    local_crops: int = 4000
    """Procedural crops of local decks' letters (:func:`training.glyph_crops.local_index_crops`)."""
    verifier_epochs: int = 6
    eval_scenes: int = 400
    """Held-out-deck scenes the report reads (``datasets/holdout.yaml``, from scene 0)."""
    eval_casino_scenes: int = 200
    """Casino held-out scenes the report reads (``datasets/casino-holdout.yaml``)."""
    eval_letter_scenes: int = 100
    """Scenes of each held-out set of decks printing other letters the report reads
    (``datasets/letters-french.yaml``, ``-german``, ``-russian``), read with their letters."""
    eval_dark_scenes: int = 200
    """Held-out-deck scenes of cards printed light on dark the report reads
    (``datasets/dark-holdout.yaml``: the pass over the negative, ``ReaderSettings.dark_faces``)."""
    card_free_tables: int = 200
    eval_local_crops: int = 1200
    workers: int | None = None
    device: str = "auto"
    seed: int = 0

    def plain(self) -> dict[str, Any]:
        """The plan as JSON-ready values."""
        out = asdict(self)
        return {key: str(value) if isinstance(value, Path) else value for key, value in out.items()}


def log(message: str) -> None:
    """A line of the round's log, with the time."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def pseudo_labelled(plan: RoundPlan) -> Path:
    """Pseudo-boxes and negatives of the ``tables/`` training photos, read with the shipped
    models (cached in ``W/real/tables-pseudo.json``)."""
    from training.real_photos import photo_index_reads, pseudo_boxes, read_images, train_photos
    from vision.reader import Reader

    out = plan.work_dir / "real" / "tables-pseudo.json"
    if out.is_file():
        return out
    assert plan.realdata is not None
    reader = Reader.load(plan.shipped_models)
    rows = []
    for photo, image in read_images(train_photos(plan.realdata / "tables" / "manifest.jsonl")):
        xyxy, codes, certain, belief = photo_index_reads(reader, image)
        believed = [bool(value >= 0.5) for value in belief]
        # a positive must also look like an index to the verifier: pips read as their card
        # would otherwise teach the detector pips
        kept = [i for i in range(len(codes)) if believed[i] or codes[i] not in photo.cards]
        found = pseudo_boxes(
            xyxy[kept],
            [codes[i] for i in kept],
            [certain[i] for i in kept],
            photo.cards,
            photo.optional,
        )
        rows.append(
            {
                "image": str(photo.image),
                "cards": list(photo.cards),
                "positive_xyxy": found.positive_xyxy.tolist(),
                "positive_cards": list(found.positive_cards),
                "negative_xyxy": found.negative_xyxy.tolist(),
            }
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows))
    return out
