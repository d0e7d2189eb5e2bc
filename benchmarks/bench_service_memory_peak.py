"""The service's resident memory under parallel large uploads, for sizing a container.

    python benchmarks/bench_service_memory_peak.py [--clients 20] [--root DIR]

Starts ``python serve.py`` (one worker, the shipped models, the default limits and its 512 MiB
decoding budget) from ``--root`` (default: this checkout), then measures the RSS of the server
(from ``/proc``, sampled every 20 ms) in three phases, each ``--clients`` requests at once:

1. ``/v1/annotated`` of a 49-megapixel JPEG (7000 x 7000, ``examples/hand.jpg`` enlarged;
   decoded at a half, read, drawn at full size and encoded): the heaviest request there is;
2. ``/v1/read`` of a 20 MB body (a JPEG header and zeros: buffered whole, then refused as
   corrupt): the upload bodies, which the decoding budget does not count;
3. idle, 3 s after the last answer: what the allocator keeps.

Prints the RSS before, the peak and the idle RSS of each phase, and the answers' statuses.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import httpx
from process_tree import tree_rss_kib

ROOT = Path(__file__).resolve().parent.parent


def _photo() -> bytes:
    image = cv2.imread(str(ROOT / "examples" / "hand.jpg"))
    image = cv2.resize(image, (7000, 7000), interpolation=cv2.INTER_CUBIC)
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return buffer.tobytes()


class Sampler:
    """The peak RSS (MiB) of a process tree while it runs, sampled every 20 ms."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_kib(self.pid) / 1024)
            time.sleep(0.02)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _phase(name: str, pid: int, clients: int, send: object) -> None:
    before = tree_rss_kib(pid) / 1024
    with Sampler(pid) as sampler, ThreadPoolExecutor(clients) as pool:
        statuses = collections.Counter(pool.map(send, range(clients)))  # type: ignore[arg-type]
    time.sleep(3)
    idle = tree_rss_kib(pid) / 1024
    print(
        f"{name}: RSS before {before:.0f} MiB, peak {sampler.peak:.0f} MiB, idle after "
        f"{idle:.0f} MiB; answers {dict(sorted(statuses.items()))}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()
    photo = _photo()
    body = b"\xff\xd8\xff\xe0" + bytes(20_000_000)
    print(f"photo: {len(photo):,} bytes, 7000 x 7000; body: {len(body):,} bytes", flush=True)
    with tempfile.TemporaryDirectory() as data:
        port = 8000 + os.getpid() % 1000
        environment = {**os.environ, "HANDREADER_DATA": data, "PYTHONPATH": str(args.root)}
        server = subprocess.Popen(
            [sys.executable, "serve.py", "--port", str(port)],
            cwd=args.root, env=environment,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
            httpx.post(f"{url}/v1/read", content=photo, timeout=600)  # warm: models, arenas

            def annotated(_: int) -> int:
                answer = httpx.post(f"{url}/v1/annotated", content=photo, timeout=900)
                return answer.status_code

            def upload(_: int) -> int:
                answer = httpx.post(
                    f"{url}/v1/read", content=body, timeout=900,
                    headers={"Content-Type": "image/jpeg"},
                )  # fmt: skip
                return answer.status_code

            _phase("annotated 49 MP", server.pid, args.clients, annotated)
            _phase("20 MB bodies", server.pid, args.clients, upload)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
