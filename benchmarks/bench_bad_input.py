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

``--attacks`` replays the second set of attacks instead, against a server with the audit log
on a throw-away PostgreSQL cluster (``benchmarks/postgres_cluster.py``):

7. **scan bomb**: a 7000 x 7000 grey progressive JPEG of about 6,000 one-coefficient scans on
   ``POST /v1/read``: its status and seconds (refused from the header walk: 413);
8. **progressive x12**: twelve 7000 x 7000 4:4:4 progressive JPEGs at once (each holds about
   285 MiB of coefficients while decoded): statuses, seconds, each worker's peak memory;
9. **frozen database**: the cluster stopped (SIGSTOP) for 12 s while four verifications wait:
   their statuses and seconds, ``/health``'s worst latency and a photo read's seconds
   meanwhile;
10. **JSON flood**: sixteen 893 KiB bodies of arrays 30 deep on ``POST /v1/score`` at once:
    their statuses and ``/health``'s worst latency meanwhile;
11. **text flood**: one 17.7 MiB text message on ``WS /v1/live``: the answer, the seconds, and
    ``/health``'s worst latency meanwhile;
12. **wrong tokens**: 1,000 requests with a wrong operator token, 16 at a time: their
    statuses, their seconds, the server's log lines meanwhile.

Targets: the scan bomb refused, the twelve refused or read with every worker under 1 GB,
``/health`` within 1 s in phases 9 to 11, a photo read within 1 s while the database is
frozen and the verifications answered 503 ``store_unavailable``.

Usage::

    .venv/bin/python benchmarks/bench_bad_input.py [--workers 2] [--descriptors 192]
        [--idle 300] [--json OUT]
    .venv/bin/python benchmarks/bench_bad_input.py --attacks [--workers 2] [--json OUT]
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


def _request(
    port: int,
    method: str,
    path: str,
    body: bytes = b"",
    timeout: float = 120,
    kind: str = "application/octet-stream",
) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": kind} if body else {}
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


def _reads_at_once(
    server: subprocess.Popen[bytes], port: int, count: int, body: bytes
) -> dict[str, Any]:
    """``count`` concurrent ``POST /v1/read`` of ``body``: statuses, seconds, worker peaks."""
    statuses, seconds = _concurrently(count, lambda: _request(port, "POST", "/v1/read", body))
    return {"statuses": statuses, "seconds": seconds, "peak_mib": worker_peaks_mib(server.pid)}


def _bad_frame(port: int, frame: bytes) -> dict[str, Any]:
    from websockets.sync.client import connect

    url = f"ws://127.0.0.1:{port}/v1/live"
    with connect(url, max_size=None) as socket_, _HealthPoller(port) as poller:
        start = time.perf_counter()
        socket_.send(frame)
        answer = json.loads(socket_.recv(timeout=300))
        seconds = time.perf_counter() - start
    return {
        "frame_s": round(seconds, 2),
        "answer": "error " + answer["error"]["code"] if "error" in answer else "read",
        "health_polls": len(poller.latencies),
        "health_worst_s": poller.worst_s,
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


def progressive_jpeg(side: int, extra_scans: int = 0) -> bytes:
    """A ``side`` x ``side`` grey 4:4:4 progressive JPEG, with ``extra_scans`` more
    one-coefficient refinement scans before its end (the shape of a scan bomb)."""
    import io

    from PIL import Image, ImageFile

    ImageFile.MAXBLOCK = max(ImageFile.MAXBLOCK, side * side * 3)
    image = Image.new("RGB", (side, side), (128, 128, 128))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90, progressive=True, subsampling=0)
    data = out.getvalue()
    scan = bytes([0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x01, 0x10, 0x00])
    return data[:-2] + scan * extra_scans + b"\xff\xd9"


