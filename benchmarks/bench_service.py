"""Load test of the HTTP API on loopback: throughput, latency, server CPU, errors and memory.

For one worker and for two, starts the server on a free port and measures:

1. card-code scoring (``POST /v1/score`` with a JSON body): a banker and one player, and a full
   table of a banker and six players; ``--requests`` each (default 2,000) from ``--clients``
   client processes, each on one keep-alive ``http.client`` connection;
2. image scoring (``POST /v1/score`` with the photo as the raw body): one client at a time
   (latency, compared with the recognizer's bare time per image measured in this process on
   the same image), then ``--clients`` at once (throughput);
3. the server's memory (RSS of the server and its workers) before and after the requests, and
   the server's CPU time per request (user + system, from /proc): the throughput one idle core
   would give, whatever else the machine is running.

The server is ``python serve.py`` with the shipped models. Without them (or with
``--stand-in-ms``), the image phases run against the same app whose recognizer is a stand-in
that waits the given time without holding the GIL (as ONNX Runtime does) and reads no card:
what is measured is then the service's own cost around a recognizer of known time.

Every phase stops at ``--seconds``. Targets (issue 5): code scoring >= 1,500 requests/s on one
worker; image scoring within 20% of the bare recognizer; zero errors; memory flat.

Usage::

    .venv/bin/python benchmarks/bench_service.py [--image PATH] [--requests 2000]
        [--image-requests 200] [--clients 2] [--seconds 60] [--workers 1 2]
        [--stand-in-ms 40] [--json OUT]
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
TABLE = [
    "AS 2S 3S 4S 8S",
    "KS QS 10S 5C 5S",
    "3H 7S KD 8C 6D",
    "2C 3C 5H 9H 10D",
    "JC QC KC JD QD",
    "4H 6H 10H JH KH",
    "AD 2D 3D 4D 6C",
]


def _codes_body(hands: int) -> bytes:
    body = {"hands": TABLE[:hands], "banker": 0, "bet": "double", "stake": 100}
    return json.dumps(body).encode()


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
    server_cpu_us: float
    statuses: dict[str, int]


# --- the stand-in recognizer (imported by uvicorn in the server process) -------------------------


class StandInReader:
    """A recognizer that waits ``milliseconds`` without holding the GIL and reads no card."""

    def __init__(self, milliseconds: float) -> None:
        self.seconds = milliseconds / 1000

    def read(self, image_bgr: Any) -> Any:
        from vision.detections import Reading

        time.sleep(self.seconds)
        return Reading((int(image_bgr.shape[1]), int(image_bgr.shape[0])), ())


def stand_in_app() -> Any:
    """The API around the stand-in (the app factory ``serve.run_server`` is given)."""
    import serve

    return serve.create_app(reader=StandInReader(float(os.environ["BENCH_STAND_IN_MS"])))


# --- measuring -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _processes() -> tuple[dict[int, list[int]], dict[int, float]]:
    """Children of every process, and CPU seconds (user + system) of every process."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    return children, cpu


def _tree(pid: int, children: dict[int, list[int]]) -> list[int]:
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack += children.get(current, [])
    return found


def tree_cpu_s(pid: int) -> float:
    """CPU seconds used so far by a process and its descendants."""
    children, cpu = _processes()
    return sum(cpu.get(member, 0.0) for member in _tree(pid, children))


def tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and its descendants, in KiB."""
    children, _ = _processes()
    total = 0
    for member in _tree(pid, children):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def _client(
    port: int, body: bytes, content_type: str, count: int, deadline: float
) -> tuple[list[float], dict[str, int]]:
    """One keep-alive connection sending ``count`` requests: latencies (s) and statuses."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": content_type, "Content-Length": str(len(body))}
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    for _ in range(count):
        if time.monotonic() > deadline:
            break
        start = time.perf_counter()
        try:
            connection.request("POST", "/v1/score", body, headers)
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
    server: subprocess.Popen[bytes],
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
    arguments = [(port, body, content_type, share, deadline) for share in shares]
    cpu_before = tree_cpu_s(server.pid)
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(clients) as pool:
        results = pool.starmap(_client, arguments)
    elapsed = time.perf_counter() - start
    cpu = tree_cpu_s(server.pid) - cpu_before
    latencies = sorted(value for found, _ in results for value in found)
    statuses: dict[str, int] = {}
    for _, counts in results:
        for status, count in counts.items():
            statuses[status] = statuses.get(status, 0) + count
    done = len(latencies)

    def quantile(q: float) -> float:
        return round(latencies[min(done - 1, int(q * done))] * 1e3, 3) if done else float("nan")

    return Phase(
        name,
        workers,
        clients,
        done,
        done - statuses.get("200", 0),
        round(elapsed, 3),
        round(done / elapsed, 1) if elapsed else 0.0,
        quantile(0.50),
        quantile(0.99),
        round(cpu / max(done, 1) * 1e6, 1),
        statuses,
    )


