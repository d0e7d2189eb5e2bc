"""Every command's ``--help`` words the same things alike: an amount and a count are ``N``, the
profiles are listed in one order, and a description says what the command does, in a sentence
that starts with a capital letter rather than with the command's name."""

from __future__ import annotations

import argparse

import pytest

from handreader.cli import COMMANDS, build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    commands: dict[str, argparse.ArgumentParser] = build_parser().commands  # type: ignore[attr-defined]
    return commands


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((action for action in parser._actions if flag in action.option_strings), None)


@pytest.mark.parametrize("flag", ["--stake", "--decks", "--limit", "--readers"])
def test_an_amount_or_a_count_is_n(flag: str) -> None:
    for name, parser in _commands().items():
        action = _option(parser, flag)
        if action is not None:
            assert action.metavar == "N", (name, flag)


def test_the_profiles_are_listed_in_one_order() -> None:
    orders = {
        name: list(action.choices)
        for name, parser in _commands().items()
        if (action := _option(parser, "--profile")) is not None and action.choices is not None
    }
    assert len(orders) >= 3
    assert all(order == sorted(order) for order in orders.values()), orders


@pytest.mark.parametrize("name", COMMANDS)
def test_a_description_says_what_the_command_does(name: str) -> None:
    description = _commands()[name].description or ""
    assert description[:1].isupper(), description
    assert not description.startswith("handreader"), description


def test_help_names_no_internal_type_and_webcam_reads_a_camera() -> None:
    commands = _commands()
    for name, parser in commands.items():
        helps = " ".join(action.help or "" for action in parser._actions)
        assert "ReaderSettings" not in helps and "RoundPlan" not in helps, name
    game = _option(commands["webcam"], "--game")
    assert game is not None and "the photos show" not in (game.help or "")
    models = _option(commands["serve"], "--models")
    assert models is not None and "$HANDREADER_MODELS" in (models.help or "")
