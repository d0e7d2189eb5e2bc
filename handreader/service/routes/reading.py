"""The browser side of the service: the page at ``/``, the live WebSocket, the trainer, and (from
``handreader.service.routes.games`` and ``handreader.service.routes.verification``) the other
games and dealer verification.

:func:`create_router` builds an ``APIRouter`` that ``serve.create_app`` includes, handing over
its dependencies (:class:`~handreader.service.deps.ServiceHooks`). Routes:

- ``GET /``: the page (``handreader/service/static/index.html``; plain HTML, CSS and JavaScript, no
  build step, nothing fetched from elsewhere), ``GET /static/<file>``: its files.
- ``WS /v1/live``: live reading of a camera stream (see :func:`add_live_route`).
- ``GET /v1/trainer/deal?hands=N&profile=trainer&seed=S``: N (2 to 4) hands of five cards dealt
  from the profile's decks; ``seed`` makes the deal repeatable (without it a seed is drawn and
  returned).
- ``POST /v1/trainer/check``: ``{"hands": [...], "pick": i, "profile": "trainer"}`` -> whether
  hand ``i`` (0-based) is the winner, and the correct reading: each hand's split and score,
  the places, the winners, and the tie-break when equal scores were decided by the highest
  card (seed 002: rank K..A, then suit spades, hearts, clubs, diamonds).
- ``POST /v1/baccarat``, ``/v1/blackjack``, ``/v1/paigow``: ``handreader.service.routes.games``.
- ``POST /v1/verify``, ``GET /v1/audit``: ``handreader.service.routes.verification``.
- ``GET /v1/decks``, ``GET|POST /v1/decks/NAME``: calibrated decks,
  ``handreader.service.routes.calibrate``.

Phones: ``getUserMedia`` (the camera) works only on a secure origin: ``https://`` or
``http://localhost``. To use the page from a phone on the same network, run the server on all
interfaces with a certificate, e.g. a self-signed one::

    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=handreader" \\
        -keyout key.pem -out cert.pem
    python serve.py --host 0.0.0.0 --ssl-keyfile key.pem --ssl-certfile cert.pem

and open ``https://<the computer's address>:8000/`` on the phone (accept the certificate
warning once). The WebSocket then runs over ``wss://`` by itself.
"""

import asyncio
import json
import logging
import re
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Self

import numpy as np
from fastapi import APIRouter, Depends, FastAPI, Query, Request, WebSocket
from fastapi.responses import FileResponse, Response
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.websockets import WebSocketDisconnect

from handreader.service.deps import (
    ReaderLike,
    RuntimeLike,
    ServiceHooks,
    decoded_photo,
    json_response,
    validate,
)
from handreader.service.errors import error_responses
from handreader.service.live_streams import live_streams_for
from handreader.service.origins import origin_allowed
from handreader.service.requests import (
    JSON_LIMIT,
    LIVE_TEXT_LIMIT,
    BadOptionsError,
    MalformedJsonError,
    PayloadTooLargeError,
    check_query,
    json_body_doc,
    parse_json_object,
    parse_json_off_loop,
    query_options,
    read_body,
)
from handreader.service.routes.calibrate import add_deck_routes
from handreader.service.routes.deck_access import DeckAccess
from handreader.service.routes.decks import DeckSwitch
from handreader.service.routes.games import add_game_routes
from handreader.service.routes.source import add_source_route
from handreader.service.routes.verification import AuditLogHolder, add_verify_routes
from handreader.service.schemas import CardCodes, TableOptionsIn
from handreader.service.token_guard import client_of
from handreader.tables.live import (
    LiveError,
    LiveFrame,
    LivePipeline,
    LiveSettings,
    frame_reader,
)
from handreader.tables.scoring import HandResult, TableOptions, TableResult, score_codes
from rules.cards import Card, full_deck, parse_cards
from rules.errors import HandError
from rules.money import WrittenNumber
from rules.niuniu_profiles import DEFAULT_PROFILE, NiuProfile, TieBreak, get_profile
from vision.detections import Reading

__all__ = [
    "STATIC_DIR",
    "TrainerCheckIn",
    "add_live_route",
    "add_page_routes",
    "add_trainer_routes",
    "create_router",
    "deal_hands",
    "trainer_check",
]

