"""Deck calibration over HTTP: list the calibrated decks, calibrate one from uploaded photos.

Routes (added to ``handreader.service.routes.reading``'s router by :func:`add_deck_routes`):

- ``GET /v1/decks``: every saved deck profile (usable or not, with the reason), and the
  documented orders: ``card_order`` (one card per photo: S, H, D, C from A to K, then JB, JR)
  and ``grid`` (4 rows S, H, D, C of 13 cards A to K).
- ``GET /v1/decks/NAME``: one deck (404 ``not_found`` when none has that name).
- ``POST /v1/decks/NAME``: calibrate the deck NAME (made, or made again) from photos, with
  ``vision.calibrate_deck`` (what ``handreader calibrate`` runs), saved in the deck store
  (``handreader.store.decks``: the data folder, or the shared database, where every replica
  reads it); the operator token and the quota of ``handreader.service.routes.deck_access``,
  checked before the body is read, the quota again as the deck is saved (under the store's
  write lock). A multipart body:

  - ``photo``: one or more image files, in order (at most :data:`MAX_PHOTOS`, each within the
    service's image limits, :data:`MAX_BODY_BYTES` in all);
  - ``layout`` (optional): ``cards`` (default; one card per photo) or ``grid`` (one photo of
    the whole deck, 4 rows of 13);
  - ``codes`` (optional, ``cards`` only): the card of each photo, one code per photo separated
    by spaces or commas (``"AS 2S 3S"``). Without it a photo's card comes from its file name
    (``10C.jpg``, ``qs_2.png``), else from its place in ``card_order``, as on the CLI;
  - ``replace`` (optional): ``true`` (or ``1``, ``yes``, ``on``) to replace a deck of that
    name even when the new one lacks some of its cards, as the CLI's ``--replace``.

  A deck of that name is replaced when the new one keeps all its cards; otherwise, or when it
  cannot be read, only with ``replace`` (``handreader.store.decks.DeckStore.save``, the rule of
  ``handreader calibrate``, judged under the store's write lock, so a deck another process saved
  under the name a moment before is judged too): without it the request is 409 ``deck_exists``
  naming the deck and the cards it would lose, and nothing stored changes. The answer: the deck
  as ``GET /v1/decks/NAME`` gives it, the deck it replaced (``replaced``: its name, cards and
  when it was made, or the problem of a profile that could not be read; null for a new deck),
  the warnings (a photo without an index is left out), the card of each photo, and the contact
  sheet of what was assigned (``sheet``: a PNG ``data:`` URL). No training runs: seconds on two
  cores.
- ``DELETE /v1/decks/NAME``: remove the deck (operator token; 404 when there is none).

Errors: a grid photo with a card missing or a card twice, turned or mirrored, or with many cards
out of place (``vision.calibrate_deck.check_turn``, ``misplaced_cards``), codes that do not
match the photos, or a bad deck name are 400 ``bad_options`` with a message naming the photo
and the positions (``deck.jpg: no card found at row 2, column 7 (7H)``); no photo is 422
``missing_image``; a photo that is no image has the image errors of the other endpoints, its
name in the message. A deck changes only the readings that name it.
"""

import base64
import re
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path as FilePath
from typing import Annotated, Any, cast

import cv2
import numpy as np
from fastapi import APIRouter, Depends, Path
from fastapi.responses import Response
from numpy.typing import NDArray
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from handreader.service.deps import (
    ReaderLike,
    RuntimeLike,
    ServiceHooks,
    decoded_photo,
    json_response,
)
from handreader.service.errors import error_responses
from handreader.service.requests import (
    JSON_LIMIT,
    MalformedMultipartError,
    MissingImageError,
    NotReadyError,
    PayloadTooLargeError,
    ServiceError,
)
from handreader.service.routes.deck_access import DeckAccess
from handreader.service.routes.decks import DECKS, DeckOptionError
from handreader.store.database import StoreError, StoreUnavailableError
from handreader.store.decks import DeckExistsError, ReplacedDeck
from rules.cards import parse_card
from rules.errors import CardError
from vision.calibrate_deck import (
    GRID_COLUMNS,
    GRID_ROWS,
    SINGLE_ORDER,
    CalibrationPhoto,
    CalibrationReader,
    calibrate_photos,
)
from vision.calibration import (
    DeckProfile,
    DeckProfileError,
    check_deck_name,
    code_from_filename,
    grid_order,
    made_for,
    profile_json,
)
from vision.imageio import ImageError

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_PHOTOS",
    "CalibrationUpload",
    "DeckReplaceError",
    "add_deck_routes",
    "deck_summary",
    "read_calibration_upload",
]

