"""Write a synthetic data set: images, YOLO labels and per-image JSON, in parallel, reproducibly.

Layout of ``out``::

    images/0000000.jpg   the scene
    labels/0000000.txt   YOLO boxes of the visible corner indices (class 0 = "index")
    meta/0000000.json    per index: card code, deck, quad, box, visible share; and under
                         "partial" the same for indices that show but are not labelled

Scene ``i`` is drawn from ``numpy.random.default_rng([seed, i])``: the same config, seed and
index give byte-identical files whatever the number of workers.

The decks (about 0.7 GB of card images at 480 px) are loaded once, in the calling process, and
the worker processes are forked from it: they share those pages instead of each loading its own
copy. Where ``fork`` is not available each worker loads them.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray
from tqdm import tqdm

from training.synth.assets import (
    DeckAssets,
    decks_for_split,
    is_prepared,
    load_assets,
    prepare_assets,
    read_assets,
)
from training.synth.config import ConfigError, SceneConfig
from training.synth.scene import Scene, render_scene

__all__ = ["CONFIG_RECORD", "contact_sheet", "generate", "scene_at", "yolo_lines"]

INDEX_CLASS = "index"
"""The detector's single class: a corner index (rank glyph with its suit pip)."""

_worker_state: dict[str, object] = {}


def _deck_names(config: SceneConfig) -> list[str]:
    """The names of the decks the config draws (installed, or rendered at its height)."""
    return [deck.name for deck in decks_for_split(config.deck_split, config.card_render_height)]


def _read_decks(config: SceneConfig, threads: int) -> list[DeckAssets]:
    """The config's decks, read ``threads`` at a time (PNG decoding frees the GIL), kept by
    no cache."""
    names = _deck_names(config)

    def read(name: str) -> DeckAssets:
        return read_assets(name, config.card_render_height)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        return list(pool.map(read, names))


def _init_worker(config: SceneConfig) -> None:
    """Make this process ready to render ``config``'s scenes: OpenCV single-threaded, and the
    decks loaded unless already there (inherited from the parent)."""
    cv2.setNumThreads(1)
    if _worker_state.get("config") != config:
        names = _deck_names(config)
        _worker_state["decks"] = [load_assets(name, config.card_render_height) for name in names]
        _worker_state["config"] = config


def scene_at(config: SceneConfig, index: int) -> Scene:
    """Scene number ``index`` of the data set described by ``config``."""
    if _worker_state.get("config") != config:
        _init_worker(config)
    decks = _worker_state["decks"]
    assert isinstance(decks, list)
    return render_scene(config, decks, np.random.default_rng([config.seed, index]))


def yolo_lines(scene: Scene) -> list[str]:
    """YOLO label lines (class cx cy w h, normalised) of the scene's visible indices."""
    height, width = scene.image.shape[:2]
    lines = []
    for label in scene.labels:
        x1, y1, x2, y2 = label.box_xyxy
        lines.append(
            f"0 {(x1 + x2) / 2 / width:.6f} {(y1 + y2) / 2 / height:.6f} "
            f"{(x2 - x1) / width:.6f} {(y2 - y1) / height:.6f}"
        )
    return lines


def _write_one(task: tuple[SceneConfig, int, str]) -> int:
    config, index, out = task
    scene = scene_at(config, index)
    root = Path(out)
    name = f"{index:07d}"
    ok, encoded = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg_quality])
    if not ok:
        raise RuntimeError(f"could not encode scene {index}")
    (root / "images" / f"{name}.jpg").write_bytes(encoded.tobytes())
    (root / "labels" / f"{name}.txt").write_text("".join(line + "\n" for line in yolo_lines(scene)))
    meta = {
        "layout": scene.layout,
        **({"game": scene.game} if scene.game else {}),
        "size_wh": [scene.image.shape[1], scene.image.shape[0]],
        "indices": [label.to_dict() for label in scene.labels],
        "partial": [label.to_dict() for label in scene.partial],
    }
    (root / "meta" / f"{name}.json").write_text(json.dumps(meta))
    return len(scene.labels)


CONFIG_RECORD = "config.json"
"""The file of a scene folder that records the config its scenes were drawn from."""


