"""HTTP endpoints for the other games of seed 003's app: Baccarat, Blackjack, Pai Gow Poker.

Each endpoint takes card codes as JSON, or a photo (multipart field ``image`` with a JSON
``options`` field, or the raw image with options as query parameters), and answers the rules
library's ``to_dict()``:

- ``POST /v1/baccarat``: ``{"player": "9H 5C 3D", "banker": "KD 6S"}`` ->
  ``BaccaratCoup.to_dict()`` plus ``bets``: each bet settled (only ``bet`` when given, all three
  otherwise) once the coup is over. A third card drawn against the tableau is *reported*
  (``consistent: false`` and ``problem``), not refused: the page shows a dealer's mistake.
- ``POST /v1/blackjack``: ``{"dealer": "10S 7H", "players": ["AS KD", "9C 9D"]}`` ->
  ``BlackjackRound.to_dict()``: the dealer's totals and required action, each player's
  outcome and net.
- ``POST /v1/paigow``: ``{"cards": <7 codes>}`` sets them by the house way, or
  ``{"high": <5>, "low": <2>}`` checks a setting (a foul is ``illegal_play``); with
  ``"banker": <7 codes>`` the banker's cards are set by the house way and the hands settled ->
  ``PaiGowResult.to_dict()``; ``set_by`` says ``house_way`` or ``given``, ``house_way`` names
  the published way used (option ``house_way``, default ``foxwoods``; an unknown name is a 400
  ``unknown_profile``).

Photos: the hands are laid out and scored by :mod:`handreader.tables.games` (by the regions
``player_region`` and ``banker_region``; for Blackjack ``dealer_region`` and optionally
``player_regions``; each ``[x1, y1, x2, y2]``, fractions of the image when all lie in 0..1, else
pixels; or by the side options ``player_side`` and ``dealer_side``), as ``handreader baccarat
PHOTO`` does. A photo's answer is ``GamePhoto.to_dict()``: ``{"game", "size", "hands": [{"role",
"seat", "cards", "box"}], "left_over", "result", "problem", "flags"}`` with ``timings_ms``.
Bad options and bad codes are errors through the service's one mapping
(:mod:`handreader.service.errors`).

A photo is read with its game's deck in play (``game`` option, ``handreader.service.schemas``):
Baccarat's and Blackjack's ``decks`` packs of 52 cards, Pai Gow Poker's 52 and a joker; its
cards are decoded together, so no joker is read at Baccarat, and no card twice from one deck.
"""

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from handreader.service.deps import (
    ReaderLike,
    RuntimeLike,
    ServiceHooks,
    json_response,
    read_photo,
    validate,
)
from handreader.service.errors import ERROR_RESPONSES
from handreader.service.requests import Upload, read_upload, request_body_doc
from handreader.service.schemas import (
    Amount,
    CardCodes,
    DeckOption,
    GameOption,
    IndicesOption,
    RegionIn,
)
from handreader.tables.games import (
    GamePhoto,
    baccarat_photo,
    baccarat_report,
    blackjack_photo,
    blackjack_report,
    paigow_photo,
    paigow_report,
)
from handreader.tables.grouping import DEFAULT_LINK_FACTOR, Region
from rules.baccarat import BaccaratBet, BaccaratRules
from rules.blackjack import BlackjackRules
from rules.cards import MAX_PACKS, parse_cards
from rules.decks import Deck, deck_for_game, deck_in_play
from rules.errors import HandError
from rules.paigow import PaiGowRules, house_way, set_paigow_hand
from rules.paigow_ways import DEFAULT_HOUSE_WAY, HOUSE_WAYS, get_house_way
from rules.poker_hands import WheelRank
from vision.detections import Reading

__all__ = [
    "BaccaratCodesIn",
    "BaccaratPhotoIn",
    "BlackjackCodesIn",
    "BlackjackPhotoIn",
    "PaiGowCodesIn",
    "PaiGowPhotoIn",
    "add_game_routes",
]

Rate = Annotated[Decimal, Field(ge=0, lt=1)]
Side = Literal["left", "right", "top", "bottom"]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- Baccarat ------------------------------------------------------------------------------------


