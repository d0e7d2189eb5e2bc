"""A training round's evaluation and gate: the new models beside the shipped ones, in one run.

Every set is read with both model folders (:func:`evaluate_models`): the valid splits of the
real folders under ``REALDATA`` (``boxes/``, ``tables/``, ``singles/``, ``scans/``,
``pinochle/``, ``crops/``; the train rows are never read here), the round's synthetic held-out
scenes (decks never trained on; every labelled card and the legible ones), casino held-out
scenes, card-free casino tables (every certain card read there is false), and procedural index
crops of local decks' letters in a seed no round trains on (the classifier's top-1).

The gate (:func:`gate`) promotes the new models only when every *targeted* set is better and
no set is worse beyond its tolerance: an F1 may drop by at most :data:`F1_TOLERANCE` or one
card of the set, whichever is larger (a deterministic reader of different models moves by
single cards); a card-free count may grow by at most :data:`FALSE_CARD_TOLERANCE`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES

__all__ = [
    "F1_TOLERANCE",
    "FALSE_CARD_TOLERANCE",
    "TARGETED",
    "GateVerdict",
    "card_free_config",
    "evaluate_models",
    "gate",
    "manifest_sets",
    "write_report",
]

F1_TOLERANCE = 0.003
FALSE_CARD_TOLERANCE = 2
TARGETED = ("boxes", "tables")
"""The sets a round must improve (the real folders it trains on)."""

REAL_FOLDERS = ("boxes", "tables", "singles", "scans", "pinochle", "crops")


def card_free_config(path: Path) -> Any:
    """The casino config at ``path`` with every table card-free and drawn as a casino table."""
    from training.synth.config import Layouts, load_config

    config = load_config(path)
    only_casino = Layouts(**{field.name: 0.0 for field in dataclasses.fields(Layouts)})
    only_casino = dataclasses.replace(only_casino, casino=1.0)
    casino = dataclasses.replace(config.casino, card_free_probability=1.0)
    return dataclasses.replace(config, layouts=only_casino, casino=casino)


def _summary(totals: Any) -> dict[str, Any]:
    keys = ("photos", "cards", "predicted", "wrong", "uncertain", "precision", "recall", "f1",
            "exact_photos")  # fmt: skip
    summary = totals.summary()
    return {key: summary[key] for key in keys}


def manifest_sets(realdata: Path | None, synthetic: dict[str, Path]) -> dict[str, Any]:
    """Name -> manifest entries of every labelled set the report reads."""
    from vision.evaluate import load_manifest

    sets: dict[str, Any] = {}
    if realdata is not None:
        for name in REAL_FOLDERS:
            manifest = realdata / name / "manifest.jsonl"
            if manifest.is_file():
                entries = load_manifest(manifest, "valid")
                sets[name] = entries or load_manifest(manifest)
    for name, manifest in synthetic.items():
        sets[name] = load_manifest(manifest)
    return sets


def _card_free_count(read: Callable[[NDArray[np.uint8]], Any], images: list[Any]) -> dict[str, int]:
    certain = uncertain = with_card = 0
    for image in images:
        reading = read(image)
        found = len(reading.certain)
        certain += found
        with_card += int(found > 0)
        uncertain += sum(card.uncertain for card in reading.cards)
    return {"tables": len(images), "certain": certain, "tables_with_card": with_card,
            "uncertain": uncertain}  # fmt: skip


def _local_top1(
    classifier_reader: Any, crops: NDArray[np.uint8], labels: NDArray[np.int64]
) -> float:
    """The share of ``crops`` whose likeliest card is their label, or, for a letter of several
    ranks (labelled with each in turn), one of its ranks of the label's suit."""
    from vision.index_letters import shared_letters

    probabilities, _ = classifier_reader._run_classifier(crops)
    best = probabilities.argmax(axis=1)
    position = {code: index for index, code in enumerate(CARD_CLASSES)}
    alike = np.eye(len(probabilities[0]), dtype=bool)  # alike[label, read]: counts as right
    for ranks in shared_letters().values():
        for suit in "SHDC":
            columns = [position[rank + suit] for rank in ranks]
            alike[np.ix_(columns, columns)] = True
    return round(float(alike[labels, best].mean()), 4)


