"""Load test of the HTTP API on loopback: throughput, latency, server CPU, errors and memory.

For one worker and for two, starts the server on a free port and measures:

1. card-code scoring (``POST /v1/score`` with a JSON body): a banker and one player, and a full
   table of a banker and six players; ``--requests`` each (default 2,000) from ``--clients``
   client processes, each on one keep-alive connection (a lean raw-socket HTTP/1.1 client, so
   that the load generator, on the same cores, takes as little CPU from the server as it can);
2. image scoring (``POST /v1/score`` with the photo as the raw body): one client at a time
   (latency, compared with the recognizer's bare time per image measured in this process on
   the same image), then ``--clients`` at once (throughput);
3. the server's memory (RSS of the server and its workers) before and after the requests, and
   the server's CPU time per request (user + system, from /proc): the throughput one idle core
   would give, whatever else the machine is running;
4. with ``--phases ... memory``: ``--memory-requests`` image requests (default 2,000) in ten
   slices, the server's RSS sampled before the first and after every slice; the start, middle
   and end are printed with the growth over the whole run and over its second half (the first
   requests fill caches and allocator arenas; a leak keeps growing after that);
5. with ``--compare DIR`` (a checkout of the code before a change, e.g. ``git archive``):
   card-code scoring on one worker against three servers started side by side and measured in
   turn, ``--rounds`` times in rotating order, so that they share the machine's load: the
   checkout in DIR with uvicorn's pure-Python HTTP parser (h11), this checkout with h11, and
   this checkout with the parser uvicorn picks by default (httptools when installed). The
   medians compare the code change and the parser under the same load.

The server is ``python serve.py`` with the shipped models. Without them (or with
``--stand-in-ms``), the image phases run against the same app whose recognizer is a stand-in
(``benchmarks/stand_in_service.py``) that waits the given time without holding the GIL (as
ONNX Runtime does) and reads no card: what is measured is then the service's own cost around a
recognizer of known time. The load comes from ``benchmarks/loopback_client.py``, the server's
CPU and memory from ``benchmarks/process_tree.py``.

Every phase stops at ``--seconds``. Targets: code scoring >= 1,500 requests/s on one
worker; image scoring within 20% of the bare recognizer; zero errors; memory flat.

Usage::

    .venv/bin/python benchmarks/bench_service.py [--image PATH] [--requests 2000]
        [--image-requests 200] [--clients 2] [--seconds 60] [--workers 1 2]
        [--phases codes image memory] [--memory-requests 2000] [--compare DIR [--rounds 5]]
        [--stand-in-ms 40] [--json OUT]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from loopback_client import client_run, free_port
from process_tree import tree_cpu_s, tree_rss_kib

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
    load_1min: float
    """The machine's 1-minute load average at the end of the phase."""


# --- measuring -----------------------------------------------------------------------------------


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
    """Send ``requests`` requests from ``clients`` processes; stop at ``seconds``.

    The time is that from the first request sent to the last answer received (the client
    processes' start and end are not the server's business); the server's CPU is read before
    and after, so it includes the idle loop around the phase (small: one poll per wake-up).
    """
    deadline = time.monotonic() + seconds
    shares = [requests // clients + (1 if i < requests % clients else 0) for i in range(clients)]
    arguments = [(port, body, content_type, share, deadline) for share in shares]
    cpu_before = tree_cpu_s(server.pid)
    with multiprocessing.get_context("fork").Pool(clients) as pool:
        results = pool.starmap(client_run, arguments)
    cpu = tree_cpu_s(server.pid) - cpu_before
    elapsed = max(span[1] for _, _, span in results) - min(span[0] for _, _, span in results)
    latencies = sorted(value for found, _, _ in results for value in found)
    statuses: dict[str, int] = {}
    for _, counts, _ in results:
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
        round(os.getloadavg()[0], 2),
    )


def _start(port: int, workers: int, stand_in_ms: float | None) -> subprocess.Popen[bytes]:
    """``python serve.py`` on ``port`` (or the same around the stand-in recognizer)."""
    environment = dict(os.environ)
    if stand_in_ms is None:
        command = [sys.executable, "serve.py", "--port", str(port), "--workers", str(workers)]
    else:
        environment["BENCH_STAND_IN_MS"] = str(stand_in_ms)
        environment["PYTHONPATH"] = os.pathsep.join([str(ROOT / "benchmarks"), str(ROOT)])
        factory = "stand_in_service:stand_in_app"
        launch = f"import sys, serve; sys.exit(serve.main(sys.argv[1:], {factory!r}))"
        command = [sys.executable, "-c", launch, "--port", str(port), "--workers", str(workers)]
    return _launch(command, ROOT, environment, port)