class _BaccaratOptions(_In):
    bet: Literal["player", "banker", "tie"] | None = Field(
        None, description="settle only this bet; default: all three"
    )
    stake: Amount = Field(Decimal(1), description="amount of each bet")
    commission: Rate = Field(Decimal("0.05"), description="Banker commission")
    tie_pays: Amount = Field(Decimal(8), description="Tie pays this many to one")
    push_on_tie: bool = Field(True, description="Player and Banker bets push on a tie")
    decks: int = Field(8, ge=1, le=MAX_PACKS, description="decks in the shoe")

    def rules(self) -> BaccaratRules:
        """The rule options."""
        return BaccaratRules(self.commission, self.tie_pays, self.push_on_tie, self.decks)

    def bet_chosen(self) -> BaccaratBet | None:
        """The one bet to settle, None for all three."""
        return None if self.bet is None else BaccaratBet(self.bet)


class BaccaratCodesIn(_BaccaratOptions):
    """A baccarat coup as card codes: two or three cards a side."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"player": "9H 5C 3D", "banker": "KD 6S", "bet": "banker"}]}
    )

    player: CardCodes = Field(description="the Player's cards in the order dealt")
    banker: CardCodes = Field(description="the Banker's cards in the order dealt")


class BaccaratPhotoIn(_BaccaratOptions):
    """How to read a photo of a baccarat coup (see the module docstring)."""

    player_side: Side = Field("left", description="the Player's cards lie nearest this edge")
    player_region: RegionIn | None = Field(None, description="the Player's cards lie here")
    banker_region: RegionIn | None = Field(None, description="the Banker's cards lie here")
    link_factor: float = Field(DEFAULT_LINK_FACTOR, gt=0, le=100, allow_inf_nan=False)
    deck: DeckOption = None
    game: GameOption = None
    indices: IndicesOption = None

    def in_play(self) -> Deck | None:
        """The deck the photo is read with: by default the shoe's ``decks`` packs of 52 cards
        (DeckError for an unknown game)."""
        return deck_in_play(self.game, None, deck_for_game("baccarat", self.decks))


def _region(values: Sequence[float] | None) -> Region | None:
    return None if values is None else Region.parse(values)


def _baccarat_codes(codes: BaccaratCodesIn) -> dict[str, Any]:
    player, banker = parse_cards(codes.player), parse_cards(codes.banker)
    report = baccarat_report(player, banker, codes.rules(), codes.stake, codes.bet_chosen())
    return report.to_dict()


def _baccarat_photo(reading: Reading, options: BaccaratPhotoIn) -> GamePhoto[Any]:
    return baccarat_photo(
        reading,
        options.rules(),
        options.stake,
        options.bet_chosen(),
        player_side=options.player_side,
        player_region=_region(options.player_region),
        banker_region=_region(options.banker_region),
        link_factor=options.link_factor,
    )


# --- Blackjack -----------------------------------------------------------------------------------


class _BlackjackOptions(_In):
    stake: Amount = Field(Decimal(1), description="each player's stake")
    hit_soft_17: bool = Field(False, description="the dealer hits a soft 17")
    blackjack_pays: Amount = Field(Decimal("1.5"), description="a blackjack pays this to one")
    decks: int = Field(6, ge=1, le=MAX_PACKS, description="decks in the shoe")

    def rules(self) -> BlackjackRules:
        """The rule options."""
        return BlackjackRules(self.hit_soft_17, self.blackjack_pays, self.decks)


class BlackjackCodesIn(_BlackjackOptions):
    """A blackjack round as card codes: the dealer's cards and each player hand."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"dealer": "10S 7H", "players": ["AS KD", "9C 9D 3H"]}]}
    )

    dealer: CardCodes = Field(description="the dealer's cards (one or more)")
    players: Annotated[list[CardCodes], Field(min_length=1, max_length=7)] = Field(
        description="each player hand (two or more cards)"
    )


class BlackjackPhotoIn(_BlackjackOptions):
    """How to read a photo of a blackjack round (see the module docstring)."""

    dealer_side: Side = Field("top", description="the dealer's cards lie nearest this edge")
    dealer_region: RegionIn | None = Field(None, description="the dealer's cards lie here")
    player_regions: Annotated[list[RegionIn], Field(max_length=7)] = Field(
        default_factory=list, description="one region per player hand, in seat order"
    )
    link_factor: float = Field(DEFAULT_LINK_FACTOR, gt=0, le=100, allow_inf_nan=False)
    deck: DeckOption = None
    game: GameOption = None
    indices: IndicesOption = None

    def in_play(self) -> Deck | None:
        """The deck the photo is read with: by default the shoe's ``decks`` packs of 52 cards
        (DeckError for an unknown game)."""
        return deck_in_play(self.game, None, deck_for_game("blackjack", self.decks))