def evaluate_models(
    models: dict[str, Path],
    realdata: Path | None,
    synthetic: dict[str, Path],
    card_free: list[NDArray[np.uint8]],
    local_crops: tuple[NDArray[np.uint8], NDArray[np.int64]] | None,
    log: Callable[[str], None] = print,
    settings: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Figures of each model folder (name -> folder) on every set: labelled sets' F1 and the
    rest (a ``letters_NAME`` set read with its letters, ``ReaderSettings.indices``),
    ``card_free`` (false certain cards), ``local_indices`` (top-1 of the crops) and each set's
    seconds. Sets are read folder after folder, the same images in the same order; a name in
    ``settings`` reads with those ``ReaderSettings`` (the default settings otherwise)."""
    from vision.evaluate import score_manifest
    from vision.reader import Reader

    sets = manifest_sets(realdata, synthetic)
    figures: dict[str, dict[str, Any]] = {name: {} for name in models}
    for name, folder in models.items():
        reader = Reader.load(folder, (settings or {}).get(name))
        for set_name, entries in sets.items():
            started = time.perf_counter()
            # a set of decks printing other letters is read with them named
            letters = set_name.split("_")[1] if set_name.startswith("letters_") else None
            totals = score_manifest(entries, reader.with_indices(letters).read)
            figures[name][set_name] = {
                **_summary(totals),
                "seconds": round(time.perf_counter() - started, 1),
            }
            log(f"{name} {set_name}: F1 {totals.f1:.4f} ({totals.photos} photos)")
        if card_free:
            figures[name]["card_free"] = _card_free_count(reader.read, card_free)
            log(f"{name} card_free: {figures[name]['card_free']['certain']} certain cards")
        if local_crops is not None:
            figures[name]["local_indices"] = {
                "crops": len(local_crops[1]),
                "top1": _local_top1(reader, *local_crops),
            }
    return figures


@dataclass(frozen=True)
class GateVerdict:
    """The gate's decision and its reasons (one line per set that decided)."""

    promote: bool
    reasons: tuple[str, ...]


def _f1_tolerance(figures: dict[str, Any]) -> float:
    return max(F1_TOLERANCE, 1.0 / max(1, int(figures.get("cards", 1))))


def gate(
    shipped: dict[str, dict[str, Any]],
    new: dict[str, dict[str, Any]],
    targeted: Iterable[str] = TARGETED,
    improve: bool = True,
) -> GateVerdict:
    """Whether ``new`` replaces ``shipped``: each targeted set present in both better (higher
    F1, or the same F1 with fewer wrong cards), and no set worse beyond its tolerance (F1, the
    card-free tables' certain cards, the local crops' top-1). Without ``improve`` (models
    meant to read as well, faster: a distilled classifier) no set need be better, and the
    targeted ones too may be no worse than their tolerance."""
    reasons: list[str] = []
    promote = True
    compared = sorted(set(shipped) & set(new))
    targeted = [name for name in targeted if improve and name in compared]
    for name in targeted:
        old, now = shipped[name], new[name]
        better = now["f1"] > old["f1"] or (now["f1"] == old["f1"] and now["wrong"] < old["wrong"])
        if not better:
            promote = False
            reasons.append(f"{name}: not better (F1 {old['f1']:.4f} -> {now['f1']:.4f})")
        else:
            reasons.append(f"{name}: better (F1 {old['f1']:.4f} -> {now['f1']:.4f})")
    for name in compared:
        old, now = shipped[name], new[name]
        if "f1" in old and name not in targeted:
            tolerance = _f1_tolerance(old)
            if now["f1"] < old["f1"] - tolerance:
                promote = False
                reasons.append(
                    f"{name}: worse (F1 {old['f1']:.4f} -> {now['f1']:.4f}, "
                    f"tolerance {tolerance:.4f})"
                )
        elif name == "card_free" and now["certain"] > old["certain"] + FALSE_CARD_TOLERANCE:
            promote = False
            reasons.append(f"card_free: more false cards ({old['certain']} -> {now['certain']})")
        elif name == "local_indices" and now["top1"] < old["top1"] - F1_TOLERANCE:
            promote = False
            reasons.append(f"local_indices: worse (top-1 {old['top1']} -> {now['top1']})")
    if improve and not targeted:
        promote = False
        reasons.append("no targeted set was read: nothing shows the round is better")
    elif not compared:
        promote = False
        reasons.append("no set was read: nothing shows the models read as well")
    elif not improve and promote:
        reasons.append("every set reads as well")
    return GateVerdict(promote, tuple(reasons))


def _cell(figures: dict[str, Any] | None) -> str:
    if figures is None:
        return "-"
    if "f1" in figures:
        return (f"{figures['f1']:.4f} ({figures['exact_photos']:.0%} exact, "
                f"{figures['wrong']} wrong)")  # fmt: skip
    if "certain" in figures:
        return f"{figures['certain']} certain on {figures['tables']} tables"
    if "top1" in figures:
        return f"top-1 {figures['top1']:.4f} of {figures['crops']}"
    return json.dumps(figures)


def write_report(
    out_dir: Path,
    figures: dict[str, dict[str, Any]],
    verdict: GateVerdict,
    plan: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write ``report.json`` (everything) and ``report.md`` (a table of both model folders
    and the gate's reasons) in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {
        "plan": plan,
        "figures": figures,
        "gate": {"promote": verdict.promote, "reasons": list(verdict.reasons)},
        **(extra or {}),
    }
    json_path = out_dir / "report.json"
    json_path.write_text(json.dumps(payload, indent=2) + "\n")
    names = list(figures)
    sets = sorted({key for per in figures.values() for key in per})
    lines = [
        "# Training round report",
        "",
        "| set | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for set_name in sets:
        lines.append(
            f"| {set_name} | "
            + " | ".join(_cell(figures[name].get(set_name)) for name in names)
            + " |"
        )
    lines += ["", f"**Gate: {'promote' if verdict.promote else 'keep the shipped models'}**", ""]
    lines += [f"- {reason}" for reason in verdict.reasons]
    for key, value in (extra or {}).items():
        lines += ["", f"{key}: `{json.dumps(value)}`"]
    markdown_path = out_dir / "report.md"
    markdown_path.write_text("\n".join(lines) + "\n")
    return json_path, markdown_path
