"""Figures for a floor of tables: the store, the service on it, archives on Ray, machines needed.

1. **Audit appends per second**, SQLite against PostgreSQL, from one and from two writer
   processes (``AuditLog.append`` of a verification-sized record, each committed): what the
   store alone sustains, and that two writers on one database share it. The configurations run
   in turn, ``--rounds`` times; each row is its best run.
2. **Verifications per second through the service**, SQLite against PostgreSQL, one and two
   ``serve.py`` processes (one worker each) on the same database, two clients per process
   posting ``POST /v1/verify`` with the photo: the whole path, reading included.
3. **Photos per second**, plain (one reader in this process, after its models loaded) against
   ``read_on_ray`` on a local Ray instance (started before timing) with one reader and with one
   per CPU. With one reader, a run of one photo and a run of all of them give the start (the
   actor loading its models, the dataset planned) and the time each further photo adds; the
   overhead per photo is that time less the plain reader's. A first run, not counted, starts
   Ray's worker processes; then each row is the least of ``--rounds`` runs in turn (other load
   on the machine only ever adds time).
4. **Machines for N tables**: live frames per second on the host (the frame reader, one
   process per CPU, all at once), and how many such machines a floor of N tables at
   ``--fps`` frames a second each needs; with the service's verification rate, the store's
   headroom; with the Ray rate, the hours a night of ``--archive`` photos takes per machine.

PostgreSQL: ``$HANDREADER_BENCH_DATABASE_URL``, else a throw-away cluster (Debian's server
binaries, ``postgres_cluster.py``); each run gets a fresh schema. Without psycopg or a server,
the PostgreSQL rows are skipped; without Ray (the scale extra), the Ray rows.

Usage::

    python benchmarks/bench_scale.py [--seconds 6] [--photos 24] [--rounds 2] [--tables 10 30 100]
        [--fps 25] [--archive 100000] [--skip service ray] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
PHOTO = ROOT / "examples" / "hand.jpg"
TOKEN = "bench-operator-token"

APPENDER = """
import sys, time
from handreader.store.audit import AuditLog

location, token = sys.argv[1], sys.argv[2]
start_at, seconds = float(sys.argv[3]), float(sys.argv[4])
log = AuditLog(location, token=token)
card = {"confidence": 0.97, "box": [1.0, 2.0, 3.0, 4.0], "corners": 2, "uncertain": False}
codes = ("AS", "10H", "QC", "7D", "2S")
reading = {"size": [640, 480], "cards": [{"card": c, **card} for c in codes], "flags": []}
while time.time() < start_at:
    time.sleep(0.005)
count, end = 0, start_at + seconds
while time.time() < end:
    log.append(token, image_sha256="ab" * 32, reading=reading, profile="trainer",
               declared={"players": [{"seat": 1, "outcome": "win", "payout": 0.95}]},
               computed={"players": [{"seat": 1, "outcome": "win", "payout": 0.95}]},
               verdict="match")
    count += 1
print(count)
"""

FRAMER = """
import sys, time
from vision.imageio import load_image
from vision.reader import Reader

photo, start_at, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
reader = Reader.load().for_frames()
image = load_image(photo)
reader.read(image)
while time.time() < start_at:
    time.sleep(0.005)
count, end = 0, start_at + seconds
while time.time() < end:
    reader.read(image)
    count += 1
print(count)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def _parallel(script: str, arguments: list[list[str]], seconds: float, warmup: float) -> int:
    """Start one process per argument list (the script takes them, then the start time and
    ``seconds``), all counting from the same moment; the sum of the counts they print."""
    start_at = time.time() + warmup
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, *extra, str(start_at), str(seconds)],
            cwd=ROOT,
            env=_environment(),
            stdout=subprocess.PIPE,
            text=True,
        )
        for extra in arguments
    ]
    total = 0
    for process in processes:
        out, _ = process.communicate(timeout=warmup + seconds + 120)
        if process.returncode != 0:
            raise RuntimeError(f"a benchmark process failed ({process.returncode})")
        total += int(out.strip().splitlines()[-1])
    return total


# --- databases ---------------------------------------------------------------------------------


@contextmanager
def postgres_server() -> Iterator[str | None]:
    """A PostgreSQL URL (see the module docstring), or None when there is none."""
    if importlib.util.find_spec("psycopg") is None:
        print("PostgreSQL rows skipped: psycopg is not installed (the postgres extra)")
        yield None
        return
    given = os.environ.get("HANDREADER_BENCH_DATABASE_URL")
    if given:
        yield given
        return
    sys.path.insert(0, str(Path(__file__).parent))
    import postgres_cluster

    if postgres_cluster.server_binaries() is None:
        print("PostgreSQL rows skipped: no server binaries (Debian: postgresql)")
        yield None
        return
    with postgres_cluster.throwaway_cluster() as url:
        yield url