def _blackjack_codes(codes: BlackjackCodesIn) -> dict[str, Any]:
    players = [parse_cards(hand) for hand in codes.players]
    report = blackjack_report(parse_cards(codes.dealer), players, codes.rules(), codes.stake)
    return report.to_dict()


def _blackjack_photo(reading: Reading, options: BlackjackPhotoIn) -> GamePhoto[Any]:
    return blackjack_photo(
        reading,
        options.rules(),
        options.stake,
        dealer_side=options.dealer_side,
        dealer_region=_region(options.dealer_region),
        player_regions=[Region.parse(values) for values in options.player_regions],
        link_factor=options.link_factor,
    )


# --- Pai Gow Poker -------------------------------------------------------------------------------


class _PaiGowOptions(_In):
    stake: Amount = Field(Decimal(1), description="the player's stake")
    commission: Rate = Field(Decimal("0.05"), description="commission on a win")
    wheel: Literal["second-highest", "lowest"] = Field(
        "second-highest", description="where A-2-3-4-5 ranks among straights"
    )
    house_way: str = Field(
        DEFAULT_HOUSE_WAY,
        max_length=40,
        description=f"the published house way: {', '.join(HOUSE_WAYS)}",
    )

    def rules(self) -> PaiGowRules:
        """The rule options; ProfileError for an unknown house way."""
        return PaiGowRules(WheelRank(self.wheel), self.commission, get_house_way(self.house_way))


