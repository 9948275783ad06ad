"""Seed 001's RAG pipeline end to end: retrieve, build the context, ask, parse, check citations.

>>> asker = Asker()                       # the LLM from the environment, else offline
>>> result = asker.ask(conn, "梅雨明けの別名は？")
>>> result.to_dict()                      # {answer, sources[{noteId, source, ...}], ...}

:meth:`Asker.events` is the streaming form: ``sources`` once retrieval is done, ``delta`` for each
piece of answer text, ``done`` with the final answer (the same as :meth:`Asker.ask` returns).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import psycopg

from knowledge_assets.answer.checks import grounding_warnings
from knowledge_assets.answer.config import EXTRACTIVE_MODEL, LLMSettings, retirement_notice
from knowledge_assets.answer.context import DEFAULT_BUDGET, DEFAULT_STRATEGY, build_context
from knowledge_assets.answer.extractive import extractive_answer
from knowledge_assets.answer.llm import LLMClient, Usage
from knowledge_assets.answer.parse import LEVELS, AnswerStreamer, ModelAnswer, parse_model_answer
from knowledge_assets.answer.prompt import NOT_FOUND, SYSTEM_PROMPT, estimate_tokens, user_prompt
from knowledge_assets.answer.retrieve import DEFAULT_TOP_K, Retrieval, RetrievedNote, retrieve
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search import SearchFilters

HISTORY_SHARE = 0.25  # at most this share of the token budget goes to earlier turns


@dataclass(frozen=True)
class Turn:
    """An earlier question and answer of the same conversation."""

    question: str
    answer: str


@dataclass(frozen=True)
class Source:
    """A cited note: its path (``noteId``) and its source, which together name it."""

    note_id: str
    source: str
    title: str
    relevance: str
    # The heading of the note's section that covers most of the question (a citation opens the
    # note there: the passage may be far down a long note); None when the note has no passage.
    heading: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {
            "noteId": self.note_id, "source": self.source, "noteTitle": self.title,
            "relevance": self.relevance, "heading": self.heading,
        }  # fmt: skip


@dataclass
class Answer:
    """Seed 001's answer: text, cited notes, confidence and metadata, plus what was flagged."""

    question: str
    answer: str
    sources: list[Source]
    confidence: str
    metadata: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    dropped_sources: list[dict[str, str]] = field(default_factory=list)
    # When the answer found nothing: the notes search did find, none of them cited, so that a
    # reader can still open them (a question in other words than its note, or in another
    # language, finds the note by meaning while no sentence of it can be quoted).
    related: list[Source] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.sources) and NOT_FOUND not in self.answer

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "sources": [s.to_dict() for s in self.sources],
            "confidence": self.confidence,
            "metadata": self.metadata,
            "warnings": self.warnings,
            "droppedSources": self.dropped_sources,
            "relatedNotes": [s.to_dict() for s in self.related],
        }


@dataclass(frozen=True)
class Event:
    """One step of a streamed answer: ``sources``, ``delta`` or ``done``."""

    kind: str
    data: Any


def _lower(a: str, b: str) -> str:
    return LEVELS[min(LEVELS.index(a), LEVELS.index(b))]


def _history_messages(history: Sequence[Turn], budget: int) -> tuple[list[dict[str, str]], int]:
    """The newest earlier turns that fit in ``budget`` tokens, oldest first, as chat messages."""
    kept: list[Turn] = []
    used = 0
    for turn in reversed(history):
        cost = estimate_tokens(turn.question + turn.answer)
        if used + cost > budget:
            break
        kept.insert(0, turn)
        used += cost
    messages: list[dict[str, str]] = []
    for turn in kept:
        messages += [{"role": "user", "content": turn.question}, {"role": "assistant", "content": turn.answer}]  # fmt: skip
    return messages, used