def _start_uvicorn(root: Path, port: int, http: str) -> subprocess.Popen[bytes]:
    """One worker of the app in the checkout ``root`` (its ``serve.create_app``), run by
    uvicorn's command line with the HTTP parser ``http`` (h11, httptools or auto)."""
    command = [
        sys.executable, "-m", "uvicorn", "--factory", "serve:create_app", "--host", "127.0.0.1",
        "--port", str(port), "--http", http, "--no-access-log", "--log-level", "warning",
    ]  # fmt: skip
    environment = {**os.environ, "PYTHONPATH": str(root)}
    return _launch(command, root, environment, port)


def _launch(
    command: list[str], cwd: Path, environment: dict[str, str], port: int
) -> subprocess.Popen[bytes]:
    # a file, not a pipe: a chatty server must never block on it; it lives as long as the server
    log = tempfile.TemporaryFile()  # noqa: SIM115
    server = subprocess.Popen(command, cwd=cwd, env=environment, stdout=log, stderr=log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"server exited: {log.read().decode(errors='replace')[-2000:]}")
        try:
            if _health(port) in (200, 503):
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("server did not answer /health within 120 s")


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


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
    example = ROOT / "examples" / "hand.jpg"
    if not example.is_file():
        raise SystemExit("no image found: give --image PATH")
    return example


def _models_ready() -> bool:
    try:
        from vision.reader import Reader

        Reader.load()
    except (ImportError, ValueError) as error:
        print(f"models not loaded ({error})")
        return False
    return True


def _print_phase(phase: Phase) -> None:
    print(
        f"workers {phase.workers} {phase.name:>14}: {phase.requests:5d} in "
        f"{phase.seconds:6.2f} s {phase.per_second:8.1f}/s p50 {phase.p50_ms:7.2f} ms p99 "
        f"{phase.p99_ms:7.2f} ms server CPU {phase.server_cpu_us:7.0f} us/request "
        f"errors {phase.errors} load {phase.load_1min:.2f}"
    )