class PaiGowCodesIn(_PaiGowOptions):
    """A Pai Gow Poker hand as card codes: seven cards, or a setting; the banker's seven."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"cards": "AS KD 9C 9D 5H 3S JR"},
                {"high": "9C 9D 5H 3S 2C", "low": "AS KD", "banker": "QS QH 8D 7C 4S 3D 2H"},
            ]
        }
    )

    cards: CardCodes | None = Field(None, description="the player's 7 cards, set by the house way")
    high: CardCodes | None = Field(None, description="a given 5-card high hand (with low)")
    low: CardCodes | None = Field(None, description="a given 2-card low hand (with high)")
    banker: CardCodes | None = Field(None, description="the banker's 7 cards (house way)")


class PaiGowPhotoIn(_PaiGowOptions):
    """How to read a photo of Pai Gow Poker hands (see the module docstring)."""

    player_side: Side = Field("bottom", description="the player's cards lie nearest this edge")
    player_region: RegionIn | None = Field(None, description="the player's cards lie here")
    banker_region: RegionIn | None = Field(None, description="the banker's cards lie here")
    link_factor: float = Field(DEFAULT_LINK_FACTOR, gt=0, le=100, allow_inf_nan=False)
    deck: DeckOption = None
    game: GameOption = None
    indices: IndicesOption = None

    def in_play(self) -> Deck | None:
        """The deck the photo is read with: by default 52 cards and a joker (DeckError for an
        unknown game)."""
        return deck_in_play(self.game, None, deck_for_game("paigow"))


def _paigow_codes(codes: PaiGowCodesIn) -> dict[str, Any]:
    rules = codes.rules()
    given = codes.high is not None or codes.low is not None
    if codes.cards is not None and given:
        raise HandError("give either cards (7) or high (5) with low (2), not both")
    if codes.cards is not None:
        player, set_by = house_way(parse_cards(codes.cards), rules), "house_way"
    elif codes.high is None or codes.low is None:
        raise HandError("give cards (7 cards), or both high (5 cards) and low (2 cards)")
    else:
        high, low = parse_cards(codes.high), parse_cards(codes.low)
        player, set_by = set_paigow_hand(high, low, rules), "given"
    banker = None if codes.banker is None else parse_cards(codes.banker)
    return paigow_report(player, set_by, banker, rules, codes.stake).to_dict()


def _paigow_photo(reading: Reading, options: PaiGowPhotoIn) -> GamePhoto[Any]:
    return paigow_photo(
        reading,
        options.rules(),
        options.stake,
        player_side=options.player_side,
        player_region=_region(options.player_region),
        banker_region=_region(options.banker_region),
        link_factor=options.link_factor,
    )


_Codes = TypeVar("_Codes", BaccaratCodesIn, BlackjackCodesIn, PaiGowCodesIn)
_Photo = TypeVar("_Photo", BaccaratPhotoIn, BlackjackPhotoIn, PaiGowPhotoIn)


def _codes_or_photo(
    body: Upload,
    reader: ReaderLike,
    runtime: RuntimeLike,
    codes: tuple[type[_Codes], Callable[[_Codes], dict[str, Any]]],
    photo: tuple[type[_Photo], Callable[[Reading, _Photo], GamePhoto[Any]]],
) -> Response:
    """A game's answer: to card codes (a JSON document, options beside the codes), or to a
    photo (its options checked, rules included, before the photo is read)."""
    codes_model, by_codes = codes
    if body.document is not None:
        return json_response(by_codes(validate(codes_model, {**body.options, **body.document})))
    photo_model, by_photo = photo
    options = validate(photo_model, body.options)
    options.rules()  # a bad rule option (an unknown house way) is an error before any reading
    _, reading, timings = read_photo(body, reader, runtime, options.in_play())
    return json_response(by_photo(reading, options).to_dict(), timings)


# --- routes --------------------------------------------------------------------------------------


def add_game_routes(router: APIRouter, hooks: ServiceHooks) -> None:
    """Add ``POST /v1/baccarat``, ``/v1/blackjack`` and ``/v1/paigow`` to ``router``."""

    async def upload(request: Request) -> Upload:
        runtime = await hooks.get_runtime(request)
        return await read_upload(request, runtime.settings.max_bytes)

    @router.post(
        "/v1/baccarat",
        responses=ERROR_RESPONSES,
        openapi_extra=request_body_doc(BaccaratCodesIn, BaccaratPhotoIn),
        tags=["games"],
    )
    def baccarat(
        body: Annotated[Upload, Depends(upload)],
        reader: Annotated[ReaderLike, Depends(hooks.get_reader)],
        runtime: Annotated[RuntimeLike, Depends(hooks.get_runtime)],
    ) -> Response:
        """Baccarat: totals, naturals, who must draw, the result and the bets' payouts, from
        card codes (``BaccaratCodesIn``) or a photo (options ``BaccaratPhotoIn``)."""
        return _codes_or_photo(
            body,
            reader,
            runtime,
            (BaccaratCodesIn, _baccarat_codes),
            (BaccaratPhotoIn, _baccarat_photo),
        )

    @router.post(
        "/v1/blackjack",
        responses=ERROR_RESPONSES,
        openapi_extra=request_body_doc(BlackjackCodesIn, BlackjackPhotoIn),
        tags=["games"],
    )
    def blackjack(
        body: Annotated[Upload, Depends(upload)],
        reader: Annotated[ReaderLike, Depends(hooks.get_reader)],
        runtime: Annotated[RuntimeLike, Depends(hooks.get_runtime)],
    ) -> Response:
        """Blackjack: hard and soft totals, the dealer's action, each player's outcome and
        payout, from card codes (``BlackjackCodesIn``) or a photo (``BlackjackPhotoIn``)."""
        return _codes_or_photo(
            body,
            reader,
            runtime,
            (BlackjackCodesIn, _blackjack_codes),
            (BlackjackPhotoIn, _blackjack_photo),
        )

    @router.post(
        "/v1/paigow",
        responses=ERROR_RESPONSES,
        openapi_extra=request_body_doc(PaiGowCodesIn, PaiGowPhotoIn),
        tags=["games"],
    )
    def paigow(
        body: Annotated[Upload, Depends(upload)],
        reader: Annotated[ReaderLike, Depends(hooks.get_reader)],
        runtime: Annotated[RuntimeLike, Depends(hooks.get_runtime)],
    ) -> Response:
        """Pai Gow Poker: the house way or a setting checked, settled against the banker, from
        card codes (``PaiGowCodesIn``) or a photo (``PaiGowPhotoIn``)."""
        return _codes_or_photo(
            body,
            reader,
            runtime,
            (PaiGowCodesIn, _paigow_codes),
            (PaiGowPhotoIn, _paigow_photo),
        )
