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

Photos: which cards belong to which side follows the layout. With regions (``player_region`` and
``banker_region``; for Blackjack ``dealer_region`` and optionally ``player_regions``; each
``[x1, y1, x2, y2]``, fractions of the image when all lie in 0..1, else pixels) each card goes
to the region holding its centre. Without regions the cards are grouped by distance
(``handreader.tables.grouping``), and the side is the group nearest an edge of the image:

- Baccarat: two groups; the Player's is the one nearest ``player_side`` (default ``left``),
  the other the Banker's.
- Blackjack: the dealer's group is the one nearest ``dealer_side`` (default ``top``); every
  other group is a player hand, in reading order (rows from the top, left to right).
- Pai Gow Poker: one group of seven is set by the house way; two groups are the player's
  (nearest ``player_side``, default ``bottom``) and the banker's, both set by the house way
  and settled.

A photo's answer is ``{"game", "size", "hands": [{"role", "seat", "cards", "box"}], "left_over",
"result", "problem", "flags", "timings_ms"}``: ``result`` is what the same cards sent as codes
would give, or None when the cards read cannot make the game's hands (``problem`` says why:
wrong counts, a joker, duplicates). A card read with low confidence keeps the result but is
named in ``problem`` (the result is then provisional). Bad options and bad codes are errors
through serve.py's one mapping.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal

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
from handreader.service.schemas import CardCodes, DeckOption, RegionIn
from handreader.tables.grouping import (
    DEFAULT_LINK_FACTOR,
    CardGroup,
    Region,
    assign_regions,
    group_cards,
)
from handreader.tables.scoring import BankerRule, TableCard, flag_names
from rules.baccarat import BaccaratBet, BaccaratRules, evaluate_coup, settle_baccarat_bet
from rules.blackjack import BlackjackRules, play_blackjack_round
from rules.cards import AnyCard, check_distinct, parse_cards
from rules.errors import HandError, RulesError
from rules.paigow import PaiGowRules, PaiGowSetting, house_way, set_paigow_hand, settle_paigow
from rules.paigow_ways import DEFAULT_HOUSE_WAY, HOUSE_WAYS, get_house_way
from rules.poker_hands import WheelRank
from vision.detections import CardReading, Reading

__all__ = [
    "BaccaratCodesIn",
    "BaccaratPhotoIn",
    "BlackjackCodesIn",
    "BlackjackPhotoIn",
    "PaiGowCodesIn",
    "PaiGowPhotoIn",
    "add_game_routes",
    "baccarat_report",
    "blackjack_report",
    "paigow_report",
]

Amount = Annotated[Decimal, Field(gt=0, le=Decimal("1e12"))]
Rate = Annotated[Decimal, Field(ge=0, lt=1)]
Side = Literal["left", "right", "top", "bottom"]
NO_SPLIT = 1000
"""A hand size no group reaches: groups of these games are never split by hand size."""


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
    decks: int = Field(8, ge=1, le=16, description="decks in the shoe")

    def rules(self) -> BaccaratRules:
        """The rule options."""
        return BaccaratRules(self.commission, self.tie_pays, self.push_on_tie, self.decks)


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
    link_factor: float = Field(DEFAULT_LINK_FACTOR, gt=0, le=100)
    deck: DeckOption = None


def baccarat_report(
    player: Sequence[AnyCard], banker: Sequence[AnyCard], options: _BaccaratOptions
) -> dict[str, Any]:
    """``BaccaratCoup.to_dict()`` with ``bets``: each bet settled once the coup is over."""
    rules = options.rules()
    coup = evaluate_coup(player, banker, rules)
    bets = [BaccaratBet(options.bet)] if options.bet else list(BaccaratBet)
    settled = (
        [settle_baccarat_bet(coup, bet, options.stake, rules).to_dict() for bet in bets]
        if coup.complete
        else []
    )
    return coup.to_dict() | {"bets": settled}


# --- Blackjack -----------------------------------------------------------------------------------


class _BlackjackOptions(_In):
    stake: Amount = Field(Decimal(1), description="each player's stake")
    hit_soft_17: bool = Field(False, description="the dealer hits a soft 17")
    blackjack_pays: Amount = Field(Decimal("1.5"), description="a blackjack pays this to one")
    decks: int = Field(6, ge=1, le=16, description="decks in the shoe")

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
    link_factor: float = Field(DEFAULT_LINK_FACTOR, gt=0, le=100)
    deck: DeckOption = None


