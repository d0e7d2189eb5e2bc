"""From the cards of a photo (or card codes) to hands, scores, the winner and the payouts.

Niu Niu (:func:`score_reading`, :func:`score_codes`):

- The cards are grouped into hands (``handreader.tables.grouping``: by the cards' bodies and
  the hand size, or by the regions given). A group of exactly five cards is a hand; a smaller
  group is reported as *incomplete*, a larger one as *too_many*, each with its cards and the
  reason, and is never scored.
- A hand with a card read below the recognizer's confidence threshold is *uncertain*
  (unverified): its score is computed from the best-guess codes and reported as provisional,
  never as a result: it takes no part in outcomes, payouts or the winner (a payout must not
  rest on a guess). Uncertain readings that lie apart from every certain card are set aside
  before any hand is formed or the banker chosen (``handreader.tables.grouping``) and listed
  as left over. Every card printed carries its doubt: ``KC?`` in text, ``"uncertain": true``
  in JSON. Five cards the rules
  refuse (a joker, more copies of a card than the decks hold, across the whole table) are
  *invalid*, with the reason.
- Banker game (``TableMode.BANKER``, the default): one group is the banker, chosen by
  ``BankerRule`` (default ``TOP``: the group whose card centres lie nearest the top edge of the
  image on average), or the cards inside the banker region given. Every other group is a player
  and, when both hands are scored, gets its outcome against the banker and the settlement of
  ``bet`` x ``stake`` under the profile (``rules.settlement.settle``). A photo with one group is
  a single hand: scored, with no banker.
- Trainer game (``TableMode.TRAINER``): 2 to 4 hands ranked (``rules.niuniu.rank_hands``); the
  winner, or the tie, is named only when every hand is scored.

Zheng Shangyou / Pits plays are judged in ``handreader.tables.pits``.

Results are frozen records with ``to_dict()`` (the JSON of the HTTP API).
"""

from __future__ import annotations

import enum
import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from handreader.tables.grouping import (
    CardGroup,
    assign_regions,
    cards_read_twice,
    group_cards,
    one_card_read_twice,
)
from handreader.tables.options import BankerRule, TableMode, TableOptions
from handreader.tables.wording import counted
from rules.cards import check_distinct, parse_card
from rules.errors import HandError, RulesError
from rules.money import ZERO, json_amount
from rules.niuniu import HAND_SIZE, NiuHand, Outcome, banker_outcome, evaluate_hand, rank_hands
from rules.niuniu_profiles import NiuProfile
from rules.settlement import Settlement, settle
from vision.detections import CardReading, Reading, ReadingFlag, doubt_fields

__all__ = [
    "NO_CARDS",
    "BankerRule",
    "HandResult",
    "HandStatus",
    "PlayerResult",
    "Role",
    "TableCard",
    "TableMode",
    "TableOptions",
    "TableResult",
    "flag_names",
    "reading_problem",
    "score_codes",
    "score_groups",
    "score_reading",
]

Box = tuple[float, float, float, float]

NO_CARDS = "no cards found"
"""The problem of a photo with no card read at all (a blank photo), in every game's answer."""


def reading_problem(reading: Reading) -> str | None:
    """A reading's own problem, as ``/v1/read`` and ``read --json`` give it: :data:`NO_CARDS`
    for a photo with no card read, else None."""
    return None if reading.cards else NO_CARDS


class Role(enum.Enum):
    """A hand's part in the round."""

    BANKER = "banker"
    PLAYER = "player"
    HAND = "hand"
    """A hand without banker: a single hand, or one of the trainer's hands."""


class HandStatus(enum.Enum):
    """Whether a hand was scored, and if not, why (see the module docstring)."""

    SCORED = "scored"
    UNCERTAIN = "uncertain"
    INCOMPLETE = "incomplete"
    """Fewer cards than a hand."""
    TOO_MANY = "too_many"
    """More cards than a hand, and no gap to split them at (``handreader.tables.grouping``)."""
    INVALID = "invalid"


_parse = functools.lru_cache(maxsize=1024)(parse_card)
"""``parse_card`` remembered: a table parses the same few codes many times."""


