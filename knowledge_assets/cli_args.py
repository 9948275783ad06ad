"""Argument types of the command line: numbers checked where they are typed.

A limit of ``-3`` or ``10**20`` otherwise reaches the database and comes back as
``bigint out of range`` with advice that does not fit. :class:`Parser` reports a bad value in one
line naming the option, and where the help is (exit code 2), instead of argparse's usage block.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import sys
from collections.abc import Callable
from datetime import date
from typing import Any, NoReturn

MAX_PORT = 65535
EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and a pointer to the help; sub-command
    parsers are of the same class (argparse makes them of their parent's)."""

    _given: tuple[str, ...] = ()  # the words of the last parse

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        # Kept for error(): argparse does not say which words it took for options.
        self._given = tuple(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        # "argument --limit: 0 is not ..." names the option; "argument" adds nothing.
        message = _did_you_mean(message.removeprefix("argument ")) + self._dash_hint()
        print(f"error: {message}\n  see `{self._owner()[0].prog} --help`", file=sys.stderr)
        sys.exit(EXIT_USAGE)

    def _dash_hint(self) -> str:
        """A query's word that starts with ``-`` (an exclusion, ``-雪``) is read as an unknown
        option; argparse then says a query is missing, or (the main parser, for a sub-command)
        that the word is not recognised."""
        owner, words = self._owner()
        unknown = [
            w for w in words
            if _DASHED_WORD.fullmatch(w) and w.split("=", 1)[0] not in owner._option_string_actions
        ]  # fmt: skip
        if not unknown:
            return ""
        return (
            f"; {unknown[0]!r} was read as an option: put the words in quotes with a space"
            f' ("{unknown[0]} …") or `--` before them (`{owner.prog} -- {unknown[0]}`)'
        )

    def _owner(self) -> tuple[argparse.ArgumentParser, list[str]]:
        """The parser whose words these are (the innermost sub-command's named: ``models
        activate``), and its words."""
        return _owner(self, list(self._given))


def _owner(
    parser: argparse.ArgumentParser, words: list[str]
) -> tuple[argparse.ArgumentParser, list[str]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for i, word in enumerate(words):
                if word in action.choices:
                    return _owner(action.choices[word], words[i + 1 :])
    return parser, words


# A single dash and a word that is no number: what an exclusion (-雪) looks like on a command line.
_DASHED_WORD = re.compile(r"-(?!-)(?![\d.]+$)\S+")


_INVALID_CHOICE = re.compile(r"^(\S+): invalid choice: '(.*)' \(choose from (.*)\)$", re.DOTALL)


def _did_you_mean(message: str) -> str:
    """argparse's ``command: invalid choice: 'serch' (choose from 'demo', ...)`` with the closest
    choice named first."""
    found = _INVALID_CHOICE.match(message)
    if found is None:
        return message
    name, given, listed = found.groups()
    choices = [c.strip().strip("'") for c in listed.split(",")]
    close = difflib.get_close_matches(given, choices, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"{name}: unknown choice {given!r}; {hint}choose from {', '.join(choices)}"


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not from {low} to {high}")
        return value

    parse.__name__ = "whole number"  # what argparse calls the type in its messages
    return parse


def similarity(text: str) -> float:
    """An argparse type: a cosine similarity, a finite number from -1 to 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and -1 <= value <= 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a similarity from -1 to 1")
    return value


port = int_in(1, MAX_PORT)


def iso_date(text: str) -> date:
    """An argparse type: a calendar date written YYYY-MM-DD."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date; use YYYY-MM-DD") from None