MAX_PHOTOS = 64
"""Photos in one calibration: a deck with its jokers, and a few more."""
MAX_BODY_BYTES = 64 * 1024 * 1024
"""Largest calibration body (the page scales its photos down to about 200 kB each)."""
_DECK_NAME = Path(min_length=1, max_length=64, description="the deck's name, used as deck=NAME")
_FULL_DECK = frozenset(grid_order())


_YES = frozenset({"true", "1", "yes", "on"})
_NO = frozenset({"false", "0", "no", "off", ""})


class DeckReplaceError(ServiceError, ValueError):
    """A calibration over a deck of its name that would lose cards that deck has, or over a
    deck that cannot be read, without ``replace`` (409)."""

    code = "deck_exists"


@dataclass(frozen=True, slots=True)
class CalibrationUpload:
    """A calibration request: the photos (file name, bytes) in order, the layout, the codes,
    and whether a deck of the name may be replaced though cards of it would be lost."""

    photos: tuple[tuple[str, bytes], ...]
    layout: str = "cards"
    codes: tuple[str, ...] | None = None
    replace: bool = False


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise PayloadTooLargeError(
            f"calibration body of {int(declared):,} bytes is over the limit of "
            f"{MAX_BODY_BYTES:,} bytes: send smaller photos"
        )
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise PayloadTooLargeError(
                f"calibration body is over the limit of {MAX_BODY_BYTES:,} bytes"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _codes(text: str, photos: int) -> tuple[str, ...]:
    """One card code per photo from ``"AS 2S, 3S"``; DeckOptionError naming the problem."""
    given = [item for item in re.split(r"[\s,]+", text.strip()) if item]
    if len(given) != photos:
        raise DeckOptionError(f"codes gives {len(given)} cards for {photos} photos: one per photo")
    codes = []
    for position, item in enumerate(given):
        try:
            codes.append(str(parse_card(item)))
        except CardError as error:
            raise DeckOptionError(f"codes, photo {position + 1}: {error}") from None
    return tuple(codes)


async def read_calibration_upload(request: Request) -> CalibrationUpload:
    """The multipart calibration body (see the module docstring), within the limits."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "multipart/form-data":
        raise MissingImageError(
            f"a calibration is a multipart upload of 'photo' files, not {kind or 'no type'!r}"
        )
    body = await _body(request)

    async def stream() -> AsyncGenerator[bytes, None]:
        yield body

    parser = MultiPartParser(
        request.headers, stream(), max_files=MAX_PHOTOS, max_fields=8, max_part_size=JSON_LIMIT
    )
    try:
        form = await parser.parse()
    except MultiPartException as error:
        raise MalformedMultipartError(f"malformed multipart body: {error.message}") from None
    try:
        photos = []
        for position, item in enumerate(form.getlist("photo")):
            if isinstance(item, UploadFile):
                photos.append((item.filename or f"photo {position + 1}", await item.read()))
            else:
                photos.append((f"photo {position + 1}", item.encode()))
        layout = form.get("layout") or "cards"
        codes = form.get("codes")
        replace = form.get("replace")
    finally:
        await form.close()
    if not photos:
        raise MissingImageError("a calibration needs at least one 'photo' file")
    if layout not in ("cards", "grid"):
        raise DeckOptionError(f"unknown layout {layout!r}: cards or grid")
    replacing = _replace(replace)
    if isinstance(codes, str) and codes.strip():
        if layout == "grid":
            raise DeckOptionError("codes are for one card per photo; a grid's order is fixed")
        return CalibrationUpload(tuple(photos), layout, _codes(codes, len(photos)), replacing)
    return CalibrationUpload(tuple(photos), layout, replace=replacing)


def _replace(value: object) -> bool:
    """The ``replace`` field: absent or ``false`` (``0``, ``no``, ``off``, empty) is False,
    ``true`` (``1``, ``yes``, ``on``: a ticked checkbox) True; DeckOptionError for anything
    else (a file included)."""
    if value is None:
        return False
    text = value.strip().lower() if isinstance(value, str) else None
    if text in _YES:
        return True
    if text in _NO:
        return False
    shown = repr(value) if isinstance(value, str) else "a file"
    raise DeckOptionError(f"replace is {shown}: true or false")


def _decode(label: str, data: bytes, runtime: RuntimeLike) -> NDArray[np.uint8]:
    try:
        # decoded as read_photo decodes the photos it reads later (a large JPEG reduced)
        with decoded_photo(data, runtime) as photo:
            return photo.image
    except ImageError as error:
        raise type(error)(f"photo {label!r}: {error}") from None


def _summary(profile: DeckProfile, reader: object) -> dict[str, Any]:
    manifest = getattr(reader, "manifest", None)
    fits = made_for(profile, manifest) if isinstance(manifest, dict) else None
    return {
        "name": profile.name,
        "usable": True,
        "cards": len(profile.prototypes),
        "samples": sum(len(vectors) for vectors in profile.prototypes.values()),
        "missing": [code for code in grid_order() if code not in profile.prototypes],
        "jokers": [code for code in ("JB", "JR") if code in profile.prototypes],
        "created": profile.created,
        "models_match": fits,
    }


def deck_summary(name: str, reader: object = None) -> dict[str, Any]:
    """A deck as the API lists it: cards, corner samples, the standard cards it lacks, when it
    was made and whether it was made for the loaded models (None: unknown); a profile that
    cannot be used is ``{"name", "usable": false, "problem"}``."""
    try:
        return _summary(DECKS.get(name), reader)
    except DeckOptionError as error:
        return {"name": name, "usable": False, "problem": str(error)}
    except StoreError as error:  # one deck's file unreadable; a database down fails the list
        if isinstance(error, StoreUnavailableError):
            raise
        return {"name": name, "usable": False, "problem": str(error)}


def _calibrating(reader: ReaderLike) -> CalibrationReader:
    """The recognizer as calibration uses it (detect, classify, its manifest); NotReadyError
    when it has none of that (the models did not load)."""
    parts = all(callable(getattr(reader, part, None)) for part in ("detect", "classify"))
    if parts and isinstance(getattr(reader, "manifest", None), dict):
        return cast(CalibrationReader, reader)
    reason = getattr(reader, "reason", None)
    raise NotReadyError("the recognizer cannot calibrate" + (f": {reason}" if reason else ""))


def calibrate_upload(
    name: str,
    upload: CalibrationUpload,
    reader: ReaderLike,
    runtime: RuntimeLike,
    quota: Callable[[str, int, dict[str, int]], None] | None = None,
) -> dict[str, Any]:
    """Calibrate and save the deck ``name`` from the upload; the API's answer. The profile is
    saved with :meth:`handreader.store.decks.DeckStore.save`, which, under the store's write
    lock, first calls ``quota(name, size, usage)`` (the profile's bytes, the decks' usage as
    the lock finds it: :meth:`handreader.service.routes.deck_access.DeckAccess.check_save`,
    which raises to refuse), then judges the deck it would replace: DeckReplaceError, nothing
    saved, for one that would lose cards or cannot be read, unless ``upload.replace``."""
    try:
        check_deck_name(name)
    except DeckProfileError as error:
        raise DeckOptionError(str(error)) from None
    recognizer = _calibrating(reader)
    store = DECKS.store()
    photos = []
    for position, (label, data) in enumerate(upload.photos):
        if upload.codes is not None:
            code: str | None = upload.codes[position]
        else:
            code = code_from_filename(FilePath(label.replace("\\", "/")))
        photos.append(CalibrationPhoto(label, partial(_decode, label, data, runtime), code))
    start = time.perf_counter()
    replaced: list[ReplacedDeck | None] = [None]
    try:

        def save(profile: DeckProfile) -> str:
            check = None
            if quota is not None:
                check = partial(quota, name, len(profile_json(profile).encode("utf-8")))
            try:
                saved = store.save(profile, upload.replace, check)
            except DeckExistsError as error:
                raise DeckReplaceError(
                    f"{error}: send replace=true to replace it, or calibrate another name"
                ) from None
            replaced[0] = saved.replaced
            return saved.location

        result = calibrate_photos(recognizer, name, photos, grid=upload.layout == "grid", save=save)
    except DeckProfileError as error:
        raise DeckOptionError(f"deck {name!r} not calibrated: {error}") from None
    seconds = time.perf_counter() - start
    ok, sheet = cv2.imencode(".png", result.sheet)
    if not ok:
        raise RuntimeError("could not encode the contact sheet as PNG")
    if upload.layout == "grid":
        assigned = [{"photo": upload.photos[0][0], "card": None}]
    else:
        order = [photo.code or SINGLE_ORDER[index] for index, photo in enumerate(photos)]
        assigned = [
            {"photo": label, "card": code}
            for (label, _), code in zip(upload.photos, order, strict=True)
        ]
    old = replaced[0]
    return {
        "deck": _summary(result.profile, reader),
        "replaced": None if old is None else asdict(old),
        "layout": upload.layout,
        "photos": assigned,
        "warnings": list(result.warnings),
        "sheet": "data:image/png;base64," + base64.b64encode(sheet.tobytes()).decode("ascii"),
        "seconds": round(seconds, 2),
    }


def add_deck_routes(
    router: APIRouter, hooks: ServiceHooks, access: DeckAccess | None = None
) -> None:
    """Add ``GET /v1/decks``, ``GET|POST|DELETE /v1/decks/NAME``; ``access`` None: the
    deck-writing settings from the environment (``handreader.service.routes.deck_access``)."""
    writes = access or DeckAccess.from_env()
    write_errors = error_responses(400, 401, 403, 409, 413, 415, 422, 429, 503)

    def writable(request: Request, name: Annotated[str, _DECK_NAME]) -> str:
        """The deck's name once the token, the name and the quota allow the write."""
        writes.authorize(request)
        try:
            check_deck_name(name)
        except DeckProfileError as error:
            raise DeckOptionError(str(error)) from None
        if request.method == "POST":
            writes.check_quota(name)
        return name

    @router.get("/v1/decks", tags=["decks"])
    def decks(reader: Annotated[ReaderLike, Depends(hooks.get_reader)]) -> Response:
        """The calibrated decks, and the orders calibration photos follow."""
        return json_response(
            {
                "decks": [deck_summary(name, reader) for name in DECKS.store().names()],
                "card_order": list(SINGLE_ORDER),
                "grid": {"rows": GRID_ROWS, "columns": GRID_COLUMNS, "order": grid_order()},
            }
        )

    @router.get("/v1/decks/{name}", responses=error_responses(404, 422), tags=["decks"])
    def deck(
        name: Annotated[str, _DECK_NAME],
        reader: Annotated[ReaderLike, Depends(hooks.get_reader)],
    ) -> Response:
        """One calibrated deck."""
        if name not in DECKS.store().names():
            raise HTTPException(404, f"no deck {name!r}")
        return json_response(deck_summary(name, reader))

    @router.post(
        "/v1/decks/{name}", responses=write_errors, tags=["decks"], openapi_extra=_BODY_DOC
    )
    def calibrate(
        name: Annotated[str, Depends(writable)],  # (before the body is read)
        upload: Annotated[CalibrationUpload, Depends(read_calibration_upload)],
        reader: Annotated[ReaderLike, Depends(hooks.get_reader)],
        runtime: Annotated[RuntimeLike, Depends(hooks.get_runtime)],
    ) -> Response:
        """Calibrate the deck ``name`` (made, or made again) from photos: one card per photo,
        or one photo of the whole deck in a 13 x 4 grid (operator token required). A deck of
        that name is replaced when the new one keeps all its cards, else only with
        ``replace`` (409 ``deck_exists``)."""
        answer = calibrate_upload(name, upload, reader, runtime, writes.check_save)
        return json_response(answer)

    @router.delete(
        "/v1/decks/{name}", responses=error_responses(400, 401, 403, 404, 422, 429), tags=["decks"]
    )
    def delete(name: Annotated[str, Depends(writable)]) -> Response:
        """Remove the deck ``name`` (operator token required)."""
        if not DECKS.store().delete(name):
            raise HTTPException(404, f"no deck {name!r}")
        return json_response({"deleted": name})


_BODY_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["photo"],
                    "properties": {
                        "photo": {
                            "type": "array",
                            "items": {"type": "string", "format": "binary"},
                            "description": "the photos, in order",
                        },
                        "layout": {"type": "string", "enum": ["cards", "grid"]},
                        "codes": {
                            "type": "string",
                            "description": "one card code per photo: 'AS 2S 3S'",
                        },
                        "replace": {
                            "type": "boolean",
                            "default": False,
                            "description": "replace a deck of that name even when the new one "
                            "lacks some of its cards",
                        },
                    },
                }
            }
        },
    }
}
