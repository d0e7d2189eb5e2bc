"""The audit log of dealer verifications: one record per verification, in the store's database
(:mod:`handreader.store.database`: an SQLite file by default, or a shared PostgreSQL database).

Each record holds the time (UTC, ISO 8601, ``2026-11-29T15:10:19.123456Z``), the SHA-256 of the
image as received, the reading (JSON), the profile, the declared and the computed results
(JSON), the differences (JSON) and the verdict. Records are only ever appended.

Durability: every record is its own transaction, committed before :meth:`AuditLog.append`
returns its id (SQLite: WAL mode with ``synchronous=FULL``; PostgreSQL: its commit). A process
killed at any moment (``kill -9``) loses no record whose id was returned and leaves a database
that opens and passes :meth:`AuditLog.integrity_check` (tested by killing writers in a stream of
writes, on both backends).

Tamper evidence: each record carries ``record_sha256``, the hash of the previous record's
hash and this record's stored fields, so a record edited, or deleted from the middle, breaks the
chain, and ids run 1, 2, 3... so a deleted record leaves a gap (:meth:`AuditLog.verify` names
the first bad or missing record). With the operator secret (``HANDREADER_AUDIT_KEY``) the hash
is an HMAC-SHA256 under it (a *keyed* chain): a row edited and every hash after it computed
again no longer holds without the secret. Without one it is a SHA-256, which anyone who can
write the database can compute again. One trail is chained one way: a log refuses to append
to a trail chained the other way, and :meth:`AuditLog.rekey` (``handreader audit rekey``)
chains a trail kept without the secret under it, once it holds. What a chain alone cannot show
(the newest records deleted) a *checkpoint* shows: the count of records
and the head hash at a moment, signed with HMAC-SHA256 under an operator secret
(``HANDREADER_AUDIT_KEY``) and kept outside the database (:meth:`AuditLog.checkpoint`,
``handreader audit checkpoint``). Verifying against it checks the signature, that the record it
counted is still there and that its hash is still the head it signed. Appends are serialized in
the database (SQLite's write lock; PostgreSQL's advisory lock :data:`CHAIN_LOCK`, held by the
appending transaction, which the server ends if it stalls), and each record's id is the
previous one's plus one: any number of processes on any number of machines writing to one
database keep one chain without gaps.

Access: every read and write needs the operator token, set by the operator through the
constructor or the environment variable ``HANDREADER_AUDIT_TOKEN``, and compared in constant
time (``hmac.compare_digest``). A missing or wrong token, or a log without a configured token,
is :class:`AuditAuthError`.

Threads: one connection guarded by a lock, so one :class:`AuditLog` may serve a thread pool.
"""

from __future__ import annotations

import csv
import hmac
import io
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from types import TracebackType
from typing import Any

from handreader.store.audit_trail import (
    COLUMNS,
    GENESIS,
    KEY_ENV,
    AuditAuthError,
    AuditError,
    AuditRecord,
    AuditSecretError,
    ChainReport,
    Checkpoint,
    CheckpointError,
    chain_hash,
    chain_rows,
    check_chained_as,
    filter_clause,
    format_time,
    parse_time,
    rechain,
    walk_chain,
)
from handreader.store.database import (
    Database,
    NotAStoreError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
    Transaction,
    open_database,
)
from handreader.tables.scoring import TableOptions, score_reading
from handreader.tables.verification import (
    DEFAULT_PAYOUT_TOLERANCE,
    DeclaredRound,
    Verdict,
    Verification,
    verify_round,
)
from vision.detections import Reading

__all__ = [
    "CHAIN_LOCK",
    "CHAIN_LOCK_NAME",
    "CHAIN_PAGE_ROWS",
    "EXPORT_PAGE_ROWS",
    "KEY_ENV",
    "TOKEN_ENV",
    "AuditAuthError",
    "AuditError",
    "AuditLog",
    "AuditRecord",
    "AuditSecretError",
    "ChainReport",
    "Checkpoint",
    "CheckpointError",
    "format_time",
    "parse_time",
    "verify_and_log",
]

TOKEN_ENV = "HANDREADER_AUDIT_TOKEN"
"""The environment variable that holds the operator token when none is passed."""

CHAIN_LOCK = 0x68616E6400000002
"""The PostgreSQL advisory lock key that serializes appends to the chain."""