def _start(port: int, workers: int, stand_in_ms: float | None) -> subprocess.Popen[bytes]:
    environment = dict(os.environ)
    if stand_in_ms is None:
        command = [sys.executable, "serve.py", "--port", str(port), "--workers", str(workers)]
    else:
        environment["BENCH_STAND_IN_MS"] = str(stand_in_ms)
        environment["PYTHONPATH"] = os.pathsep.join([str(ROOT / "benchmarks"), str(ROOT)])
        factory = "bench_service:stand_in_app"
        launch = f"import sys, serve; sys.exit(serve.main(sys.argv[1:], {factory!r}))"
        command = [sys.executable, "-c", launch, "--port", str(port), "--workers", str(workers)]
    server = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            errors = server.stderr.read().decode() if server.stderr else ""
            raise RuntimeError(f"server exited: {errors[-2000:]}")
        try:
            if _health(port) in (200, 503):
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("server did not answer /health within 120 s")


def _health(port: int) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("GET", "/health")
    status = connection.getresponse().status
    connection.close()
    return status


def _bare_ms(image_path: Path, repeats: int, stand_in_ms: float | None) -> dict[str, float]:
    """Median ms, in this process, of decoding the image and of the recognizer on it."""
    from vision.imageio import decode_image

    data = image_path.read_bytes()
    decode = []
    for _ in range(repeats):
        start = time.perf_counter()
        image = decode_image(data)
        decode.append((time.perf_counter() - start) * 1e3)
    if stand_in_ms is not None:
        return {"decode": statistics.median(decode), "read": stand_in_ms}
    from vision.reader import Reader

    reader = Reader.load()
    reader.read(image)  # warm-up
    read = []
    for _ in range(repeats):
        start = time.perf_counter()
        reader.read(image)
        read.append((time.perf_counter() - start) * 1e3)
    return {"decode": statistics.median(decode), "read": statistics.median(read)}


def _default_image() -> Path:
    for folder in ("/work/shared/realdata/pinochle", "/work/shared/realdata/singles"):
        found = sorted(Path(folder).glob("*.jpg")) if Path(folder).is_dir() else []
        if found:
            return found[0]
    raise SystemExit("no image found: give --image PATH")


def _models_ready() -> bool:
    try:
        from vision.reader import Reader

        Reader.load()
    except (ImportError, ValueError) as error:
        print(f"models not loaded ({error})")
        return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--image", type=Path, default=None, help="photo for image scoring")
    parser.add_argument("--requests", type=int, default=2000, help="per code-scoring phase")
    parser.add_argument("--image-requests", type=int, default=200, help="per image phase")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--seconds", type=float, default=60.0, help="limit of each phase")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--stand-in-ms",
        type=float,
        default=None,
        help="use a stand-in recognizer of this time (default without models: 40)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    image = args.image or _default_image()
    image_body = image.read_bytes()
    stand_in = args.stand_in_ms
    if stand_in is None and not _models_ready():
        stand_in = 40.0
        print(f"image phases use a stand-in recognizer of {stand_in:g} ms")
    load = os.getloadavg()[0]
    print(f"image {image} ({len(image_body):,} bytes); {os.cpu_count()} cpus; load {load:.2f}")
    bare = _bare_ms(image, 20, stand_in)
    print(f"bare, in process: decode {bare['decode']:.2f} ms, recognizer {bare['read']:.2f} ms")
    report: dict[str, Any] = {
        "image": str(image),
        "cpus": os.cpu_count(),
        "load": load,
        "bare_ms": bare,
        "stand_in_ms": stand_in,
        "phases": [],
        "rss_kib": {},
    }
    for workers in args.workers:
        port = _free_port()
        server = _start(port, workers, stand_in)
        try:
            _load("warm-up", server, workers, port, _codes_body(2), "application/json", 300, 1, 30)
            rss = {"start": tree_rss_kib(server.pid)}
            phases = []
            for hands in (2, 7):
                phases.append(
                    _load(
                        f"codes {hands} hands",
                        server,
                        workers,
                        port,
                        _codes_body(hands),
                        "application/json",
                        args.requests,
                        args.clients,
                        args.seconds,
                    )
                )
                rss[f"after codes {hands} hands"] = tree_rss_kib(server.pid)
            for clients in (1, args.clients):
                phases.append(
                    _load(
                        f"image x{clients}",
                        server,
                        workers,
                        port,
                        image_body,
                        "image/jpeg",
                        args.image_requests,
                        clients,
                        args.seconds,
                    )
                )
                rss[f"after image x{clients}"] = tree_rss_kib(server.pid)
            report["phases"] += [asdict(phase) for phase in phases]
            report["rss_kib"][str(workers)] = rss
            for phase in phases:
                print(
                    f"workers {workers} {phase.name:>14}: {phase.requests:5d} in "
                    f"{phase.seconds:6.2f} s {phase.per_second:8.1f}/s "
                    f"p50 {phase.p50_ms:7.2f} ms p99 "
                    f"{phase.p99_ms:7.2f} ms server CPU {phase.server_cpu_us:7.0f} us/request "
                    f"errors {phase.errors}"
                )
            image_one = next(phase for phase in phases if phase.name == "image x1")
            over = image_one.p50_ms / bare["read"] - 1
            print(
                f"workers {workers} image p50 {image_one.p50_ms:.2f} ms vs bare recognizer "
                f"{bare['read']:.2f} ms: {over:+.1%}"
            )
            print(
                f"workers {workers} RSS MiB: "
                + ", ".join(f"{name} {kib / 1024:.1f}" for name, kib in rss.items())
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
