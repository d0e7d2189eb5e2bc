"""The service under attack, replayed on loopback: image bombs, a bad live frame, idle sockets.

Starts ``python serve.py`` (the shipped models, ``--workers`` workers, each with a soft
descriptor limit of ``--descriptors``) on a free port and measures, against the same server at
rest in the same run (the baseline):

1. **rest**: each worker's peak resident memory (``VmHWM``) after a few ordinary photos, and
   ``/health``'s latency (median and worst of 20);
2. **bomb x4**: four concurrent ``POST /v1/read`` of a 7000 x 7000 16-bit RGBA PNG (a few
   hundred kilobytes, 392 MB decoded, under the 50-megapixel limit): the statuses, the seconds,
   each worker's peak memory after;
3. **decodable bomb x4**: the same with a 5000 x 5000 16-bit RGBA PNG (200 MB decoded: under
   every default limit, so it is decoded, within the decoding memory budget);
4. **bad frame**: the decodable bomb sent as one ``WS /v1/live`` frame while ``/health`` is
   asked every 50 ms: the worst ``/health`` latency while the frame is decoded and read;
5. **idle**: ``--idle`` sockets opened and left silent (more than the descriptors the workers
   may hold), then ``/health``'s worst latency of 10, and the server's log lines meanwhile;
6. **no budget**: phase 3 again on a second server whose decoding memory budget is made too
   large to matter (``HANDREADER_DECODE_MEMORY``): what the budget saves.

Targets: peak memory under 1 GB a worker through the bombs, ``/health`` within 1 s
during the bad frame and with the idle sockets open, no 5xx but 503 ``busy``.

Usage::

    .venv/bin/python benchmarks/bench_bad_input.py [--workers 2] [--descriptors 192]
        [--idle 300] [--json OUT]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def bomb_png(side: int) -> bytes:
    """A ``side`` x ``side`` 16-bit RGBA PNG of one colour: a few hundred kilobytes."""
    image = np.zeros((side, side, 4), np.uint16)
    image[..., 3] = 65535
    ok, encoded = cv2.imencode(".png", image)
    assert ok
    return encoded.tobytes()


def photo_jpeg() -> bytes:
    """An ordinary 1280 x 960 photo-like JPEG (noise), for the warm-up."""
    rng = np.random.default_rng(26)
    image = rng.integers(0, 256, (960, 1280, 3), dtype=np.uint8)
    return cv2.imencode(".jpg", image)[1].tobytes()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = Path(f"/proc/{pid}/task").iterdir()
        for task in tasks:
            found += [int(child) for child in (task / "children").read_text().split()]
    except OSError:
        return []
    return found


def worker_peaks_mib(pid: int) -> list[float]:
    """Peak resident memory (VmHWM) of each worker of the server ``pid``, in MiB (the server
    itself when it has no worker processes)."""
    workers = [
        child
        for child in _children(pid)
        if "spawn_main" in _command(child) and "resource_tracker" not in _command(child)
    ] or [pid]
    peaks = []
    for worker in workers:
        for line in Path(f"/proc/{worker}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(round(int(line.split()[1]) / 1024, 1))
    return peaks


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def _request(port: int, method: str, path: str, body: bytes = b"", timeout: float = 120) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/octet-stream"} if body else {}
        connection.request(method, path, body=body or None, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def health_s(port: int, timeout: float = 10) -> float:
    """Seconds ``/health`` took to answer (any status); ``timeout`` when it did not."""
    start = time.perf_counter()
    try:
        _request(port, "GET", "/health", timeout=timeout)
    except OSError:
        return timeout
    return time.perf_counter() - start


def _start(
    port: int, workers: int, descriptors: int, log: Any, **environ: str
) -> subprocess.Popen[bytes]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

    data = tempfile.mkdtemp(prefix="bench-bad-input-")
    environment = {**os.environ, "HANDREADER_DATA": data, "PYTHONUNBUFFERED": "1", **environ}
    command = [sys.executable, "serve.py", "--port", str(port), "--workers", str(workers)]
    server = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=log, stderr=log, preexec_fn=limit
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"serve.py exited with {server.returncode}")
        if health_s(port, timeout=2) < 2:
            return server
        time.sleep(0.3)
    server.kill()
    raise RuntimeError("serve.py did not answer /health within 180 s")


def _concurrently(count: int, call: Callable[[], int]) -> tuple[list[int], float]:
    start = time.perf_counter()
    with ThreadPoolExecutor(count) as pool:
        statuses = list(pool.map(lambda _: call(), range(count)))
    return statuses, round(time.perf_counter() - start, 2)


def _bad_frame(port: int, frame: bytes) -> dict[str, Any]:
    from websockets.sync.client import connect

    latencies: list[float] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            latencies.append(health_s(port))
            time.sleep(0.05)

    with connect(f"ws://127.0.0.1:{port}/v1/live", max_size=None) as socket_:
        poller = threading.Thread(target=poll)
        start = time.perf_counter()
        poller.start()
        socket_.send(frame)
        answer = json.loads(socket_.recv(timeout=300))
        seconds = time.perf_counter() - start
        done.set()
        poller.join()
    return {
        "frame_s": round(seconds, 2),
        "answer": "error " + answer["error"]["code"] if "error" in answer else "read",
        "health_polls": len(latencies),
        "health_worst_s": round(max(latencies), 3),
    }


def _idle(port: int, count: int, log: Path) -> dict[str, Any]:
    lines_before = len(log.read_text(errors="replace").splitlines())
    sockets = []
    refused = 0
    try:
        for _ in range(count):
            try:
                sockets.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                refused += 1
        time.sleep(1.0)
        latencies = [health_s(port) for _ in range(10)]
    finally:
        for connection in sockets:
            connection.close()
    lines = len(log.read_text(errors="replace").splitlines()) - lines_before
    return {
        "opened": len(sockets),
        "refused_by_client": refused,
        "health_median_s": round(statistics.median(latencies), 3),
        "health_worst_s": round(max(latencies), 3),
        "log_lines": lines,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--descriptors", type=int, default=192, help="soft RLIMIT_NOFILE")
    parser.add_argument("--idle", type=int, default=300, help="idle sockets to open")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)

    bomb, decodable, photo = bomb_png(7000), bomb_png(5000), photo_jpeg()
    print(f"bomb: 7000x7000 16-bit RGBA PNG, {len(bomb):,} bytes; decodable: 5000x5000, "
          f"{len(decodable):,} bytes")  # fmt: skip
    port = _free_port()
    figures: dict[str, Any] = {"workers": args.workers, "descriptors": args.descriptors}
    with tempfile.NamedTemporaryFile(suffix=".log") as log_file:
        log = Path(log_file.name)
        server = _start(port, args.workers, args.descriptors, log_file)
        try:
            for _ in range(2 * args.workers):
                _request(port, "POST", "/v1/read", photo)
            rest = [health_s(port) for _ in range(20)]
            figures["rest"] = {
                "peak_mib": worker_peaks_mib(server.pid),
                "health_median_s": round(statistics.median(rest), 4),
                "health_worst_s": round(max(rest), 4),
            }
            print("rest (baseline):", figures["rest"])
            for name, data in (("bomb x4", bomb), ("decodable bomb x4", decodable)):
                statuses, seconds = _concurrently(
                    4, lambda body=data: _request(port, "POST", "/v1/read", body)
                )
                figures[name] = {
                    "statuses": statuses,
                    "seconds": seconds,
                    "peak_mib": worker_peaks_mib(server.pid),
                }
                print(f"{name}:", figures[name])
            figures["bad frame"] = _bad_frame(port, decodable)
            print("bad frame:", figures["bad frame"])
            figures["idle"] = _idle(port, args.idle, log)
            print(f"idle x{args.idle}:", figures["idle"])
            figures["after"] = {"health_s": round(health_s(port), 4)}
        finally:
            server.terminate()
            server.wait(timeout=30)
        port = _free_port()
        unbounded = {"HANDREADER_DECODE_MEMORY": str(64 * 1024**3)}
        server = _start(port, args.workers, args.descriptors, log_file, **unbounded)
        try:
            for _ in range(2 * args.workers):
                _request(port, "POST", "/v1/read", photo)
            statuses, seconds = _concurrently(
                4, lambda: _request(port, "POST", "/v1/read", decodable)
            )
            figures["no budget"] = {
                "statuses": statuses,
                "seconds": seconds,
                "peak_mib": worker_peaks_mib(server.pid),
            }
            print("decodable bomb x4, no budget:", figures["no budget"])
        finally:
            server.terminate()
            server.wait(timeout=30)
    peak = max(figures["decodable bomb x4"]["peak_mib"] + figures["bomb x4"]["peak_mib"])
    checks = {
        "peak under 1 GiB a worker": peak < 1024,
        "health within 1 s during the bad frame": figures["bad frame"]["health_worst_s"] < 1,
        "health within 1 s with the idle sockets": figures["idle"]["health_worst_s"] < 1,
        "no 5xx but busy": all(
            status < 500 or status == 503
            for phase in ("bomb x4", "decodable bomb x4")
            for status in figures[phase]["statuses"]
        ),
    }
    figures["checks"] = checks
    for check, passed in checks.items():
        print(f"{'PASS' if passed else 'FAIL'}  {check}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