def _memory(
    server: subprocess.Popen[bytes], workers: int, port: int, body: bytes, args: argparse.Namespace
) -> dict[str, Any]:
    """``args.memory_requests`` image requests in ten slices, the server's RSS after each."""
    slices = 10
    deadline = time.monotonic() + args.memory_seconds
    samples = [(0, tree_rss_kib(server.pid))]
    done = errors = 0
    for index in range(slices):
        share = args.memory_requests // slices + (index < args.memory_requests % slices)
        left = max(deadline - time.monotonic(), 0.0)
        phase = _load(
            "memory", server, workers, port, body, "image/jpeg", share, args.clients, left
        )
        done += phase.requests
        errors += phase.errors
        samples.append((done, tree_rss_kib(server.pid)))
        if time.monotonic() > deadline:
            break
    start, middle, end = samples[0][1], samples[len(samples) // 2][1], samples[-1][1]
    found = {
        "requests": done,
        "errors": errors,
        "samples_kib": samples,
        "growth_kib": end - start,
        "second_half_growth_kib": end - middle,
    }
    cut = "" if done == args.memory_requests else f" (stopped at {args.memory_seconds:g} s)"
    print(
        f"workers {workers} memory over {done} image requests{cut}, errors {errors}: RSS start "
        f"{start / 1024:.1f} MiB, after {samples[len(samples) // 2][0]} {middle / 1024:.1f} MiB, "
        f"end {end / 1024:.1f} MiB; growth {(end - start) / 1024:+.1f} MiB, second half "
        f"{(end - middle) / 1024:+.1f} MiB"
    )
    return found


def _measure(
    workers: int,
    stand_in: float | None,
    image_body: bytes,
    bare: dict[str, float],
    args: argparse.Namespace,
) -> tuple[list[Phase], dict[str, int], dict[str, Any] | None]:
    """The phases asked for, against a fresh server of ``workers`` workers."""
    port = free_port()
    server = _start(port, workers, stand_in)
    memory = None
    try:
        _load("warm-up", server, workers, port, _codes_body(2), "application/json", 300, 1, 30)
        rss = {"start": tree_rss_kib(server.pid)}
        phases = []
        runs: list[tuple[str, bytes, str, int, int]] = []
        if "codes" in args.phases:
            for hands in (2, 7):
                body = _codes_body(hands)
                runs.append(
                    (f"codes {hands} hands", body, "application/json", args.requests, args.clients)
                )
        if "image" in args.phases:
            for clients in (1, args.clients):
                runs.append(
                    (f"image x{clients}", image_body, "image/jpeg", args.image_requests, clients)
                )
        for name, body, kind, count, clients in runs:
            phases.append(
                _load(name, server, workers, port, body, kind, count, clients, args.seconds)
            )
            _print_phase(phases[-1])
            rss[f"after {name}"] = tree_rss_kib(server.pid)
        if "image" in args.phases:
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
        if "memory" in args.phases:
            memory = _memory(server, workers, port, image_body, args)
    finally:
        _stop(server)
    return phases, rss, memory


def _compare(before: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Card-code scoring on one worker: the checkout ``before`` and this one, side by side."""
    variants = [("before, h11", before, "h11"), ("after, h11", ROOT, "h11")]
    variants.append(("after", ROOT, "auto"))
    servers: list[tuple[str, int, subprocess.Popen[bytes]]] = []
    figures: dict[tuple[str, int], list[Phase]] = {
        (label, hands): [] for label, _, _ in variants for hands in (2, 7)
    }
    try:
        for label, root, http in variants:
            port = free_port()
            servers.append((label, port, _start_uvicorn(root, port, http)))
        for _, port, server in servers:
            _load("warm-up", server, 1, port, _codes_body(2), "application/json", 300, 1, 30)
        for number in range(args.rounds):
            turn = number % len(servers)
            for hands in (2, 7):
                for label, port, server in servers[turn:] + servers[:turn]:
                    body = _codes_body(hands)
                    phase = _load(
                        f"{label} {hands}h", server, 1, port, body, "application/json",
                        args.requests, args.clients, args.seconds,
                    )  # fmt: skip
                    figures[label, hands].append(phase)
                    print(f"round {number + 1}: ", end="")
                    _print_phase(phase)
    finally:
        for _, _, server in servers:
            _stop(server)
    summary: dict[str, Any] = {}
    for (label, hands), phases in figures.items():
        rates = [phase.per_second for phase in phases]
        cpu = [phase.server_cpu_us for phase in phases]
        errors = sum(phase.errors for phase in phases)
        summary[f"{label}, {hands} hands"] = {"per_second": rates, "server_cpu_us": cpu}
        summary[f"{label}, {hands} hands"]["errors"] = errors
        print(
            f"compare {label:>12}, {hands} hands: median {statistics.median(rates):7.1f}/s "
            f"(min {min(rates):.1f}, max {max(rates):.1f}), server CPU median "
            f"{statistics.median(cpu):5.0f} us/request, errors {errors}"
        )
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--image", type=Path, default=None, help="photo for image scoring (examples/hand.jpg)"
    )
    parser.add_argument("--requests", type=int, default=2000, help="per code-scoring phase")
    parser.add_argument("--image-requests", type=int, default=200, help="per image phase")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--seconds", type=float, default=60.0, help="limit of each phase")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument(
        "--phases",
        nargs="+",
        choices=("codes", "image", "memory"),
        default=["codes", "image"],
        help="what to measure on each worker count (memory: --memory-requests image requests)",
    )
    parser.add_argument("--memory-requests", type=int, default=2000, help="memory phase")
    parser.add_argument(
        "--memory-seconds", type=float, default=600.0, help="limit of the memory phase"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        default=None,
        metavar="DIR",
        help="also compare card-code scoring with the checkout in DIR (one worker)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the comparison")
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
    load = os.getloadavg()
    print(
        f"image {image} ({len(image_body):,} bytes); {os.cpu_count()} cpus; load "
        + " ".join(f"{value:.2f}" for value in load)
    )
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
        "memory": {},
    }
    if args.compare is not None:
        report["compare"] = _compare(args.compare.resolve(), args)
    for workers in args.workers:
        phases, rss, memory = _measure(workers, stand_in, image_body, bare, args)
        report["phases"] += [asdict(phase) for phase in phases]
        report["rss_kib"][str(workers)] = rss
        if memory is not None:
            report["memory"][str(workers)] = memory
    report["load_after"] = os.getloadavg()
    print("load after: " + " ".join(f"{value:.2f}" for value in report["load_after"]))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