LOG = logging.getLogger("handreader.service.routes.reading")

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
"""The page's files (shipped as package data)."""

_MEDIA = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
_STATIC_NAME = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")


# --- the page ------------------------------------------------------------------------------------


def _static_file(name: str) -> FileResponse:
    """A file of the page by its plain name (no folders, a known type); 404 otherwise."""
    path = STATIC_DIR / name
    if not _STATIC_NAME.fullmatch(name) or path.suffix not in _MEDIA or not path.is_file():
        raise HTTPException(404, f"no page file {name!r}")
    return FileResponse(path, media_type=_MEDIA[path.suffix], headers={"Cache-Control": "no-cache"})


def add_page_routes(router: APIRouter) -> None:
    """``GET /`` (the page) and ``GET /static/<file>``."""

    @router.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return _static_file("index.html")

    @router.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> FileResponse:
        return _static_file(name)


# --- the trainer ---------------------------------------------------------------------------------

HAND_LETTERS = "ABCD"
"""The trainer's hands are named A to D, as in seed 002's examples."""


def deal_hands(count: int, profile: NiuProfile, rng: np.random.Generator) -> list[list[str]]:
    """``count`` hands of five cards drawn without replacement from the profile's decks."""
    deck = [card for card in full_deck() for _ in range(profile.decks)]
    drawn = rng.choice(len(deck), size=5 * count, replace=False)
    codes = [str(deck[int(index)]) for index in drawn]
    return [codes[5 * hand : 5 * hand + 5] for hand in range(count)]


