"""Dealer verification: the results a dealer declares for a round, checked against the table.

A dealer photographs the finished round and declares each player's outcome (``win``, ``lose``,
``tie``) and, optionally, the payout. :func:`verify_round` compares that declaration with the
table the product read and scored (``handreader.tables.scoring.TableResult``) and names each
difference:

- ``outcome``: the player's declared outcome is not the computed one;
- ``payout``: the declared payout differs from the computed one by more than the tolerance
  (default half a cent). A payout is the player's *net*: what the player gains, after
  commission, positive for a win, negative for a loss, 0 for a push (``Settlement.net``);
- ``missing_player``: a player on the table that the declaration leaves out;
- ``extra_player``: a declared seat that is no player on the table (no such hand, or the
  banker's own seat);
- ``banker_net``: the declared banker's net (optional) differs from minus the sum of the
  players' nets;
- ``unscored``: a player whose hand (or the banker's) the product could not score (uncertain,
  incomplete or invalid cards, too many cards together): that declaration cannot be checked.
  When the banker's hand is not scored, no player can be settled and the players found may not
  be the seats the dealer sees, so every declared player is ``unscored`` and nothing else is
  compared (with no player declared, the table itself is ``unscored``, seat None); an
  undeclared group that is not scored (a stray card) is ``unscored`` too, not a missing
  player.

The verdict is ``match`` when there is no difference, ``mismatch`` when any difference other
than ``unscored`` exists, and ``unverified`` when the only differences are unscored hands (the
product can neither confirm nor contradict the dealer). Seats are those of the scored table
(``hands[i].seat``, in reading order, the banker's included), as the API and the annotated
image show them.

:func:`handreader.store.audit.verify_and_log` does the whole of a verification for the HTTP
layer: score a reading, verify, append the record to the audit log.
"""

from __future__ import annotations

import enum
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from rules.money import WrittenNumber, json_amount
from rules.niuniu import Outcome

if TYPE_CHECKING:
    from handreader.tables.scoring import TableResult

__all__ = [
    "DECLARED_LIMIT",
    "DEFAULT_PAYOUT_TOLERANCE",
    "Declaration",
    "DeclaredRound",
    "Difference",
    "DifferenceKind",
    "Verdict",
    "Verification",
    "VerifyError",
    "image_sha256",
    "verify_round",
]

DEFAULT_PAYOUT_TOLERANCE = Decimal("0.005")
"""Half a cent of the stake unit: payouts closer than this are equal (declared 0.33 for 1/3)."""


class VerifyError(ValueError):
    """A declaration that cannot be read: bad seat, unknown outcome, payout not a number."""


class Verdict(enum.Enum):
    """The answer to a dealer (see the module docstring)."""

    MATCH = "match"
    MISMATCH = "mismatch"
    UNVERIFIED = "unverified"


class DifferenceKind(enum.Enum):
    """What differs between the declaration and the table (see the module docstring)."""

    OUTCOME = "outcome"
    PAYOUT = "payout"
    MISSING_PLAYER = "missing_player"
    EXTRA_PLAYER = "extra_player"
    BANKER_NET = "banker_net"
    UNSCORED = "unscored"


DECLARED_LIMIT = Decimal(10) ** 18
"""The largest declared amount read, in absolute value: a thousand times the largest stake
(:data:`rules.money.MAX_AMOUNT`), past any net a table pays; a larger one could only be a slip,
and would cost time in every sum and display of it (``1e999999999``)."""


