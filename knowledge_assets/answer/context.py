"""Step 2 of seed 001's pipeline: the context, within a token budget, with title, date and tags.

Two strategies: ``sections`` puts each retrieved note's matching sections (best first) into the
context; ``notes`` puts whole notes (seed 001's choice), falling back to the note's sections when
the whole note no longer fits. On jsquad (``bench/ask.py``, docs/ask.md) both put the answer's
passage in the context about equally often (0.98 against 0.99) and sections need a third fewer
tokens, leaving room for earlier turns, so ``sections`` is the default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge_assets.answer.prompt import estimate_tokens
from knowledge_assets.answer.retrieve import RetrievedNote

DEFAULT_BUDGET = 4000
STRATEGIES = ("sections", "notes")
DEFAULT_STRATEGY = "sections"
SEPARATOR = "\n---\n\n"


@dataclass
class Context:
    """The context text handed to the LLM and what went into it."""

    text: str = ""
    tokens: int = 0
    note_ids: list[str] = field(default_factory=list)
    strategy: str = DEFAULT_STRATEGY


def note_header(note: RetrievedNote) -> str:
    """Seed 001's metadata injection: title, noteId, dates and tags of one note. The noteId is
    the note's cite id: its path, qualified by its source when another note has that path."""
    cite_id = note.cite_id or note.note_id
    lines = [f"## [{note.rank}] {note.title or note.note_id}", f"noteId: {cite_id}"]
    dates = [f"作成日: {note.created}" if note.created else "", f"更新日: {note.updated}" if note.updated else ""]  # fmt: skip
    if any(dates):
        lines.append(" / ".join(d for d in dates if d))
    if note.tags:
        lines.append("タグ: " + ", ".join(note.tags))
    return "\n".join(lines) + "\n"


def _section(heading: str, content: str) -> str:
    return (f"### {heading}\n" if heading else "") + content.strip() + "\n"


def build_context(
    notes: list[RetrievedNote], *, budget: int = DEFAULT_BUDGET, strategy: str = DEFAULT_STRATEGY
) -> Context:
    """The notes in rank order, each with its header, as much as fits in ``budget`` tokens."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown context strategy {strategy!r}: choose {' or '.join(STRATEGIES)}")
    ctx = Context(strategy=strategy)
    parts: list[str] = []
    for note in notes:
        header = note_header(note)
        room = budget - ctx.tokens - estimate_tokens(header + SEPARATOR)
        body = _note_body(note, room, strategy)
        if not body:
            continue
        block = header + "\n" + body
        parts.append(block)
        ctx.tokens += estimate_tokens(block + SEPARATOR)
        ctx.note_ids.append(note.note_id)
    ctx.text = SEPARATOR.join(parts)
    return ctx


def _note_body(note: RetrievedNote, room: int, strategy: str) -> str:
    """What of ``note`` fits in ``room`` tokens: the whole note, or its best sections."""
    if room <= 0:
        return ""
    if strategy == "notes" and note.content and estimate_tokens(note.content) <= room:
        return note.content.strip() + "\n"
    out: list[str] = []
    used = 0
    for passage in note.passages:
        text = _section(passage.heading, passage.content)
        cost = estimate_tokens(text)
        if used + cost <= room:
            out.append(text)
            used += cost
    return "\n".join(out)
