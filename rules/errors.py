"""The rules engine's exception family: every bad input is a ``ValueError`` subclass."""

from __future__ import annotations


class RulesError(ValueError):
    """Base class of every error the rules engine raises for bad input."""


class CardError(RulesError):
    """Card text that does not name a card, e.g. ``"1H"`` or ``"ZZ"``."""


class HandError(RulesError):
    """A set of cards that is not a valid hand: wrong count, duplicates in one deck."""


class ProfileError(RulesError):
    """An unknown profile name or an inconsistent rules option."""


class UnknownProfileError(ProfileError):
    """A rules profile, house way or multiplier table the game does not know by that name."""


class DeckError(RulesError):
    """A deck that cannot exist (no ranks, no packs), or the deck of a game the product lacks."""


class IllegalPlayError(RulesError):
    """A play the rules forbid; the message says why in plain words."""