@dataclass(frozen=True, slots=True)
class TableCard:
    """A card on the table: its code, and where and how surely it was read (None for codes)."""

    code: str
    box_xyxy: Box | None = None
    confidence: float | None = None
    uncertain: bool = False
    alternatives: tuple[tuple[str, float], ...] = ()
    other_corners: tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        """The code as text shows it: ``KC?`` when the reading is uncertain."""
        return f"{self.code}?" if self.uncertain else self.code

    @classmethod
    def from_reading(cls, card: CardReading) -> TableCard:
        """The table card of a recognizer reading."""
        return cls(
            card.code,
            card.box_xyxy,
            card.confidence,
            card.uncertain,
            card.alternatives,
            card.other_corners,
        )

    def to_dict(self, part: str | None = None) -> dict[str, object]:
        """JSON: code, box, confidence, uncertain; ``part`` (bull / rest) when in a split."""
        shown: dict[str, object] = {"card": self.code}
        if self.box_xyxy is not None:
            shown["box"] = [round(value, 1) for value in self.box_xyxy]
        if self.confidence is not None:
            shown["confidence"] = round(self.confidence, 4)
        shown["uncertain"] = self.uncertain
        shown.update(doubt_fields(self.uncertain, self.alternatives, self.other_corners))
        if part is not None:
            shown["part"] = part
        return shown


def _score_dict(hand: NiuHand) -> dict[str, object]:
    split = hand.split
    return {
        "score": hand.score.value,
        "label": hand.label,
        "points": hand.points,
        "rank": hand.tier,
        "bull": None if split is None else [str(card) for card in split.bull],
        "rest": None if split is None else [str(card) for card in split.rest],
        "swapped": [] if split is None else [str(card) for card in split.swapped],
    }


@dataclass(frozen=True, slots=True)
class HandResult:
    """One group of cards: its role, status, cards and score (provisional when uncertain)."""

    seat: int
    role: Role
    status: HandStatus
    cards: tuple[TableCard, ...]
    hand: NiuHand | None = None
    problem: str | None = None

    @property
    def scored(self) -> bool:
        """True when the hand counts: five certain cards the rules accept."""
        return self.status is HandStatus.SCORED

    @property
    def box_xyxy(self) -> Box | None:
        """The box around the cards' boxes; None for cards given as codes."""
        boxes = [card.box_xyxy for card in self.cards if card.box_xyxy is not None]
        if not boxes:
            return None
        return (
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )

    def parts(self) -> tuple[str | None, ...]:
        """For each card, ``"bull"`` or ``"rest"`` in the hand's split; None without a split."""
        if self.hand is None or self.hand.split is None:
            return tuple(None for _ in self.cards)
        left: Counter[str] = Counter(str(card) for card in self.hand.split.bull)
        found: list[str | None] = []
        for card in self.cards:
            code = str(_parse(card.code))
            if left[code] > 0:
                left[code] -= 1
                found.append("bull")
            else:
                found.append("rest")
        return tuple(found)

    def to_dict(self) -> dict[str, object]:
        """JSON of the hand (see the API documentation)."""
        return {
            "seat": self.seat,
            "role": self.role.value,
            "status": self.status.value,
            "cards": [
                card.to_dict(part) for card, part in zip(self.cards, self.parts(), strict=True)
            ],
            "box": None if self.box_xyxy is None else [round(v, 1) for v in self.box_xyxy],
            "score": None if self.hand is None else _score_dict(self.hand),
            "problem": self.problem,
        }