def _claim(out: Path, config: SceneConfig) -> None:
    """Record ``config`` in ``out`` or check it against the record there (ConfigError)."""
    record = out / CONFIG_RECORD
    wanted = json.loads(json.dumps(asdict(config)))  # (tuples as lists, as read back)
    try:
        held = json.loads(record.read_text(encoding="utf-8"))
    except FileNotFoundError:
        out.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(wanted, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read {str(record)!r}: {error}") from None
    if held != wanted:
        differ = sorted(
            key for key in wanted.keys() | held.keys() if held.get(key) != wanted.get(key)
        )
        raise ConfigError(
            f"{str(out)!r} holds scenes of another config (it differs in {', '.join(differ)}): "
            "write these scenes into another folder"
        )


def generate(
    config: SceneConfig,
    out: Path,
    count: int,
    start: int = 0,
    workers: int | None = None,
    progress: bool = True,
) -> int:
    """Render scenes ``start .. start+count-1`` into ``out``; returns the number of labels.

    ``out/config.json`` records the config of the scenes there: scenes of another config are
    refused (ConfigError) rather than written over or among them; a folder of scenes from
    before the record is taken as of this config."""
    if count < 0 or start < 0:
        raise ValueError(f"count and start must be non-negative, got count={count}, start={start}")
    _claim(out, config)
    for folder in ("images", "labels", "meta"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    decks = decks_for_split(config.deck_split, config.card_render_height)
    workers = workers or os.cpu_count() or 1
    height = config.card_render_height
    unprepared = [deck for deck in decks if not is_prepared(deck, height)]
    if unprepared:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            list(pool.map(prepare_assets, unprepared, [height] * len(unprepared)))
    tasks = [(config, index, str(out)) for index in range(start, start + count)]
    total = 0
    bar = tqdm(total=count, desc="synth", unit="img", disable=not progress)
    if workers == 1:
        results: Iterator[int] = map(_write_one, tasks)
        for labels in results:
            total += labels
            bar.update()
    else:
        context = None
        loaded_here = False
        if "fork" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("fork")
            if _worker_state.get("config") != config:
                _worker_state.update(config=config, decks=_read_decks(config, workers))
                loaded_here = True
        try:
            with ProcessPoolExecutor(
                max_workers=workers,
                mp_context=context,
                initializer=_init_worker,
                initargs=(config,),
            ) as pool:
                for labels in pool.map(_write_one, tasks, chunksize=4):
                    total += labels
                    bar.update()
        finally:
            if loaded_here:
                _worker_state.clear()  # the caller keeps no decks it did not ask for
    bar.close()
    return total


def contact_sheet(
    out: Path, count: int = 16, columns: int = 4, tile_width: int = 480
) -> NDArray[np.uint8]:
    """A grid of the first ``count`` scenes in ``out`` with their labels drawn (for a person)."""
    tiles = []
    for image_path in sorted((out / "images").glob("*.jpg"))[:count]:
        image = cv2.imread(str(image_path))
        if image is None:
            raise ValueError(f"cannot read the scene image {str(image_path)!r}")
        meta = json.loads((out / "meta" / f"{image_path.stem}.json").read_text())
        for item in meta["indices"]:
            quad = np.array(item["quad"], np.int32)
            cv2.polylines(image, [quad], True, (0, 255, 0), 1, cv2.LINE_AA)
            x, y = int(item["box_xyxy"][0]), int(item["box_xyxy"][1])
            cv2.putText(
                image,
                item["card"],
                (x, max(10, y - 2)),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.4,
                (0, 0, 255),
                1,
                cv2.LINE_AA,
            )
        scale = tile_width / image.shape[1]
        tile = cv2.resize(image, (tile_width, int(image.shape[0] * scale)))
        canvas = np.zeros((tile_width * 3 // 4, tile_width, 3), np.uint8)
        canvas[: min(tile.shape[0], canvas.shape[0])] = tile[: canvas.shape[0]]
        cv2.putText(
            canvas, image_path.stem, (4, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 0), 1
        )
        tiles.append(canvas)
    if not tiles:
        raise ValueError(f"no scenes under {out / 'images'}")
    while len(tiles) % columns:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i : i + columns]) for i in range(0, len(tiles), columns)]
    return np.vstack(rows)
