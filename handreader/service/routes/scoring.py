"""The reading and scoring endpoints: ``GET /health``, ``POST /v1/read``, ``/v1/score`` (Niu Niu),
``/v1/pits`` and ``/v1/annotated``.

Photos are read with the deck in play of their game (``game`` and ``decks`` options,
``handreader.service.schemas``): Niu Niu's for ``/v1/score`` and a Niu Niu drawing (the
profile's number of 52-card decks, no jokers), Pits' 54 cards for ``/v1/pits``, any card for
``/v1/read`` unless a game is named.

Card codes are scored on the event loop itself: a table of codes costs well under a millisecond
of CPU and never waits, less than the hop to a thread and back. Photos (decoding, the
recognizer, the table) go to the thread pool, so the loop never waits on them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
from fastapi import FastAPI, Request
from fastapi.responses import Response
from numpy.typing import NDArray
from starlette.concurrency import run_in_threadpool

from handreader.drawing.annotate import Annotator
from handreader.service.deps import (
    NoReader,
    ReaderDep,
    ReaderLike,
    Runtime,
    RuntimeDep,
    UploadDep,
    get_runtime,
    json_response,
    read_photo,
    reading_photo,
    validate,
)
from handreader.service.errors import ERROR_RESPONSES, error_response, error_responses
from handreader.service.requests import (
    BadOptionsError,
    Upload,
    image_format,
    read_upload,
    request_body_doc,
)
from handreader.service.routes.deck_access import DeckAccess
from handreader.service.routes.verification import AuditLogHolder, bearer_token
from handreader.service.schemas import (
    HealthOut,
    PitsCodesIn,
    PitsOptionsIn,
    PitsOut,
    ReadOptionsIn,
    ReadOut,
    ScoreCodesIn,
    TableOptionsIn,
    TableOut,
)
from handreader.service.token_guard import (
    TooManyAttemptsError,
    client_of,
    guard_for,
    note_refusal,
)
from handreader.tables.grouping import Region
from handreader.tables.pits import judge_play, judge_reading
from handreader.tables.scoring import (
    TableCard,
    reading_problem,
    score_codes,
    score_reading,
)
from rules.cards import AnyCard, check_distinct, parse_cards
from rules.decks import Deck
from rules.errors import HandError

__all__ = ["NEGOTIATED_PATHS", "add_scoring_routes"]

NEGOTIATED_PATHS = frozenset({"/v1/annotated"})
"""The paths whose answer is chosen by the ``Accept`` header: every answer there, errors
included, carries ``Vary: Accept`` (``handreader.service.headers.VaryByAccept``)."""


def add_scoring_routes(app: FastAPI, annotator: Annotator) -> None:
    """``GET /health``, ``POST /v1/read``, ``/v1/score``, ``/v1/pits`` and ``/v1/annotated``."""

    @app.get("/health", responses={200: {"model": HealthOut}, **error_responses(503)})
    def health(request: Request, reader: ReaderDep) -> Response:
        """200 when the models are loaded, 503 otherwise; the models and the store (its
        backend, location, schema version and whether its database answers)."""
        if isinstance(reader, NoReader):
            return error_response("not_ready", f"the recognizer is not ready: {reader.reason}")
        answer: dict[str, Any] = {"status": "ok", "models": _model_info(reader)}
        audit = getattr(request.app.state, "audit", None)
        if audit is not None:
            # where the store lives (its path, a database's user and host) only for the operator
            answer["store"] = audit.describe(detailed=_operator_asks(request, audit))
        return json_response(answer)

    @app.post(
        "/v1/read",
        responses={200: {"model": ReadOut}, **ERROR_RESPONSES},
        openapi_extra=request_body_doc(options_model=ReadOptionsIn),
    )
    def read(upload: UploadDep, reader: ReaderDep, runtime: RuntimeDep) -> Response:
        """Read the cards of a photo: codes, boxes, confidences, flags, and ``problem`` ("no
        cards found" for a photo with none, else null; options: ``ReadOptionsIn``: any card,
        unless a game's deck is named)."""
        in_play = validate(ReadOptionsIn, upload.options).in_play()
        _, reading, timings = read_photo(upload, reader, runtime, in_play)
        return json_response({**reading.to_dict(), "problem": reading_problem(reading)}, timings)

    @app.post(
        "/v1/score",
        responses={200: {"model": TableOut}, **ERROR_RESPONSES},
        openapi_extra=request_body_doc(ScoreCodesIn, TableOptionsIn),
    )
    async def score(request: Request, reader: ReaderDep) -> Response:
        """Score a Niu Niu table: hands, splits, scores, outcomes and payouts, or the trainer's
        winner. Send a photo (options: ``TableOptionsIn``) or card codes as JSON."""
        runtime = await get_runtime(request)
        upload = await read_upload(request, runtime.settings.max_bytes)
        if upload.document is not None:
            return _score_codes(upload)
        return await run_in_threadpool(_score_photo, upload, reader, runtime)

    @app.post(
        "/v1/pits",
        responses={200: {"model": PitsOut}, **ERROR_RESPONSES},
        openapi_extra=request_body_doc(PitsCodesIn, PitsOptionsIn),
    )
    async def pits(upload: UploadDep, reader: ReaderDep, runtime: RuntimeDep) -> Response:
        """Judge a Zheng Shangyou / Pits play: its combination and whether it beats the table.
        Send a photo (options: ``PitsOptionsIn``) or card codes as JSON."""
        if upload.document is not None:
            return _pits_codes(upload)
        return await run_in_threadpool(_pits_photo, upload, reader, runtime)

    @app.post(
        "/v1/annotated",
        response_class=Response,  # an image: no JSON answer on success
        responses={
            200: {
                "content": {
                    "image/jpeg": {"schema": {"type": "string", "format": "binary"}},
                    "image/png": {"schema": {"type": "string", "format": "binary"}},
                },
                "description": "the drawing",
            },
            **error_responses(406),
            **ERROR_RESPONSES,
        },
        openapi_extra=request_body_doc(options_model=TableOptionsIn),
    )
    def annotated(
        request: Request, upload: UploadDep, reader: ReaderDep, runtime: RuntimeDep
    ) -> Response:
        """The photo with the score drawn over it (boxes, splits, results), same size, as JPEG
        or PNG: ``?format=jpeg|png`` or the ``Accept`` header. ``?game=pits`` draws a Pits
        verdict instead of a Niu Niu table, and reads with Pits' deck in play. (A large JPEG,
        read at a reduced scale, is drawn on that image enlarged back to the photo's size.)"""
        extension, media = image_format(request)
        game = request.query_params.get("game", "niuniu")
        if game not in ("niuniu", "pits"):
            raise BadOptionsError(f"unknown game {game!r}: niuniu or pits")
        if game == "pits":
            pits_options = validate(PitsOptionsIn, upload.options)
            table_codes = [str(card) for card in parse_cards(pits_options.table)]
            deck = pits_options.in_play()
            region = _region(pits_options.table_region)
            # (one hold of the budget: the decoding's peak or the drawing's, the larger)
            with reading_photo(upload, reader, runtime, deck, to_draw=True) as (photo, reading, _):
                copies, kind = _packs(deck), pits_options.kind
                verdict = judge_reading(reading, table_codes, region, copies=copies, kind=kind)
                drawing = annotator.annotate(photo.full_size(), verdict)
                content = _encoded(drawing, extension)
        else:
            chosen = validate(TableOptionsIn, upload.options)
            options = chosen.to_options()
            deck = chosen.in_play()
            with reading_photo(upload, reader, runtime, deck, to_draw=True) as (photo, reading, _):
                table = score_reading(reading, options)
                drawing = annotator.annotate(photo.full_size(), table)
                content = _encoded(drawing, extension)
        return Response(content, media_type=media, headers={"Vary": "Accept"})


# Card codes are scored on the event loop (see the module docstring); photos (decoding, the
# recognizer, the table) go to the thread pool, so the loop never waits on them.


def _score_codes(upload: Upload) -> Response:
    """``POST /v1/score`` with card codes as JSON."""
    codes = validate(ScoreCodesIn, {**upload.options, **(upload.document or {})})
    result = score_codes(codes.hands, codes.banker, codes.to_options())
    return json_response(result.to_dict())


def _score_photo(upload: Upload, reader: ReaderLike, runtime: Runtime) -> Response:
    """``POST /v1/score`` with a photo (blocking: run it in the thread pool)."""
    chosen = validate(TableOptionsIn, upload.options)
    options = chosen.to_options()
    _, reading, timings = read_photo(upload, reader, runtime, chosen.in_play())
    start = time.perf_counter()
    table = score_reading(reading, options)
    timings["score"] = (time.perf_counter() - start) * 1e3
    return json_response(table.to_dict(), timings)


def _pits_codes(upload: Upload) -> Response:
    """``POST /v1/pits`` with card codes as JSON."""
    codes = validate(PitsCodesIn, {**upload.options, **(upload.document or {})})
    played, on_table = parse_cards(codes.play), parse_cards(codes.table)
    if not played:
        raise HandError("no cards in the play: name the cards played (a pass plays none)")
    check_distinct(played + on_table)  # one deck: a card on the table cannot be played again
    play = [_code(card) for card in played]
    table = [_code(card) for card in on_table]
    return json_response(judge_play(play, table, kind=codes.kind).to_dict())


def _pits_photo(upload: Upload, reader: ReaderLike, runtime: Runtime) -> Response:
    """``POST /v1/pits`` with a photo (blocking: run it in the thread pool)."""
    options = validate(PitsOptionsIn, upload.options)
    table_codes = [str(card) for card in parse_cards(options.table)]
    region = _region(options.table_region)
    deck = options.in_play()
    _, reading, timings = read_photo(upload, reader, runtime, deck)
    verdict = judge_reading(reading, table_codes, region, copies=_packs(deck), kind=options.kind)
    return json_response(verdict.to_dict(), timings)


def _operator_asks(request: Request, audit: AuditLogHolder) -> bool:
    """Whether ``/health`` is asked with an operator's token: the audit log's
    (``HANDREADER_AUDIT_TOKEN``) or the deck-writing one (``HANDREADER_OPERATOR_TOKEN``), either
    of which a monitor may poll with. A token that is neither is counted by the token guard as
    on every other route (``handreader.service.token_guard``), and an address it holds off has
    its token not compared at all: ``/health`` answers 200 either way, so its details would
    otherwise tell a guesser, unslowed, when a guess is right."""
    token = bearer_token(request)
    if token is None:
        return False
    try:
        guard_for(request).check(client_of(request))
    except TooManyAttemptsError:
        return False
    decks: DeckAccess | None = getattr(request.app.state, "deck_access", None)
    if audit.is_operator(token) or (decks is not None and decks.is_operator(token)):
        return True
    note_refusal(request, "GET /health: wrong operator token")
    return False


def _packs(deck: Deck | None) -> int:
    """Copies of one card the Pits photo's deck in play holds (None: one)."""
    return 1 if deck is None else deck.decks * deck.copies


def _encoded(drawing: NDArray[np.uint8], extension: str) -> bytes:
    """The drawing encoded as ``extension`` (``.jpg``, ``.png``), as the answer's bytes."""
    ok, encoded = cv2.imencode(extension, drawing)
    if not ok:
        raise RuntimeError(f"could not encode the drawing as {extension}")
    return encoded.tobytes()


def _model_info(reader: ReaderLike) -> dict[str, Any]:
    """The model files named by the reader's manifest (empty for a reader without one)."""
    manifest = getattr(reader, "manifest", None)
    if not isinstance(manifest, dict):
        return {}
    return {
        part: entry.get("file")
        for part, entry in manifest.items()
        if isinstance(entry, dict) and "file" in entry
    }


def _code(card: AnyCard) -> TableCard:
    return TableCard(str(card))


def _region(values: Sequence[float] | None) -> Region | None:
    return None if values is None else Region.parse(values)