CHAIN_LOCK_NAME = "the audit trail's lock"
""":data:`CHAIN_LOCK` in messages (a write that waits for it past the deadline says so)."""

EXPORT_PAGE_ROWS = 1000
"""Records a page of :meth:`AuditLog.csv_chunks` reads at once."""

CHAIN_PAGE_ROWS = 1000
"""Records a chain check (:meth:`AuditLog.verify`, a checkpoint) and a rekey
(:meth:`AuditLog.rekey`) read at once: their memory is a page's, whatever the trail's length."""

_COLUMNS = COLUMNS
_HEX64 = re.compile(r"[0-9a-f]{64}")
AUDIT_STORE = "handreader audit store"


def _json(value: object, what: str) -> str:
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise AuditError(f"{what} is not JSON: {error}") from None


class AuditLog:
    """The audit log in the database at ``location`` (see the module docstring): an SQLite
    file (created when missing) or a ``postgresql://`` URL; or ``database``, already open.

    ``token`` is the operator token that callers must present (None: ``$HANDREADER_AUDIT_TOKEN``;
    when neither is set every call is refused). ``timeout_s`` is how long a write waits for
    another process's lock. ``create`` False opens only a store that is there, as it is: the
    database is read, never written, to open it (no file, schema or journal mode made, nothing
    migrated), and one that is not a handreader audit store (another program's database) is
    AuditError, with nothing changed; what checks a trail opens it so. ``read_only`` (with
    ``create`` False) opens the database read-only, for a check: nothing of it is written, an
    SQLite file's leftover ``-wal`` included (:class:`~handreader.store.database.SqliteDatabase`),
    and appending or rekeying is refused. AuditError when the
    database cannot be used, StoreUnavailableError when it cannot be reached.
    """

    def __init__(
        self,
        location: str | Path | None = None,
        token: str | None = None,
        *,
        timeout_s: float = 30.0,
        database: Database | None = None,
        key: str | None = None,
        create: bool = True,
        read_only: bool = False,
    ) -> None:
        configured = token if token is not None else os.environ.get(TOKEN_ENV)
        self._token = configured.encode("utf-8") if configured else None
        secret = key if key is not None else os.environ.get(KEY_ENV)
        self._key = secret.encode("utf-8") if secret else None
        if database is None:
            if location is None:
                raise AuditError("an audit log needs a location or an open database")
            with self._guard():
                if read_only and create:
                    raise AuditError("an audit log opened read-only cannot create its store")
                database = self._open(location, timeout_s, create, read_only)
        self.database = database
        self.location = database.location
        self.path = Path(database.location) if database.dialect == "sqlite" else None
        """The SQLite file (None on PostgreSQL)."""

    @staticmethod
    def _open(location: str | Path, timeout_s: float, create: bool, read_only: bool) -> Database:
        """The database at ``location``, migrated when ``create``, else only checked to be an
        audit store (see the class docstring), opened read-only when ``read_only``."""
        try:
            return open_database(location, timeout_s=timeout_s, migrate=create, read_only=read_only)
        except NotAStoreError as error:
            raise NotAStoreError(error.location, error.missing, AUDIT_STORE) from None

    @staticmethod
    @contextmanager
    def _guard() -> Iterator[None]:
        """The database's refusals as AuditError (an unreachable database stays
        StoreUnavailableError)."""
        try:
            yield
        except (StoreUnavailableError, StoreFullError):
            raise
        except AuditError:
            raise
        except StoreError as error:
            raise AuditError(str(error)) from None

    # --- access ----------------------------------------------------------------------------------

    def authorize(self, token: str | None) -> None:
        """Check an operator token; AuditAuthError when missing, wrong, or none configured."""
        if self._token is None:
            raise AuditAuthError(f"the audit log has no operator token configured: set {TOKEN_ENV}")
        if not token:
            raise AuditAuthError("missing operator token for the audit log", guessed=False)
        if not hmac.compare_digest(token.encode("utf-8"), self._token):
            raise AuditAuthError("wrong operator token for the audit log")

    def close(self) -> None:
        """Close the connection (further calls fail)."""
        self.database.close()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    # --- writing ---------------------------------------------------------------------------------

    def append(
        self,
        token: str | None,
        *,
        image_sha256: str,
        reading: Mapping[str, object],
        profile: str,
        declared: Mapping[str, object],
        computed: Mapping[str, object],
        verdict: Verdict | str,
        differences: Sequence[Mapping[str, object]] = (),
        time: datetime | None = None,
    ) -> int:
        """Append one verification and commit it; its id once it is durable.

        AuditError for an image hash that is not 64 lower-case hex digits, an unknown verdict,
        an empty profile, or fields that are not JSON.
        """
        self.authorize(token)
        if not isinstance(image_sha256, str) or not _HEX64.fullmatch(image_sha256):
            raise AuditError(f"image_sha256 must be 64 lower-case hex digits, got {image_sha256!r}")
        try:
            verdict_name = Verdict(verdict).value
        except ValueError:
            known = ", ".join(v.value for v in Verdict)
            raise AuditError(f"unknown verdict {verdict!r}: known are {known}") from None
        if not isinstance(profile, str) or not profile.strip():
            raise AuditError(f"profile must be a name, got {profile!r}")
        fields = [
            format_time(time or datetime.now(UTC)),
            image_sha256,
            profile,
            verdict_name,
            _json(reading, "reading"),
            _json(declared, "declared"),
            _json(computed, "computed"),
            _json(list(differences), "differences"),
        ]

        def add(transaction: Transaction) -> int:
            # every time, in the transaction: another process may have migrated the database
            # or rekeyed the trail
            self.database.check_schema(transaction)
            check_chained_as(
                transaction.one(f"SELECT {_COLUMNS} FROM verification WHERE id = 1"), self._key
            )
            last = transaction.one(
                "SELECT id, record_sha256 FROM verification ORDER BY id DESC LIMIT 1"
            )
            record_id = int(last[0]) + 1 if last else 1
            record_hash = chain_hash(last[1] if last else GENESIS, fields, self._key)
            transaction.all(
                "INSERT INTO verification (id, time_utc, image_sha256, profile, verdict, "
                "reading, declared, computed, differences, record_sha256) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (record_id, *fields, record_hash),
            )
            return record_id

        with self._guard():
            return self.database.write(add, serialize=CHAIN_LOCK, lock_name=CHAIN_LOCK_NAME)

    def rekey(self, token: str | None) -> int:
        """Chain every record under the operator secret this log was given (after checking
        that the trail holds as it is chained now, without one, on the rows it re-chains, in
        the same transaction); the number of records chained again (0 when they already
        were). The trail is read and re-chained :data:`CHAIN_PAGE_ROWS` records at a time
        inside that one transaction (:func:`~handreader.store.audit_trail.rechain`): its
        memory is a page's, and a failure anywhere rolls the whole of it back. Checkpoints
        signed before no longer match the head: sign a new one."""
        self.authorize(token)
        key = self._key
        if not key:
            raise AuditError(f"chaining the trail under the operator secret needs {KEY_ENV}")
        damage = self._damage()
        if damage is not None:
            raise AuditError(f"the trail does not hold, nothing chained again: {damage}")

        def again(transaction: Transaction) -> int:
            # the checks and the re-chaining read the same rows, in the write's transaction
            keyed = walk_chain(chain_rows(transaction, CHAIN_PAGE_ROWS), key, secret_set=True)
            return 0 if keyed.ok else rechain(transaction, key, CHAIN_PAGE_ROWS)

        with self._guard():
            count = self.database.write(again, serialize=CHAIN_LOCK, lock_name=CHAIN_LOCK_NAME)
        return count

    # --- reading ---------------------------------------------------------------------------------

    def _query(self, sql: str, values: Sequence[object]) -> list[Any]:
        with self._guard():
            return self.database.read(sql, values)

    def records(self, token: str | None, **filters: Any) -> list[AuditRecord]:
        """The records matching every filter given, oldest first: ``verdict``, ``since``
        (inclusive) and ``until`` (exclusive; times with a zone), ``profile``; ``limit`` and
        ``offset`` page through the result. AuditError for a bad filter."""
        return [AuditRecord._from_row(row) for row in self._rows(token, **filters)]

    def _rows(
        self,
        token: str | None,
        *,
        verdict: Verdict | str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        profile: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        after_id: int = 0,
    ) -> list[Any]:
        """The stored rows matching every filter given, oldest first (JSON fields as the text
        stored). ``since`` is inclusive and ``until`` exclusive (times with a zone); ``limit``
        and ``offset`` page through the result, ``after_id`` starts it past a record's id."""
        self.authorize(token)
        where, values = filter_clause(verdict, since, until, profile)
        if after_id:
            where = f"{where} AND id > ?" if where else " WHERE id > ?"
            values.append(after_id)
        if (limit is not None and limit < 0) or offset < 0:
            raise AuditError(f"limit and offset must be 0 or more, got {limit!r} and {offset!r}")
        if limit is None and self.database.dialect == "postgresql":
            page = " OFFSET ?"
            values += [offset]
        else:
            page = " LIMIT ? OFFSET ?"
            values += [-1 if limit is None else limit, offset]
        return self._query(f"SELECT {_COLUMNS} FROM verification{where} ORDER BY id{page}", values)

    def count(
        self,
        token: str | None,
        *,
        verdict: Verdict | str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        profile: str | None = None,
    ) -> int:
        """How many records match the filters (as :meth:`records`)."""
        self.authorize(token)
        where, values = filter_clause(verdict, since, until, profile)
        return int(self._query(f"SELECT count(*) FROM verification{where}", values)[0][0])

    def get(self, token: str | None, record_id: int) -> AuditRecord:
        """One record by id; AuditError when there is none."""
        self.authorize(token)
        rows = self._query(f"SELECT {_COLUMNS} FROM verification WHERE id = ?", [record_id])
        if not rows:
            raise AuditError(f"no audit record {record_id!r}")
        return AuditRecord._from_row(rows[0])

    def export_json(self, token: str | None, **filters: Any) -> str:
        """The matching records as a JSON array (filters as :meth:`records`)."""
        records = self.records(token, **filters)
        return json.dumps([record.to_dict() for record in records], ensure_ascii=False)

    def export_csv(self, token: str | None, **filters: Any) -> str:
        """The matching records as CSV with a header (filters as :meth:`records`); JSON fields
        as the compact JSON text stored, never decoded (tens of thousands of records export
        in seconds)."""
        return "".join(self.csv_chunks(token, **filters))

    def csv_chunks(
        self,
        token: str | None,
        *,
        limit: int | None = None,
        offset: int = 0,
        page_rows: int = EXPORT_PAGE_ROWS,
        **filters: Any,
    ) -> Iterator[str]:
        """:meth:`export_csv`'s text in chunks of at most ``page_rows`` records, the header
        with the first: each page is read after the last one's id, so a whole trail streams in
        the memory of one page. The token, the filters and the first page are read before
        this returns (their errors are raised here, not while the chunks are taken)."""
        if page_rows < 1:
            raise AuditError(f"page_rows must be at least 1, got {page_rows!r}")
        want = page_rows if limit is None else min(page_rows, limit)
        first = self._rows(token, **filters, limit=want, offset=offset)

        def chunks(rows: list[Any], want: int, left: int | None) -> Iterator[str]:
            header = [[name.strip() for name in _COLUMNS.split(",")]]
            while True:
                out = io.StringIO()
                csv.writer(out, lineterminator="\r\n").writerows(header + rows)
                yield out.getvalue()
                header = []
                left = None if left is None else left - len(rows)
                if len(rows) < want or left == 0:
                    return
                want = page_rows if left is None else min(page_rows, left)
                rows = self._rows(token, **filters, limit=want, after_id=int(rows[-1][0]))

        return chunks(first, want, limit)

    def verify_chain(self, token: str | None) -> int | None:
        """The id of the first record that is bad (edited: its hash does not follow from the
        records before it) or missing (a gap in the ids); None when the whole chain holds.
        :meth:`verify` says why, and checks a checkpoint too."""
        return self.verify(token).first_bad

    def verify(
        self,
        token: str | None,
        checkpoint: Checkpoint | None = None,
        secret: str | None = None,
    ) -> ChainReport:
        """Check the whole trail: ids 1, 2, 3... with no gap, each hash following from the
        record before it, and, given a ``checkpoint`` (with the ``secret`` that signed it),
        that its signature holds, that the record it counted is still there and still has
        the head hash it signed. Names the first bad or missing record. The database's own
        integrity check (:meth:`integrity_check`) runs first: a damaged database does not hold
        either, whatever the records read, and says what the check found. The trail is read a
        page of :data:`CHAIN_PAGE_ROWS` records at a time, so a check holds one page of memory
        whatever the trail's length, all its pages in one read snapshot: the report (its count
        of records, its head) is of the trail as it stood when the walk began, whatever is
        appended or rekeyed meanwhile."""
        self.authorize(token)
        if checkpoint is not None:
            if not secret:
                raise AuditSecretError(
                    f"verifying a checkpoint needs the operator secret ({KEY_ENV})"
                )
            wanted = Checkpoint.sign(checkpoint.count, checkpoint.head, secret)
            if not hmac.compare_digest(wanted, checkpoint.signature):
                raise CheckpointError("the checkpoint's signature does not hold under this secret")
        damage = self._damage()
        try:
            report = self._walk(self._key, checkpoint)
        except AuditError:  # (a damaged file may refuse the records' pages too)
            if damage is None:
                raise
            report = ChainReport(0, GENESIS, None, None)
        if damage is None:
            return report
        problem = "; ".join(filter(None, (damage, report.problem)))
        return ChainReport(report.records, report.head, report.first_bad, problem)

    def _damage(self) -> str | None:
        """What the database's integrity check (:meth:`Database.integrity_check`) finds, in one
        line; None when the database is sound."""
        with self._guard():
            found = self.database.integrity_check("verification")
        if found == "ok":
            return None
        lines = found.replace("; ", "\n").splitlines()  # (SQLite: rows of lines)
        problems = [line.strip() for line in lines if line.strip() and line[:3] != "***"]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        first = problems[0] if problems else "no answer"
        return f"the database does not pass its integrity check: {first}{more}"

    def _walk(self, key: bytes | None, checkpoint: Checkpoint | None = None) -> ChainReport:
        """:meth:`verify`'s walk over the records, each hash checked under ``key``
        (:func:`~handreader.store.audit_trail.walk_chain`), read :data:`CHAIN_PAGE_ROWS` at a
        time in one read snapshot (:meth:`Database.snapshot`): the report is of the trail as it
        stood when the walk began. A record appended meanwhile is not counted, and a rekey
        committed meanwhile is not seen (the trail is read all before it, never part before
        and part after)."""
        with self._guard(), self.database.snapshot() as snapshot:
            rows = chain_rows(snapshot, CHAIN_PAGE_ROWS)
            return walk_chain(rows, key, checkpoint, secret_set=self._key is not None)

    def checkpoint(self, token: str | None, secret: str) -> Checkpoint:
        """The chain's head now, signed with the operator ``secret``: keep it outside the
        database and verify against it later (the module docstring). The trail must hold."""
        if not secret:
            raise AuditSecretError(f"a checkpoint needs the operator secret ({KEY_ENV})")
        report = self.verify(token)
        if not report.ok:
            raise AuditError(f"the trail does not hold, no checkpoint made: {report.problem}")
        return Checkpoint(
            report.records, report.head, Checkpoint.sign(report.records, report.head, secret)
        )

    def integrity_check(self, token: str | None) -> str:
        """``"ok"`` for a sound database, else what SQLite's ``PRAGMA integrity_check`` finds;
        on PostgreSQL, which has no such check, ``"ok"`` (:meth:`verify` reads every record)."""
        self.authorize(token)
        with self._guard():
            return self.database.integrity_check("verification")