@dataclass(frozen=True, slots=True)
class PlayerResult:
    """A player's result against the banker; outcome and settlement None when not scored."""

    seat: int
    outcome: Outcome | None
    settlement: Settlement | None
    problem: str | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON: seat, outcome, net, multiple, commission, bet, stake, problem."""
        paid = self.settlement
        return {
            "seat": self.seat,
            "outcome": None if self.outcome is None else self.outcome.value,
            "net": None if paid is None else json_amount(paid.net),
            "multiple": None if paid is None else paid.multiple,
            "commission": None if paid is None else json_amount(paid.commission),
            "bet": None if paid is None else paid.bet.value,
            "stake": None if paid is None else json_amount(paid.stake),
            "problem": self.problem,
        }


@dataclass(frozen=True, slots=True)
class TableResult:
    """A table read and scored: the hands in seat order and who won what.

    Banker game: ``banker`` is the banker's seat and ``players`` the players' results, in seat
    order. Trainer: ``places`` (1 = best, shared on ties) and ``winners`` (several: a tie) when
    every hand is scored. ``problem`` says why no winner or no settlement could be given.
    """

    mode: TableMode
    profile: NiuProfile
    hands: tuple[HandResult, ...]
    banker: int | None = None
    players: tuple[PlayerResult, ...] = ()
    places: tuple[int, ...] | None = None
    winners: tuple[int, ...] = ()
    left_over: tuple[TableCard, ...] = ()
    size_wh: tuple[int, int] | None = None
    flags: ReadingFlag = ReadingFlag.NONE
    problem: str | None = None

    @property
    def is_tie(self) -> bool:
        """True when several trainer hands share first place."""
        return len(self.winners) > 1

    @property
    def banker_net(self) -> Decimal | None:
        """What the banker gains over every settled player (None without a settled player)."""
        settled = [p.settlement.net for p in self.players if p.settlement is not None]
        return -sum(settled, ZERO) if settled else None

    def to_dict(self) -> dict[str, object]:
        """JSON of the table (see the API documentation)."""
        net = self.banker_net
        return {
            "mode": self.mode.value,
            "profile": self.profile.name,
            "size": None if self.size_wh is None else list(self.size_wh),
            "hands": [hand.to_dict() for hand in self.hands],
            "banker": self.banker,
            "players": [player.to_dict() for player in self.players],
            "banker_net": None if net is None else json_amount(net),
            "places": None if self.places is None else list(self.places),
            "winners": list(self.winners),
            "tie": self.is_tie,
            "left_over": [card.to_dict() for card in self.left_over],
            "flags": flag_names(self.flags),
            "problem": self.problem,
        }


def flag_names(flags: ReadingFlag) -> list[str]:
    """The names of the flags set, lower case (``["wrong_count", "low_confidence"]``)."""
    return [flag.name.lower() for flag in ReadingFlag if flag and flag in flags and flag.name]


def _named(cards: Sequence[TableCard]) -> str:
    return " ".join(card.shown for card in cards) or "no cards"


def _judge_hand(
    seat: int, role: Role, cards: tuple[TableCard, ...], profile: NiuProfile, duplicates: set[str]
) -> HandResult:
    """Score one group, or say why it is not a scored hand."""
    count = counted(len(cards), "card")  # (named when the group is no hand)
    if len(cards) < HAND_SIZE:
        problem = f"{count} ({_named(cards)}): a Niu Niu hand is {HAND_SIZE} cards"
        return HandResult(seat, role, HandStatus.INCOMPLETE, cards, None, problem)
    if len(cards) > HAND_SIZE:
        problem = (
            f"{count} ({_named(cards)}) lie together: more than a Niu Niu hand of "
            f"{HAND_SIZE}, with no gap between them to tell the hands apart"
        )
        return HandResult(seat, role, HandStatus.TOO_MANY, cards, None, problem)
    repeated = sorted({card.code for card in cards} & duplicates)
    if repeated:
        what = "one deck holds" if profile.decks == 1 else f"{profile.decks} decks hold"
        problem = f"duplicate card {', '.join(repeated)} on the table: more copies than {what}"
        return HandResult(seat, role, HandStatus.INVALID, cards, None, problem)
    try:
        hand = evaluate_hand([_parse(card.code) for card in cards], profile)
    except RulesError as error:
        return HandResult(seat, role, HandStatus.INVALID, cards, None, str(error))
    doubtful = [card for card in cards if card.uncertain]
    if doubtful:
        shown = ", ".join(_doubt(card) for card in doubtful)
        problem = f"unverified: uncertain reading of {shown}; the score is provisional"
        return HandResult(seat, role, HandStatus.UNCERTAIN, cards, hand, problem)
    return HandResult(seat, role, HandStatus.SCORED, cards, hand)


def _doubt(card: TableCard) -> str:
    """An uncertain card in words: ``KD? (0.30)``, ``10C? (0.95, 10S at another corner)``."""
    told = [] if card.confidence is None else [f"{card.confidence:.2f}"]
    if card.other_corners:
        told.append(f"{'/'.join(card.other_corners)} at another corner")
    return f"{card.shown} ({', '.join(told)})" if told else card.shown


def _duplicates(groups: Sequence[Sequence[TableCard]], decks: int) -> set[str]:
    counts: Counter[str] = Counter()
    for group in groups:
        for card in group:
            try:
                counts[str(_parse(card.code))] += 1
            except RulesError:
                continue
    return {code for code, count in counts.items() if count > decks}


def _state(hand: HandResult) -> str:
    """How an unscored hand is, in words: "is incomplete", "has too many cards"."""
    return "has too many cards" if hand.status is HandStatus.TOO_MANY else f"is {hand.status.value}"


def _settle(banker: HandResult, player: HandResult, options: TableOptions) -> PlayerResult:
    if not banker.scored or banker.hand is None:
        return PlayerResult(player.seat, None, None, f"the banker's hand {_state(banker)}")
    if not player.scored or player.hand is None:
        why = f"this hand {_state(player)}: {player.problem}"
        return PlayerResult(player.seat, None, None, why)
    outcome = banker_outcome(banker.hand, player.hand)
    return PlayerResult(
        player.seat, outcome, settle(banker.hand, player.hand, options.bet, options.stake)
    )


def score_groups(
    groups: Sequence[Sequence[TableCard]],
    banker: int | None,
    options: TableOptions,
    *,
    size_wh: tuple[int, int] | None = None,
    left_over: Sequence[TableCard] = (),
    flags: ReadingFlag = ReadingFlag.NONE,
) -> TableResult:
    """Score groups of cards (in seat order) as a banker game or a trainer round.

    ``banker`` is the banker's seat in a banker game (None: no banker, a single hand or a list
    of hands compared with nobody). Groups are judged as the module docstring says; nothing
    here raises for a bad group, it is reported.
    """
    profile = options.profile
    trainer = options.mode is TableMode.TRAINER
    duplicates = _duplicates(groups, profile.decks)

    def role(seat: int) -> Role:
        if trainer or banker is None:
            return Role.HAND
        return Role.BANKER if seat == banker else Role.PLAYER

    hands = tuple(
        _judge_hand(seat, role(seat), tuple(group), profile, duplicates)
        for seat, group in enumerate(groups)
    )
    for hand in hands:
        if hand.status in (HandStatus.INCOMPLETE, HandStatus.TOO_MANY):
            flags |= ReadingFlag.WRONG_COUNT
        elif hand.status is HandStatus.UNCERTAIN:
            flags |= ReadingFlag.LOW_CONFIDENCE
    if duplicates:
        flags |= ReadingFlag.DUPLICATE
    result = TableResult(
        options.mode, profile, hands, None, (), None, (), tuple(left_over), size_wh, flags
    )
    if trainer:
        return _rank(result)
    if banker is None:
        return result
    players = tuple(_settle(hands[banker], hand, options) for hand in hands if hand.seat != banker)
    problem = (
        None
        if hands[banker].scored
        else (f"the banker's hand {_state(hands[banker])}: no player can be settled")
    )
    return replace(result, banker=banker, players=players, problem=problem)


def _rank(result: TableResult) -> TableResult:
    """Add the trainer's places and winners, or the reason there are none."""
    count = len(result.hands)
    problem: str | None = None
    if not 2 <= count <= 4:
        problem = f"the trainer ranks 2 to 4 hands, found {count}"
    else:
        unscored = [hand for hand in result.hands if not hand.scored]
        if unscored:
            shown = ", ".join(f"seat {hand.seat} {_state(hand)}" for hand in unscored)
            problem = f"no winner: {shown}"
    if problem is not None:
        return TableResult(
            result.mode,
            result.profile,
            result.hands,
            left_over=result.left_over,
            size_wh=result.size_wh,
            flags=result.flags,
            problem=problem,
        )
    scored = [hand.hand for hand in result.hands if hand.hand is not None]
    ranking = rank_hands(scored, result.profile)
    return TableResult(
        result.mode,
        result.profile,
        result.hands,
        places=ranking.places,
        winners=ranking.winners,
        left_over=result.left_over,
        size_wh=result.size_wh,
        flags=result.flags,
    )


