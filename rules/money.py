"""Money: every stake, payout, net and rate of every game is an exact :class:`decimal.Decimal`.

Amounts come in as decimals, ints, decimal text or floats (a float by its shortest repr, so
``0.1`` means one tenth, not its binary neighbour) and are multiplied by whole multiples and
decimal rates only, so they stay exact. :func:`json_amount` is their one JSON form: an ``int``
when whole, else the nearest ``float``.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

__all__ = ["ZERO", "json_amount", "to_money"]

ZERO = Decimal(0)
"""No money: the start of a sum of amounts."""


def to_money(value: int | float | str | Decimal) -> Decimal:
    """``value`` as an exact Decimal (text stripped; a float by its shortest repr).

    ValueError for anything that is not a finite number (a bool is not a number here).
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ValueError(f"not a number: {value!r}")
    try:
        amount = Decimal(str(value).strip()) if isinstance(value, float | str) else Decimal(value)
    except InvalidOperation:
        raise ValueError(f"not a number: {value!r}") from None
    if not amount.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return amount


def json_amount(amount: Decimal) -> int | float:
    """An amount as a JSON number: an int when whole, else the nearest float."""
    return int(amount) if amount == amount.to_integral_value() else float(amount)
