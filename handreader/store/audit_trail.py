"""The audit trail's records and chain, and what checking it gives
(:meth:`handreader.store.audit.AuditLog.verify`): a record as read back, each record's hash, the
walk over the records that names the first bad or missing one in a report, and the signed
checkpoints of the chain's head that an operator keeps outside the database (re-exported by
:mod:`handreader.store.audit`)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from handreader.store.database import StoreError, Transaction
from handreader.tables.verification import Verdict
from handreader.tables.wording import counted

__all__ = [
    "COLUMNS",
    "GENESIS",
    "KEY_ENV",
    "REKEY_HINT",
    "AuditAuthError",
    "AuditError",
    "AuditRecord",
    "AuditSecretError",
    "ChainReport",
    "Checkpoint",
    "CheckpointError",
    "chain_hash",
    "chain_pages",
    "chain_rows",
    "check_chained_as",
    "filter_clause",
    "format_time",
    "parse_time",
    "rechain",
    "walk_chain",
]

COLUMNS = (
    "id, time_utc, image_sha256, profile, verdict, reading, declared, computed, differences, "
    "record_sha256"
)
"""The columns of the ``verification`` table, in the order a stored row holds them."""

KEY_ENV = "HANDREADER_AUDIT_KEY"
"""The environment variable that holds the operator secret that signs checkpoints."""

_HEX64 = re.compile(r"[0-9a-f]{64}")


_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def format_time(moment: datetime) -> str:
    """UTC ISO 8601 with microseconds and ``Z`` (fixed width, so text order is time order)."""
    if moment.tzinfo is None:
        raise AuditError(f"time {moment.isoformat()!r} has no time zone")
    return moment.astimezone(UTC).strftime(_TIME_FORMAT)


def parse_time(value: datetime | str) -> datetime:
    """A time from a datetime or an ISO 8601 string with a zone (``Z`` or ``+01:00``)."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(value.strip())
        except (ValueError, AttributeError):
            hint = " (a '+' in a URL is a space: write it %2B)" if " " in str(value).strip() else ""
            raise AuditError(f"time {value!r} is not ISO 8601{hint}") from None
    if moment.tzinfo is None:
        raise AuditError(f"time {str(value)!r} has no time zone: add Z or +HH:MM")
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise AuditError(f"time {str(value)!r} is out of range in UTC") from None
    return moment


def chain_hash(previous: str, fields: Sequence[str], key: bytes | None = None) -> str:
    """The record hash over the previous hash and the stored fields, NUL-separated:
    HMAC-SHA256 under the operator secret ``key``, or SHA-256 without one."""
    digest = hmac.new(key, digestmod=hashlib.sha256) if key else hashlib.sha256()
    digest.update(previous.encode("ascii"))
    for text in fields:
        digest.update(b"\0")
        digest.update(text.encode("utf-8"))
    return digest.hexdigest()


REKEY_HINT = "run 'handreader audit rekey' to chain them under it"


GENESIS = "0" * 64
"""The previous hash of the first record."""


class AuditError(StoreError):
    """The audit log cannot do what was asked: bad record, bad filter, unusable database."""


class AuditAuthError(AuditError):
    """The operator token is missing or wrong, or none is configured; ``guessed``: a token was
    given, and it was wrong (what a guard against guessing counts)."""

    def __init__(self, message: str, *, guessed: bool = True) -> None:
        super().__init__(message)
        self.guessed = guessed


class AuditSecretError(AuditError):
    """The operator secret a checkpoint is signed with (``HANDREADER_AUDIT_KEY``) is not set."""


class CheckpointError(AuditError):
    """A checkpoint given to verify against is malformed or its signature does not hold."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The head of the chain at a moment: how many records, the last one's hash, and the
    HMAC-SHA256 of both under the operator secret (kept outside the database)."""

    count: int
    head: str
    signature: str

    @staticmethod
    def sign(count: int, head: str, secret: str) -> str:
        """The signature of ``count`` records ending in ``head``."""
        message = f"handreader-audit:{count}:{head}".encode("ascii")
        return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()

    def to_dict(self) -> dict[str, object]:
        """JSON form (what an operator keeps)."""
        return {"count": self.count, "head": self.head, "signature": self.signature}

    @classmethod
    def from_dict(cls, value: object) -> Checkpoint:
        """A checkpoint from its JSON form; CheckpointError naming what is wrong."""
        if not isinstance(value, dict):
            raise CheckpointError("a checkpoint is a JSON object with count, head and signature")
        count, head, signature = value.get("count"), value.get("head"), value.get("signature")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise CheckpointError(f"checkpoint count must be a whole number, got {count!r}")
        for name, text in (("head", head), ("signature", signature)):
            if not isinstance(text, str) or not _HEX64.fullmatch(text):
                raise CheckpointError(f"checkpoint {name} must be 64 hex digits, got {text!r}")
        return cls(count, str(head), str(signature))