def _number(value: object, what: str) -> Decimal:
    """An exact amount from an int, a decimal string, a float (by its shortest repr) or a
    :class:`rules.money.WrittenNumber` (by its text), at most :data:`DECLARED_LIMIT`."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise VerifyError(f"{what} must be a number, got {value!r}")
    written = value.text if isinstance(value, WrittenNumber) else None  # 1e400: finite
    shown = written or _written(value)
    if written is None and isinstance(value, float) and not math.isfinite(value):
        raise VerifyError(f"{what} must be a finite number, got {shown}")
    try:
        decimal = Decimal(written or str(value).strip())
    except InvalidOperation:
        raise VerifyError(f"{what} must be a number, got {shown}") from None
    if not decimal.is_finite():
        raise VerifyError(f"{what} must be a finite number, got {shown}")
    # the exponent first: abs() of a number beyond the context's range raises Overflow
    if decimal.adjusted() > DECLARED_LIMIT.adjusted() or abs(decimal) > DECLARED_LIMIT:
        if decimal < 0:
            smallest = f"-{DECLARED_LIMIT:,}"
            raise VerifyError(f"{what} {shown} is under the smallest amount read, {smallest}")
        raise VerifyError(f"{what} {shown} is over the largest amount read, {DECLARED_LIMIT:,}")
    return decimal


def _written(value: int | float | str | Decimal) -> str:
    """``value`` as a refusal shows it: a string as given (quoted), a float as JSON writes a
    number (``1e19``, not Python's ``1e+19``), an int or a Decimal by its digits."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return repr(value).replace("e+", "e")
    return str(value)


def _show(amount: Decimal) -> str:
    number = json_amount(amount)
    return f"{number:g}" if isinstance(number, float) else str(number)


@dataclass(frozen=True, slots=True)
class Declaration:
    """What the dealer declares for one player: outcome and, optionally, the net payout."""

    seat: int
    outcome: Outcome
    payout: Decimal | None = None

    @classmethod
    def parse(cls, seat: object, value: object) -> Declaration:
        """From a seat and ``"win"`` or ``{"outcome": "win", "payout": 0.95}``."""
        if isinstance(seat, bool) or not isinstance(seat, int | str):
            raise VerifyError(f"seat must be a whole number, got {seat!r}")
        try:
            number = int(seat)
        except ValueError:
            raise VerifyError(f"seat must be a whole number, got {seat!r}") from None
        if number < 0:
            raise VerifyError(f"seat must be 0 or more, got {seat!r}")
        payout: object = None
        if isinstance(value, Mapping):
            unknown = sorted(set(map(str, value)) - {"seat", "outcome", "payout"})
            if unknown:
                raise VerifyError(f"seat {number}: unknown field {unknown[0]!r}")
            outcome, payout = value.get("outcome"), value.get("payout")
        else:
            outcome = value
        if not isinstance(outcome, str):
            raise VerifyError(f"seat {number}: outcome must be win, lose or tie, got {outcome!r}")
        try:
            declared = Outcome(outcome.strip().lower())
        except ValueError:
            raise VerifyError(
                f"seat {number}: unknown outcome {outcome!r}: known are win, lose, tie"
            ) from None
        amount = None if payout is None else _number(payout, f"seat {number}: payout")
        return cls(number, declared, amount)

    def to_dict(self) -> dict[str, object]:
        """JSON form: seat, outcome, payout (None when not declared)."""
        return {
            "seat": self.seat,
            "outcome": self.outcome.value,
            "payout": None if self.payout is None else json_amount(self.payout),
        }


@dataclass(frozen=True, slots=True)
class DeclaredRound:
    """A dealer's declaration: the players in seat order, optionally the banker's net."""

    players: tuple[Declaration, ...]
    banker_net: Decimal | None = None

    def __post_init__(self) -> None:
        seats = [player.seat for player in self.players]
        repeated = sorted({seat for seat in seats if seats.count(seat) > 1})
        if repeated:
            raise VerifyError(f"seat {repeated[0]} is declared more than once")

    @classmethod
    def parse(cls, data: object) -> DeclaredRound:
        """From JSON-like data, either form::

            {"players": [{"seat": 1, "outcome": "win", "payout": 0.95}, ...], "banker_net": -0.95}
            {"1": "win", "2": {"outcome": "lose", "payout": -1}, "banker_net": 0.05}

        VerifyError names the first bad entry.
        """
        if isinstance(data, DeclaredRound):
            return data
        banker_net: object = None
        players: list[Declaration] = []
        if isinstance(data, Mapping) and "players" in data:
            unknown = sorted(set(map(str, data)) - {"players", "banker_net"})
            if unknown:
                raise VerifyError(f"unknown field {unknown[0]!r} in the declaration")
            entries = data["players"]
            banker_net = data.get("banker_net")
            if not isinstance(entries, Sequence) or isinstance(entries, str):
                raise VerifyError(f"players must be a list, got {entries!r}")
            for entry in entries:
                if not isinstance(entry, Mapping) or "seat" not in entry:
                    raise VerifyError(f"each player needs a seat and an outcome, got {entry!r}")
                players.append(Declaration.parse(entry["seat"], entry))
        elif isinstance(data, Mapping):
            banker_net = data.get("banker_net")
            players = [
                Declaration.parse(seat, value)
                for seat, value in data.items()
                if seat != "banker_net"
            ]
        else:
            raise VerifyError(f"a declaration is an object of players, got {data!r}")
        net = None if banker_net is None else _number(banker_net, "banker_net")
        return cls(tuple(sorted(players, key=lambda p: p.seat)), net)

    def to_dict(self) -> dict[str, object]:
        """JSON form (the first form of :meth:`parse`)."""
        return {
            "players": [player.to_dict() for player in self.players],
            "banker_net": None if self.banker_net is None else json_amount(self.banker_net),
        }


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference: its kind, the seat (None for the banker's net or a table that cannot be
    verified at all), both sides, a sentence."""

    kind: DifferenceKind
    seat: int | None
    declared: str | None
    computed: str | None
    message: str

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "kind": self.kind.value,
            "seat": self.seat,
            "declared": self.declared,
            "computed": self.computed,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class Verification:
    """The verdict, the differences in seat order, and both sides compared."""

    verdict: Verdict
    differences: tuple[Difference, ...]
    declared: DeclaredRound
    table: TableResult

    def computed(self) -> dict[str, object]:
        """The computed results in the declaration's form (players' outcomes and payouts)."""
        net = self.table.banker_net
        return {
            "banker": self.table.banker,
            "players": [
                {
                    "seat": player.seat,
                    "outcome": None if player.outcome is None else player.outcome.value,
                    "payout": None
                    if player.settlement is None
                    else json_amount(player.settlement.net),
                    "problem": player.problem,
                }
                for player in self.table.players
            ],
            "banker_net": None if net is None else json_amount(net),
        }

    def to_dict(self) -> dict[str, object]:
        """JSON form: verdict, differences, declared, computed."""
        return {
            "verdict": self.verdict.value,
            "differences": [difference.to_dict() for difference in self.differences],
            "declared": self.declared.to_dict(),
            "computed": self.computed(),
        }


def _player_differences(
    table: TableResult, declared: Mapping[int, Declaration], tolerance: Decimal
) -> list[Difference]:
    found: list[Difference] = []
    for player in table.players:
        seat, claim = player.seat, declared.get(player.seat)
        if claim is None and player.settlement is None:
            why = player.problem or "the hand is not scored"
            found.append(
                Difference(
                    DifferenceKind.UNSCORED,
                    seat,
                    None,
                    None,
                    f"seat {seat} is not declared and cannot be verified: {why}",
                )
            )
            continue
        if claim is None:
            computed = None if player.outcome is None else player.outcome.value
            found.append(
                Difference(
                    DifferenceKind.MISSING_PLAYER,
                    seat,
                    None,
                    computed,
                    f"seat {seat} is a player on the table but is not declared",
                )
            )
            continue
        if player.outcome is None or player.settlement is None:
            found.append(
                Difference(
                    DifferenceKind.UNSCORED,
                    seat,
                    claim.outcome.value,
                    None,
                    f"seat {seat}: cannot verify, {player.problem or 'the hand is not scored'}",
                )
            )
            continue
        if claim.outcome is not player.outcome:
            found.append(
                Difference(
                    DifferenceKind.OUTCOME,
                    seat,
                    claim.outcome.value,
                    player.outcome.value,
                    f"seat {seat}: declared {claim.outcome.value}, computed {player.outcome.value}",
                )
            )
        net = player.settlement.net
        if claim.payout is not None and abs(claim.payout - net) > tolerance:
            found.append(
                Difference(
                    DifferenceKind.PAYOUT,
                    seat,
                    _show(claim.payout),
                    _show(net),
                    f"seat {seat}: declared payout {_show(claim.payout)}, computed {_show(net)} "
                    "(the player's net: negative for a loss)",
                )
            )
    return found


def verify_round(
    table: TableResult,
    declared: DeclaredRound | Mapping[str, object],
    *,
    payout_tolerance: Decimal = DEFAULT_PAYOUT_TOLERANCE,
) -> Verification:
    """Compare a declaration with a scored banker table (see the module docstring).

    A table without a banker (one hand, or a trainer round) or whose banker's hand is not
    scored gives an ``unscored`` difference per declared player (one for the table, seat
    None, when none is declared), and the verdict ``unverified``: a round with nothing to
    settle against never matches. VerifyError when the declaration cannot be read.
    """
    claim = DeclaredRound.parse(declared)
    by_seat = {player.seat: player for player in claim.players}
    differences: list[Difference] = []
    if table.banker is None or not table.hands[table.banker].scored:
        reason = table.problem or "the table has no banker's hand to settle against"
        differences = [
            Difference(
                DifferenceKind.UNSCORED,
                player.seat,
                player.outcome.value,
                None,
                f"seat {player.seat}: cannot verify, {reason}",
            )
            for player in claim.players
        ] or [Difference(DifferenceKind.UNSCORED, None, None, None, f"cannot verify: {reason}")]
    else:
        differences = _player_differences(table, by_seat, payout_tolerance)
        players = {player.seat for player in table.players}
        for seat in sorted(set(by_seat) - players):
            why = (
                "is the banker, not a player"
                if seat == table.banker
                else "is not a player on the table"
            )
            differences.append(
                Difference(
                    DifferenceKind.EXTRA_PLAYER,
                    seat,
                    by_seat[seat].outcome.value,
                    None,
                    f"seat {seat} is declared but {why}",
                )
            )
        net = table.banker_net
        settled = all(player.settlement is not None for player in table.players)
        declared_net = claim.banker_net
        if (
            declared_net is not None
            and net is not None
            and settled
            and abs(declared_net - net) > payout_tolerance
        ):
            differences.append(
                Difference(
                    DifferenceKind.BANKER_NET,
                    None,
                    _show(declared_net),
                    _show(net),
                    f"banker: declared net {_show(declared_net)}, computed {_show(net)}",
                )
            )
    differences.sort(key=lambda d: (d.seat is None, d.seat or 0, d.kind.value))
    if any(d.kind is not DifferenceKind.UNSCORED for d in differences):
        verdict = Verdict.MISMATCH
    elif differences:
        verdict = Verdict.UNVERIFIED
    else:
        verdict = Verdict.MATCH
    return Verification(verdict, tuple(differences), claim, table)


def image_sha256(data: bytes) -> str:
    """The SHA-256 of an image's bytes, lower-case hex (as the audit log stores it)."""
    return hashlib.sha256(data).hexdigest()
