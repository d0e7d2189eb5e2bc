"""Memory and time of a chain check of the audit trail (``handreader audit verify``, ``GET
/v1/audit/verify``): read a page at a time (``AuditLog.verify``) against the whole trail read at
once and then walked (the check before paging), in one run. Both runs are the whole check as
``AuditLog.verify`` makes it, SQLite's ``PRAGMA integrity_check`` first, then the walk: they
differ only in how the records are read. ``--rekey`` measures ``handreader audit rekey``
instead: the trail read and re-chained under the operator secret a page at a time in its one
transaction (``AuditLog.rekey``) against the whole trail read into memory in that transaction
and then checked and re-chained (the rekey before paging), each on its own copy of the seeded
trail, then whether both copies end with the same chain.

    python benchmarks/bench_audit_verify.py [--records 100000] [--log PATH] [--rekey]

The trail is an SQLite log (kept at ``--log`` to be read again, else in a temporary folder) of
records of about 3 kB each (a reading of 35 cards, a 7-seat declaration), written in one
transaction, chained as ``AuditLog.append`` chains them; each check runs in a fresh process and
reports its peak resident memory (``ru_maxrss``) above the process's own after opening the log.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from handreader.store.audit import CHAIN_LOCK, AuditLog, format_time  # noqa: E402
from handreader.store.audit_trail import GENESIS, chain_hash, walk_chain  # noqa: E402
from handreader.store.database import Transaction  # noqa: E402

TOKEN = "bench-audit-token"
SECRET = "bench-operator-secret"
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


def _rekey_whole(log: AuditLog) -> int:
    """The rekey before paging: the integrity check as ``AuditLog.rekey`` makes it, then, in
    one transaction, every record read at once, checked and re-chained under the secret."""
    assert log._damage() is None
    key = SECRET.encode("utf-8")

    def again(transaction: Transaction) -> int:
        rows = transaction.all(f"SELECT {COLUMNS} FROM verification ORDER BY id")
        if walk_chain(rows, key, secret_set=True).ok:
            return 0
        if not walk_chain(rows, None, secret_set=True).ok:
            raise SystemExit("the seeded trail does not hold")
        previous = GENESIS
        for row in rows:
            previous = chain_hash(previous, [str(value) for value in row[1:9]], key)
            transaction.all(
                "UPDATE verification SET record_sha256 = ? WHERE id = ?", (previous, row[0])
            )
        return len(rows)

    return log.database.write(again, serialize=CHAIN_LOCK)


def _measure(path: str, how: str) -> None:
    """Child process: one check or rekey, then its time, records and peak memory as JSON."""
    log = AuditLog(path, token=TOKEN, key=SECRET if how.startswith("rekey") else "")
    log.count(TOKEN)  # the log opened and read once before the peak is taken
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if how == "paged":
        report = log.verify(TOKEN)
        records, ok = report.records, report.ok
    elif how == "whole":  # the integrity check as verify makes it, then the whole trail walked
        assert log._damage() is None
        rows = log._query(f"SELECT {COLUMNS} FROM verification ORDER BY id", [])
        report = walk_chain(rows, None)
        records, ok = report.records, report.ok
    else:
        records = log.rekey(TOKEN) if how == "rekey-paged" else _rekey_whole(log)
        ok = records > 0
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    figures = {"seconds": seconds, "records": records, "ok": ok}
    print(json.dumps(figures | {"peak_mb": (peak - before) / 1024}))


def _run_child(path: Path, how: str) -> dict[str, float]:
    """One measure in a fresh process; its figures, printed as a line."""
    child = [sys.executable, __file__, "--child", str(path), how]
    figures: dict[str, float] = json.loads(
        subprocess.run(child, capture_output=True, check=True).stdout
    )
    done = "re-chained" if how.startswith("rekey") else ("sound" if figures["ok"] else "bad")
    print(
        f"{how:11s} {figures['records']:,} records ({done}) in {figures['seconds']:6.2f} s, "
        f"peak memory +{figures['peak_mb']:7.1f} MiB"
    )
    return figures


def _head(path: Path) -> str:
    """The last record's hash of the SQLite trail at ``path``."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        row = connection.execute(
            "SELECT record_sha256 FROM verification ORDER BY id DESC LIMIT 1"
        ).fetchone()
    return str(row[0]) if row else GENESIS


def _rekeys(path: Path, folder: Path) -> None:
    """Both rekeys, each on its own copy of the trail at ``path``; whether they agree."""
    heads = []
    for how in ("rekey-whole", "rekey-paged"):
        copy = folder / f"{how}.sqlite3"
        shutil.copyfile(path, copy)
        _run_child(copy, how)
        heads.append(_head(copy))
        copy.unlink()
    print(
        f"same chain after both: {'yes' if heads[0] == heads[1] else 'NO'} (head {heads[1][:16]})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=100000)
    parser.add_argument("--log", type=Path, help="an SQLite log to seed (if new) and read")
    parser.add_argument(
        "--rekey", action="store_true", help="measure a rekey (on copies) instead of a check"
    )
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
        if args.rekey:
            _rekeys(path, Path(folder))
            return 0
        for how in ("whole", "paged"):
            _run_child(path, how)
    return 0


if __name__ == "__main__":
    sys.exit(main())
