"""An odd PNG is decoded without a word from libpng on standard error, to the pixels OpenCV
gives the whole file (vision.png_chunks: only the chunks that make the pixels reach the
decoder)."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.imageio import CorruptImageError, decode_image
from vision.png_chunks import decoder_png

ROOT = Path(__file__).resolve().parents[2]


def _chunk(name: bytes, body: bytes, crc: int | None = None) -> bytes:
    crc = zlib.crc32(name + body) if crc is None else crc
    return struct.pack(">I", len(body)) + name + body + struct.pack(">I", crc)


def _png(channels: int) -> bytes:
    """A 50x40 PNG of seeded noise (seed 0), grey or colour, as OpenCV writes it."""
    shape = (40, 50, channels) if channels > 1 else (40, 50)
    pixels = np.random.default_rng(0).integers(0, 256, shape, np.uint8)
    ok, encoded = cv2.imencode(".png", pixels)
    assert ok
    return encoded.tobytes()


def _after_header(png: bytes, *chunks: bytes) -> bytes:
    """``png`` with ``chunks`` between its IHDR (the signature and IHDR: 33 bytes) and IDAT."""
    return png[:33] + b"".join(chunks) + png[33:]


# each makes libpng print a warning (checked below); the valid gAMA beside the zTXt would
# change no pixel either were OpenCV to see it
ODD_PNGS = {
    "tEXt with a bad CRC": _after_header(_png(3), _chunk(b"tEXt", b"Comment\0hello", crc=1)),
    "iCCP too short": _after_header(
        _png(3), _chunk(b"iCCP", b"sRGB\0\0" + zlib.compress(bytes(200)))
    ),
    "sRGB of no intent": _after_header(_png(3), _chunk(b"sRGB", b"\x07")),
    "pHYs too short": _after_header(_png(3), _chunk(b"pHYs", bytes(5))),
    "valid gAMA and a bad zTXt": _after_header(
        _png(3), _chunk(b"gAMA", struct.pack(">I", 45455)), _chunk(b"zTXt", b"k\0\0xx")
    ),
    "tRNS with a bad CRC": _after_header(_png(1), _chunk(b"tRNS", b"\0\x80", crc=7)),
    "grey with a tRNS, and a bad tEXt": _after_header(
        _png(1), _chunk(b"tRNS", b"\0\x80"), _chunk(b"tEXt", b"a\0b", crc=3)
    ),
}

_DECODE = """
import sys
import numpy as np
from vision.imageio import CorruptImageError, decode_image
images = {}
for number, path in enumerate(sys.argv[1:]):
    try:
        images[str(number)] = decode_image(open(path, "rb").read())
    except CorruptImageError as error:
        print(error)
np.savez(sys.argv[1] + ".npz", **images)
"""


def _run(code: str, paths: list[Path]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", code, *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)


def test_the_odd_pngs_make_libpng_speak_when_opencv_decodes_them_whole(tmp_path: Path) -> None:
    """Where the expectation below comes from: OpenCV given each file as it is."""
    paths = []
    for number, data in enumerate(ODD_PNGS.values()):
        paths.append(tmp_path / f"{number}.png")
        paths[-1].write_bytes(data)
    code = (
        "import sys, cv2, numpy as np\n"
        "for path in sys.argv[1:]:\n"
        "    cv2.imdecode(np.fromfile(path, np.uint8), cv2.IMREAD_UNCHANGED)\n"
    )
    err = _run(code, paths).stderr
    assert err.count("libpng warning") == len(ODD_PNGS), err


def test_an_odd_png_decodes_in_silence_to_opencvs_pixels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = []
    for number, data in enumerate(ODD_PNGS.values()):
        paths.append(tmp_path / f"{number}.png")
        paths[-1].write_bytes(data)
    result = _run(_DECODE, paths)
    assert result.stderr == "" and result.stdout == ""
    decoded = np.load(f"{paths[0]}.npz")
    # the expectation: OpenCV given the whole file (libpng speaks here), normalised alike
    monkeypatch.setattr("vision.imageio.decoder_png", lambda data: data)
    for number, (name, data) in enumerate(ODD_PNGS.items()):
        assert np.array_equal(decoded[str(number)], decode_image(data)), name


def test_a_critical_chunk_with_a_bad_crc_is_named_not_printed(tmp_path: Path) -> None:
    png = _png(3)
    damaged = png[:-16] + b"\0\0\0\0" + png[-12:]  # the last IDAT's CRC, before IEND
    path = tmp_path / "damaged.png"
    path.write_bytes(damaged)
    result = _run(_DECODE, [path])
    assert result.stderr == ""
    assert result.stdout == "corrupt PNG: its IDAT chunk fails its CRC check\n"
    with pytest.raises(CorruptImageError, match="its IDAT chunk fails its CRC check"):
        decode_image(damaged)


def test_a_png_with_nothing_to_drop_is_passed_on_as_it_is() -> None:
    png = _png(3)
    assert decoder_png(png) is png  # no copy
    assert decoder_png(png[:-5]) == png[:-5]  # cut short: the decoder refuses it
    with_text = _after_header(png, _chunk(b"tEXt", b"a\0b"))
    assert decoder_png(with_text) == png
