"""HTTP endpoints for dealer verification and its audit log.

- ``POST /v1/verify``: a photo of the finished round (multipart field ``image``) and, in the
  JSON ``options`` field, the declared results under ``declared`` (the forms of
  ``handreader.tables.verification.DeclaredRound.parse``:
  ``{"players": [{"seat": 1, "outcome": "win", "payout": 0.95}], "banker_net": -0.95}`` or
  ``{"1": "win", "2": "lose"}``) with the table options of ``/v1/score`` (profile, bet,
  stake, banker rule or regions). The table is read and scored, the declaration checked against it
  (``handreader.tables.verification.verify_round``) and the
  verification appended to the audit log; the answer is the verdict (``match``, ``mismatch``,
  ``unverified``), each difference, both sides, the table scored, the record's id and the
  image's SHA-256.
- ``GET /v1/audit?verdict=&since=&until=&profile=&limit=&offset=&format=json|csv``: the
  records matching every filter given, oldest first (``since`` inclusive, ``until`` exclusive,
  ISO 8601 times with a zone); JSON ``{"count", "records", "next_offset"}``, a page of at
  most 1,000 records (100 unless ``limit`` says), or a CSV download of every record asked for,
  streamed a page of the store at a time.

Both need the operator token as ``Authorization: Bearer <token>``: a missing or wrong token is
401 ``unauthorized``. The operator configures the log by the environment, read when the app is
created: ``HANDREADER_AUDIT_TOKEN`` (the token; unset: both endpoints answer 503
``audit_not_configured``), ``HANDREADER_DATABASE_URL`` (a shared PostgreSQL database,
``postgresql://...``, for replicas behind a load balancer) or else ``HANDREADER_AUDIT_DB`` (the
SQLite file; default ``audit.sqlite3`` in the data folder: ``$HANDREADER_DATA``, else
``$XDG_DATA_HOME/handreader``, that is ``~/.local/share/handreader``). The database is
opened, and its schema migrated, on the first verified request (or ``GET /health``), not
before; an unreachable database answers 503 ``store_unavailable`` and is tried again on the
next request.
"""

import hmac
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Self, TypeVar

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from pydantic import ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from handreader.service.deps import (
    ReaderLike,
    RuntimeLike,
    ServiceHooks,
    json_response,
    read_photo,
    validate,
)
from handreader.service.errors import error_responses
from handreader.service.requests import (
    JSON_LIMIT,
    BadOptionsError,
    MissingImageError,
    ServerBusyError,
    ServiceError,
    Upload,
    check_query,
    json_body_doc,
    parse_json_object,
    parse_json_off_loop,
    read_body,
    read_upload,
    request_body_doc,
)
from handreader.service.routes.audit_export import ExportResponse, HeldChunks
from handreader.service.schemas import CheckpointIn, TableOptionsIn
from handreader.service.store_guard import gated_result, submit_gated
from handreader.service.token_guard import client_of, guard_for
from handreader.store.audit import (
    KEY_ENV,
    TOKEN_ENV,
    AuditAuthError,
    AuditError,
    AuditLog,
    Checkpoint,
    parse_time,
    verify_and_log,
)
from handreader.store.database import (
    CommitGate,
    StoreError,
    StoreUnavailableError,
    configured_url,
    redact_url,
)
from handreader.tables.verification import image_sha256

__all__ = [
    "DB_ENV",
    "AuditLogHolder",
    "AuditNotConfiguredError",
    "AuditSettings",
    "VerifyOptionsIn",
    "add_verify_routes",
    "bearer_token",
    "default_audit_path",
]

DB_ENV = "HANDREADER_AUDIT_DB"
"""The environment variable naming the audit log's SQLite file."""


class AuditNotConfiguredError(ServiceError):
    """No operator token is configured: the verification endpoints are off."""

    code = "audit_not_configured"


