"""The fix for a YAML error in frontmatter, said as a person would make it.

PyYAML says what its parser met (``found character '@' that cannot start any token``), which
tells a note's author nothing about what to change. Most frontmatter errors in real vaults are
a handful of slips, each with one fix:

- a value starting with a character YAML reads as syntax (``@``, `````, ``%``, ``*``, ``!``,
  ``|``, ``[`` or ``{`` left open) or holding ``: `` (``title: 会議: 議事録``): quote it, and the
  fix names the line written out quoted (``title: "会議: 議事録"``);
- a quote opened and never closed: close it, on the line where it opens;
- a tab before a key: YAML indents with spaces only;
- a line indented unlike the lines of its level.

Anything else gets no fix: YAML's own words and the line are still in the message.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["unused_anchor", "yaml_fix"]

# ``key: value`` (in a list item too, ``- key: value``), or a bare list item ``- value``.
_KEYED = re.compile(r"^(?P<lead>\s*(?:-\s+)?[^\s#:'\"\-\[\]{}][^:#]*?:\s+)(?P<value>\S.*?)\s*$")
_ITEM = re.compile(r"^(?P<lead>\s*-\s+)(?P<value>\S.*?)\s*$")
# What PyYAML says when a plain value starts with, or holds, what it reads as syntax.
_QUOTE_IT = (
    "that cannot start any token",  # @ ` %
    "expected alphabetic or numeric character",  # * or & not naming an alias/anchor
    "could not determine a constructor for the tag",  # !word
    "expected a comment or a line break",  # | or > followed by text
    "mapping values are not allowed here",  # ": " inside a value
)
_LONGEST_SHOWN = 80  # a quoted line longer than this is not spelled out


def yaml_fix(exc: Any, fm_text: str) -> str:
    """What to change for ``exc`` (a ``yaml.YAMLError`` from parsing ``fm_text``, the
    frontmatter from the newline after the opening ``---``), or "" when there is no sure fix."""
    lines = fm_text.split("\n")
    mark, start = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
    problem, context = getattr(exc, "problem", None) or "", getattr(exc, "context", None) or ""

    def line_of(m: Any) -> str:
        return lines[m.line] if m is not None and 0 <= m.line < len(lines) else ""

    if "quoted scalar" in context and start is not None:
        return f"close the quote opened on line {start.line + 1}"
    if context.startswith("while parsing a flow") and start is not None:
        bracket = "[" if "sequence" in context else "{"
        return _quote_or(line_of(start), f"close the `{bracket}` of line {start.line + 1}")
    if "'\\t'" in problem:
        return "indent with spaces, not tabs"
    if any(p in problem for p in _QUOTE_IT) and mark is not None:
        fix = _quote_or(line_of(mark), "", at=mark.column)
        if fix:
            return fix
    if "expected ':'" in problem and start is not None:
        return f"write line {start.line + 1} as `key: value` or `- item`"
    if mark is not None and (problem.startswith("expected <block end>") or "mapping values" in problem):  # fmt: skip
        return f"indent line {mark.line + 1} as the other lines of its level"
    return ""


def unused_anchor(line: str, start_mark: Any, end_mark: Any, anchor: str, value: str) -> str:
    """The warning for ``&anchor`` written from ``start_mark`` to ``end_mark`` (YAML marks) on
    frontmatter line ``line``, an anchor no alias uses on a plain value: YAML drops it, so
    ``title: &anchor`` is empty and ``title: &amp Co`` is "Co", where the author meant text
    starting with ``&``. The fix quotes just that text (in ``[&a, b]`` too, before a comment)."""
    kept = f"`{value[:100]}`" if value else "empty"
    start, number = start_mark.column, start_mark.line + 1
    end = end_mark.column if end_mark.line == start_mark.line else start  # a value on later lines
    written = line[start:end]
    fix = "quote the value if `&` is part of it"
    if written.startswith("&") and '"' not in written and "\\" not in written:
        fixed = (line[:start] + f'"{written}"' + line[end:]).strip()
        if len(fixed) <= _LONGEST_SHOWN:
            fix = f"quote it: write `{fixed}`"
    return f"line {number}: `&{anchor[:100]}` is read as a YAML anchor, not text, so the value is {kept}: {fix}"  # fmt: skip


def _quote_or(line: str, otherwise: str, at: int | None = None) -> str:
    """ "quote the value: write `key: "value"`" for ``line``, or ``otherwise`` when ``line`` has
    no value to quote (or, with ``at``, when column ``at`` is not inside its value)."""
    found = _KEYED.match(line) or _ITEM.match(line)
    if found is None or (at is not None and at < found.start("value")):
        return otherwise
    value = found["value"]
    if value[0] in "\"'":  # already quoted: the problem is elsewhere
        return otherwise
    if '"' not in value and "\\" not in value:
        quoted = f'"{value}"'
    else:  # single quotes take backslashes as they are, and double their own
        quoted = "'" + value.replace("'", "''") + "'"
    written = found["lead"].strip() + " " + quoted
    alternative = f"{otherwise}, or " if otherwise else ""
    if len(written) > _LONGEST_SHOWN:
        return f"{alternative}put the value of `{found['lead'].strip()}` in quotes"
    return f"{alternative}quote the value: write `{written}`"
