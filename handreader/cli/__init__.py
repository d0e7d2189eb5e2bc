"""The ``handreader`` command line: one subcommand per module under ``handreader.cli``.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``func(args) -> int`` as the default. Errors of the ``ValueError`` family (bad card text, bad
hand, bad file) and of the ``OSError`` family (a path missing, a folder where a file is wanted,
a file where a folder is wanted, no permission) become a one-line message and exit status 2,
never a traceback; so do usage errors (an option's bad value, an unknown option, options that
do not go together, no input given: argparse's refusals and a command's
:class:`~handreader.cli._usage.UsageError`), named with the command's own ``--help``. Ctrl-C
stops a command with exit status 130 and one line (``webcam`` prints its statistics first).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Mapping, Sequence

from handreader import __version__
from handreader.cli._usage import UsageError
from handreader.service.settings import OneLineParser
from vision.file_names import name_text

COMMANDS: tuple[str, ...] = (
    "score",
    "read",
    "eval",
    "round",
    "pits",
    "baccarat",
    "blackjack",
    "paigow",
    "synth",
    "train",
    "calibrate",
    "webcam",
    "serve",
    "audit",
)
"""Command modules under ``handreader.cli``, in help order."""


class _Parser(OneLineParser):
    """The command's parser (:class:`~handreader.service.settings.OneLineParser`), with its
    commands' parsers by name."""

    commands: Mapping[str, argparse.ArgumentParser]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand registered."""
    parser = _Parser(prog="handreader", description="Read card hands from photos and score them.")
    parser.add_argument("--version", action="version", version=f"handreader {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module = importlib.import_module(f"handreader.cli.{name}")
        module.register(subparsers)
    for command in subparsers.choices.values():  # descriptions come from module docstrings
        if command.description:
            command.description = plain_text(command.description)
        command.set_defaults(parser=command)  # (a command's own commands set theirs)
    parser.commands = subparsers.choices
    return parser


def plain_text(docstring: str) -> str:
    """A docstring's text as ``--help`` prints it: no reStructuredText markup (````code````,
    ``:mod:`name```)."""
    return re.sub(r":\w+:`([^`]+)`", r"\1", docstring).replace("``", "")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit status.

    Ctrl-C is one line and status 130 from the first statement on: building the parser imports
    every command's module (numpy among them), which takes long enough to be interrupted.
    """
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        return _run(given)
    except KeyboardInterrupt:
        print(f"{_command_label(given)}: interrupted", file=sys.stderr)
        return 130


def _command_label(given: Sequence[str]) -> str:
    """``handreader COMMAND`` for the command the arguments name first, or ``handreader`` when
    they name none (the label of a message that may come before the arguments are parsed)."""
    named = next((token for token in given if not token.startswith("-")), None)
    return f"handreader {named}" if named in COMMANDS else "handreader"


def _run(given: list[str]) -> int:
    """Parse ``given`` and run its command; expected errors become one line and status 2 (a
    usage error worded by the parser of the command given: ``handreader audit verify``)."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(given)
    if unknown:
        args = _intermixed(parser, args, given, unknown)
    try:
        status: int = args.func(args)
    except UsageError as error:  # worded as argparse's refusals, by the command's own parser
        print(args.parser.refusal(str(error)), end="", file=sys.stderr)
        return 2
    except ValueError as error:
        print(f"handreader {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as error:
        print(f"handreader {args.command}: error: {os_error_text(error)}", file=sys.stderr)
        return 2
    return status


def _intermixed(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    given: list[str],
    unknown: list[str],
) -> argparse.Namespace:
    """The command's arguments parsed again with its files anywhere on the line (``read
    a.jpg --json b.jpg``), which a first parse leaves over; what is still unknown then is an
    error named by the command, with its usage."""
    command: argparse.ArgumentParser = getattr(parser, "commands", {}).get(args.command, parser)
    if command is not parser and args.command in given:
        before = [token for token in given[: given.index(args.command)] if token in unknown]
        if before:  # the command's own options, given before its name: none is dropped
            parser.error(
                f"unrecognized arguments: {' '.join(before)} before the command "
                f"{args.command!r} (a command's options follow its name)"
            )
        try:
            again = command.parse_intermixed_args(given[given.index(args.command) + 1 :])
        except TypeError:  # a command whose arguments cannot be intermixed (its own commands)
            pass
        else:
            again.command = args.command
            return again
    command.error(f"unrecognized arguments: {' '.join(unknown)}")


def os_error_text(error: OSError) -> str:
    """One line for an operating-system error: the path and the reason (``x.jsonl: No such
    file or directory``), or the error's own text when it names no path."""
    if error.filename is None or not error.strerror:
        return str(error)
    where = _name(error.filename)
    if error.filename2 is not None:
        where += f" -> {_name(error.filename2)}"
    return f"{where}: {error.strerror}"


def _name(filename: object) -> str:
    """An operating-system error's file name, one that is no UTF-8 shown as every message
    naming a file shows it (:func:`vision.file_names.name_text`)."""
    return name_text(filename) if isinstance(filename, str) else str(filename)