def blackjack_report(
    dealer: Sequence[AnyCard], players: Sequence[Sequence[AnyCard]], options: _BlackjackOptions
) -> dict[str, Any]:
    """``BlackjackRound.to_dict()``."""
    return play_blackjack_round(dealer, players, options.stake, options.rules()).to_dict()


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
    link_factor: float = Field(DEFAULT_LINK_FACTOR, gt=0, le=100)
    deck: DeckOption = None


def paigow_report(
    player: PaiGowSetting, set_by: str, banker: Sequence[AnyCard] | None, options: _PaiGowOptions
) -> dict[str, Any]:
    """The player's setting (``set_by``), or with the banker's cards the settled result."""
    rules = options.rules()
    named = {"set_by": set_by, "house_way": rules.house_way.name}
    if banker is None:
        return named | {"player": player.to_dict()}
    check_distinct([*player.cards, *banker])
    result = settle_paigow(player, house_way(banker, rules), options.stake, rules)
    return named | result.to_dict()


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
    return paigow_report(player, set_by, banker, codes)


# --- photos --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Side:
    """A hand found in a photo: its role, its seat and its cards (left to right)."""

    role: str
    seat: int
    cards: tuple[CardReading, ...]

    def codes(self) -> tuple[AnyCard, ...]:
        return parse_cards([card.code for card in self.cards])

    def to_dict(self) -> dict[str, object]:
        boxes = [card.box_xyxy for card in self.cards]
        box = (
            None
            if not boxes
            else [
                round(min(b[0] for b in boxes), 1),
                round(min(b[1] for b in boxes), 1),
                round(max(b[2] for b in boxes), 1),
                round(max(b[3] for b in boxes), 1),
            ]
        )
        return {
            "role": self.role,
            "seat": self.seat,
            "cards": [TableCard.from_reading(card).to_dict() for card in self.cards],
            "box": box,
        }


def _region(values: Sequence[float] | None) -> Region | None:
    return None if values is None else Region.parse(values)


def _two_sides(
    reading: Reading,
    first: tuple[str, Region | None],
    second: tuple[str, Region | None],
    side: Side,
    link_factor: float,
    *,
    alone: bool = False,
) -> tuple[list[_Side], tuple[CardReading, ...], str | None]:
    """Two hands of a photo: by the two regions, or the two groups with ``first`` nearest the
    ``side`` edge. ``alone``: a single group is ``first`` on its own (Pai Gow without banker).
    Returns the hands, the cards left over and the problem (None when the layout is clear)."""
    (first_role, first_region), (second_role, second_region) = first, second
    if (first_region is None) != (second_region is None):
        raise RulesError(f"give both {first_role}_region and {second_role}_region, or neither")
    if first_region is not None and second_region is not None:
        groups, left_over = assign_regions(
            reading.cards, [first_region, second_region], reading.size_wh
        )
        return (
            [_Side(first_role, 0, groups[0].cards), _Side(second_role, 1, groups[1].cards)],
            left_over,
            None,
        )
    found = list(group_cards(reading.cards, link_factor=link_factor, hand_size=NO_SPLIT))
    if alone and len(found) == 1:
        return [_Side(first_role, 0, found[0].cards)], (), None
    if len(found) != 2:
        shown = " | ".join(" ".join(card.code for card in group.cards) for group in found)
        return (
            [_Side("hand", seat, group.cards) for seat, group in enumerate(found)],
            (),
            f"found {len(found)} groups of cards ({shown or 'none'}), expected 2 "
            f"({first_role} and {second_role}): give {first_role}_region and {second_role}_region",
        )
    near = BankerRule(side).pick(found)
    return (
        [_Side(first_role, 0, found[near].cards), _Side(second_role, 1, found[1 - near].cards)],
        (),
        None,
    )


def _dealer_and_players(
    reading: Reading, options: BlackjackPhotoIn
) -> tuple[list[_Side], tuple[CardReading, ...], str | None]:
    """The dealer's hand and the players' of a blackjack photo (see the module docstring)."""
    cards = reading.cards
    dealer: CardGroup | None = None
    dealer_region = _region(options.dealer_region)
    if dealer_region is not None:
        found, cards = assign_regions(cards, [dealer_region], reading.size_wh)
        dealer = found[0]
    left_over: tuple[CardReading, ...] = ()
    if options.player_regions:
        regions = [Region.parse(values) for values in options.player_regions]
        groups, left_over = assign_regions(cards, regions, reading.size_wh)
        players = list(groups)
    else:
        players = list(group_cards(cards, link_factor=options.link_factor, hand_size=NO_SPLIT))
    if dealer is None:
        if len(players) < 2:
            return (
                [_Side("hand", seat, group.cards) for seat, group in enumerate(players)],
                left_over,
                f"found {len(players)} group(s) of cards, expected the dealer's and at least "
                "one player's: give dealer_region",
            )
        dealer = players.pop(BankerRule(options.dealer_side).pick(players))
    hands = [_Side("dealer", 0, dealer.cards)]
    hands += [_Side("player", seat, group.cards) for seat, group in enumerate(players, start=1)]
    return hands, left_over, None