class TrainerCheckIn(BaseModel):
    """The hands the trainer showed and the hand the user picked as the winner."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "examples": [{"hands": ["3H 7S KD 8C 6D", "KS QS 10S 5C 5S"], "pick": 1}]
        },
    )

    hands: Annotated[list[CardCodes], Field(min_length=2, max_length=4)] = Field(
        description="2 to 4 hands of five cards"
    )
    pick: int = Field(ge=0, description="the hand picked as the winner (0-based)")
    profile: str = Field(DEFAULT_PROFILE, max_length=40, description="house rules")

    @model_validator(mode="after")
    def _pick_in_range(self) -> Self:
        if self.pick >= len(self.hands):
            raise ValueError(f"pick {self.pick} is no hand: hands are 0..{len(self.hands) - 1}")
        return self


def _highest(hand: HandResult, profile: NiuProfile) -> Card:
    cards = [card for card in parse_cards([c.code for c in hand.cards]) if isinstance(card, Card)]
    return max(cards, key=lambda card: (int(card.rank), profile.suit_strength(card.suit)))


def _tie_break(table: TableResult) -> dict[str, Any] | None:
    """How equal scores at the top were decided: None when the best score is alone."""
    hands = [hand for hand in table.hands if hand.hand is not None]
    best = max(hand.hand.strength[:2] for hand in hands if hand.hand is not None)
    level = [hand for hand in hands if hand.hand is not None and hand.hand.strength[:2] == best]
    if len(level) < 2:
        return None
    profile = table.profile
    names = ", ".join(HAND_LETTERS[hand.seat] for hand in level)
    label = level[0].hand.label if level[0].hand is not None else ""
    if profile.tie_break is not TieBreak.HIGH_CARD:
        text = f"hands {names} all score {label}; profile {profile.name} breaks no tie: they share"
        return {"hands": [hand.seat for hand in level], "by": None, "high_cards": [], "text": text}
    highs = [_highest(hand, profile) for hand in level]
    order = sorted(
        zip(level, highs, strict=True),
        key=lambda pair: (-int(pair[1].rank), -profile.suit_strength(pair[1].suit)),
    )
    suits = " > ".join(suit.name.lower() for suit in profile.suit_order)
    shown = " beats ".join(f"{card} (hand {HAND_LETTERS[hand.seat]})" for hand, card in order)
    text = (
        f"hands {names} all score {label}: the highest card decides, rank K..A then suit "
        f"({suits}): {shown}"
    )
    return {
        "hands": [hand.seat for hand in level],
        "by": "high_card",
        "high_cards": [str(card) for card in highs],
        "text": text,
    }


def trainer_check(check: TrainerCheckIn) -> dict[str, Any]:
    """Score the hands as the trainer does and say whether the pick is a winner; HandError for
    a hand the rules refuse (a joker, a wrong count), CardError for unknown card text."""
    options = TableOptions.create(profile=check.profile, mode="trainer")
    table = score_codes(check.hands, None, options)
    for hand in table.hands:
        if not hand.scored:  # (codes are never uncertain: only a card the rules refuse)
            raise HandError(f"hand {HAND_LETTERS[hand.seat]}: {hand.problem}")
    return {
        "profile": table.profile.name,
        "pick": check.pick,
        "correct": check.pick in table.winners,
        "winners": list(table.winners),
        "tie": table.is_tie,
        "places": None if table.places is None else list(table.places),
        "hands": [hand.to_dict() for hand in table.hands],
        "tie_break": _tie_break(table),
    }


def add_trainer_routes(router: APIRouter) -> None:
    """``GET /v1/trainer/deal`` and ``POST /v1/trainer/check``."""

    @router.get("/v1/trainer/deal", responses=error_responses(400), tags=["trainer"])
    def deal(
        request: Request,
        hands: int = Query(3, ge=2, le=4, description="how many hands, 2 to 4"),
        profile: str = Query(DEFAULT_PROFILE, max_length=40),
        seed: int | None = Query(None, ge=0, lt=2**63, description="repeat a deal"),
    ) -> Response:
        """Deal 2 to 4 hands for the trainer; the seed used comes back."""
        check_query(request)
        rules = get_profile(profile)
        # drawn below 2^53: exact as a JSON number in every client (JavaScript's included)
        chosen = secrets.randbelow(2**53) if seed is None else seed
        dealt = deal_hands(hands, rules, np.random.default_rng(chosen))
        return json_response({"profile": rules.name, "seed": chosen, "hands": dealt})

    @router.post(
        "/v1/trainer/check",
        responses=error_responses(400, 413, 422),
        tags=["trainer"],
        openapi_extra=json_body_doc(TrainerCheckIn),
    )
    def check(body: Annotated[TrainerCheckIn, Depends(_trainer_body)]) -> Response:
        """Whether the picked hand wins, with the correct reading of every hand."""
        return json_response(trainer_check(body))


async def _trainer_body(request: Request) -> TrainerCheckIn:
    """The body of ``POST /v1/trainer/check``: a JSON object within ``JSON_LIMIT`` bytes, read
    by the service's own reader (cut at the limit, depth checked)."""
    body = await read_body(request, JSON_LIMIT)
    return validate(TrainerCheckIn, await parse_json_off_loop(body, "the request body"))


# --- live ----------------------------------------------------------------------------------------


class _TimedReader:
    """The recognizer as the live pipeline calls it: through serve's pool, with its time limit."""

    def __init__(self, reader: ReaderLike, runtime: RuntimeLike) -> None:
        self._reader = reader
        self._runtime = runtime

    def read(self, image: NDArray[np.uint8]) -> Reading:
        return self._runtime.read(self._reader, image)


def _live_options(query: QueryParams) -> TableOptionsIn:
    """Table options from the query, as a photo's
    (:func:`handreader.service.requests.query_options`)."""
    return validate(TableOptionsIn, query_options(query))


