"""The HTTP API's schemas: request options and card-code bodies in, results out.

Requests (validated here; a wrong type or shape is a 422, a well-formed but unknown profile,
bet or card is a 400 raised by the rules when the options are turned into ``TableOptions``):

- :class:`TableOptionsIn`: options of an image scored as a Niu Niu table (the multipart
  ``options`` field, or query parameters for a raw image body).
- :class:`ScoreCodesIn`: the JSON body of ``POST /v1/score`` with card codes.
- :class:`PitsOptionsIn` / :class:`PitsCodesIn`: the same for ``POST /v1/pits``.
- :class:`ReadOptionsIn`: options of ``POST /v1/read``.

Every image endpoint takes the deck in play: ``game`` (the game whose deck the photo shows, or
``any``) and ``decks`` (packs of it); each endpoint's own game is the default (none for
``/v1/read``), and ``indices``, the letters its indices print (``vision.index_letters``). An
unknown game or letters, or ``decks`` with no deck to apply to, is a 400 ``bad_options``.

Responses (documentation of the JSON the result records' ``to_dict`` produce; the tests check
the records against these models so the two cannot drift apart): :class:`TableOut`,
:class:`PitsOut`, :class:`ReadOut`, :class:`ErrorOut`, :class:`HealthOut`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo
from pydantic_core import PydanticCustomError

from handreader.tables.grouping import DEFAULT_LINK_FACTOR, Region
from handreader.tables.scoring import TableOptions
from rules.cards import MAX_PACKS
from rules.decks import (
    ANY_CARD,
    GAME_DECKS,
    Deck,
    deck_for_game,
    deck_in_play,
    niuniu_deck,
    niuniu_packs,
)
from rules.errors import RulesError
from rules.niuniu_profiles import DEFAULT_PROFILE
from rules.pits import PitsKind
from rules.settlement import parse_amount
from vision.index_letters import INDEX_LETTERS

__all__ = [
    "REFUSED_BY_RULES",
    "CardOut",
    "CheckpointIn",
    "DeckOption",
    "DecksOption",
    "ErrorOut",
    "GameOption",
    "HandOut",
    "HealthOut",
    "IndicesOption",
    "PitsCodesIn",
    "PitsOptionsIn",
    "PitsOut",
    "PlayerOut",
    "ReadOptionsIn",
    "ReadOut",
    "ScoreCodesIn",
    "ScoreOut",
    "TableOptionsIn",
    "TableOut",
    "amount_option",
]

MAX_HANDS = 7
"""A banker and up to six players."""

RegionIn = Annotated[
    list[Annotated[float, Field(ge=0, allow_inf_nan=False)]],
    Field(
        min_length=4,
        max_length=4,
        description="[x1, y1, x2, y2]: fractions of the image when all lie in 0..1, else pixels",
    ),
]
FLAGS_DESCRIPTION = (
    "what may be wrong with the reading: low_confidence (a card read below the confidence "
    "threshold: shown with ?, it decides nothing), duplicate (a card seen more often than the "
    "decks hold), wrong_count (a hand of more or fewer cards than the game's), unreadable "
    "(the image could not be read), colourless (the photo has no colour: a card read in a "
    "black suit may be red, and is uncertain)"
)


REFUSED_BY_RULES = "refused_by_rules"
"""The type of a validation problem that is a value the rules refuse, in their words (a 400
``bad_options`` when every problem of a request is one: :mod:`handreader.service.errors`)."""

AMOUNT_TEXT_LENGTH = 40
"""The longest amount written as text (``"0.000000001"``, ``"1000000000000000"`` fit)."""


def amount_option(value: object, info: ValidationInfo) -> Decimal:
    """An amount option (a stake, a payout ratio) as an exact Decimal: a number or text
    (:func:`rules.settlement.parse_amount`; a value the rules refuse is a problem of type
    :data:`REFUSED_BY_RULES` in their words, naming the field: a 400, as a stake on
    ``/v1/score``); ValueError for another type or a text over :data:`AMOUNT_TEXT_LENGTH`
    characters (a 422)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ValueError("Input should be a valid number or text")
    if isinstance(value, str) and len(value) > AMOUNT_TEXT_LENGTH:
        raise ValueError(f"String should have at most {AMOUNT_TEXT_LENGTH} characters")
    try:
        return parse_amount(value, info.field_name or "amount")
    except RulesError as error:
        raise PydanticCustomError(REFUSED_BY_RULES, "{reason}", {"reason": str(error)}) from None