def _uncertain_note(hands: Sequence[_Side]) -> str | None:
    doubtful = [card for hand in hands for card in hand.cards if card.uncertain]
    if not doubtful:
        return None
    shown = ", ".join(f"{card.code} ({card.confidence:.2f})" for card in doubtful)
    return f"uncertain reading of {shown}: the result is provisional"


def _photo_answer(
    game: str,
    reading: Reading,
    layout: tuple[list[_Side], tuple[CardReading, ...], str | None],
    score: Any,
) -> dict[str, Any]:
    """The photo answer (see the module docstring); ``score(hands)`` gives the result and may
    raise RulesError, which becomes the problem."""
    hands, left_over, problem = layout
    result = None
    if problem is None:
        try:
            result = score(hands)
        except RulesError as error:
            problem = f"the cards read do not make a {game} round: {error}"
        else:
            problem = _uncertain_note(hands)
    return {
        "game": game,
        "size": list(reading.size_wh),
        "hands": [hand.to_dict() for hand in hands],
        "left_over": [TableCard.from_reading(card).to_dict() for card in left_over],
        "result": result,
        "problem": problem,
        "flags": flag_names(reading.flags),
    }


def _baccarat_photo(reading: Reading, options: BaccaratPhotoIn) -> dict[str, Any]:
    layout = _two_sides(
        reading,
        ("player", _region(options.player_region)),
        ("banker", _region(options.banker_region)),
        options.player_side,
        options.link_factor,
    )
    return _photo_answer(
        "baccarat",
        reading,
        layout,
        lambda hands: baccarat_report(hands[0].codes(), hands[1].codes(), options),
    )


def _blackjack_photo(reading: Reading, options: BlackjackPhotoIn) -> dict[str, Any]:
    return _photo_answer(
        "blackjack",
        reading,
        _dealer_and_players(reading, options),
        lambda hands: blackjack_report(
            hands[0].codes(), [hand.codes() for hand in hands[1:]], options
        ),
    )


def _paigow_photo(reading: Reading, options: PaiGowPhotoIn) -> dict[str, Any]:
    layout = _two_sides(
        reading,
        ("player", _region(options.player_region)),
        ("banker", _region(options.banker_region)),
        options.player_side,
        options.link_factor,
        alone=True,
    )

    def score(hands: Sequence[_Side]) -> dict[str, Any]:
        player = house_way(hands[0].codes(), options.rules())
        banker = hands[1].codes() if len(hands) > 1 else None
        return paigow_report(player, "house_way", banker, options)

    return _photo_answer("paigow", reading, layout, score)


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
        if body.document is not None:
            codes = validate(BaccaratCodesIn, {**body.options, **body.document})
            return json_response(
                baccarat_report(parse_cards(codes.player), parse_cards(codes.banker), codes)
            )
        options = validate(BaccaratPhotoIn, body.options)
        _, reading, timings = read_photo(body, reader, runtime)
        return json_response(_baccarat_photo(reading, options), timings)

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
        if body.document is not None:
            codes = validate(BlackjackCodesIn, {**body.options, **body.document})
            players = [parse_cards(hand) for hand in codes.players]
            return json_response(blackjack_report(parse_cards(codes.dealer), players, codes))
        options = validate(BlackjackPhotoIn, body.options)
        _, reading, timings = read_photo(body, reader, runtime)
        return json_response(_blackjack_photo(reading, options), timings)

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
        if body.document is not None:
            return json_response(
                _paigow_codes(validate(PaiGowCodesIn, {**body.options, **body.document}))
            )
        options = validate(PaiGowPhotoIn, body.options)
        options.rules()  # an unknown house way is an error before the photo is read
        _, reading, timings = read_photo(body, reader, runtime)
        return json_response(_paigow_photo(reading, options), timings)
