"""Money: every stake, payout, net and rate of every game is an exact :class:`decimal.Decimal`.

Amounts come in as decimals, ints, decimal text or floats (a float by its shortest repr, so
``0.1`` means one tenth, not its binary neighbour) and are multiplied by whole multiples and
decimal rates only, so they stay exact. :func:`json_amount` is their one JSON form: an ``int``
when whole, else the nearest ``float``.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Self

__all__ = [
    "MAX_AMOUNT",
    "MAX_PLACES",
    "PLACES_LIMIT",
    "THOUSANDS_SEPARATORS",
    "ZERO",
    "AmountPrecisionError",
    "WrittenNumber",
    "decimal_places",
    "json_amount",
    "to_money",
]

ZERO = Decimal(0)
"""No money: the start of a sum of amounts."""

MAX_AMOUNT = Decimal(10) ** 15
"""The largest amount taken, in absolute value: far above any table's stake, and small enough
that every sum and JSON form of amounts stays cheap (``1e999999999`` as text would otherwise
become an integer of a billion digits)."""

MAX_PLACES = 9
"""The most decimal places an amount is taken with: a billionth, finer than any currency's
smallest unit. A finer amount means nothing at a table, and a tiny one (``1e-400``) would come
back from :func:`json_amount` as 0."""


PLACES_LIMIT = f"at most {MAX_PLACES} decimal places"
"""What an amount written too finely is told (:class:`AmountPrecisionError`)."""


class AmountPrecisionError(ValueError):
    """An amount written finer than :data:`MAX_PLACES` decimal places."""


THOUSANDS_SEPARATORS = ",'_ \u00a0\u2009\u202f\u2019"
"""Marks written between thousands (comma, apostrophes, underscore, spaces: plain, no-break,
thin, narrow no-break): an amount is written without them, and a refusal names them."""


class WrittenNumber(float):
    """A number read from text (a JSON document) that no double carries, as the double
    nearest it that keeps the text as written in ``text``: an amount (:func:`to_money`) is read
    from the text, every digit of it, and everything else takes it as the float it is
    (``573523967952514.141`` is 573523967952514.125 there, ``1e400`` infinity, ``1e-400`` 0)."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> Self:
        number = super().__new__(cls, text)
        number.text = text
        return number

    def __getnewargs__(self) -> tuple[str]:  # type: ignore[override]  # a copy keeps the text
        return (self.text,)


def to_money(value: int | float | str | Decimal) -> Decimal:
    """``value`` as an exact Decimal (text stripped; a float by its shortest repr, a
    :class:`WrittenNumber` by its text).

    ValueError for anything that is not a finite number (a bool is not a number here), whose
    absolute value is over :data:`MAX_AMOUNT`; AmountPrecisionError (a ValueError) for one
    written finer than :data:`MAX_PLACES` decimal places.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ValueError(f"not a number: {value!r}")
    text = value.text if isinstance(value, WrittenNumber) else str(value).strip()
    try:
        amount = Decimal(text) if isinstance(value, float | str) else Decimal(value)
    except InvalidOperation:
        raise ValueError(f"not a number: {value!r}") from None
    if not amount.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    # the exponent first: abs() of a number beyond the context's range raises Overflow
    if amount.adjusted() > MAX_AMOUNT.adjusted() or abs(amount) > MAX_AMOUNT:
        raise ValueError(f"amount out of range: {value!r} (at most {MAX_AMOUNT:,} either way)")
    if decimal_places(amount) > MAX_PLACES:
        raise AmountPrecisionError(f"amount too precise: {value!r} ({PLACES_LIMIT})")
    return amount


def decimal_places(number: Decimal) -> int:
    """The decimal places a finite ``number`` is written with, trailing zeros aside: 2.50 has
    one, 1e-400 has 400, 1500, 1e3 and 0e-50 none."""
    if number.is_zero():
        return 0
    _, digits, exponent = number.as_tuple()
    zeros = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    return max(0, -(int(exponent) + zeros))


def json_amount(amount: Decimal) -> int | float:
    """An amount as a JSON number: an int when whole, else the nearest float."""
    return int(amount) if amount == amount.to_integral_value() else float(amount)