def deep_json(size: int = 893 * 1024, depth: int = 30) -> bytes:
    """A JSON body of about ``size`` bytes: arrays ``depth`` deep, side by side."""
    one = "[" * depth + "1" + "]" * depth
    count = max(1, size // (len(one) + 1))
    return ('{"hands": [' + ",".join([one] * count) + "]}").encode()


class _HealthPoller:
    """``/health`` asked every 50 ms in a thread while the block runs: its worst latency."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.latencies: list[float] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._poll)

    def _poll(self) -> None:
        while not self._done.is_set():
            self.latencies.append(health_s(self.port))
            time.sleep(0.05)

    def __enter__(self) -> _HealthPoller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    @property
    def worst_s(self) -> float:
        return round(max(self.latencies, default=0.0), 3)


TOKEN = "bench-operator-token"


def _verify(port: int, photo: bytes) -> tuple[int, float, str]:
    import httpx

    started = time.perf_counter()
    options = {"stake": 100, "declared": {"players": [{"seat": 1, "outcome": "win"}]}}
    answer = httpx.post(
        f"http://127.0.0.1:{port}/v1/verify",
        files={"image": ("round.jpg", photo, "image/jpeg")},
        data={"options": json.dumps(options)},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=60,
    )
    code = answer.json().get("error", {}).get("code", "") if answer.status_code >= 400 else ""
    return answer.status_code, round(time.perf_counter() - started, 2), code


def _parent(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("PPid:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cluster_pids(url: str) -> list[int]:
    """The processes of the throw-away cluster serving ``url``: its postmaster (started with
    that port) and the postmaster's children."""
    port = url.rsplit(":", 1)[1].split("/")[0]
    pids = [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]
    masters = [pid for pid in pids if f"port={port}" in _command(pid).replace(" ", "")]
    return masters + [pid for pid in pids if _parent(pid) in masters]


def _frozen_database(port: int, url: str, photo: bytes, seconds: float) -> dict[str, Any]:
    import signal

    pids = _cluster_pids(url)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        with _HealthPoller(port) as poller, ThreadPoolExecutor(4) as pool:
            verifications = [pool.submit(_verify, port, photo) for _ in range(4)]
            time.sleep(0.5)
            started = time.perf_counter()
            status = _request(port, "POST", "/v1/read", photo, timeout=60)
            read_s = round(time.perf_counter() - started, 3)
            answers = [future.result() for future in verifications]
            time.sleep(max(0.0, seconds - 0.5 - read_s))
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    return {
        "stopped_processes": len(pids),
        "verifications": [list(answer) for answer in answers],
        "photo_read": [status, read_s],
        "health_worst_s": poller.worst_s,
    }


def _text_flood(port: int, size: int) -> dict[str, Any]:
    from websockets.sync.client import connect

    with _HealthPoller(port) as poller:
        started = time.perf_counter()
        try:
            with connect(f"ws://127.0.0.1:{port}/v1/live", max_size=None) as socket_:
                socket_.send("x" * size)
                answer = json.loads(socket_.recv(timeout=60))
                outcome = "error " + answer["error"]["code"] if "error" in answer else "answered"
        except Exception as error:  # the server may close the stream instead of answering
            outcome = f"closed: {type(error).__name__}"
        seconds = round(time.perf_counter() - started, 2)
    return {"answer": outcome, "seconds": seconds, "health_worst_s": poller.worst_s}


def _wrong_tokens(port: int, count: int, log: Path) -> dict[str, Any]:
    """``count`` requests with a wrong operator token, 16 at a time: their statuses, the
    seconds they took and the log lines the server wrote meanwhile."""
    lines_before = len(log.read_text(errors="replace").splitlines())

    def guess(_: int) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request("GET", "/v1/audit", headers={"Authorization": "Bearer guess"})
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(guess, range(count)))
    seconds = round(time.perf_counter() - started, 1)
    statuses = {str(status): answers.count(status) for status in sorted(set(answers))}
    time.sleep(0.5)
    lines = len(log.read_text(errors="replace").splitlines()) - lines_before
    return {"statuses": statuses, "seconds": seconds, "log_lines": lines}