def fresh_schema(url: str) -> str:
    """The URL of a new, empty schema in ``url``'s database."""
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}options={quote(f'-csearch_path={schema}')}"


def locations(postgres: str | None, folder: Path) -> Iterator[tuple[str, str]]:
    """(backend, a fresh location) for each backend available."""
    yield "sqlite", str(folder / f"audit-{uuid.uuid4().hex[:8]}.sqlite3")
    if postgres is not None:
        yield "postgresql", fresh_schema(postgres)


# --- 1. appends --------------------------------------------------------------------------------


def bench_appends(
    postgres: str | None, folder: Path, seconds: float, rounds: int
) -> list[dict[str, Any]]:
    from handreader.store.audit import AuditLog

    configurations = [
        (processes, backend, location)
        for processes in (1, 2)
        for backend, location in locations(postgres, folder)
    ]
    best: dict[tuple[int, str], float] = {}
    for _ in range(rounds):  # in turn, the best of each: other load only ever slows a run
        for processes, backend, location in configurations:
            AuditLog(location, token=TOKEN).close()  # the schema, made before the clock
            count = _parallel(APPENDER, [[location, TOKEN]] * processes, seconds, warmup=2.0)
            key = (processes, backend)
            best[key] = max(best.get(key, 0.0), count / seconds)
    rows = []
    for (processes, backend), rate in best.items():
        location = next(where for p, b, where in configurations if (p, b) == (processes, backend))
        with AuditLog(location, token=TOKEN) as log:
            assert log.verify_chain(TOKEN) is None  # one chain, whatever wrote to it
        rows.append({"backend": backend, "processes": processes, "per_s": rate})
        print(f"  appends  {backend:10s} {processes} process(es): {rate:8.1f}/s")
    return rows


# --- 2. verifications through the service ------------------------------------------------------


class Service:
    """``serve.py`` processes on one store."""

    def __init__(self, count: int, environment: dict[str, str]) -> None:
        self.ports = [_free_port() for _ in range(count)]
        self.processes = [
            subprocess.Popen(
                [sys.executable, "serve.py", "--port", str(port), "--workers", "1"],
                cwd=ROOT,
                env=environment,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for port in self.ports
        ]
        import httpx

        deadline = time.monotonic() + 120
        for port in self.ports:
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("serve.py did not become healthy within 120 s")
                time.sleep(0.2)

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def _post_verifications(ports: list[int], seconds: float, photo: bytes) -> int:
    """Verifications answered in ``seconds`` (after a second of warm-up) by two clients per
    port."""
    import httpx

    counts: list[int] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + 1.0 + seconds

    def client(port: int) -> None:
        done, counting_from = 0, time.monotonic() + 1.0
        with httpx.Client(timeout=30) as http:
            while time.monotonic() < stop_at:
                response = http.post(
                    f"http://127.0.0.1:{port}/v1/verify",
                    files={"image": ("round.jpg", photo, "image/jpeg")},
                    data={"options": '{"declared": {"1": "win"}}'},
                    headers={"Authorization": f"Bearer {TOKEN}"},
                )
                response.raise_for_status()
                done += time.monotonic() >= counting_from
        with lock:
            counts.append(done)

    threads = [threading.Thread(target=client, args=(port,)) for port in ports for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts)


def bench_service(
    postgres: str | None, folder: Path, seconds: float, photo: bytes
) -> list[dict[str, Any]]:
    rows = []
    for processes in (1, 2):
        for backend, location in locations(postgres, folder):
            environment = _environment() | {"HANDREADER_AUDIT_TOKEN": TOKEN}
            key = "HANDREADER_DATABASE_URL" if backend == "postgresql" else "HANDREADER_AUDIT_DB"
            environment[key] = location
            service = Service(processes, environment)
            try:
                done = _post_verifications(service.ports, seconds, photo)
            finally:
                service.stop()
            rate = done / seconds
            rows.append({"backend": backend, "processes": processes, "per_s": rate})
            print(f"  verify   {backend:10s} {processes} process(es): {rate:8.1f}/s")
    return rows


# --- 3. photos, plain and on Ray ----------------------------------------------------------------


def bench_photos(folder: Path, count: int, rounds: int) -> dict[str, Any]:
    from vision.reader import Reader

    photos = []
    for index in range(count):
        path = folder / f"photo-{index:03d}.jpg"
        shutil.copy(PHOTO, path)
        photos.append(str(path))
    from handreader.cli.photos import open_photo

    reader = Reader.load()
    reader.read(open_photo(photos[0]).image)

    def plain() -> float:
        start = time.perf_counter()
        for photo in photos:
            image = open_photo(photo)
            image.to_original(reader.read(image.image))
        return time.perf_counter() - start

    if importlib.util.find_spec("ray") is None:
        plain_s = min(plain() for _ in range(rounds)) / count
        print(f"  photos   plain, one reader:            {1 / plain_s:8.2f}/s")
        print("  Ray rows skipped: Ray is not installed (the scale extra)")
        return {"photos": count, "plain_per_s": 1 / plain_s}
    import ray

    from handreader.cli.ray_runner import RayJob, read_on_ray

    cpus = os.cpu_count() or 1
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)

    def timed(subset: list[str], readers: int) -> float:
        start = time.perf_counter()
        for outcome in read_on_ray(subset, RayJob(readers=readers)):
            assert outcome.reading is not None, outcome.error
        return time.perf_counter() - start

    try:
        timed(photos[:1], cpus)  # Ray Data's first run in a process starts its workers
        runs: dict[str, list[float]] = {"plain": [], "one": [], "all": [], "spread": []}
        for _ in range(rounds):  # in turn, the least of each: other load only ever adds time
            runs["plain"].append(plain())
            runs["one"].append(timed(photos[:1], 1))
            runs["all"].append(timed(photos, 1))
            runs["spread"].append(timed(photos, cpus))
    finally:
        ray.shutdown()
    plain_s = min(runs["plain"]) / count
    start_s, long, spread = min(runs["one"]), min(runs["all"]), min(runs["spread"])
    marginal = (long - start_s) / (count - 1)  # the start cancels out
    result: dict[str, Any] = {"photos": count, "plain_per_s": 1 / plain_s}
    print(f"  photos   plain, one reader:            {1 / plain_s:8.2f}/s")
    result["ray"] = {
        "one_reader_per_s": count / long,
        "one_reader_start_s": start_s,
        "one_reader_marginal_ms": marginal * 1000,
        "readers": cpus,
        "per_s": count / spread,
        "overhead_ms": (marginal - plain_s) * 1000,
    }
    print(
        f"  photos   Ray, 1 reader:  {count / long:6.2f}/s overall ({count} photos), "
        f"start {start_s:5.1f} s (a run of one photo), {marginal * 1000:6.1f} ms a photo after it"
    )
    print(f"  photos   Ray, {cpus} readers: {count / spread:6.2f}/s overall ({count} photos)")
    overhead_ms = (marginal - plain_s) * 1000
    print(f"  Ray overhead per photo (1 reader, after the start): {overhead_ms:+.1f} ms")
    return result


