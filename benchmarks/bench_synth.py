"""Benchmark: synthetic scenes per second at 640x480, all cores against one worker.

Run: ``.venv/bin/python benchmarks/bench_synth.py [--config datasets/scenes.yaml]
[--count 600] [--baseline-count 150] [--workers N]``.

The config's every setting is kept except ``sizes``, which becomes ``[[640, 480]]``. Scenes are
written (JPEG, YOLO labels, meta JSON) with :func:`training.synth.generate.generate` into a
temporary folder, first with all cores (or ``--workers``), then with one worker as the
baseline, in the same run. Times are wall-clock and include loading the decks (once, in the
parent, which forks the workers) and starting the workers (what ``handreader synth`` costs;
loading is also timed on its own, after the runs). The caches every run after the first on a
machine finds filled are filled before timing: deck renders and their measurements, and the
decoded background photos. The machine's load average is printed too: other jobs on the same
cores slow both runs.
Target: 30 images/s or more with all cores; exit status 1 when missed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from training.synth.assets import decks_for_split, prepare_assets, read_assets
from training.synth.backgrounds import photo_files, prepare_photos
from training.synth.config import SceneConfig, load_config
from training.synth.generate import generate

TARGET_IMAGES_PER_SECOND = 30.0
SIZE = (640, 480)


def _cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_run(config: SceneConfig, count: int, workers: int) -> tuple[float, float, int]:
    """Wall seconds and CPU seconds to write ``count`` scenes with ``workers`` processes, and
    the number of labels written."""
    out = Path(tempfile.mkdtemp(prefix="bench_synth_"))
    try:
        cpu = _cpu_seconds()
        started = time.perf_counter()
        labels = generate(config, out, count, workers=workers, progress=False)
        return time.perf_counter() - started, _cpu_seconds() - cpu, labels
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; exit status 1 when the all-core rate misses the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--config", type=Path, default=Path("datasets/scenes.yaml"))
    parser.add_argument("--count", type=int, default=600, help="scenes for the all-core run")
    parser.add_argument("--baseline-count", type=int, default=150, help="scenes for one worker")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)

    config = dataclasses.replace(load_config(args.config), sizes=(SIZE,))
    decks = decks_for_split(config.deck_split, config.card_render_height)
    started = time.perf_counter()
    for deck in decks:
        prepare_assets(deck, config.card_render_height)
    print(
        f"decks     : {len(decks)} {config.deck_split} decks at {config.card_render_height} px "
        f"ready in {time.perf_counter() - started:.1f} s (not timed)"
    )
    started = time.perf_counter()
    photos = photo_files(config.backgrounds.photo_dirs)
    decoded = prepare_photos(photos)
    print(
        f"photos    : {len(photos)} background photos ready in "
        f"{time.perf_counter() - started:.1f} s, {decoded} decoded into the cache (not timed)"
    )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"machine   : {os.cpu_count()} cores, load average {load} before the runs")

    seconds, cpu, labels = timed_run(config, args.count, args.workers)
    rate = args.count / seconds
    print(
        f"all cores : {args.count} scenes of {SIZE[0]}x{SIZE[1]} with {args.workers} workers "
        f"in {seconds:.1f} s = {rate:.1f} img/s ({labels / args.count:.1f} labels/img, "
        f"{1000 * cpu / args.count:.0f} ms CPU/img)"
    )

    base_seconds, base_cpu, base_labels = timed_run(config, args.baseline_count, 1)
    base_rate = args.baseline_count / base_seconds
    print(
        f"baseline  : {args.baseline_count} scenes with 1 worker in {base_seconds:.1f} s "
        f"= {base_rate:.1f} img/s ({base_labels / args.baseline_count:.1f} labels/img, "
        f"{1000 * base_cpu / args.baseline_count:.0f} ms CPU/img)"
    )
    print(f"speed-up  : {rate / base_rate:.2f}x with {args.workers} workers")
    ceiling = args.workers * args.count / cpu
    print(
        f"idle      : CPU time alone allows {ceiling:.1f} img/s on {args.workers} idle cores "
        "(an estimate: what the all-core run would reach with nothing else running)"
    )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"machine   : load average {load} after the runs")
    started = time.perf_counter()
    for deck in decks:  # what the one-worker run does first
        read_assets(deck.name, config.card_render_height)
    print(
        f"start-up  : loading the decks takes {time.perf_counter() - started:.1f} s in one "
        "thread (included above; the all-core run loads them once, in parallel threads)"
    )

    met = rate >= TARGET_IMAGES_PER_SECOND
    print(
        f"target    : {TARGET_IMAGES_PER_SECOND:.0f} img/s with all cores: "
        + ("met" if met else f"MISSED ({rate:.1f} img/s)")
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