Amount = Annotated[Decimal, Field(gt=0), BeforeValidator(amount_option)]
"""A positive amount (a stake, a payout ratio), a number or exact decimal text, at most
:data:`rules.money.MAX_AMOUNT` and as fine as the command line takes it: a value the rules
refuse is a 400 in their words, the same on every endpoint ("stake must be a positive number,
got -1", "stake '1e16' is over the largest amount, ...")."""
DeckOption = Annotated[
    str | None,
    Field(
        max_length=64,
        description="a calibrated deck (GET /v1/decks) to read the photo with; "
        "default: none, the standard reading",
    ),
]
GameOption = Annotated[
    str | None,
    Field(
        max_length=20,
        description="the game whose deck the photo shows, its cards decoded together (no card "
        f"the deck lacks, none more often than it holds): {', '.join(sorted(GAME_DECKS))}, or "
        f"{ANY_CARD} (each card read on its own); default: the endpoint's game ({ANY_CARD} for "
        "POST /v1/read)",
    ),
]
DecksOption = Annotated[
    int | None,
    Field(ge=1, le=MAX_PACKS, description="packs of that deck in play; default: the game's"),
]
KindOption = Annotated[
    PitsKind | None,
    Field(
        description="read the play as this kind only, where its cards read several ways "
        "(5H JB JR: a triple or a sequence); default: any reading that fits the table"
    ),
]
IndicesOption = Annotated[
    str | None,
    Field(
        max_length=20,
        description="the letters the deck prints in its indices: "
        f"{', '.join(sorted(INDEX_LETTERS))} (french: R D V, aces 1; a V is then a jack, "
        "dutch: a queen; a rank whose letter the classifier does not read is uncertain); "
        "default: the letters every deck gives one rank, a V read as a J or a Q, uncertain",
    ),
]
CardCodes = (
    Annotated[list[Annotated[str, Field(max_length=8)]], Field(max_length=60)]
    | Annotated[str, Field(max_length=400)]
)


class _Options(BaseModel):
    """Options common to card codes and images."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    profile: str = Field(
        DEFAULT_PROFILE, max_length=40, description="house rules: classic, trainer or app"
    )
    mode: Literal["banker", "trainer"] = Field(
        "banker", description="banker game (players against the banker) or trainer (rank 2-4)"
    )
    bet: str | None = Field(
        None, max_length=20, description="equal or double; default: the profile's bet"
    )
    stake: Amount = Field(
        Decimal(1), description="amount bet by each player (exact decimals as text)"
    )


class TableOptionsIn(_Options):
    """How to read a photo of a Niu Niu table."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"profile": "trainer", "bet": "double", "stake": 100},
                {"banker_region": [0, 0, 1, 0.35], "mode": "banker"},
            ]
        }
    )

    banker_rule: Literal["top", "bottom", "left", "right"] = Field(
        "top", description="the banker is the hand nearest this edge of the image"
    )
    banker_region: RegionIn | None = Field(None, description="the banker's hand lies here")
    player_regions: Annotated[list[RegionIn], Field(max_length=MAX_HANDS)] = Field(
        default_factory=list, description="one region per player hand, in seat order"
    )
    link_factor: float = Field(
        DEFAULT_LINK_FACTOR,
        gt=0,
        le=100,
        allow_inf_nan=False,
        description="cards closer than this many box sizes belong to one hand",
    )
    deck: DeckOption = None
    game: GameOption = None
    decks: DecksOption = None
    indices: IndicesOption = None

    def in_play(self) -> Deck | None:
        """The deck the photo is read with: by default the profile's Niu Niu deck (52 cards,
        no jokers, its number of decks); RulesError for an unknown profile or game."""
        return deck_in_play(self.game, self.decks, niuniu_deck(self.profile))

    def to_options(self) -> TableOptions:
        """The table options; RulesError for an unknown profile or bet, GroupingError for a
        region that is no rectangle."""
        banker = None if self.banker_region is None else Region.parse(self.banker_region)
        return TableOptions.create(
            profile=self.profile,
            mode=self.mode,
            banker=self.banker_rule,
            banker_region=banker,
            player_regions=[Region.parse(region) for region in self.player_regions],
            bet=self.bet,
            stake=self.stake,
            link_factor=self.link_factor,
            decks=niuniu_packs(self.game, self.decks),
        )


