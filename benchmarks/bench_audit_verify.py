"""Memory and time of a chain check of the audit trail (``handreader audit verify``, ``GET
/v1/audit/verify``): read a page at a time (``AuditLog.verify``) against the whole trail read at
once and then walked (the check before paging), in one run. Both runs are the whole check as
``AuditLog.verify`` makes it, SQLite's ``PRAGMA integrity_check`` first, then the walk: they
differ only in how the records are read.

    python benchmarks/bench_audit_verify.py [--records 100000] [--log PATH]

The trail is an SQLite log (kept at ``--log`` to be read again, else in a temporary folder) of
records of about 3 kB each (a reading of 35 cards, a 7-seat declaration), written in one
transaction, chained as ``AuditLog.append`` chains them; each check runs in a fresh process and
reports its peak resident memory (``ru_maxrss``) above the process's own after opening the log.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from handreader.store.audit import AuditLog, format_time  # noqa: E402
from handreader.store.audit_trail import GENESIS, chain_hash, walk_chain  # noqa: E402
from handreader.store.database import Transaction  # noqa: E402

TOKEN = "bench-audit-token"
COLUMNS = (
    "id, time_utc, image_sha256, profile, verdict, reading, declared, computed, differences, "
    "record_sha256"
)


def _fields(number: int) -> list[str]:
    """The stored fields of one verification, about 3 kB (as ``AuditLog.append`` stores them)."""
    cards = [
        {"card": code, "confidence": 0.98, "box": [10 * i, 20, 10 * i + 30, 60]}
        for i, code in enumerate(["AS", "10H", "KD", "3C", "7S"] * 7)
    ]
    players = [{"seat": seat, "outcome": "win", "payout": 95} for seat in range(1, 8)]
    text = [
        json.dumps(value, sort_keys=True, separators=(",", ":"))
        for value in (
            {"size": [4000, 3000], "cards": cards, "flags": []},
            {"players": players, "banker_net": -665},
            {"players": players, "banker_net": -665, "banker": {"score": "Niu 4"}},
            [],
        )
    ]
    moment = format_time(datetime(2026, 11, 29, 15, tzinfo=UTC) + timedelta(seconds=number))
    return [moment, f"{number:064x}", "trainer", "match", *text]


def seed(path: Path, records: int) -> float:
    """``records`` chained records written in one transaction; the seconds it took."""
    log = AuditLog(path, token=TOKEN, key="")
    started = time.perf_counter()

    def fill(transaction: Transaction) -> None:
        previous = GENESIS
        for number in range(1, records + 1):
            fields = _fields(number)
            previous = chain_hash(previous, fields)
            transaction.all(
                f"INSERT INTO verification ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (number, *fields, previous),
            )

    log.database.write(fill)
    log.close()
    return time.perf_counter() - started


def _measure(path: str, how: str) -> None:
    """Child process: one check, then its time, records and peak memory as JSON."""
    log = AuditLog(path, token=TOKEN, key="")
    log.count(TOKEN)  # the log opened and read once before the peak is taken
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if how == "paged":
        report = log.verify(TOKEN)
    else:  # the integrity check as verify makes it, then the whole trail in memory, walked
        assert log._damage() is None
        rows = log._query(f"SELECT {COLUMNS} FROM verification ORDER BY id", [])
        report = walk_chain(rows, None)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    figures = {"seconds": seconds, "records": report.records, "ok": report.ok}
    print(json.dumps(figures | {"peak_mb": (peak - before) / 1024}))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=100000)
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
        for how in ("whole", "paged"):
            child = [sys.executable, __file__, "--child", str(path), how]
            figures = json.loads(subprocess.run(child, capture_output=True, check=True).stdout)
            print(
                f"{how:6s} {figures['records']:,} records ({'sound' if figures['ok'] else 'bad'})"
                f" in {figures['seconds']:6.2f} s, peak memory +{figures['peak_mb']:7.1f} MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
