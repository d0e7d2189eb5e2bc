"""Load test of the HTTP API on loopback: throughput, latency, errors and memory.

Starts ``python serve.py`` on a free port (one worker, then two), and for each:

1. card-code scoring (``POST /v1/score`` with a JSON body of a banker and six players):
   ``--requests`` requests (default 2,000) from ``--clients`` client processes, each on one
   keep-alive connection; requests per second, p50 / p99 latency, errors;
2. image scoring (``POST /v1/score`` with the image as the raw body): first one client at a
   time (latency, compared with ``Reader.read`` on the same image in this process: the
   recognizer's bare time), then ``--clients`` at once (throughput); needs the models;
3. the server's memory (RSS of the server and its worker processes) before and after the
   code-scoring requests.

Everything is bounded: each phase stops at ``--seconds`` even if requests remain. Targets (issue
5): code scoring >= 1,500 requests/s on one worker; image scoring within 20% of the bare
recognizer; zero errors; memory flat.

Usage::

    .venv/bin/python benchmarks/bench_service.py [--image PATH] [--requests 2000]
        [--image-requests 100] [--clients 4] [--seconds 60] [--workers 1 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CODES_BODY = json.dumps(
    {
        "hands": [
            "KS QS JS 10S 9S",
            "3H 7S KD 8C 6D",
            "AH 2H 3D 4C 5S",
            "9H 9D 2C 7C QD",
            "4H 6H 10D JH KH",
            "5D 6C 7D 8D 9C",
            "AS AD AC 2S 3S",
        ],
        "banker": 0,
        "profile": "trainer",
        "bet": "double",
        "stake": 100,
    }
).encode()


@dataclass(frozen=True)
class Phase:
    """The figures of one load phase."""

    name: str
    workers: int
    clients: int
    requests: int
    errors: int
    seconds: float
    per_second: float
    p50_ms: float
    p99_ms: float
    statuses: dict[str, int]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants, in KiB (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        stack += children.get(current, [])
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and its descendants."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    total, stack = 0.0, [pid]
    while stack:
        current = stack.pop()
        stack += children.get(current, [])
        total += times.get(current, 0.0)
    return total


def _client(
    port: int, path: str, body: bytes, content_type: str, count: int, deadline: float
) -> tuple[list[float], dict[str, int]]:
    """One keep-alive connection sending ``count`` requests; latencies (s) and statuses."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": content_type, "Content-Length": str(len(body))}
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    for _ in range(count):
        if time.monotonic() > deadline:
            break
        start = time.perf_counter()
        try:
            connection.request("POST", path, body, headers)
            response = connection.getresponse()
            response.read()
            status = str(response.status)
        except (OSError, http.client.HTTPException) as error:
            status = type(error).__name__
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        latencies.append(time.perf_counter() - start)
        statuses[status] = statuses.get(status, 0) + 1
    connection.close()
    return latencies, statuses


def _load(
    name: str,
    workers: int,
    port: int,
    body: bytes,
    content_type: str,
    requests: int,
    clients: int,
    seconds: float,
) -> Phase:
    """Send ``requests`` requests from ``clients`` processes; stop at ``seconds``."""
    deadline = time.monotonic() + seconds
    shares = [requests // clients + (1 if i < requests % clients else 0) for i in range(clients)]
    arguments = [(port, "/v1/score", body, content_type, share, deadline) for share in shares]
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(clients) as pool:
        results = pool.starmap(_client, arguments)
    elapsed = time.perf_counter() - start
    latencies = sorted(value for found, _ in results for value in found)
    statuses: dict[str, int] = {}
    for _, counts in results:
        for status, count in counts.items():
            statuses[status] = statuses.get(status, 0) + count
    done = len(latencies)

    def quantile(q: float) -> float:
        return latencies[min(done - 1, int(q * done))] * 1e3 if done else float("nan")

    return Phase(
        name,
        workers,
        clients,
        done,
        done - statuses.get("200", 0),
        round(elapsed, 3),
        round(done / elapsed, 1) if elapsed else 0.0,
        round(quantile(0.50), 3),
        round(quantile(0.99), 3),
        statuses,
    )


def _start(port: int, workers: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, str(ROOT / "serve.py"), "--port", str(port)]
    command += ["--workers", str(workers)]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"server exited: {server.stderr.read().decode() if server.stderr else ''}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/health")
            status = connection.getresponse().status
            connection.close()
            if status in (200, 503):
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("server did not answer /health within 120 s")


