"""Money (rules/money.py): exact decimal amounts and their one JSON form."""

from __future__ import annotations

from decimal import Decimal

import pytest

from rules.money import decimal_places, json_amount, to_money


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, Decimal(3)),
        ("2.5", Decimal("2.5")),
        (" 7 ", Decimal(7)),
        (0.1, Decimal("0.1")),
        (Decimal("1e3"), Decimal(1000)),
    ],
)
def test_to_money_is_exact(value: object, expected: Decimal) -> None:
    """A float is taken by its shortest repr (0.1 is one tenth), text is stripped."""
    assert to_money(value) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", "not a number"),
        ("", "not a number"),
        (True, "not a number"),
        (None, "not a number"),
        ("nan", "not a finite number"),
        (float("inf"), "not a finite number"),
    ],
)
def test_to_money_refuses_what_is_not_a_finite_number(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        to_money(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        (Decimal(285), 285),
        (Decimal("285.00"), 285),  # a whole amount with a scale is still an int
        (Decimal("-0"), 0),
        (Decimal("1E+3"), 1000),
        (Decimal("2.375"), 2.375),
        (Decimal("-0.095"), -0.095),
    ],
)
def test_json_amount_is_an_int_when_whole(amount: Decimal, expected: int | float) -> None:
    number = json_amount(amount)
    assert number == expected and type(number) is type(expected)


@pytest.mark.parametrize("value", ["1e999999999", "-1e16", 10**16, "1000000000000000.01"])
def test_to_money_refuses_amounts_out_of_range(value: object) -> None:
    # MAX_AMOUNT = 10**15: larger text would make a huge integer when written as JSON
    with pytest.raises(ValueError, match="amount out of range"):
        to_money(value)  # type: ignore[arg-type]


def test_to_money_takes_the_largest_amount() -> None:
    assert to_money("1e15") == Decimal(10) ** 15


@pytest.mark.parametrize(
    ("value", "limit"),
    [
        ("1e-400", "at most 9 decimal places"),  # a double would give 0
        ("0.0000000001", "at most 9 decimal places"),
        ("1.00000000000000000000000000001", "at most 9 decimal places"),  # past 28 digits
        (1e-10, "at most 9 decimal places"),
    ],
)
def test_to_money_refuses_amounts_finer_than_a_billionth(value: object, limit: str) -> None:
    with pytest.raises(ValueError, match=f"amount too precise: .*{limit}"):
        to_money(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["0.000000001", "2.500000000000", "1E+3", "0e-50", "-0.5"])
def test_to_money_takes_amounts_to_a_billionth(value: str) -> None:
    assert to_money(value) == Decimal(value)


@pytest.mark.parametrize(
    ("number", "places"),
    [
        ("2.50", 1),
        ("1e-400", 400),
        ("1500", 0),
        ("1e3", 0),
        ("0", 0),
        ("0.000", 0),
        ("0e-50", 0),
        ("-0.125", 3),
    ],
)
def test_decimal_places_leave_trailing_zeros_aside(number: str, places: int) -> None:
    assert decimal_places(Decimal(number)) == places
