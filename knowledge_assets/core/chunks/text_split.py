"""Cutting text into pieces of about a given size, for the ``scene`` and ``recursive`` chunking
strategies (seed 002 §3): by ``#``..``###`` headings, then paragraphs, then sentences (``。``),
then characters, with an overlap that starts at a sentence when one is near.

Plain string work with no notion of a note or a chunk; :mod:`knowledge_assets.core.chunks.strategies`
turns the pieces into chunks.
"""

from __future__ import annotations

from knowledge_assets.core.chunks.chunk_text import is_blank
from knowledge_assets.core.chunks.markdown import normalise_newlines, scan_lines

_SENTENCE_ENDS = "。．.!?！？\n"


def heading_sections(
    content: str, title: str, *, h1_roots: bool = False
) -> list[tuple[tuple[str, ...], str]]:
    """(heading path, text) per ``#``..``###`` section outside code fences; deeper headings
    stay in the text. Sections without text are left out. Paths start at ``title``; with
    ``h1_roots`` (the title is the first H1), a section under an H1 starts at that H1."""
    out: list[tuple[tuple[str, ...], str]] = []
    stack: list[tuple[int, str]] = []
    buffer: list[str] = []

    def flush() -> None:
        text = "\n".join(buffer).strip()
        if not is_blank(text):
            if h1_roots and stack and stack[0][0] == 1:
                out.append((tuple(name for _, name in stack), text))
            else:
                names = [name for _, name in stack if name != title]
                out.append(((title, *names), text))
        buffer.clear()

    for line in scan_lines(normalise_newlines(content)):
        if 1 <= line.level <= 3:
            flush()
            stack = [(lvl, name) for lvl, name in stack if lvl < line.level]
            stack.append((line.level, line.title))
        else:
            buffer.append(line.text)
    flush()
    return out


def split_recursive(text: str, size: int, overlap: int) -> list[str]:
    """Pieces of at most about ``size`` characters: cut at paragraphs, then sentences, then
    characters; each piece after the first starts with up to ``overlap`` characters of the end
    of the piece before it (from a sentence start when one is near)."""
    text = text.strip()
    if len(text) <= size:
        return [text] if text else []
    atoms = _atoms(text, ("\n\n", "sentence", ""), max(1, size - overlap))
    chunks: list[str] = []
    current = ""
    for atom in atoms:
        if current and len(current) + len(atom) > size:
            chunks.append(current.strip())
            current = tail(current, overlap)
        current += atom
    if current.strip():
        chunks.append(current.strip())
    return chunks


def _atoms(text: str, seps: tuple[str, ...], size: int) -> list[str]:
    """``text`` cut at the first separator kind that applies, recursively, into pieces ≤ size
    that concatenate back to ``text``."""
    if len(text) <= size:
        return [text]
    sep, rest = seps[0], seps[1:]
    if sep == "":
        return [text[i : i + size] for i in range(0, len(text), size)]
    pieces = _split_keep(text, sep)
    if len(pieces) == 1:
        return _atoms(text, rest, size)
    out: list[str] = []
    for piece in pieces:
        out.extend(_atoms(piece, rest, size) if len(piece) > size else [piece])
    return out


def _split_keep(text: str, sep: str) -> list[str]:
    """Split after each separator (or sentence end), keeping it on the left piece."""
    pieces: list[str] = []
    start = 0
    if sep == "sentence":
        for i, ch in enumerate(text):
            if ch in _SENTENCE_ENDS:
                pieces.append(text[start : i + 1])
                start = i + 1
    else:
        index = text.find(sep)
        while index >= 0:
            pieces.append(text[start : index + len(sep)])
            start = index + len(sep)
            index = text.find(sep, start)
    if start < len(text):
        pieces.append(text[start:])
    return [p for p in pieces if p]


def tail(text: str, chars: int) -> str:
    """The last ``chars`` characters of ``text``, starting after a sentence end when one lies
    in their first half (so the overlap reads as whole sentences)."""
    if chars <= 0 or not text:
        return ""
    end = text[-chars:]
    for i, ch in enumerate(end[: len(end) // 2]):
        if ch in _SENTENCE_ENDS:
            return end[i + 1 :].lstrip()
    return end
