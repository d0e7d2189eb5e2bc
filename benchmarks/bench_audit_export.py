"""Memory and time of an audit log's CSV export: streamed a page at a time
(``AuditLog.csv_chunks``, what ``GET /v1/audit?format=csv`` sends) against the export built
whole in memory (every row read at once, then written: the export before paging), in one run.

    python benchmarks/bench_audit_export.py [--records 20000] [--log PATH]

Records are appended through ``AuditLog.append`` with the fields of a verified 7-seat round
(about 4.5 kB of JSON each) into an SQLite log (kept at ``--log`` to be read again, else in a
temporary folder); each export runs in a fresh process and reports its peak resident memory
(``ru_maxrss``) above the process's own after opening the log.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from handreader.store.audit import AuditLog  # noqa: E402

TOKEN = "bench-audit-token"


def _round() -> dict[str, object]:
    """The fields of one verification of a 7-seat table, as ``/v1/verify`` stores them."""
    cards = [
        {"card": code, "confidence": 0.98, "box": [10 * i, 20, 10 * i + 30, 60]}
        for i, code in enumerate(["AS", "10H", "KD", "3C", "7S"] * 7)
    ]
    players = [
        {"seat": seat, "outcome": "win", "payout": 95, "hand": ["AS", "10H", "KD", "3C", "7S"]}
        for seat in range(1, 7)
    ]
    return {
        "image_sha256": "ab" * 32,
        "reading": {"size": [4000, 3000], "cards": cards, "flags": []},
        "profile": "trainer",
        "declared": {"players": players, "banker_net": -570},
        "computed": {"players": players, "banker_net": -570, "banker": {"score": "Niu 4"}},
        "verdict": "mismatch",
        "differences": [{"seat": 3, "kind": "payout", "declared": 95, "computed": 100}],
    }


def seed(path: Path, records: int) -> float:
    log = AuditLog(path, token=TOKEN)
    fields = _round()
    started = time.perf_counter()
    for _ in range(records):
        log.append(TOKEN, **fields)  # type: ignore[arg-type]
    log.close()
    return time.perf_counter() - started


def _measure(path: str, how: str) -> None:
    """Child process: one export, then its time, bytes and peak memory as JSON."""
    log = AuditLog(path, token=TOKEN)
    log.count(TOKEN)  # the log opened and read once before the peak is taken
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if how == "streamed":
        size = sum(len(chunk) for chunk in log.csv_chunks(TOKEN))
    else:  # the whole export in memory: every row, then one string
        rows = log._rows(TOKEN)
        out = io.StringIO()
        csv.writer(out, lineterminator="\r\n").writerows(rows)
        size = len(out.getvalue())
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "chars": size, "peak_mb": (peak - before) / 1024}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--log", type=Path, help="an SQLite log to seed (if new) and read")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _measure(*args.child)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        path = args.log or Path(folder) / "audit.sqlite3"
        if not path.exists():
            seconds = seed(path, args.records)
            print(f"seeded {args.records:,} records in {seconds:.1f} s")
        print(f"log: {path.stat().st_size / 2**20:.1f} MiB")
        for how in ("whole", "streamed"):
            child = [sys.executable, __file__, "--child", str(path), how]
            figures = json.loads(subprocess.run(child, capture_output=True, check=True).stdout)
            print(
                f"{how:9s} {figures['chars'] / 2**20:7.1f} MiB of CSV in "
                f"{figures['seconds']:6.2f} s, peak memory +{figures['peak_mb']:7.1f} MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