def verify_and_log(
    reading: Reading,
    declared: DeclaredRound | Mapping[str, object],
    audit: AuditLog,
    token: str | None,
    *,
    image_digest: str,
    options: TableOptions | None = None,
    payout_tolerance: Decimal = DEFAULT_PAYOUT_TOLERANCE,
) -> tuple[Verification, int]:
    """Score ``reading`` under ``options``, verify ``declared`` against it, and append the
    record to ``audit`` with the operator ``token``; returns the verification and the record id.

    ``image_digest`` is :func:`handreader.tables.verification.image_sha256` of the photo's bytes
    as received. The token is checked before anything is scored (AuditAuthError); VerifyError
    for a bad declaration.
    """
    audit.authorize(token)
    claim = DeclaredRound.parse(declared)
    chosen = options or TableOptions()
    table = score_reading(reading, chosen)
    verification = verify_round(table, claim, payout_tolerance=payout_tolerance)
    record_id = audit.append(
        token,
        image_sha256=image_digest,
        reading=reading.to_dict(),
        profile=chosen.profile.name,
        declared=claim.to_dict(),
        computed={**verification.computed(), "table": table.to_dict()},
        verdict=verification.verdict.value,
        differences=[difference.to_dict() for difference in verification.differences],
    )
    return verification, record_id
