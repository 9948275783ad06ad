"""Plain YAML scalars read by the YAML 1.2 core schema, as Obsidian reads a note's properties.

PyYAML resolves plain scalars by YAML 1.1, where ``title: no`` is the boolean false,
``time: 12:30`` the number 750 (base 60), ``id: 0123`` the octal 83 and ``n: 1_000`` 1000.
Obsidian reads frontmatter as YAML 1.2, where all of these but ``0123`` (123) are text: the
title Obsidian shows as "no" was stored as ``false``, and searched and shown as that. The
loader here agrees with Obsidian:

- **bool** only ``true``/``True``/``TRUE`` and ``false``/``False``/``FALSE`` (``yes``, ``no``,
  ``on``, ``off``, ``y`` and ``n`` are text);
- **null** ``~``, ``null``, ``Null``, ``NULL`` or nothing;
- **int** decimal (a leading zero is no octal: ``0123`` is 123), ``0o17`` octal, ``0x1F`` hex;
  no ``1_000``, no ``0b101``, no base 60 (``12:30`` is text);
- **float** ``1.5``, ``.5``, ``1e3``, ``-2.5E-3``, ``.inf``, ``-.inf``, ``.nan``.

Dates (``created: 2024-01-05``) are read as before, by PyYAML's timestamp rule: YAML 1.2 has
none, but every stored note's dates were read by it, and they are kept as written
(``2024-01-05``). Only the loader class given to :func:`use_core_schema` changes: PyYAML's
own loaders, which other libraries share, keep YAML 1.1.
"""

from __future__ import annotations

import math
import re

import yaml

_TAG = "tag:yaml.org,2002:"
_DIGITS = list("0123456789")
# The YAML 1.2 core schema's resolution rules (YAML 1.2.2, section 10.3.2), tried in this order:
# an int is tried before a float, which would match it too.
_CORE_RULES: tuple[tuple[str, str, list[str]], ...] = (
    ("null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
    ("bool", r"true|True|TRUE|false|False|FALSE", list("tTfF")),
    ("int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", ["-", "+", *_DIGITS]),
    (
        "float",
        r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        ["-", "+", ".", *_DIGITS],
    ),
)
# Kept from YAML 1.1: dates and times as every stored note was read, and ``<<: *base``.
_KEPT_FROM_1_1 = ("timestamp", "merge")


def use_core_schema(loader: type[yaml.SafeLoader]) -> None:
    """Make ``loader`` (a ``SafeLoader`` subclass of this module's callers) resolve plain
    scalars by the YAML 1.2 core schema and build bools, ints and floats by its rules."""
    kept = [
        (tag, regexp)
        for resolvers in yaml.SafeLoader.yaml_implicit_resolvers.values()
        for tag, regexp in resolvers
        if tag in {_TAG + name for name in _KEPT_FROM_1_1}
    ]
    # The class's own table, started empty: add_implicit_resolver would append to a copy of
    # YAML 1.1's rules, which match first.
    loader.yaml_implicit_resolvers = {}
    for name, pattern, first in _CORE_RULES:
        loader.add_implicit_resolver(_TAG + name, re.compile(rf"^(?:{pattern})\Z"), first)
    for tag, regexp in dict.fromkeys(kept):
        loader.add_implicit_resolver(tag, regexp, _first_characters(tag))
    loader.add_constructor(_TAG + "bool", construct_bool)
    loader.add_constructor(_TAG + "int", construct_int)
    loader.add_constructor(_TAG + "float", construct_float)


def _first_characters(tag: str) -> list[str]:
    """The characters a value of a kept YAML 1.1 rule may start with."""
    return ["<"] if tag == _TAG + "merge" else _DIGITS


def construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool | str:
    """``true``/``false`` in any of YAML 1.2's spellings; ``!!bool yes`` stays the text."""
    value = str(loader.construct_scalar(node))
    return {"true": True, "false": False}.get(value.lower(), value)


def construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | str:
    """A YAML 1.2 integer: decimal (``0123`` is 123), ``0o`` octal or ``0x`` hex.

    What ``!!int`` cannot make one of (``!!int 0b101``, ``!!int 12:30``), and more digits than
    Python converts, stays the text it was written as: one odd value never costs the note."""
    value = str(loader.construct_scalar(node))
    sign, digits = (-1, value[1:]) if value[:1] == "-" else (1, value.removeprefix("+"))
    base = {"0o": 8, "0x": 16}.get(digits[:2].lower(), 10)
    digits = digits[2:] if base != 10 else digits
    # int() would also take "1_000" and " 1 ", which YAML 1.2 does not.
    if not (digits.isascii() and digits.isalnum()):
        return value
    try:
        return sign * int(digits, base)
    except ValueError:
        return value


def construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float | str:
    """A YAML 1.2 float, ``.inf`` and ``.nan`` included (stored as null: JSON has neither).
    Text that is none (``!!float 1_0.5``, which float() reads as 10.5) stays as written."""
    value = str(loader.construct_scalar(node))
    special = value.lstrip("+-").lower()
    if special in (".inf", ".nan"):
        number = math.inf if special == ".inf" else math.nan
        return -number if value.startswith("-") else number
    if "_" in value:
        return value
    try:
        return float(value)
    except ValueError:
        return value