def default_audit_path(environ: Mapping[str, str] = os.environ) -> Path:
    """``audit.sqlite3`` in the data folder: ``$HANDREADER_DATA`` when set (where the decks
    live too), else ``$XDG_DATA_HOME/handreader`` (``~/.local/share`` when unset)."""
    if environ.get("HANDREADER_DATA"):
        return Path(environ["HANDREADER_DATA"]) / "audit.sqlite3"
    base = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "handreader" / "audit.sqlite3"


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """Where the audit log lives and the operator token (None: verification is off): the
    PostgreSQL database at ``database_url`` when given, else the SQLite file ``path``."""

    path: Path
    token: str | None
    database_url: str | None = None

    @property
    def location(self) -> str | Path:
        """The database's URL or the SQLite file."""
        return self.database_url or self.path

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Self:
        """From ``HANDREADER_DATABASE_URL``, ``HANDREADER_AUDIT_DB`` and
        ``HANDREADER_AUDIT_TOKEN`` (see the module docstring); StoreError naming
        ``HANDREADER_DATABASE_URL`` when it is set to a URL that is no ``postgresql://`` one or
        whose hosts and ports do not read (``handreader.store.database_url.configured_url``)."""
        path = environ.get(DB_ENV)
        return cls(
            Path(path) if path else default_audit_path(environ),
            environ.get(TOKEN_ENV) or None,
            configured_url(environ),
        )


_T = TypeVar("_T")

MAX_OFFSET = 2**63 - 1
"""The largest ``offset`` of ``GET /v1/audit``: the stores' 64-bit row counts."""

DEFAULT_PAGE = 100
"""The records a JSON page of ``GET /v1/audit`` holds when no ``limit`` is given."""

MAX_PAGE = 1000
"""The most records a JSON page of ``GET /v1/audit`` holds (the whole log: ``format=csv``)."""

HEALTH_PROBE_S = 0.5
"""The longest ``GET /health`` waits for the store's database to answer (the answer then comes
within 1 s, the rest of the route included)."""
STORE_DEADLINE_S = 5.0
"""The longest a request waits for a store call (open, append, read) before 503
``store_unavailable``: a stalled database never holds the threads that read photos."""
READ_DEADLINE_S = 60.0
"""The longest a request waits for a long read of the trail (its records, an export, a chain
check: seconds for tens of thousands of records); one runs at a time a worker."""
STORE_THREADS = 4
"""Threads of the store's own pool: at most this many store calls wait on the database."""
STORE_QUEUE = 16
"""Store calls that may wait for a thread of that pool; more are refused at once (503)."""