def _photo_groups(
    reading: Reading, options: TableOptions
) -> tuple[list[CardGroup], int | None, tuple[CardReading, ...]]:
    """The groups of a photo in seat order, the banker's index among them, the cards left over."""
    cards = reading.cards
    banker_group: CardGroup | None = None
    if options.banker_region is not None:
        found, cards = assign_regions(cards, [options.banker_region], reading.size_wh)
        banker_group = found[0]
    left_over: tuple[CardReading, ...] = ()
    if options.player_regions:
        players, left_over = assign_regions(cards, options.player_regions, reading.size_wh)
        groups = [replace(group, cards=one_card_read_twice(group.cards, HAND_SIZE))
                  for group in players]  # fmt: skip
    else:
        found = group_cards(cards, link_factor=options.link_factor)
        groups = cards_read_twice([group for group in found if not group.set_aside], HAND_SIZE)
        left_over = tuple(card for group in found if group.set_aside for card in group.cards)
    if banker_group is not None:
        banker_group = replace(
            banker_group, cards=one_card_read_twice(banker_group.cards, HAND_SIZE)
        )
    if options.mode is TableMode.TRAINER:
        return ([banker_group] if banker_group else []) + groups, None, left_over
    if banker_group is not None:
        return [banker_group, *groups], 0, left_over
    if len(groups) < 2:
        return groups, None, left_over
    return groups, options.banker.pick(groups), left_over


