"""A compact pack of what drawing the training scenes needs, for a machine without the card art.

    python -m training.pack build OUT.tar [--config datasets/scenes.yaml ...] [--quality 95]
    python -m training.pack unpack PACK.tar [--into DIR]

Drawing scenes needs files from outside the repository: the deck renders (made from the Debian
SVG decks with ``rsvg-convert``) and their measured index boxes, and the installed fonts (printed
pages, felt print, chips and the procedural jokers). A pack holds, for every deck the configs
draw, each card's render at the configs' ``card_render_height`` as lossy WebP with a lossless
alpha plane, the deck's ``index_box.json``, the fonts :func:`training.synth.fonts.find_fonts`
chose (DejaVu first, then as many as keep the pack under :data:`PACK_LIMIT_BYTES`; the
manifest's ``fonts_left_out`` names the rest), and ``manifest.json`` (the SHA-256 and size of
every member). Background photos are not
packed: where the configs' ``photo_dirs`` are missing, scenes use the procedural backgrounds.

Unpacking verifies every hash and writes the render cache's layout (``cards/h<height>/<deck>/
<code>.png`` and ``index_box.json``, ``fonts/``) into ``DIR`` (the render cache,
:func:`training.synth.decks.cache_dir`, by default); a render already there is kept. With
``HANDREADER_CACHE=DIR`` the generator then draws every packed deck although its SVG is not
installed (:func:`training.synth.assets.decks_for_split`), and the fonts come from ``DIR/fonts``
alone (:func:`training.synth.fonts.font_dirs`), so that the scenes match the building machine's.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import tarfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from training.synth.assets import decks_for_split, prepare_assets
from training.synth.config import load_config
from training.synth.decks import Deck, cache_dir, render_deck
from training.synth.fonts import find_fonts

__all__ = [
    "DEFAULT_CONFIGS",
    "PACK_LIMIT_BYTES",
    "PACK_VERSION",
    "PackError",
    "build_pack",
    "draw_from",
    "main",
    "unpack",
]

PACK_VERSION = 1
PACK_LIMIT_BYTES = 64 * 1024 * 1024
"""The most a pack may weigh: what a training machine is given besides the repository."""

DEFAULT_CONFIGS = (
    "datasets/scenes.yaml",
    "datasets/holdout.yaml",
    "datasets/closeups.yaml",
    "datasets/cards.yaml",
    "datasets/verifier.yaml",
    "datasets/casino.yaml",
)
"""The configs ``scripts/train_gpu.py`` draws (training and held-out scenes), relative to the
repository."""

_REPO = Path(__file__).resolve().parent.parent


class PackError(ValueError):
    """A pack that cannot be used: unreadable, of another version, or a member's hash wrong."""


@dataclass(frozen=True)
class _Member:
    name: str
    data: bytes


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _webp(path: Path, quality: int) -> bytes:
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise RuntimeError(f"cannot read the card render {str(path)!r}")
    if image.shape[2] == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
    ok, encoded = cv2.imencode(".webp", image, [cv2.IMWRITE_WEBP_QUALITY, quality])
    if not ok:
        raise RuntimeError(f"cannot encode {str(path)!r} as WebP")
    return encoded.tobytes()


def _deck_members(deck: Deck, height: int, quality: int) -> list[_Member]:
    box_file = prepare_assets(deck, height)
    folder = f"cards/h{height}/{deck.name}"
    members = [_Member(f"{folder}/index_box.json", box_file.read_bytes())]
    for code, path in sorted(render_deck(deck, height).items()):
        members.append(_Member(f"{folder}/{code}.webp", _webp(path, quality)))
    return members


def _decks(configs: Iterable[Path]) -> list[tuple[Deck, int]]:
    """(deck, render height) of every deck the configs draw, each once, in a stable order."""
    wanted: dict[tuple[str, int], Deck] = {}
    for path in configs:
        config = load_config(path)
        height = config.card_render_height
        for deck in decks_for_split(config.deck_split, height):
            wanted[(deck.name, height)] = deck
    return [(wanted[key], key[1]) for key in sorted(wanted)]


def build_pack(
    out: Path,
    configs: Sequence[Path],
    quality: int = 95,
    deck_names: Sequence[str] | None = None,
    threads: int = 4,
) -> dict[str, Any]:
    """Write the pack of ``configs``' decks (only ``deck_names`` when given) to ``out``;
    returns its manifest. Renders missing from the cache are made first (needs the card art)."""
    if not 1 <= quality <= 100:
        raise ValueError(f"quality {quality}: expected 1..100")
    chosen = _decks(configs)
    if deck_names is not None:
        unknown = set(deck_names) - {deck.name for deck, _ in chosen}
        if unknown:
            raise ValueError(f"decks {sorted(unknown)} are not drawn by the configs")
        chosen = [(deck, height) for deck, height in chosen if deck.name in deck_names]
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        parts = list(pool.map(lambda item: _deck_members(item[0], item[1], quality), chosen))
    members = [member for part in parts for member in part]
    fonts, left_out = _fonts_within(PACK_LIMIT_BYTES - _tar_bytes(members) - _RESERVE_BYTES)
    members.extend(fonts)
    manifest: dict[str, Any] = {
        "version": PACK_VERSION,
        "quality": quality,
        "configs": [str(path) for path in configs],
        "decks": {deck.name: {"split": deck.split, "height": h} for deck, h in chosen},
        "files": {m.name: {"sha256": _sha256(m.data), "bytes": len(m.data)} for m in members},
        "fonts_left_out": left_out,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f"{out.name}.part")
    with tarfile.open(partial, "w") as tar:
        for member in [_Member("manifest.json", json.dumps(manifest, indent=1).encode())]:
            _add(tar, member)
        for member in members:
            _add(tar, member)
    partial.replace(out)
    return manifest