@dataclass(frozen=True, slots=True)
class ChainReport:
    """What :meth:`AuditLog.verify` found: the records read, the head hash, and the first
    record that is bad or missing with the reason (None, None when the trail holds)."""

    records: int
    head: str
    first_bad: int | None
    problem: str | None

    @property
    def ok(self) -> bool:
        """Whether the trail holds."""
        return self.problem is None

    def to_dict(self) -> dict[str, object]:
        """JSON form (the route's answer)."""
        return {
            "ok": self.ok,
            "records": self.records,
            "head": self.head,
            "first_bad": self.first_bad,
            "problem": self.problem,
        }


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One verification as logged (JSON fields decoded)."""

    record_id: int
    time_utc: str
    image_sha256: str
    profile: str
    verdict: str
    reading: Any
    declared: Any
    computed: Any
    differences: Any
    record_sha256: str
    damaged: tuple[str, ...] = ()
    """Fields whose stored text is not JSON (the record was altered in the database): each is
    given as the text stored, and the export goes on."""

    @classmethod
    def _from_row(cls, row: Sequence[Any]) -> AuditRecord:
        values: list[Any] = []
        damaged = []
        for name, text in zip(("reading", "declared", "computed", "differences"), row[5:9],
                              strict=True):  # fmt: skip
            try:
                values.append(json.loads(text))
            except (TypeError, ValueError):
                values.append(text)
                damaged.append(name)
        reading, declared, computed, differences = values
        return cls(
            int(row[0]), row[1], row[2], row[3], row[4], reading, declared, computed,
            differences, row[9], tuple(damaged),
        )  # fmt: skip

    def to_dict(self) -> dict[str, object]:
        """JSON form (the export's)."""
        return {
            "id": self.record_id,
            "time_utc": self.time_utc,
            "image_sha256": self.image_sha256,
            "profile": self.profile,
            "verdict": self.verdict,
            "reading": self.reading,
            "declared": self.declared,
            "computed": self.computed,
            "differences": self.differences,
            "record_sha256": self.record_sha256,
        } | ({"damaged": list(self.damaged)} if self.damaged else {})


def walk_chain(
    rows: Iterable[Sequence[Any]],
    key: bytes | None,
    checkpoint: Checkpoint | None = None,
    *,
    secret_set: bool = False,
) -> ChainReport:
    """The report of the stored records ``rows`` (the columns of the ``verification`` table, in
    order, ids ascending), each hash checked under ``key`` and, given a ``checkpoint``, that
    the record it counted still has the head it signed: the first record bad or missing and
    why. ``secret_set``: the log has an operator secret (a first record that does not follow
    then needs no hint to set one). The rows are taken one at a time and the walk stops at the
    first bad one: what it holds does not grow with the trail."""
    previous, expected, count = GENESIS, 1, 0
    for row in rows:
        broken = _break_in(row, previous, expected, key, secret_set)
        if broken is not None:
            return ChainReport(count, previous, *broken)
        record_id = int(row[0])
        if checkpoint is not None and record_id == checkpoint.count and row[9] != checkpoint.head:
            why = f"record {record_id} is not the one the checkpoint signed (rewritten)"
            return ChainReport(count, previous, record_id, why)
        previous, expected, count = row[9], expected + 1, count + 1
    if checkpoint is not None and count < checkpoint.count:
        gone = (
            f"record {count + 1} was deleted"
            if count + 1 == checkpoint.count
            else f"records {count + 1} to {checkpoint.count} were deleted"
        )
        counted_text = counted(checkpoint.count, "record")
        why = f"the checkpoint counted {counted_text}, the log holds {count}: {gone}"
        return ChainReport(count, previous, count + 1, why)
    return ChainReport(count, previous, None, None)


def _break_in(
    row: Sequence[Any], previous: str, expected: int, key: bytes | None, secret_set: bool
) -> tuple[int, str] | None:
    """Where the chain breaks at the stored ``row`` and why (the first bad or missing record's
    id, the reason :func:`walk_chain` reports), the record before it having the hash
    ``previous`` and ``expected`` being the id due; None when the row follows."""
    record_id = int(row[0])
    if record_id != expected:
        missing = f"record {expected} is missing" + (
            "" if record_id == expected + 1 else f" (and up to {record_id - 1})"
        )
        return expected, missing
    fields = [str(value) for value in row[1:9]]
    if chain_hash(previous, fields, key) == row[9]:
        return None
    why = f"record {record_id} does not follow from the records before it"
    if record_id == 1 and key and chain_hash(previous, fields) == row[9]:
        why = f"the records are chained without the operator secret: {REKEY_HINT}"
    elif record_id == 1 and not key and not secret_set:
        why += f" (a trail chained under the operator secret needs {KEY_ENV})"
    else:
        why += " (edited, or re-hashed)"
    return record_id, why


def chain_pages(statements: Transaction, page_rows: int) -> Iterator[list[tuple[Any, ...]]]:
    """Every stored row, ids ascending, read through ``statements`` (a snapshot's or a write's
    transaction) in pages of ``page_rows``, each page after the last one's id and read only
    when the one before it has been taken: one page is held at once."""
    after: list[object] = []
    while True:
        where = " WHERE id > ?" if after else ""
        rows = statements.all(
            f"SELECT {COLUMNS} FROM verification{where} ORDER BY id LIMIT ?", [*after, page_rows]
        )
        yield rows
        if len(rows) < page_rows:
            return
        after = [int(rows[-1][0])]


def chain_rows(statements: Transaction, page_rows: int) -> Iterator[tuple[Any, ...]]:
    """The rows of :func:`chain_pages`, one at a time: the next page is read only when the
    last row of this one is taken."""
    for page in chain_pages(statements, page_rows):
        yield from page


def rechain(transaction: Transaction, key: bytes, page_rows: int) -> int:
    """Every record's hash computed again under the operator secret ``key``, in the write's
    ``transaction``, read and re-chained ``page_rows`` at a time (:func:`chain_pages`): the
    number of records. Each record is checked to follow, chained without a secret, before its
    hash is written; AuditError at the first that does not (the reason
    :func:`walk_chain` gives), raised inside the transaction, which is then rolled back
    whole: the trail is left as it was."""
    stored, chained, count = GENESIS, GENESIS, 0
    for page in chain_pages(transaction, page_rows):
        for row in page:
            broken = _break_in(row, stored, count + 1, None, secret_set=True)
            if broken is not None:
                raise AuditError(f"the trail does not hold, nothing chained again: {broken[1]}")
            stored = row[9]
            chained = chain_hash(chained, [str(value) for value in row[1:9]], key)
            transaction.all(
                "UPDATE verification SET record_sha256 = ? WHERE id = ?", (chained, row[0])
            )
            count += 1
    return count


def check_chained_as(first: Sequence[Any] | None, key: bytes | None) -> None:
    """AuditError when the trail's first record (its stored row; None: no record yet) is
    chained otherwise than a log with the operator secret ``key`` appends (under the secret,
    under another secret, or without one): a chain of two kinds would not hold. Checked in
    every append's transaction."""
    if first is None:
        return
    fields = [str(value) for value in first[1:9]]
    if chain_hash(GENESIS, fields, key) == first[9]:
        return
    if key and chain_hash(GENESIS, fields) == first[9]:
        raise AuditError(
            f"the trail's records are chained without the operator secret ({KEY_ENV}): "
            f"{REKEY_HINT}, or unset it"
        )
    if not key:
        raise AuditError(f"the trail is chained under the operator secret: set {KEY_ENV}")
    raise AuditError(
        f"the trail is chained under another operator secret ({KEY_ENV} is not the one it was "
        "written with), or its first record was altered (handreader audit verify tells which)"
    )


def filter_clause(
    verdict: Verdict | str | None,
    since: datetime | str | None,
    until: datetime | str | None,
    profile: str | None,
) -> tuple[str, list[object]]:
    """The ``WHERE`` clause (with ``?`` placeholders; "" for no filter) and its values for the
    records matching every filter given; AuditError for an unknown verdict."""
    clauses: list[str] = []
    values: list[object] = []
    if verdict is not None:
        try:
            values.append(Verdict(verdict).value)
        except ValueError:
            known = ", ".join(v.value for v in Verdict)
            raise AuditError(f"unknown verdict {verdict!r}: known are {known}") from None
        clauses.append("verdict = ?")
    if since is not None:
        clauses.append("time_utc >= ?")
        values.append(format_time(parse_time(since)))
    if until is not None:
        clauses.append("time_utc < ?")
        values.append(format_time(parse_time(until)))
    if profile is not None:
        clauses.append("profile = ?")
        values.append(profile)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), values
