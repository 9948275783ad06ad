"""Name the invisible character that broke a frontmatter block, with its line and the fix.

Two kinds of character make PyYAML fail in ways that point nowhere:

- a control character (ESC from a terminal, a vertical tab Word puts in pasted text, U+FFFE):
  YAML allows none in a document, and PyYAML's message gives a byte position, not a line;
- a Unicode line separator (NEL U+0085, LS U+2028, PS U+2029, pasted from web pages): YAML 1.1
  reads it as a line break, so a value holding one is cut in two and the error blames the
  next line, which the author's editor does not even show as a line of its own.

Lines are counted by ``\\n`` only, as the author's editor counts them.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["character_problem"]

_SEPARATORS = re.compile("[\x85\u2028\u2029]")
_NAMES = {
    "\x85": "next-line character (U+0085)",
    "\u2028": "Unicode line separator (U+2028)",
    "\u2029": "Unicode paragraph separator (U+2029)",
}


def character_problem(exc: Any, fm_text: str) -> str | None:
    """The message for ``exc`` (a ``yaml.YAMLError`` from parsing ``fm_text``, the frontmatter
    from the newline after the opening ``---``) when a character caused it, else None."""
    if isinstance(exc, yaml.reader.ReaderError) and isinstance(exc.character, int):
        code = exc.character
        return (
            f"control character U+{code:04X}{_at(fm_text, exc.position)} is not allowed in YAML:"
            " delete it"
        )
    mark = getattr(exc, "problem_mark", None)
    end = mark.index + 1 if mark is not None else len(fm_text)  # none past where YAML stopped
    if found := _SEPARATORS.search(fm_text, 0, end):
        name = _NAMES[found[0]]
        return (
            f"{name}{_at(fm_text, found.start())}, which YAML reads as a line break: delete it,"
            " or put the value in double quotes"
        )
    return None


def _at(text: str, position: int) -> str:
    """`` (line 2, column 9)`` of ``position`` in ``text``, lines counted by ``\\n``."""
    if not 0 <= position <= len(text):
        return ""
    line_start = text.rfind("\n", 0, position) + 1
    return f" (line {text.count(chr(10), 0, position) + 1}, column {position - line_start + 1})"