def attacks(args: argparse.Namespace) -> int:
    """Phases 7 to 11 (see the module's docstring); 0 when every target holds."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from postgres_cluster import throwaway_cluster

    scan_bomb = progressive_jpeg(7000, extra_scans=6000)
    progressive = progressive_jpeg(7000)
    flood, photo = deep_json(), photo_jpeg()
    print(f"scan bomb {len(scan_bomb):,} bytes; progressive {len(progressive):,} bytes; "
          f"JSON body {len(flood):,} bytes")  # fmt: skip
    figures: dict[str, Any] = {"workers": args.workers}
    with throwaway_cluster() as url, tempfile.NamedTemporaryFile(suffix=".log") as log_file:
        port = _free_port()
        environ = {"HANDREADER_DATABASE_URL": url, "HANDREADER_AUDIT_TOKEN": TOKEN}
        server = _start(port, args.workers, 4096, log_file, **environ)
        try:
            for _ in range(2 * args.workers):
                _request(port, "POST", "/v1/read", photo)
                _verify(port, photo)
            figures["rest"] = {"peak_mib": worker_peaks_mib(server.pid)}
            started = time.perf_counter()
            status = _request(port, "POST", "/v1/read", scan_bomb)
            figures["scan bomb"] = {
                "status": status,
                "seconds": round(time.perf_counter() - started, 2),
            }
            print("scan bomb:", figures["scan bomb"])
            figures["progressive x12"] = _reads_at_once(server, port, 12, progressive)
            print("progressive x12:", figures["progressive x12"])
            figures["frozen database"] = _frozen_database(port, url, photo, 12.0)
            print("frozen database:", figures["frozen database"])
            with _HealthPoller(port) as poller:
                statuses, seconds = _concurrently(
                    16, lambda: _request(port, "POST", "/v1/score", flood, kind="application/json")
                )
            figures["JSON flood"] = {
                "statuses": sorted(set(statuses)),
                "seconds": seconds,
                "health_worst_s": poller.worst_s,
            }
            print("JSON flood:", figures["JSON flood"])
            figures["text flood"] = _text_flood(port, int(17.7 * 1024 * 1024))
            print("text flood:", figures["text flood"])
            figures["wrong tokens"] = _wrong_tokens(port, 1000, Path(log_file.name))
            print("wrong tokens:", figures["wrong tokens"])
        finally:
            server.terminate()
            server.wait(timeout=30)
    frozen = figures["frozen database"]
    checks = {
        "scan bomb refused (413)": figures["scan bomb"]["status"] == 413,
        "progressive x12: refused or read, workers under 1 GiB": max(
            figures["progressive x12"]["peak_mib"]
        )
        < 1024
        and all(status in (200, 413, 503) for status in figures["progressive x12"]["statuses"]),
        "frozen database: verifications 503 store_unavailable": all(
            answer[0] == 503 and answer[2] == "store_unavailable"
            for answer in frozen["verifications"]
        ),
        "frozen database: a photo read within 1 s": frozen["photo_read"][0] == 200
        and frozen["photo_read"][1] < 1,
        "frozen database: /health within 1 s": frozen["health_worst_s"] < 1,
        "JSON flood: /health within 1 s": figures["JSON flood"]["health_worst_s"] < 1,
        "text flood: /health within 1 s": figures["text flood"]["health_worst_s"] < 1,
        "wrong tokens: held off (429) and logged in groups": figures["wrong tokens"][
            "statuses"
        ].get("429", 0)
        > 900
        and figures["wrong tokens"]["log_lines"] <= 20,
    }
    return _report(figures, checks, args.json)


def _report(figures: dict[str, Any], checks: dict[str, bool], out: Path | None) -> int:
    figures["checks"] = checks
    for check, passed in checks.items():
        print(f"{'PASS' if passed else 'FAIL'}  {check}")
    if out is not None:
        out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if all(checks.values()) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--descriptors", type=int, default=192, help="soft RLIMIT_NOFILE")
    parser.add_argument("--idle", type=int, default=300, help="idle sockets to open")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--attacks", action="store_true", help="replay phases 7 to 11 instead")
    args = parser.parse_args(argv)
    if args.attacks:
        return attacks(args)

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
                figures[name] = _reads_at_once(server, port, 4, data)
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
            figures["no budget"] = _reads_at_once(server, port, 4, decodable)
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
    return _report(figures, checks, args.json)


if __name__ == "__main__":
    sys.exit(main())
