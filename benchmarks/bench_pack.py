"""The training pack's size and what its lossy renders change in the scenes.

Builds the pack of ``--config`` (default: the configs ``scripts/train_gpu.py`` draws) at each
``--quality``, unpacks it, and draws ``--scenes`` scenes of ``datasets/scenes.yaml`` and of
``datasets/casino.yaml`` twice, same seeds: from the renders (the baseline) and from the
unpacked pack. Prints per quality: the pack's size, the seconds to build and to unpack, the mean
absolute pixel difference of the scenes (0..255), the worst scene's, the mean difference inside
the labelled index boxes (where sharpness matters), and whether every scene's labels are equal.

Usage::

    python benchmarks/bench_pack.py [--quality 95 --quality 85] [--scenes 40]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from training.pack import DEFAULT_CONFIGS, build_pack, unpack  # noqa: E402
from training.synth import scene as scene_module  # noqa: E402
from training.synth.assets import decks_for_split, read_assets  # noqa: E402
from training.synth.config import load_config  # noqa: E402


def _scenes(config_path: Path, count: int, cache: Path | None) -> list[object]:
    config = load_config(config_path)
    names = [d.name for d in decks_for_split(config.deck_split, config.card_render_height)]
    previous = os.environ.get("HANDREADER_CACHE")
    if cache is not None:
        os.environ["HANDREADER_CACHE"] = str(cache)
    try:
        decks = [read_assets(name, config.card_render_height) for name in names]
    finally:
        if previous is None:
            os.environ.pop("HANDREADER_CACHE", None)
        else:
            os.environ["HANDREADER_CACHE"] = previous
    scene_module._pyramids.clear()  # the shrunk cards of the other run's renders
    return [
        scene_module.render_scene(config, decks, np.random.default_rng([config.seed, index]))
        for index in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quality", type=int, action="append")
    parser.add_argument("--scenes", type=int, default=40)
    parser.add_argument("--config", type=Path, action="append")
    args = parser.parse_args()
    configs = args.config or [ROOT / p for p in DEFAULT_CONFIGS]
    drawn = [ROOT / "datasets" / "scenes.yaml", ROOT / "datasets" / "casino.yaml"]
    baseline = {path: _scenes(path, args.scenes, None) for path in drawn}
    print("quality | pack MiB | build s | unpack s | mean diff | worst scene | in boxes | labels")
    for quality in args.quality or [95]:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "pack.tar"
            started = time.perf_counter()
            build_pack(out, configs, quality)
            built = time.perf_counter()
            unpack(out, Path(folder) / "cache")
            unpacked = time.perf_counter()
            diffs, boxes, same = [], [], True
            for path in drawn:
                for a, b in zip(
                    baseline[path], _scenes(path, args.scenes, Path(folder) / "cache"), strict=True
                ):
                    image_a, image_b = a.image.astype(int), b.image.astype(int)  # type: ignore[attr-defined]
                    diffs.append(np.abs(image_a - image_b).mean())
                    labels_a = [label.to_dict() for label in a.labels]  # type: ignore[attr-defined]
                    labels_b = [label.to_dict() for label in b.labels]  # type: ignore[attr-defined]
                    same &= labels_a == labels_b
                    for label in a.labels:  # type: ignore[attr-defined]
                        x1, y1, x2, y2 = (round(v) for v in label.box_xyxy)
                        x1, y1 = max(0, x1), max(0, y1)
                        part = np.abs(image_a[y1:y2, x1:x2] - image_b[y1:y2, x1:x2])
                        if part.size:
                            boxes.append(part.mean())
            print(
                f"{quality} | {out.stat().st_size / 2**20:.1f} | {built - started:.1f} | "
                f"{unpacked - built:.1f} | {np.mean(diffs):.2f} | {np.max(diffs):.2f} | "
                f"{np.mean(boxes):.2f} | {'equal' if same else 'DIFFER'}"
            )


if __name__ == "__main__":
    main()
