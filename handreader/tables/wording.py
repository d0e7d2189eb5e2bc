"""Counts in words, as the commands and the service print them: ``1 card``, ``2 cards``."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun singular for one and plural otherwise (``plural``, or
    the noun and an ``s``): ``counted(1, "card") == "1 card"``, ``counted(0, "card") == "0
    cards"``."""
    return f"{count} {noun if count == 1 else plural or f'{noun}s'}"
