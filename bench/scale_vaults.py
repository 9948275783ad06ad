"""The replica vaults of bench/scale.py and of the benches that build on its vaults: N notes
cycled from a source folder, every section tagged ``copy N.`` as the LangChain peer's
``--replicate`` does, and the one-section edit both sides make."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from common import JSQUAD

# A section heading below the title: each gets a ``copy N.`` line (jsquad's notes have ``##`` ones
# only, the only ones the peer's copy tags).
SECTION = re.compile(r"^#{2,6} .*$", re.M)
# A ``##`` heading and the blank lines after it: where the edit goes (the peer's pattern).
EDITABLE = re.compile(r"^## .*\n+", re.M)
# A note's front matter and its title line, if any: text after them and before the first section
# heading is the note's introduction.
_LEAD = re.compile(r"\A(?:---\n.*?\n---[ \t]*\n)?(?:\s*# [^\n]*\n)?", re.S)


def build_vault(dst: Path, size: int, source: Path | None = None) -> list[Path]:
    """The peer's ``build_vault(src, dst, replicate)``: ``size`` notes cycled from ``source``
    (default: the jsquad vault), same names and same ``copy N.`` line under every ``##``
    heading, so every section's text differs between copies.

    Any folder of notes can be the source. Three things differ from the peer's copy only where
    the jsquad notes have nothing to differ on: deeper headings (``###`` ...) get a ``copy N.``
    line too, so does a note's text before its first section (an introduction, or a note without
    sections), and the first note with a ``##`` section comes first, as both sides edit the
    first note's middle ``##`` section."""
    notes = source_notes(source or JSQUAD / "vault")
    dst.mkdir(parents=True)
    out = []
    for i in range(size):
        name, text = notes[i % len(notes)]
        out.append(dst / f"c{i:05d}_{name}")
        tagged = SECTION.sub(rf"\g<0>\n\ncopy {i}.", text)
        out[-1].write_text(_tag_introduction(tagged, i), encoding="utf-8")
    return out


@functools.cache  # a bench builds a vault per size, and the peer's copy again
def source_notes(source: Path) -> tuple[tuple[str, str], ...]:
    """The source's notes (file name, text) by path, read once per source, the first one with a
    ``##`` section to edit moved to the front. Bytes that are not UTF-8 become U+FFFD in both
    sides' copies."""
    notes = [(f.name, f.read_text("utf-8", errors="replace")) for f in sorted(source.rglob("*.md"))]
    first = next((n for n in notes if EDITABLE.search(n[1])), None)
    if first is None:
        raise SystemExit(f"{source}: no note has a ## section to edit")
    notes.remove(first)
    return (first, *notes)  # a tuple: every caller shares the cached notes


def _tag_introduction(text: str, i: int) -> str:
    """``copy i.`` as the first line of a note's introduction, when it has one."""
    lead = _LEAD.match(text)
    end = lead.end() if lead else 0
    first_section = SECTION.search(text, end)
    intro = text[end : first_section.start() if first_section else len(text)]
    return text if not intro.strip() else f"{text[:end]}\ncopy {i}.\n{text[end:]}"


def edit_one_section(path: Path) -> None:
    """The peer's edit: ``EDIT `` at the start of the middle ``##`` section body."""
    text = path.read_text(encoding="utf-8")
    starts = [m.end() for m in EDITABLE.finditer(text)]
    pos = starts[len(starts) // 2]
    path.write_text(text[:pos] + "EDIT " + text[pos:], encoding="utf-8")