def _health(port: int) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/health")
    status = connection.getresponse().status
    connection.close()
    return status


def _bare_reader_ms(image_path: Path, repeats: int) -> tuple[float, float] | None:
    """Median ms of decode + ``Reader.read``, and of ``Reader.read`` alone, in this process."""
    try:
        from vision.imageio import load_image
        from vision.reader import Reader

        reader = Reader.load()
    except (ImportError, ValueError) as error:
        print(f"bare reader: not measured ({error})")
        return None
    data = image_path.read_bytes()
    from vision.imageio import decode_image

    image = load_image(image_path)
    reader.read(image)  # warm up
    both, alone = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        decoded = decode_image(data)
        middle = time.perf_counter()
        reader.read(decoded)
        end = time.perf_counter()
        both.append((end - start) * 1e3)
        alone.append((end - middle) * 1e3)
    return statistics.median(both), statistics.median(alone)


def _default_image() -> Path:
    for folder in ("/work/shared/realdata/singles", "/work/shared/realdata/scans"):
        found = sorted(Path(folder).glob("*.jpg")) if Path(folder).is_dir() else []
        if found:
            return found[0]
    raise SystemExit("no image found: give --image PATH")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--image", type=Path, default=None, help="photo for image scoring")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--image-requests", type=int, default=100)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0, help="limit of each phase")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    image = args.image or _default_image()
    image_body = image.read_bytes()
    report: dict[str, Any] = {"image": str(image), "cpus": os.cpu_count(), "phases": []}
    load = os.getloadavg()
    print(f"image {image} ({len(image_body):,} bytes); cpus {os.cpu_count()}; load {load[0]:.2f}")
    bare = _bare_reader_ms(image, repeats=20)
    if bare is not None:
        report["bare_ms"] = {"decode_and_read": round(bare[0], 2), "read": round(bare[1], 2)}
        print(f"bare: decode + Reader.read {bare[0]:.1f} ms, Reader.read {bare[1]:.1f} ms")
    for workers in args.workers:
        port = _free_port()
        server = _start(port, workers)
        try:
            healthy = _health(port) == 200
            _load("warm-up", workers, port, CODES_BODY, "application/json", 200, 1, 30)
            rss_before = _tree_rss_kib(server.pid)
            phases = [
                _load(
                    "codes", workers, port, CODES_BODY, "application/json",
                    args.requests, args.clients, args.seconds,
                )
            ]  # fmt: skip
            rss_after = _tree_rss_kib(server.pid)
            if healthy:
                for clients in (1, args.clients):
                    phases.append(
                        _load(
                            f"image x{clients}", workers, port, image_body, "image/jpeg",
                            args.image_requests, clients, args.seconds,
                        )
                    )  # fmt: skip
            else:
                print(f"workers {workers}: models not loaded (/health 503): image scoring skipped")
            report["phases"] += [asdict(phase) for phase in phases]
            report.setdefault("rss_kib", {})[str(workers)] = {
                "before": rss_before,
                "after": rss_after,
                "after_images": _tree_rss_kib(server.pid),
            }
            for phase in phases:
                print(
                    f"workers {workers} {phase.name:>10}: {phase.requests} requests "
                    f"{phase.per_second:8.1f}/s p50 {phase.p50_ms:7.2f} ms "
                    f"p99 {phase.p99_ms:7.2f} ms errors {phase.errors} {phase.statuses}"
                )
            print(
                f"workers {workers} RSS: {rss_before / 1024:.1f} MiB before, "
                f"{rss_after / 1024:.1f} MiB after {phases[0].requests} code requests"
            )
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