def add_live_route(router: APIRouter, hooks: ServiceHooks) -> None:
    """``WS /v1/live``: one live pipeline (read, track, score) per connection.

    The query sets the table options of ``/v1/score`` (``?profile=classic&bet=double``, or
    ``options=<JSON>``). The client sends each frame as a binary message (JPEG or PNG bytes)
    and waits for the answer before sending the next (so frames never queue up); the answer is
    ``handreader.tables.live.LiveFrame.to_dict()`` plus ``size``: the cards shown (tracked over
    frames: a card appears after a few frames, stays through a missed one), the table scored
    from them, the timings. ``deck`` (query or options) reads with a calibrated deck
    (``handreader.service.routes.decks``); frames are decoded with the deck in play, by default
    the profile's Niu Niu deck (``game`` and ``decks`` options). A text message
    ``{"profile": "classic"}`` changes the profile (the deck in play stays), ``{"deck": "MYDECK"}``
    the deck (null: none; the tracks restart), ``{"options": {...}}`` all the options (a new deck
    in play restarts the tracks), ``{"reset": true}`` forgets the tracks, ``{"lock": true}``
    holds the hands shown to their regions (``handreader.tables.live.LivePipeline.lock_layout``;
    ``{"lock": false}`` lets them go); another key is a ``bad_options`` error; each is
    answered ``{"ok": true, "profile": ..., "deck": ..., "in_play": ..., "layout": ...}``
    (``layout``: the locked regions, or null).
    A bad frame or message is answered with the usual ``{"error": {"code", "message"}}`` and
    the stream goes on; bad options in the query close the connection (code 1008) after that
    error.

    A handshake from a web page of another origin is refused (HTTP 403) unless the operator
    allows that origin (``handreader.service.origins``). A worker holds a bounded number of
    streams, and closes a silent one (``handreader.service.live_streams``). Frames are decoded
    and read in the thread pool, never on the event loop, within the image limits and the
    decoding memory budget (``handreader.service.deps.decoded_photo``); the server takes frames
    of at most the byte limit and queues few per connection
    (``handreader.service.app.run_server``).
    """

    @router.websocket("/v1/live")
    async def live(
        websocket: WebSocket,
        reader: Annotated[ReaderLike, Depends(hooks.get_reader)],
        runtime: Annotated[RuntimeLike, Depends(hooks.get_runtime)],
    ) -> None:
        if not origin_allowed(websocket.headers, runtime.settings.allowed_origins):
            LOG.warning("live connection refused: origin %r", websocket.headers.get("origin"))
            await websocket.close(code=1008)  # (before accepting: answered HTTP 403)
            return
        streams, client = live_streams_for(websocket), client_of(websocket)
        refusal = streams.admit(client)
        if refusal is not None:
            await websocket.accept()
            await websocket.send_text(json.dumps({"error": {"code": "busy", "message": refusal}}))
            await websocket.close(code=1013)  # try again later
            return
        try:
            await websocket.accept()
            await _stream(websocket, reader, runtime)
        finally:
            streams.leave(client)

    async def _stream(websocket: WebSocket, reader: ReaderLike, runtime: RuntimeLike) -> None:
        """One admitted live stream, to its end."""

        async def send_error(error: Exception) -> None:
            code, message = hooks.describe_error(error)
            if code in ("internal_error", "recognizer_failed"):
                LOG.error("live frame failed: %s", error, exc_info=error)
            await websocket.send_text(json.dumps({"error": {"code": code, "message": message}}))

        try:
            chosen = _live_options(websocket.query_params)
            options = chosen.to_options()
            # the deck store may be a database: asked in the thread pool, never on the loop
            decks = await run_in_threadpool(
                DeckSwitch, frame_reader(reader), chosen.deck, chosen.in_play(), chosen.indices
            )
        except Exception as error:
            await send_error(error)
            await websocket.close(code=1008)
            return
        pipeline = LivePipeline(
            _TimedReader(decks, runtime), options, LiveSettings(in_play=decks.in_play)
        )
        idle_s = runtime.settings.live_idle_timeout_s
        try:
            while True:
                try:
                    message = await asyncio.wait_for(websocket.receive(), idle_s)
                except TimeoutError:
                    silent = f"no frame or message for {idle_s:g} s (HANDREADER_LIVE_IDLE_TIMEOUT)"
                    closing = {"code": "request_timeout", "message": f"{silent}: stream closed"}
                    await websocket.send_text(json.dumps({"error": closing}))
                    await websocket.close(code=1000)
                    return
                if message["type"] == "websocket.disconnect":
                    return
                try:
                    data = message.get("bytes")
                    if data is not None:
                        frame = await run_in_threadpool(_live_frame, pipeline, data, runtime)
                        answer = frame.to_dict() | {"size": list(frame.size_wh)}
                        await websocket.send_text(json.dumps(answer, separators=(",", ":")))
                    else:
                        text = message.get("text") or ""
                        if len(text) > LIVE_TEXT_LIMIT:  # refused unread: never parsed
                            raise PayloadTooLargeError(
                                f"a control message of {len(text)} characters: at most "
                                f"{LIVE_TEXT_LIMIT}"
                            )
                        await run_in_threadpool(_control, pipeline, text, decks)
                        answer = {
                            "ok": True,
                            "profile": pipeline.options.profile.name,
                            "deck": decks.deck,
                            "in_play": None if decks.in_play is None else str(decks.in_play),
                            "layout": None
                            if pipeline.layout is None
                            else pipeline.layout.to_dict(),
                        }
                        await websocket.send_text(json.dumps(answer))
                except WebSocketDisconnect:
                    raise
                except Exception as error:
                    await send_error(error)
        except WebSocketDisconnect:
            return