def score_reading(
    reading: Reading,
    options: TableOptions | None = None,
    *,
    keep_banker: frozenset[str] | None = None,
) -> TableResult:
    """Group the cards of a photo into hands and score the table (see the module docstring).

    ``keep_banker`` (live mode) names the cards of the banker's hand shown so far: a group of
    exactly those cards stays the banker whatever the banker rule would pick now (a camera
    turning a few degrees must not move the bank between two hands at the same height)."""
    chosen = options or TableOptions()
    groups, banker, left_over = _photo_groups(reading, chosen)
    if keep_banker and banker is not None and chosen.banker_region is None:
        kept = [n for n, group in enumerate(groups)
                if frozenset(card.code for card in group.cards) == keep_banker]  # fmt: skip
        if kept:
            banker = kept[0]
    result = score_groups(
        [tuple(TableCard.from_reading(card) for card in group.cards) for group in groups],
        banker,
        chosen,
        size_wh=reading.size_wh,
        left_over=[TableCard.from_reading(card) for card in left_over],
        flags=reading.flags,
    )
    if not result.hands and result.problem is None:
        found = NO_CARDS if not reading.cards else "no hand found: only cards left over"
        result = replace(result, problem=found)
    return result


def score_codes(
    hands: Sequence[Sequence[str] | str],
    banker: int | None = 0,
    options: TableOptions | None = None,
) -> TableResult:
    """Score hands given as card codes (strict: bad input raises instead of being reported).

    Raises CardError for unknown card text, HandError for a hand that is not five cards, for a
    card repeated more often than the decks hold, and for a trainer round that is not 2 to 4
    hands; RulesError for a banker seat out of range.
    """
    chosen = options or TableOptions()
    if not hands:
        raise HandError("no hands given")
    groups: list[tuple[TableCard, ...]] = []
    for seat, hand in enumerate(hands):
        tokens = hand.replace(",", " ").split() if isinstance(hand, str) else hand
        cards = tuple(
            _parse(token) if isinstance(token, str) else parse_card(token) for token in tokens
        )
        if len(cards) != HAND_SIZE:
            shown = " ".join(map(str, cards))
            raise HandError(
                f"hand {seat}: a Niu Niu hand is {HAND_SIZE} cards, got {len(cards)}: {shown!r}"
            )
        groups.append(tuple(TableCard(str(card)) for card in cards))
    every = [_parse(card.code) for group in groups for card in group]
    check_distinct(every, chosen.profile.decks)
    if chosen.mode is TableMode.TRAINER:
        if not 2 <= len(groups) <= 4:
            raise HandError(f"the trainer ranks 2 to 4 hands, got {len(groups)}")
        banker = None
    elif len(groups) == 1:
        banker = None
    elif banker is not None and not 0 <= banker < len(groups):
        raise RulesError(f"banker seat {banker!r} is out of range: seats are 0..{len(groups) - 1}")
    return score_groups(groups, banker, chosen)