@dataclass
class AuditLogHolder:
    """An app's audit log, opened on first use (one connection, thread-safe); :meth:`close`
    when the app stops."""

    settings: AuditSettings
    _log: AuditLog | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _prober: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="store-probe"),
        init=False,
    )
    _probe: Future[dict[str, object]] | None = field(default=None, init=False)
    _last_state: dict[str, object] | None = field(default=None, init=False)
    _store_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="store"),
        init=False,
    )
    _waiting: int = field(default=0, init=False)
    _reading: threading.Lock = field(default_factory=threading.Lock, init=False)

    def authorize(self, token: str | None) -> None:
        """Check the operator token without touching the database (401, or 503 when audit is
        off), as :meth:`handreader.store.audit.AuditLog.authorize` would."""
        if self.settings.token is None:
            raise AuditNotConfiguredError(f"audit log not configured: set {TOKEN_ENV}")
        if not token:
            raise AuditAuthError(
                "missing operator token for the audit log: send it as "
                "'Authorization: Bearer TOKEN'",
                guessed=False,
            )
        if not self.is_operator(token):
            raise AuditAuthError("wrong operator token for the audit log")

    def call(self, work: Callable[[AuditLog], _T], deadline_s: float | None = None) -> _T:
        """``work(log)`` in the store's own bounded pool, waited for at most ``deadline_s``
        (default :data:`STORE_DEADLINE_S`):
        StoreUnavailableError (503) when the database does not answer in time or too many
        calls already wait on it.

        A 503 for running out of time means nothing was written: a write that has not begun
        to commit by then is rolled back when it gets there
        (:class:`handreader.store.database.CommitGate`); one that has is waited for up to
        ``handreader.service.store_guard.COMMIT_WAIT_S`` more, and its outcome is the answer
        (:func:`handreader.service.store_guard.gated_result`)."""
        future, gate = self._submit(work)
        return self._answer(future, gate, STORE_DEADLINE_S if deadline_s is None else deadline_s)

    def _submit(
        self, work: Callable[[AuditLog], _T], done: Callable[[], None] | None = None
    ) -> tuple[Future[_T], CommitGate]:
        """``work(log)`` queued in the store's pool, with the gate its writes commit through,
        and ``done()`` after it however it ends (the log not opened too); StoreUnavailableError,
        and nothing queued, when too many calls already wait."""
        with self._lock:
            if self._waiting >= STORE_THREADS + STORE_QUEUE:
                raise StoreUnavailableError(
                    "the store is not answering: too many calls are waiting on its database"
                )
            self._waiting += 1

        def run() -> _T:
            try:
                return work(self.log())
            finally:
                with self._lock:
                    self._waiting -= 1
                if done is not None:
                    done()

        return submit_gated(self._store_pool, run)

    @staticmethod
    def _answer(future: Future[_T], gate: CommitGate, deadline_s: float) -> _T:
        """The call's result, waited for as :meth:`call` says."""
        return gated_result(
            future, gate, deadline_s, "the store's database", "GET /v1/audit shows the records"
        )

    def read(self, work: Callable[[AuditLog], _T]) -> _T:
        """A long read of the trail (its records, an export, a chain check) as :meth:`call`
        runs it, waited for up to :data:`READ_DEADLINE_S`, one at a time a worker:
        ServerBusyError (503 ``busy``) while another runs, even one whose caller gave up, so
        abandoned exports never pile up in memory."""
        self._hold_reading()
        try:
            future, gate = self._submit(work, done=self._reading.release)
        except BaseException:
            self._reading.release()  # (never queued: it will not release itself)
            raise
        return self._answer(future, gate, READ_DEADLINE_S)

    def stream(self, work: Callable[[AuditLog], Iterator[str]]) -> HeldChunks:
        """A long read answered in chunks (the CSV export): ``work(log)`` reads its first
        chunk as :meth:`read` reads (its errors are raised here), and the worker's one long
        read is held until the chunks end or are dropped, so exports one after another never
        run at once."""
        self._hold_reading()
        try:
            future, gate = self._submit(work)
        except BaseException:
            self._reading.release()
            raise
        try:
            chunks = self._answer(future, gate, READ_DEADLINE_S)
        except BaseException:  # (given back when the read its caller gave up on ends)
            future.add_done_callback(lambda _: self._reading.release())
            raise
        return HeldChunks(chunks, self._reading.release)

    def _hold_reading(self) -> None:
        """Take the worker's one long read; ServerBusyError while another holds it."""
        if not self._reading.acquire(blocking=False):
            raise ServerBusyError(
                "another long read of the audit log (its records, an export or a chain check) "
                "is running: try again when it ends"
            )

    def log(self) -> AuditLog:
        """The open log; AuditNotConfiguredError without a token, AuditError when the database
        cannot be used, StoreUnavailableError when it cannot be reached."""
        if self.settings.token is None:
            raise AuditNotConfiguredError(f"audit log not configured: set {TOKEN_ENV}")
        with self._lock:
            if self._log is None and self.settings.database_url is not None:
                self._log = AuditLog(self.settings.database_url, token=self.settings.token)
            if self._log is None:
                try:
                    self.settings.path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as error:
                    raise AuditError(
                        f"cannot create the folder of audit log {str(self.settings.path)!r}: "
                        f"{error}"
                    ) from None
                self._log = AuditLog(self.settings.path, token=self.settings.token)
            return self._log

    def describe(
        self, detailed: bool = True, timeout_s: float = HEALTH_PROBE_S
    ) -> dict[str, object]:
        """The store as ``GET /health`` reports it: backend, whether audit is on, and ``ok``
        (or ``error``, the reason); ``detailed`` (a caller holding the operator token) adds the
        location (a URL without its password) and the schema version. The database is asked
        in a probe thread: an answer later than ``timeout_s`` gives the last state known,
        marked ``stale`` (a frozen database never holds ``/health``); ``audit: "off"``
        without an operator token (the database is then not opened)."""
        url = self.settings.database_url
        report: dict[str, object] = {"backend": "postgresql" if url else "sqlite"}
        if detailed:
            report["location"] = redact_url(url) if url else str(self.settings.path)
        if self.settings.token is None:
            return report | {"audit": "off"}
        with self._lock:
            if self._probe is None or self._probe.done():
                if self._probe is not None:
                    self._last_state = self._probe.result()
                self._probe = self._prober.submit(self._probe_store)
            probe = self._probe
        try:
            state = probe.result(timeout=timeout_s)
        except FutureTimeout:
            known = dict(self._last_state or {})
            state = known | {
                "ok": False,
                "stale": True,
                "error": f"the database did not answer within {timeout_s:g} s",
            }
        if not detailed:
            state = {key: value for key, value in state.items() if key in ("ok", "stale")}
            if state.get("ok") is False:
                state["error"] = "the database does not answer"
        return report | state | {"audit": "on"}

    def is_operator(self, token: str | None) -> bool:
        """Whether ``token`` is the operator token (compared in constant time)."""
        wanted = self.settings.token
        return bool(token and wanted) and hmac.compare_digest(
            str(token).encode("utf-8"), str(wanted).encode("utf-8")
        )

    def _probe_store(self) -> dict[str, object]:
        """The database's state (its schema version, ``ok``), or why it cannot be used."""
        try:
            log = self.log()
        except StoreError as error:
            return {"ok": False, "error": str(error)}
        state = log.database.describe()
        return {key: value for key, value in state.items() if key not in ("backend", "location")}

    def close(self) -> None:
        """Close the log if it was opened (it opens again on the next use)."""
        self._prober.shutdown(wait=False, cancel_futures=True)
        self._store_pool.shutdown(wait=False, cancel_futures=True)
        self._store_pool = ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="store")
        self._prober = ThreadPoolExecutor(1, thread_name_prefix="store-probe")
        with self._lock:
            self._probe = None
            if self._log is not None:
                self._log.close()
                self._log = None


