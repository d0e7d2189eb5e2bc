"""Argument types (amounts, rates, counts, output folders) and signed money text shared by the
commands (a helper of the commands, not a command)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from rules.cards import MAX_PACKS
from rules.errors import RulesError
from rules.money import THOUSANDS_SEPARATORS
from rules.settlement import parse_amount

__all__ = ["Amount", "at_least", "folder", "money", "packs", "rate"]


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


class Amount(argparse.Action):
    """An amount option (a stake, a payout) for argparse, as an exact positive Decimal: the
    rule the API takes amounts by (:func:`rules.settlement.parse_amount`), its refusal in the
    same words with the option's name (``--stake must be a positive number, got '-1'``), one
    line through the parser's error (exit status 2)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        name = max(self.option_strings, key=len)
        try:
            value = parse_amount(str(values), name)
        except RulesError as error:  # no "argument --stake:" before the rule's own words
            raise argparse.ArgumentError(None, str(error)) from None
        setattr(namespace, self.dest, value)


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