def _live_frame(pipeline: LivePipeline, data: bytes, runtime: RuntimeLike) -> LiveFrame:
    """Decode a frame and run the pipeline on it (blocking: run it in the thread pool)."""
    with decoded_photo(data, runtime, reduced=False) as photo:
        return pipeline.process(photo.image)


CONTROL_KEYS = frozenset({"options", "deck", "profile", "reset", "lock"})
"""What a live control message may hold (see :func:`add_live_route`)."""


def _control(pipeline: LivePipeline, text: str, decks: DeckSwitch) -> None:
    """Apply a text message (see :func:`add_live_route`): everything it asks is checked before
    anything changes, so a message answered with an error leaves the stream as it was."""
    command = parse_json_object(text, "a control message")
    unknown = sorted(set(command) - CONTROL_KEYS)
    if unknown:  # a typo must not pass for a command done
        known = ", ".join(sorted(CONTROL_KEYS))
        raise BadOptionsError(f"unknown control {', '.join(map(repr, unknown))}: {known}")
    for key in ("reset", "lock"):
        given = command.get(key, False)
        if not isinstance(given, bool):  # a number as written: 1e400, not its float Infinity
            shown = given.text if isinstance(given, WrittenNumber) else json.dumps(given)
            raise BadOptionsError(f"{key} must be true or false, got {shown}")
    options, deck, in_play, indices = pipeline.options, decks.deck, decks.in_play, decks.indices
    if "options" in command:
        given = command["options"]
        if not isinstance(given, dict):
            raise MalformedJsonError("options must be a JSON object")
        chosen = validate(TableOptionsIn, given)
        options, deck, in_play, indices = (
            chosen.to_options(),
            chosen.deck,
            chosen.in_play(),
            chosen.indices,
        )
    deck = command.get("deck", deck)
    profile = get_profile(str(command["profile"])) if "profile" in command else None
    changed = (deck or None, in_play, indices) != (decks.deck, decks.in_play, decks.indices)
    restart = changed or command.get("reset") is True
    if command.get("lock") is True and restart:
        raise BadOptionsError(
            "lock: this message restarts the tracks, so no hands are shown to lock; "
            "send the lock once the table shows again"
        )
    if changed:  # the one step that may fail (an unknown deck): it then changes nothing
        decks.switch(deck, in_play, indices)
    before = pipeline.options
    if "options" in command:
        pipeline.in_play = in_play
        pipeline.set_options(options)  # a locked layout stays locked
    if profile is not None:
        pipeline.set_profile(profile)
    if restart:
        pipeline.reset()
    if command.get("lock") is True:
        try:
            pipeline.lock_layout()
        except LiveError:
            pipeline.options = before
            raise
    elif command.get("lock") is False:
        pipeline.unlock_layout()


# --- the router ----------------------------------------------------------------------------------


def create_router(
    hooks: ServiceHooks, audit: AuditLogHolder | None = None, decks: DeckAccess | None = None
) -> APIRouter:
    """Every route of this module and of ``web_games``, ``web_verify``, ``web_calibrate`` and
    ``web_source``; ``audit``: the holder of the audit log (None: its settings from the
    environment, ``web_verify``); ``decks``: the deck-writing settings (None: from the
    environment). The router's lifespan closes the audit log when the app stops."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        holder.close()

    router = APIRouter(lifespan=lifespan)
    add_page_routes(router)
    add_live_route(router, hooks)
    add_trainer_routes(router)
    add_game_routes(router, hooks)
    holder = add_verify_routes(router, hooks, audit)
    add_deck_routes(router, hooks, decks)
    add_source_route(router)
    return router