def bearer_token(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header; None when there is none (a
    header of another scheme gives None as well, and so is refused by the log)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


class VerifyOptionsIn(TableOptionsIn):
    """The options of ``POST /v1/verify``: the table options and the declared results."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {  # seed 002's payouts: a double bet of 100, Niu Niu (x3) and Niu 4 (x1) win
                    "profile": "trainer",
                    "bet": "double",
                    "stake": 100,
                    "declared": {
                        "players": [
                            {"seat": 1, "outcome": "win", "payout": 285},
                            {"seat": 2, "outcome": "win", "payout": 95},
                        ],
                        "banker_net": -380,
                    },
                },
                {"declared": {"1": "win", "2": "win"}},  # outcomes only
            ]
        }
    )

    declared: dict[str, Any] | str = Field(
        description="the declared results: {'players': [{'seat', 'outcome', 'payout'}], "
        "'banker_net'} or {'<seat>': outcome}; a JSON string when sent as a query parameter",
        examples=[{"players": [{"seat": 1, "outcome": "win", "payout": 0.95}]}],
    )

    def declaration(self) -> dict[str, Any]:
        """The declared results as an object (parsed when given as JSON text)."""
        if isinstance(self.declared, dict):
            return self.declared
        return parse_json_object(self.declared, "declared")


AUDIT_EXAMPLES = {400: "bad_options", 503: "audit_not_configured"}
"""The error codes the audit log's routes show as their examples of 400 and 503."""


def add_verify_routes(
    router: APIRouter, hooks: ServiceHooks, holder: AuditLogHolder | None = None
) -> AuditLogHolder:
    """Add ``POST /v1/verify`` and ``GET /v1/audit`` to ``router``, on the log of ``holder``
    (None: settings from the environment). Returns the holder (close it when the app stops)."""
    holder = holder or AuditLogHolder(AuditSettings.from_env())

    def operator(request: Request) -> str | None:
        """The operator's token, refused (401, 503) before anything else is read."""
        token = bearer_token(request)
        if token is not None:
            guard_for(request).check(client_of(request))
        holder.authorize(token)
        return token

    async def upload(request: Request) -> Upload:
        runtime = await hooks.get_runtime(request)
        return await read_upload(request, runtime.settings.max_bytes)

    @router.post(
        "/v1/verify",
        responses=error_responses(
            400, 401, 413, 415, 422, 429, 500, 503, 507, examples={400: "bad_declaration"}
        ),
        openapi_extra=request_body_doc(options_model=VerifyOptionsIn),
        tags=["verification"],
    )
    def verify(
        token: Annotated[str | None, Depends(operator)],  # (before the body is read)
        body: Annotated[Upload, Depends(upload)],
        reader: Annotated[ReaderLike, Depends(hooks.get_reader)],
        runtime: Annotated[RuntimeLike, Depends(hooks.get_runtime)],
    ) -> Response:
        """Check a dealer's declared results against the photo of the round; the verification
        is appended to the audit log (operator token required)."""
        if body.document is not None or body.image is None:
            raise MissingImageError(
                "a verification needs the photo: multipart with an 'image' field, or the raw image"
            )
        options = validate(VerifyOptionsIn, body.options)
        declared = options.declaration()
        _, reading, timings = read_photo(body, reader, runtime, options.in_play())
        digest = image_sha256(body.image)
        verification, record_id = holder.call(
            lambda log: verify_and_log(
                reading,
                declared,
                log,
                token,
                image_digest=digest,
                options=options.to_options(),
            )
        )
        answer = verification.to_dict() | {
            "record_id": record_id,
            "image_sha256": digest,
            "table": verification.table.to_dict(),
        }
        return json_response(answer, timings)

    @router.get(
        "/v1/audit/verify",
        responses=error_responses(
            400, 401, 429, 500, 503, examples={**AUDIT_EXAMPLES, 400: "bad_host"}
        ),  # (it reads no input of its own)
        tags=["verification"],
    )
    def audit_verify(token: Annotated[str | None, Depends(operator)]) -> Response:
        """Check the whole audit trail (operator token required): ids with no gap and each
        record's hash following from the one before; names the first bad or missing record.
        ``POST`` the same path with a signed checkpoint to check it too."""
        return json_response(holder.read(lambda log: log.verify(token)).to_dict())

    @router.post(
        "/v1/audit/verify",
        responses=error_responses(400, 401, 413, 429, 500, 503, examples=AUDIT_EXAMPLES),
        openapi_extra=json_body_doc(CheckpointIn),
        tags=["verification"],
    )
    async def audit_verify_checkpoint(
        request: Request, token: Annotated[str | None, Depends(operator)]
    ) -> Response:
        """Check the trail against a checkpoint (``{"count", "head", "signature"}``, from
        ``handreader audit checkpoint``), signed with the service's ``HANDREADER_AUDIT_KEY``:
        that its record is still there with the head it signed (the newest records deleted,
        or rows rewritten and re-hashed, show)."""
        body = await read_body(request, JSON_LIMIT)
        try:
            checkpoint = Checkpoint.from_dict(await parse_json_off_loop(body, "the checkpoint"))
        except AuditError as error:
            raise BadOptionsError(str(error)) from None
        secret = os.environ.get(KEY_ENV) or None
        report = await run_in_threadpool(
            holder.read, lambda log: log.verify(token, checkpoint, secret)
        )
        return json_response(report.to_dict())

    @router.get(
        "/v1/audit",
        responses={
            200: {
                "description": "the records: JSON, or CSV with ``format=csv``",
                "content": {"application/json": {}, "text/csv": {"schema": {"type": "string"}}},
            },
            **error_responses(400, 401, 422, 429, 500, 503, examples=AUDIT_EXAMPLES),
        },
        tags=["verification"],
    )
    def audit(
        request: Request,
        token: Annotated[str | None, Depends(operator)],
        verdict: Literal["match", "mismatch", "unverified"] | None = None,
        since: str | None = Query(None, max_length=40, description="ISO 8601, inclusive"),
        until: str | None = Query(None, max_length=40, description="ISO 8601, exclusive"),
        profile: str | None = Query(None, max_length=40),
        limit: int | None = Query(
            None,
            ge=0,
            le=MAX_OFFSET,
            description=f"JSON: at most {MAX_PAGE} (default {DEFAULT_PAGE}); CSV: all by default",
        ),
        offset: int = Query(0, ge=0, le=MAX_OFFSET),
        format: Literal["json", "csv"] = "json",
    ) -> Response:
        """The audit log's records matching the filters, oldest first, as JSON or CSV
        (operator token required). JSON answers a page (``limit``, at most
        :data:`MAX_PAGE`), with ``next_offset`` for the next one (null after the last); CSV
        streams every record asked for, a page of the store at a time."""
        check_query(request)
        for name, value in (("since", since), ("until", until)):
            if value is not None:
                try:
                    parse_time(value)
                except AuditError as error:
                    raise BadOptionsError(f"{name}: {error}") from None
        filters: dict[str, Any] = {
            "verdict": verdict, "since": since, "until": until, "profile": profile,
        }  # fmt: skip
        if format == "csv":
            chunks = holder.stream(
                lambda log: log.csv_chunks(token, **filters, limit=limit, offset=offset)
            )
            return ExportResponse(
                chunks,
                media_type="text/csv; charset=utf-8",
                headers={"Content-Disposition": 'attachment; filename="audit.csv"'},
            )
        if limit is not None and limit > MAX_PAGE:
            raise BadOptionsError(
                f"limit: at most {MAX_PAGE} records a page, got {limit} "
                "(page with offset, or export them all with format=csv)"
            )
        page = DEFAULT_PAGE if limit is None else limit
        count, records = holder.read(
            lambda log: (
                log.count(token, **filters),
                log.records(token, **filters, limit=page, offset=offset),
            )
        )
        after = offset + len(records)
        return json_response(
            {
                "count": count,
                "records": [record.to_dict() for record in records],
                "next_offset": after if after < count and page > 0 else None,
            }
        )

    return holder
