"""Name the full-width colon or space a Japanese input method typed into frontmatter.

YAML reads only the half-width ``:`` and space as structure. ``title：日記`` and ``title:　日記``
(U+FF1A, U+3000) are then text, and YAML's message blames another line (``mapping values are not
allowed here`` on the next key) or none (``not a mapping``). Only frontmatter that failed to
parse is looked at, and only up to the line YAML stopped at, so a full-width character inside a
value that parsed is never blamed.

A full-width space beside a key (``title　: 日記``) is no YAML error: the key is ``title　``, so
the note has no title. That frontmatter parses, so the note is kept, with a warning naming the
line and the fix (:func:`spaced_key`), as a key written twice is.
"""

from __future__ import annotations

import re

__all__ = ["full_width_problem", "spaced_key"]

_BLANK = " \u3000"
# Characters that start YAML syntax, not a key: a list item, quote, flow collection, comment...
_NOT_A_KEY = set("#'\"-[]{}?:：,&*!|>%@`")
# ``　- a`` or ``　key: v`` at the line start: structure, so not the text of a block scalar
# (whose lines begin with half-width spaces).
_INDENT = re.compile(r"^\u3000[ \u3000]*(?:- |[^\s:]+:(?: |$))")


def full_width_problem(fm_text: str, last_line: int | None = None) -> str | None:
    """What is wrong with the first line of ``fm_text`` (from the newline after the opening
    ``---``, so index 1 is the file's line 2) that holds a full-width colon or space where YAML
    needs a half-width one, with the fix; None when no line does. ``last_line``: the 0-based
    line YAML stopped at, past which nothing is blamed."""
    lines = fm_text.split("\n")
    end = len(lines) if last_line is None else min(len(lines), last_line + 1)
    for number, line in enumerate(lines[:end], start=1):
        if problem := _line_problem(line, number):
            return problem
    return None


def _line_problem(line: str, number: int) -> str | None:
    if _INDENT.match(line):
        return f"line {number} is indented with a full-width space: indent with half-width spaces"
    # String searches, not a regular expression: a 60,000-character line of spaces made one
    # backtrack for seconds.
    if (split := _key_and_value(line, ":\u3000")) is not None:
        key, value = split
        fix = f"write `{key}: {value}`" if value else f"write `{key}:` without it"
        return f"line {number} has a full-width space after `{key}:`: {fix}"
    if (split := _key_and_value(line, "：")) is not None:
        key, value = split
        return (
            f"line {number} separates `{key}` from its value with a full-width colon (：):"
            f" write `{key}: {value}`"
        )
    return None


def _key_and_value(line: str, separator: str) -> tuple[str, str] | None:
    """``line`` split at its first ``separator`` when what comes before is a plain key (no
    colon of either width: ``a: b：c`` is a value) at any indentation."""
    at = line.find(separator)
    if at < 0:
        return None
    key = line[:at].strip(_BLANK)
    if not key or key[0] in _NOT_A_KEY or ":" in key or "：" in key:
        return None
    return key, line[at + len(separator) :].strip(_BLANK)


def spaced_key(key: str, rest: str, number: int) -> str | None:
    """The warning for a plain key YAML read with a full-width space around it (``title　``),
    on line ``number``, followed on its line by ``rest`` (``: 日記``); None for any other key."""
    bare = key.strip(_BLANK)
    trailing = key[len(key.rstrip(_BLANK)) :]
    if not bare or "\u3000" not in key.replace(bare, "", 1):
        return None
    where = f"between `{bare}` and its colon" if "\u3000" in trailing else f"before `{bare}`"
    fix = f"{bare}{rest.strip(_BLANK + chr(9))}"[:100]
    return (
        f"line {number} has a full-width space {where}: write `{fix}`;"
        f" until then it is read as another key than `{bare}`"
    )
