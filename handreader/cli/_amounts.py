"""Argument types (amounts, rates, counts, output folders) and signed money text shared by the
commands (a helper of the commands, not a command)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path

from rules.cards import MAX_PACKS
from rules.money import (
    MAX_AMOUNT,
    PLACES_LIMIT,
    THOUSANDS_SEPARATORS,
    AmountPrecisionError,
    to_money,
)

__all__ = ["amount", "at_least", "folder", "money", "packs", "rate"]


def _decimal(text: str) -> Decimal:
    if any(mark in text.strip() for mark in THOUSANDS_SEPARATORS):
        raise argparse.ArgumentTypeError(
            f"not a number: {text!r} (write it without thousands separators: 1000, 2.5)"
        )
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value.is_finite():
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def amount(text: str) -> Decimal:
    """A positive decimal amount for argparse (a stake, a payout), at most
    :data:`rules.money.MAX_AMOUNT`."""
    value = _decimal(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    if value > MAX_AMOUNT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_AMOUNT:,}, got {text!r}")
    try:
        return to_money(value)  # the precision every amount is taken with
    except AmountPrecisionError:
        raise argparse.ArgumentTypeError(f"written too finely: {text!r} ({PLACES_LIMIT})") from None


def rate(text: str) -> Decimal:
    """A commission rate in [0, 1) for argparse."""
    value = _decimal(text)
    if not Decimal(0) <= value < 1:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1), got {text!r}")
    return value


def money(value: Decimal) -> str:
    """Signed amount without trailing zeros: ``+95``, ``-100``, ``+9.5``."""
    return f"{value.normalize():+f}"


def at_least(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``least`` (a count of scenes, photos...)."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"expected at least {least}, got {text!r}")
        return value

    return whole


def packs(text: str) -> int:
    """A count of decks (``--decks``) for argparse: a whole number from 1 to
    :data:`rules.cards.MAX_PACKS`, for every command alike."""
    value = at_least(1)(text)
    if value > MAX_PACKS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_PACKS}, got {text!r}")
    return value


def folder(text: str) -> Path:
    """An argparse type: a folder to write into, named by a path that is not blank (``''``
    would be the current folder, the files written among whatever it holds)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"an empty path names no folder, got {text!r}")
    return Path(text)
