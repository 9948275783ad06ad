"""The parts of a note get_doc serves one at a time, and finding one by the heading path that
search_docs shows (``unknown型 > unknown型は型安全なany型``).

A part is the note's opening (the text before its first ``##``, named by the note's title or its
H1), a ``##`` section with its ``###`` subsections, or a ``###`` subsection. Headings are compared
as plain text, as search_docs shows them: ``![js]`` reads ``js``, backticks are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from knowledge_assets.core.chunks.markdown import headings
from knowledge_assets.core.plain_text import plain_heading

PATH_MARK = " > "  # how search_docs joins a heading path


@dataclass(frozen=True)
class Part:
    """A part of a note's body: ``content[start:end]``."""

    tops: tuple[str, ...]  # the names above the headings: the note's title and its H1
    heads: tuple[str, ...]  # () for the opening; (h2,) or (h2, h3) below the top
    start: int
    end: int

    @property
    def name(self) -> str:
        """What the part is called in a listing and in get_doc's ``section:`` line."""
        return PATH_MARK.join(self.heads) if self.heads else self.tops[0]

    def paths(self) -> set[str]:
        """The part's full heading paths, one per name of the top, as search_docs joins them."""
        return {PATH_MARK.join((top, *self.heads)) for top in self.tops}


def note_parts(content: str, title: str | None) -> list[Part]:
    """The opening (when it holds text besides an H1) and every ``##``/``###`` section of a
    body, with the headings the chunker sees (none in fenced code or comments)."""
    starts = [0, *accumulate(len(line) + 1 for line in content.split("\n"))]
    found = [(starts[i], lv, plain_heading(t)) for i, lv, t in headings(content) if t and lv <= 3]
    first_h1 = next((t for _, level, t in found if level == 1), "")
    tops = tuple(dict.fromkeys(t for t in (plain_heading(title), first_h1) if t)) or ("",)
    parts: list[Part] = []
    sections = [(at, level, t) for at, level, t in found if level in (2, 3)]
    opening_end = sections[0][0] if sections else len(content)
    if _holds_text(content[:opening_end]):
        parts.append(Part(tops, (), 0, opening_end))
    top, h2 = tops, ""
    for (at, level, text), end in zip(found, _ends(found, len(content)), strict=True):
        if level == 1:
            top, h2 = (text,) if text != first_h1 else tops, ""
            continue
        if level == 2:
            h2 = text
        heads = (text,) if level == 2 or not h2 else (h2, text)
        parts.append(Part(top, heads, at, end))
    return parts


def _ends(found: Sequence[tuple[int, int, str]], length: int) -> list[int]:
    """Where each heading's part ends: at the next heading of its level or above, else at
    ``length``. One pass from the end, so a note of thousands of headings stays linear."""
    nearest = {level: length for level in (1, 2, 3)}  # the next heading at or above each level
    ends = []
    for at, level, _ in reversed(found):
        ends.append(nearest[level])
        for above in range(level, 4):
            nearest[above] = at
    return ends[::-1]


def _holds_text(text: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("# ") for line in text.split("\n"))


def _key(text: str) -> str:
    return plain_heading(text.strip().lstrip("#")).casefold()


def find_part(parts: Sequence[Part], wanted: str) -> Part | None:
    """The part ``wanted`` names: exactly as search_docs shows its heading path first, then the
    path below the note's title, then its last heading alone, then a heading containing the
    words; the first such part in the note at the first of these that matches."""
    key = _key(wanted)
    last = key.rsplit(PATH_MARK, 1)[-1].strip()
    tiers = (
        lambda p: key in {path.casefold() for path in p.paths()},
        lambda p: bool(p.heads) and key == PATH_MARK.join(p.heads).casefold(),
        lambda p: bool(p.heads) and key == p.heads[-1].casefold(),
        lambda p: last == (p.heads[-1] if p.heads else p.tops[0]).casefold(),
        lambda p: bool(p.heads) and last in p.heads[-1].casefold(),
    )
    for matches in tiers if last else tiers[:3]:  # no words to look for: exact paths only
        found = next((p for p in parts if matches(p)), None)
        if found is not None:
            return found
    return None
