"""How decks that print other index letters read, without and with their letters named.

The held-out sets of ``datasets/letters-french.yaml``, ``letters-german.yaml`` and
``letters-russian.yaml`` (whole decks printing 1 R D V, A K D B and Т К Д В, each card labelled
with the English code of what it stands for, never drawn in training) are drawn into
``--work`` (``--count`` scenes each; scenes already there are kept) and read twice by the
same models: as any photo is (``indices`` None) and with the deck's letters named
(``ReaderSettings.indices``). For each: card F1 of the certain cards, certain cards read
wrong, uncertain cards, and the same for the aces and court cards alone (the cards whose
letters differ from English): labelled, read right for certain, read wrong for certain.

    python benchmarks/eval_index_letters.py --work DIR [--count 150] [--models DIR]

``--models`` reads another models folder (a training round's ``W/models``); a manifest whose
classifier names no ``index_letters`` is read as a classifier of the English letters only
(``vision.index_letters.classifier_letters``). Cards are counted on the scenes' legible
labels (``scenes_manifest(..., legible_only=True)``), as the round's held-out figures are.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from training.synth.config import load_config
from training.synth.generate import generate
from vision.evaluate import EvalTotals, load_manifest, scenes_manifest
from vision.imageio import load_image
from vision.reader import Reader

ROOT = Path(__file__).resolve().parents[1]
LETTERS = ("french", "german", "russian")
COURTS = frozenset("AKQJ")


def draw(folder: Path, letters: str, count: int) -> Path:
    """The legible manifest of ``count`` scenes of the letters' held-out set in ``folder``
    (drawn unless already there)."""
    present = len(list((folder / "images").glob("*"))) if (folder / "images").is_dir() else 0
    if present < count:
        config = load_config(ROOT / "datasets" / f"letters-{letters}.yaml")
        generate(config, folder, count - present, start=present, progress=False)
    return scenes_manifest(folder, folder / "manifest" / "legible.jsonl", legible_only=True)


def _court(code: str) -> bool:
    return code[:-1] in COURTS and code not in ("JB", "JR")


def measure(reader: Reader, manifest: Path) -> tuple[EvalTotals, dict[str, int]]:
    """The reader's totals on the manifest, and its aces' and court cards' counts."""
    totals = EvalTotals()
    courts = {"labelled": 0, "right": 0, "wrong": 0, "uncertain": 0}
    for entry in load_manifest(manifest):
        reading = reader.read(load_image(entry.image))
        totals.add_reading(entry, reading)
        truth = Counter(code for code in entry.cards if _court(code))
        read = Counter(c.code for c in reading.cards if not c.uncertain and _court(c.code))
        courts["labelled"] += sum(truth.values())
        courts["right"] += sum((truth & read).values())
        courts["wrong"] += sum((read - Counter(entry.cards)).values())  # none of the photo's
        courts["uncertain"] += sum(c.uncertain and _court(c.code) for c in reading.cards)
    return totals, courts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, required=True, help="where the scenes are drawn")
    parser.add_argument("--count", type=int, default=150, help="scenes of each set")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    args = parser.parse_args()
    # every set is drawn before the models load: the drawing forks workers, which must not
    # inherit onnxruntime's threads
    manifests = {
        letters: draw(args.work / f"letters-{letters}", letters, args.count) for letters in LETTERS
    }
    reader = Reader.load(args.models)
    print(f"classifier reads: {' '.join(sorted(reader.index_letters))}")
    for letters, manifest in manifests.items():
        print(f"letters-{letters} ({args.count} scenes)")
        for name, one in (
            ("default", reader),
            (f"indices {letters}", reader.with_indices(letters)),
        ):
            totals, courts = measure(one, manifest)
            print(
                f"  {name:18s} F1 {totals.f1:.4f}  wrong {totals.wrong:4d}  "
                f"uncertain {totals.uncertain:4d}  | aces and courts {courts['labelled']}: "
                f"right {courts['right']}, wrong {courts['wrong']}, "
                f"uncertain {courts['uncertain']}"
            )


if __name__ == "__main__":
    main()