_RESERVE_BYTES = 1024 * 1024
"""Room kept under the limit for the manifest and the archive's padding."""


def _tar_bytes(members: Iterable[_Member]) -> int:
    """What ``members`` weigh in a tar: a 512-byte header each, data padded to 512 bytes."""
    return sum(512 + -(-len(member.data) // 512) * 512 for member in members)


def _fonts_within(budget: int) -> tuple[list[_Member], list[str]]:
    """The fonts :func:`find_fonts` finds that fit in ``budget`` bytes of a tar, DejaVu first
    (the faces every config can rely on), then by path; and the names of those left out."""
    found = find_fonts()
    paths = sorted(
        set(found.rank_fonts) | set(found.suit_fonts),
        key=lambda path: (not path.name.startswith("DejaVu"), str(path)),
    )
    kept: list[_Member] = []
    left_out: list[str] = []
    names: set[str] = set()
    for path in paths:
        if path.name in names:  # one face per name: the members share a folder
            continue
        member = _Member(f"fonts/{path.name}", path.read_bytes())
        if _tar_bytes([member]) <= budget:
            kept.append(member)
            names.add(path.name)
            budget -= _tar_bytes([member])
        else:
            left_out.append(path.name)
    return kept, left_out


def _add(tar: tarfile.TarFile, member: _Member) -> None:
    info = tarfile.TarInfo(member.name)
    info.size = len(member.data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(member.data))


def _read(tar: tarfile.TarFile, name: str) -> bytes:
    try:
        handle = tar.extractfile(name)
    except KeyError:
        handle = None
    if handle is None:
        raise PackError(f"pack lacks {name!r}")
    return handle.read()


def _safe(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts


def _verified(tar: tarfile.TarFile, pack: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The pack's manifest and its members' bytes, every hash checked."""
    try:
        manifest = json.loads(_read(tar, "manifest.json"))
    except ValueError as error:
        if isinstance(error, PackError):
            raise
        raise PackError(f"pack {str(pack)!r}: unreadable manifest") from error
    if not isinstance(manifest, dict) or manifest.get("version") != PACK_VERSION:
        raise PackError(f"pack {str(pack)!r}: not a version {PACK_VERSION} pack")
    contents: dict[str, bytes] = {}
    for name, entry in manifest["files"].items():
        if not _safe(name):
            raise PackError(f"pack {str(pack)!r}: unsafe member name {name!r}")
        data = _read(tar, name)
        if _sha256(data) != entry["sha256"]:
            raise PackError(f"pack {str(pack)!r}: {name!r} does not match its hash")
        contents[name] = data
    return manifest, contents


def unpack(pack: Path, into: Path | None = None) -> dict[str, Any]:
    """Verify the pack and write it, in the render cache's layout, into ``into`` (the render
    cache by default); renders already there are kept. Returns the manifest."""
    into = cache_dir() if into is None else into
    try:
        with tarfile.open(pack, "r") as tar:
            manifest, contents = _verified(tar, pack)
    except (OSError, tarfile.TarError) as error:
        raise PackError(f"cannot read the pack {str(pack)!r}: {error}") from error

    def write(item: tuple[str, bytes]) -> None:
        name, data = item
        target = into / name
        if name.endswith(".webp"):
            target = target.with_suffix(".png")
            if target.is_file():
                return
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
            if image is None:
                raise PackError(f"pack {str(pack)!r}: {name!r} is no image")
            ok, encoded = cv2.imencode(".png", image)
            if not ok:
                raise RuntimeError(f"cannot write {str(target)!r}")
            data = encoded.tobytes()
        elif target.is_file() and target.read_bytes() == data:
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.part")
        partial.write_bytes(data)
        partial.replace(target)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write, contents.items()))
    return manifest


def draw_from(folder: Path) -> None:
    """Draw scenes from the unpacked pack in ``folder`` from now on, in this process and the
    scene workers it starts: ``HANDREADER_CACHE`` is set, and the decks, fonts and shrunk cards
    this process already loaded from elsewhere are dropped."""
    from training.synth import generate, printed, props, scene
    from training.synth.assets import load_assets

    os.environ["HANDREADER_CACHE"] = str(folder)
    load_assets.cache_clear()
    printed.printing_fonts.cache_clear()
    props.glyph_fonts.cache_clear()
    generate._worker_state.clear()
    scene._pyramids.clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.pack", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="pack the decks and fonts of the configs")
    build.add_argument("out", type=Path)
    build.add_argument("--config", type=Path, action="append", help="repeatable")
    build.add_argument("--deck", action="append", help="only these decks (repeatable)")
    build.add_argument("--quality", type=int, default=95, help="WebP quality (default 95)")
    opened = commands.add_parser("unpack", help="verify a pack and unpack it into a cache")
    opened.add_argument("pack", type=Path)
    opened.add_argument("--into", type=Path, help="the folder (default: the render cache)")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            configs = args.config or [_REPO / p for p in DEFAULT_CONFIGS]
            manifest = build_pack(args.out, configs, args.quality, args.deck)
            size = args.out.stat().st_size
            left_out = manifest["fonts_left_out"]
            note = f"; {len(left_out)} fonts left out to stay under the limit" if left_out else ""
            print(f"{args.out}: {len(manifest['decks'])} decks, {size / 2**20:.1f} MiB{note}")
            if size > PACK_LIMIT_BYTES:
                print(f"error: the pack is over {PACK_LIMIT_BYTES // 2**20} MiB", file=sys.stderr)
                return 2
        else:
            manifest = unpack(args.pack, args.into)
            print(f"{len(manifest['files'])} files into {args.into or cache_dir()}")
    except (ValueError, RuntimeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