# --- 4. machines --------------------------------------------------------------------------------


def bench_frames(seconds: float) -> float:
    cpus = os.cpu_count() or 1
    count = _parallel(FRAMER, [[str(PHOTO)]] * cpus, seconds, warmup=8.0)
    return count / seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument("--seconds", type=float, default=6.0, help="each measurement's length")
    parser.add_argument("--photos", type=int, default=24, help="photos for the plain/Ray rows")
    parser.add_argument(
        "--rounds", type=int, default=2, help="runs of each append and photo row (the best)"
    )
    parser.add_argument("--tables", type=int, nargs="+", default=[10, 30, 100])
    parser.add_argument("--fps", type=float, default=25.0, help="live frames a second per table")
    parser.add_argument("--archive", type=int, default=100_000, help="photos in a night")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["appends", "service", "ray", "frames"]
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "seconds": args.seconds,
        "load_average": os.getloadavg()[0],
    }
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start")
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-scale-")))
        postgres = stack.enter_context(postgres_server())
        if "appends" not in args.skip:
            print("1. audit appends (each committed), SQLite against PostgreSQL")
            figures["appends"] = bench_appends(postgres, folder, args.seconds, args.rounds)
        if "service" not in args.skip:
            print("2. verifications through serve.py (photo read, scored, logged)")
            figures["service"] = bench_service(postgres, folder, args.seconds, PHOTO.read_bytes())
        if "ray" not in args.skip:
            print(f"3. photos per second ({args.photos} photos of {PHOTO.name})")
            figures["photos"] = bench_photos(folder, args.photos, args.rounds)
    if "frames" not in args.skip:
        frames = bench_frames(args.seconds)
        figures["frames_per_s"] = frames
        print(f"4. live frames per second on the host ({os.cpu_count()} CPUs): {frames:.1f}")
        for tables in args.tables:
            machines = math.ceil(tables * args.fps / frames)
            print(f"   {tables:4d} tables at {args.fps:g} fps: {machines} machine(s) like this one")
        figures["machines"] = {
            str(tables): math.ceil(tables * args.fps / frames) for tables in args.tables
        }
    photos = figures.get("photos", {})
    best = max(photos.get("plain_per_s", 0.0), photos.get("ray", {}).get("per_s", 0.0))
    if best:
        hours = args.archive / best / 3600
        figures["archive_hours_one_machine"] = hours
        print(f"   a night of {args.archive:,} photos: {hours:.1f} h on one machine like this one")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
