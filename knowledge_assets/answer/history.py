"""Seed 001's Q&A history: record answers, read a conversation's turns, list past questions and
open one of them again.

Every value travels as a parameter. Writers only ever INSERT, so the API can record answers as a
role that may do nothing else (``ka_qa_writer``, created by ``sql/008_qa_history.sql``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from knowledge_assets.answer.pipeline import Answer, Turn

MAX_TURNS = 20  # earlier turns read for a follow-up; the token budget then keeps the newest


@dataclass(frozen=True)
class HistoryEntry:
    """One recorded question and its answer."""

    id: str
    conversation_id: str
    question: str
    answer: str
    sources: list[dict[str, str]]
    confidence: str
    model: str
    tokens_used: int
    created_at: datetime
    response_ms: float | None = None
    metadata: dict[str, Any] | None = None  # None: recorded before the history kept it
    warnings: list[str] | None = None
    related: list[dict[str, str]] | None = None  # None: recorded before sql/063

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "conversationId": self.conversation_id,
            "question": self.question,
            "answer": self.answer,
            "sources": [s["noteId"] for s in self.sources],
            "sourceNotes": [_cited(s) for s in self.sources],
            "confidence": self.confidence,
            "model": self.model,
            "tokensUsed": self.tokens_used,
            "createdAt": self.created_at.isoformat(),
        }

    def answer_dict(self) -> dict[str, Any]:
        """The entry as the answer was first given (``Answer.to_dict`` with its question and
        conversation): full citations, metadata and warnings. An entry recorded before the
        history kept metadata has its model, tokens and response time as its metadata."""
        ms = None if self.response_ms is None else round(self.response_ms, 1)  # a float4 column
        kept = {"model": self.model, "tokensUsed": self.tokens_used, "responseTime": ms}
        return {
            "id": self.id, "conversationId": self.conversation_id, "question": self.question,
            "answer": self.answer, "sources": [_cited(s) for s in self.sources],
            "confidence": self.confidence, "metadata": kept | (self.metadata or {}),
            "warnings": list(self.warnings or []), "createdAt": self.created_at.isoformat(),
            "relatedNotes": [_cited(s) for s in self.related or []],
        }  # fmt: skip


_COLUMNS = (
    "SELECT id, conversation_id, question, answer, sources, confidence, model, tokens_used,"
    " created_at, response_ms, metadata, warnings, related FROM qa.history"
)


def _entry(row: tuple[Any, ...]) -> HistoryEntry:
    entry_id, conversation, question, answer, sources, confidence, model, tokens, *rest = row
    created_at, response_ms, metadata, warnings, related = rest
    return HistoryEntry(
        str(entry_id), str(conversation), question, answer, list(sources or []), confidence,
        model, int(tokens), created_at, response_ms, metadata, warnings, related,
    )  # fmt: skip


def _cited(note: dict[str, str]) -> dict[str, str | None]:
    """A recorded citation with its ``source`` and ``heading``: None for answers recorded before
    citations kept them (a ``noteId`` alone names the note as a path alone does)."""
    return {**note, "source": note.get("source"), "heading": note.get("heading")}


def new_conversation_id() -> str:
    return str(uuid.uuid4())


def parse_conversation_id(value: str) -> str:
    """A conversation id in canonical form; ValueError for anything that is not a UUID."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ValueError(
            f"conversation id {value!r} is not one this store gave out (a UUID)"
        ) from None


def record(conn: psycopg.Connection, answer: Answer, conversation_id: str) -> str:
    """Store ``answer`` as the newest turn of ``conversation_id``; returns the entry's id."""
    entry_id = str(uuid.uuid4())
    conn.execute(
        "INSERT INTO qa.history (id, conversation_id, question, answer, sources, confidence,"
        " model, tokens_used, response_ms, metadata, warnings, related)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            entry_id, conversation_id, answer.question, answer.answer,
            Jsonb([s.to_dict() for s in answer.sources]), answer.confidence,
            str(answer.metadata.get("model", "")), int(answer.metadata.get("tokensUsed", 0)),
            answer.metadata.get("responseTime"), Jsonb(answer.metadata), Jsonb(answer.warnings),
            Jsonb([s.to_dict() for s in answer.related]),
        ),
    )  # fmt: skip
    return entry_id


def turns(conn: psycopg.Connection, conversation_id: str, limit: int = MAX_TURNS) -> list[Turn]:
    """The conversation's last ``limit`` turns, oldest first."""
    rows = conn.execute(
        "SELECT question, answer FROM (SELECT question, answer, created_at, id FROM qa.history"
        " WHERE conversation_id = %s ORDER BY created_at DESC, id DESC LIMIT %s) t"
        " ORDER BY created_at, id",
        (conversation_id, limit),
    ).fetchall()
    return [Turn(q, a) for q, a in rows]


def listing(conn: psycopg.Connection, *, limit: int = 20, offset: int = 0) -> tuple[int, list[HistoryEntry]]:  # fmt: skip
    """(total entries, a page of entries newest first)."""
    if limit < 1 or offset < 0:
        raise ValueError("limit must be at least 1 and offset at least 0")
    total_row = conn.execute("SELECT count(*) FROM qa.history").fetchone()
    rows = conn.execute(
        _COLUMNS + " ORDER BY created_at DESC, id DESC LIMIT %s OFFSET %s", (limit, offset)
    ).fetchall()
    return (int(total_row[0]) if total_row else 0), [_entry(r) for r in rows]


def entry(conn: psycopg.Connection, entry_id: str) -> HistoryEntry | None:
    """The entry ``entry_id`` (as :func:`record` returned it), or None when there is none: no
    such entry, or an id that is not a UUID, which none has."""
    try:
        canonical = str(uuid.UUID(entry_id))
    except ValueError:
        return None
    row = conn.execute(_COLUMNS + " WHERE id = %s", (canonical,)).fetchone()
    return _entry(row) if row else None