class ScoreCodesIn(_Options):
    """Hands given as card codes (``POST /v1/score`` with a JSON body)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "hands": [["KS", "QS", "JS", "10S", "9S"], "3H 7S KD 8C 6D"],
                    "banker": 0,
                    "profile": "trainer",
                    "bet": "double",
                    "stake": 100,
                },
                {"hands": ["3H 7S KD 8C 6D", "AH 2H 3D 4C 5S"], "mode": "trainer"},
            ]
        }
    )

    hands: Annotated[list[CardCodes], Field(min_length=1, max_length=MAX_HANDS)] = Field(
        description="five cards per hand: a list of codes or one string"
    )
    banker: int | None = Field(
        0, ge=0, lt=MAX_HANDS, description="the banker's hand; null: no banker"
    )
    decks: int | None = Field(
        None, ge=1, le=MAX_PACKS, description="52-card decks dealt from; default: the profile's"
    )

    def to_options(self) -> TableOptions:
        """The table options (RulesError for an unknown profile or bet)."""
        return TableOptions.create(
            profile=self.profile, mode=self.mode, bet=self.bet, stake=self.stake, decks=self.decks
        )


class PitsOptionsIn(BaseModel):
    """How to judge a photo of a Pits play."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"examples": [{"table": ["5H", "5D"]}, {"table_region": [0, 0, 1, 0.4]}]},
    )

    table: CardCodes = Field(
        default_factory=list, description="the play on the table; empty: the play leads"
    )
    table_region: RegionIn | None = Field(
        None, description="read the table play from this region of the photo instead"
    )
    kind: KindOption = None
    deck: DeckOption = None
    game: GameOption = None
    decks: DecksOption = None
    indices: IndicesOption = None

    def in_play(self) -> Deck | None:
        """The deck the photo is read with: by default Pits' 54 cards (DeckError for an
        unknown game)."""
        return deck_in_play(self.game, self.decks, deck_for_game("pits"))


class ReadOptionsIn(BaseModel):
    """How to read a photo (``POST /v1/read``); another option is a 422 naming it."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"examples": [{"game": "niuniu"}, {"game": "pinochle", "decks": 2}]},
    )

    deck: DeckOption = None
    game: GameOption = None
    decks: DecksOption = None
    indices: IndicesOption = None

    def in_play(self) -> Deck | None:
        """The deck the photo is read with: none (any card) unless a game is named."""
        return deck_in_play(self.game, self.decks)


class PitsCodesIn(BaseModel):
    """A Pits play given as card codes (``POST /v1/pits`` with a JSON body)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"examples": [{"play": ["7H", "7S"], "table": "5H 5D"}]},
    )

    play: CardCodes = Field(description="the cards played")
    table: CardCodes = Field(
        default_factory=list, description="the play on the table; empty: the play leads"
    )
    kind: KindOption = None


class CheckpointIn(BaseModel):
    """The body of ``POST /v1/audit/verify``: a checkpoint from ``handreader audit checkpoint``,
    signed under the service's ``HANDREADER_AUDIT_KEY`` (documentation of what
    ``handreader.store.audit_trail.Checkpoint.from_dict`` takes; the route reads the body as
    JSON whatever its ``Content-Type``)."""

    model_config = ConfigDict(
        frozen=True,
        json_schema_extra={
            "examples": [
                {
                    "count": 4,
                    "head": "489a37bfc53b78726da6db3870f94275ab7d03d1d192d97d2dab9a3934965b89",
                    "signature": "524707d3408520ca170782d98111f452332379f1b7da684b63ac9220f31b4993",
                }
            ]
        },
    )

    count: int = Field(ge=0, description="the records the trail held when it was signed")
    head: str = Field(pattern="^[0-9a-f]{64}$", description="the last record's hash")
    signature: str = Field(
        pattern="^[0-9a-f]{64}$", description="HMAC-SHA256 of the count and the head"
    )


