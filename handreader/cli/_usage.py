"""The refusal of a command line: an option's value, options that do not go together."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(ValueError):
    """A command line the command refuses (a bad option value, options that do not go together,
    no input given): one line that ends, as argparse's own refusals do, with where the
    command's usage is."""
