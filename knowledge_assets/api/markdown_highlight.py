"""Obsidian's highlights in the note view: ``==text==`` is ``<mark>text</mark>``.

The text may hold other inline Markdown (``==**太字**==``). A highlight may not start or end
with a space, so ``a == b == c`` stays as written, and ``===`` is no highlight mark. Each ``==``
is looked up in a list of where they lie, found once per text: looking ahead from every ``==``
for its close would make a text of thousands of lone ``==`` take quadratic time.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import MutableMapping
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

__all__ = ["highlights"]

_MARK = "=="


def _marks(env: MutableMapping[str, Any], src: str) -> list[int]:
    """Where each ``==`` lies in ``src`` (a run of ``====`` counts as two), once per text."""
    cached = env.get("highlight_marks")
    if not (isinstance(cached, tuple) and cached[0] is src):
        at, pos = [], src.find(_MARK)
        while pos >= 0:
            at.append(pos)
            pos = src.find(_MARK, pos + len(_MARK))
        cached = env["highlight_marks"] = (src, at)
    return cached[1]  # type: ignore[no-any-return]


def _highlight(state: StateInline, silent: bool) -> bool:
    src, start = state.src, state.pos
    inner = start + len(_MARK)
    if not src.startswith(_MARK, start) or src[inner : inner + 1] in ("", "=", " ", "\t", "\n"):
        return False
    if start > 0 and src[start - 1] == "=":
        return False
    marks = _marks(state.env, src)
    i = bisect_left(marks, inner)
    close = marks[i] if i < len(marks) else -1
    if close < 0 or close >= state.posMax or src[close - 1] in " \t\n":
        return False
    if src[close + len(_MARK) : close + len(_MARK) + 1] == "=":
        return False
    if not silent:
        state.push("mark_open", "mark", 1).markup = _MARK
        outer_max = state.posMax
        state.pos, state.posMax = inner, close
        state.md.inline.tokenize(state)
        state.posMax = outer_max
        state.push("mark_close", "mark", -1).markup = _MARK
    state.pos = close + len(_MARK)
    return True


def highlights(md: MarkdownIt) -> None:
    """Show ``==text==`` as highlighted text in what ``md`` renders."""
    md.inline.ruler.before("emphasis", "highlight", _highlight)