# --- responses -----------------------------------------------------------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CardOut(_Out):
    """A card: its code and, when read from a photo, where and how surely."""

    card: str = Field(examples=["10H"])
    box: list[float] | None = Field(None, description="[x1, y1, x2, y2] pixels of its index")
    confidence: float | None = Field(None, ge=0, le=1)
    uncertain: bool = False
    corners: int | None = None
    alternatives: list[tuple[str, float]] | None = None
    other_corners: list[str] | None = Field(
        None, description="what another corner of this card read, unsure, where it disagrees"
    )
    part: Literal["bull", "rest"] | None = Field(None, description="its part in the hand's split")


class ScoreOut(_Out):
    """A Niu Niu score with its split."""

    score: str = Field(examples=["niu_4"])
    label: str = Field(examples=["Niu 4"])
    points: int | None
    rank: int = Field(description="the score's place in the profile's order (0 = No Niu)")
    bull: list[str] | None
    rest: list[str] | None
    swapped: list[str]


class HandOut(_Out):
    """A group of cards: a hand scored, uncertain (provisional score), incomplete, of too many
    cards, or invalid."""

    seat: int
    role: Literal["banker", "player", "hand"]
    status: Literal["scored", "uncertain", "incomplete", "too_many", "invalid"]
    cards: list[CardOut]
    box: list[float] | None
    score: ScoreOut | None
    problem: str | None


class PlayerOut(_Out):
    """A player's outcome against the banker and the settlement of the bet (net after
    commission; a loss is negative)."""

    seat: int
    outcome: Literal["win", "lose", "tie"] | None
    net: float | None
    multiple: int | None
    commission: float | None
    bet: str | None
    stake: float | None
    problem: str | None


class TableOut(_Out):
    """A Niu Niu table scored."""

    mode: Literal["banker", "trainer"]
    profile: str
    size: list[int] | None
    hands: list[HandOut]
    banker: int | None
    players: list[PlayerOut]
    banker_net: float | None
    places: list[int] | None
    winners: list[int]
    tie: bool
    left_over: list[CardOut]
    flags: list[str] = Field(description=FLAGS_DESCRIPTION)
    problem: str | None
    timings_ms: dict[str, float] | None = None


class PitsOut(_Out):
    """A Pits play judged."""

    cards: list[CardOut]
    table: list[CardOut]
    kind: str | None = Field(examples=["pair"])
    rank: str | None
    natural: bool | None
    one_suit: bool | None
    description: str | None = Field(examples=["pair of 7s"])
    readings: list[str]
    legal: bool | None
    reason: str | None
    flags: list[str] = Field(description=FLAGS_DESCRIPTION)
    timings_ms: dict[str, float] | None = None


class ReadOut(_Out):
    """The cards read from a photo."""

    size: list[int]
    cards: list[CardOut]
    flags: list[str] = Field(description=FLAGS_DESCRIPTION)
    problem: str | None = Field(
        None, description='"no cards found" for a photo with none (a blank photo), else null'
    )
    timings_ms: dict[str, float] | None = None


class _ErrorBody(_Out):
    # no examples here: each status of each route shows an answer of its own codes
    # (handreader.service.errors.ERROR_EXAMPLES)
    code: str = Field(description="the error's code: the status's codes are listed with it")
    message: str = Field(description="the problem in words, naming the input at fault")


class ErrorOut(_Out):
    """Every error: a short code and a message naming the problem."""

    error: _ErrorBody


class HealthOut(_Out):
    """The service is up and its models are loaded."""

    status: Literal["ok"]
    models: dict[str, Any] = Field(default_factory=dict)
    store: dict[str, Any] = Field(
        default_factory=dict,
        description="the store: backend (sqlite, postgresql), location, schema_version, ok",
    )
