"""Argument types of the command line: numbers checked where they are typed.

A limit of ``-3`` or ``10**20`` otherwise reaches the database and comes back as
``bigint out of range`` with advice that does not fit; argparse reports these in one usage line
(exit code 2) naming the option.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

MAX_PORT = 65535


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