class Asker:
    """Answers questions over the store; one per process (it keeps the LLM client)."""

    def __init__(
        self, settings: LLMSettings | None = None, *, top_k: int = DEFAULT_TOP_K,
        budget: int = DEFAULT_BUDGET, strategy: str = DEFAULT_STRATEGY,
        embedder: Embedder | None = None, client: LLMClient | None = None,
    ) -> None:  # fmt: skip
        self.settings = settings if settings is not None else LLMSettings.from_env()
        self.top_k, self.budget, self.strategy, self.embedder = top_k, budget, strategy, embedder
        self.client = client
        if self.client is None and not self.settings.offline:
            self.client = LLMClient(self.settings)

    @property
    def model(self) -> str:
        return EXTRACTIVE_MODEL if self.settings.offline else self.settings.model

    def ask(self, conn: psycopg.Connection, question: str, **kwargs: Any) -> Answer:
        """The final answer (see :meth:`events` for the arguments)."""
        for event in self.events(conn, question, **kwargs):
            if event.kind == "done":
                result: Answer = event.data
                return result
        raise AssertionError("the answer stream ended without an answer")

    def events(
        self, conn: psycopg.Connection, question: str, *, history: Sequence[Turn] = (),
        filters: SearchFilters | None = None, top_k: int | None = None,
    ) -> Iterator[Event]:  # fmt: skip
        """The answer to ``question`` as a stream of events; ``history`` are earlier turns."""
        started = time.perf_counter()
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        retrieval = self._retrieve(conn, question, history, filters, top_k or self.top_k)
        yield Event("sources", [_source(n) for n in retrieval.notes])
        if self.client is None or not retrieval.notes:
            steps = self._offline(retrieval, started)
        else:
            steps = self._with_llm(self.client, retrieval, history, started)
        for event in steps:
            # The answer records the question as asked, its operators (tag:日記) included: the
            # history shows what was asked, and a follow-up keeps its narrowing.
            if event.kind == "done":
                answer = event.data
                related = [] if answer.found else _uncited(retrieval, answer.sources)
                event = Event("done", replace(answer, question=question, related=related))
            yield event

    def _retrieve(
        self, conn: psycopg.Connection, question: str, history: Sequence[Turn],
        filters: SearchFilters | None, top_k: int,
    ) -> Retrieval:  # fmt: skip
        found = retrieve(conn, question, top_k=top_k, filters=filters, embedder=self.embedder)
        if found.found or not history:
            return found
        # A follow-up ("それはいつ？") may only make sense with the previous question.
        joined = f"{history[-1].question} {question}"
        again = retrieve(conn, joined, top_k=top_k, filters=filters, embedder=self.embedder)
        # The question itself, as the first search read it: its words, without its operators.
        return replace(again, question=found.question) if again.found else found

    def _offline(self, retrieval: Retrieval, started: float) -> Iterator[Event]:
        text, cited, confidence = extractive_answer(retrieval)
        yield Event("delta", text)
        meta = self._metadata(retrieval, started, Usage(), context_tokens=0)
        sources = [_source(note, relevance) for note, relevance in cited]
        yield Event("done", Answer(retrieval.question, text, sources, confidence, meta))

    def _with_llm(
        self, client: LLMClient, retrieval: Retrieval, history: Sequence[Turn], started: float
    ) -> Iterator[Event]:
        past, past_tokens = _history_messages(history, int(self.budget * HISTORY_SHARE))
        ctx = build_context(
            retrieval.notes, budget=self.budget - past_tokens, strategy=self.strategy
        )
        messages = [*past, {"role": "user", "content": user_prompt(retrieval.question, ctx.text)}]
        streamer = AnswerStreamer()
        for piece in client.stream(SYSTEM_PROMPT, messages):
            shown = streamer.feed(piece)
            if shown:
                yield Event("delta", shown)
        reply = parse_model_answer(streamer.raw)
        meta = self._metadata(retrieval, started, client.usage, context_tokens=ctx.tokens)
        meta.update(parsed=reply.parsed, attempts=client.attempts, historyTurns=len(past) // 2)
        answer = check_citations(retrieval, reply, meta)
        if client.cut_short:
            answer.warnings.append(
                f"the answer stopped at its length limit of {client.settings.max_output_tokens:,}"
                " tokens: raise KA_LLM_MAX_TOKENS for a whole answer"
            )
        notice = retirement_notice(client.settings)
        if notice:
            answer.warnings.append(notice)
        yield Event("done", answer)

    def _metadata(self, retrieval: Retrieval, started: float, usage: Usage, *, context_tokens: int) -> dict[str, Any]:  # fmt: skip
        return {
            "model": self.model,
            "tokensUsed": usage.total,
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "retrievedNotes": len(retrieval.notes),
            "responseTime": round((time.perf_counter() - started) * 1000, 1),
            "searchTime": round(retrieval.search_ms, 1),
            "contextTokens": context_tokens,
            "contextStrategy": self.strategy,
            "searchModel": retrieval.model,
        }


def _uncited(retrieval: Retrieval, cited: Sequence[Source]) -> list[Source]:
    """The retrieved notes, in search's order, that ``cited`` does not name."""
    named = {(s.source, s.note_id) for s in cited}
    return [_source(n) for n in retrieval.notes if (n.source, n.note_id) not in named]


def _source(note: RetrievedNote, relevance: str | None = None) -> Source:
    # max() keeps the first of equals: the section search ranked higher.
    best = max(note.passages, key=lambda p: p.coverage, default=None)
    return Source(
        note.note_id, note.source, note.title or note.note_id, relevance or note.relevance,
        best.heading if best is not None and best.heading else None,
    )  # fmt: skip


def check_citations(retrieval: Retrieval, reply: ModelAnswer, meta: dict[str, Any]) -> Answer:
    """Keep the model's citations of retrieved notes; drop and flag the others.

    A citation matches by noteId (the id the context gave the note: its path, with its source
    when another retrieved note has that path), else by title. When the model cited nothing,
    the retrieved notes whose titles its answer mentions are cited. Confidence is the lower of
    the model's own and the retrieval's (the best note's coverage), one level lower again when a
    citation was made up and again when seed 001's checks flag the answer (it cites no note, or
    few of its words are in the notes: :mod:`.checks`), and low when the answer says nothing was
    found.
    """
    by_id = {n.cite_id or n.note_id: n for n in retrieval.notes}
    by_title = {n.title: n for n in retrieval.notes if n.title}
    sources: dict[tuple[str, str], Source] = {}
    dropped: list[dict[str, str]] = []
    for cited in reply.sources:
        note = by_id.get(cited["noteId"]) or by_title.get(cited["noteTitle"])
        if note is None:
            dropped.append(cited)
        elif (note.source, note.note_id) not in sources:
            sources[note.source, note.note_id] = _source(note, cited["relevance"])
    if not reply.sources:
        for note in retrieval.notes:
            if note.title and note.title in reply.answer:
                sources[note.source, note.note_id] = _source(note)
    answer = reply.answer or NOT_FOUND
    retrieved = retrieval.notes[0].relevance if retrieval.notes else "low"
    confidence = _lower(reply.confidence or "medium", retrieved)
    warnings = []
    if dropped:
        confidence = LEVELS[max(LEVELS.index(confidence) - 1, 0)]
        ids = ", ".join(d["noteId"] or d["noteTitle"] for d in dropped)
        warnings.append(f"dropped citations of notes that were not retrieved: {ids}")
    if reply.parsed != "json":
        warnings.append(f"the model did not answer in clean JSON (read as {reply.parsed})")
    if NOT_FOUND in answer:
        confidence = "low"
    elif checked := grounding_warnings(answer, retrieval, len(sources)):
        # seed 001's validateAnswer: an answer it flags is one level less sure
        confidence = LEVELS[max(LEVELS.index(confidence) - 1, 0)]
        warnings += checked
    return Answer(
        retrieval.question, answer, list(sources.values()), confidence, meta, warnings, dropped
    )
