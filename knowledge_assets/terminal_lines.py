"""Summary lines that fit an 80-column terminal, as ``demo`` and ``update`` print them.

A summary too long for one line goes on in a second one, indented under its first word, rather
than being wrapped by the terminal into the label column. It breaks between its clauses
(``; ``), then after a heading (``: ``), then between its items (``, ``), and between words
only when an item is itself too long: ``left out: 1 superseded, 1 draft`` stays together.
"""

from __future__ import annotations

from rich.cells import cell_len

__all__ = ["WIDTH", "labelled", "wrapped"]

# What a terminal opened at its default size holds, and what rich's progress bars take when
# the output is no terminal: the bars and the lines around them line up.
WIDTH = 80

# Where a summary may break, strongest first.
_BREAKS = ("; ", ": ", ", ", " ")


def labelled(label: str, text: str, label_width: int, *, width: int = WIDTH) -> str:
    """``  label  text`` in lines of at most ``width`` columns, the text's further lines
    indented under its first (a label wider than ``label_width`` pushes the text right)."""
    head = f"  {label:<{label_width}} "
    return "\n".join(wrapped(text, head, " " * cell_len(head), width=width))


def wrapped(text: str, first: str, indent: str, *, width: int = WIDTH) -> list[str]:
    """``text`` after ``first`` in lines of at most ``width`` columns (Japanese characters take
    two), each further line starting with ``indent``. A single word longer than a line stays
    whole: nothing of the text is lost or cut."""
    lines: list[str] = []
    line, empty = first, True
    # Pieces fit the narrower of the first and the further lines, so that each goes on one.
    room = width - max(cell_len(first), cell_len(indent))
    for piece in _pieces(text, room, _BREAKS):
        if not empty and cell_len(line + piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = indent
        line, empty = line + piece, False
    return [*lines, line.rstrip()]


def _pieces(text: str, room: int, breaks: tuple[str, ...]) -> list[str]:
    """``text`` cut after each of its strongest separators; a piece wider than ``room`` is cut
    again at the next weaker one. Each piece keeps its separator, so joined they are ``text``."""
    if not breaks or cell_len(text) <= room:
        return [text]
    separator, weaker = breaks[0], breaks[1:]
    parts = text.split(separator)
    cut = [part + separator for part in parts[:-1]] + [parts[-1]]
    return [
        piece
        for part in cut
        for piece in (_pieces(part, room, weaker) if cell_len(part.rstrip()) > room else [part])
    ]
