"""The offline answer: the sentences of the retrieved sections that best cover the question,
quoted with the note each comes from. Needs no LLM and no network, so it works on a fresh install.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge_assets.answer.prompt import NOT_FOUND
from knowledge_assets.answer.retrieve import RELEVANT, Retrieval, RetrievedNote, coverage
from knowledge_assets.core.chunks.tokenize import tokens
from knowledge_assets.core.search.note_sources import vault_source

MAX_QUOTES = 3
MAX_QUOTE_CHARS = 400
# A further sentence is quoted when it covers at least this share of what the best one covers.
KEEP_RATIO = 0.6
INTRO = "ノートの該当箇所です（LLM が設定されていないため、ノートからそのまま引用しています）。"
_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]*")
_MARKUP = re.compile(r"!\[[^\]]*\]\([^)]*\)|^```.*$|^#{1,6}\s+", re.MULTILINE)


@dataclass(frozen=True)
class Quote:
    note: RetrievedNote
    heading: str
    text: str
    score: float


def sentences(text: str) -> list[str]:
    """Sentences and lines of ``text`` with Markdown fences, images and heading marks removed."""
    clean = _MARKUP.sub("", text)
    return [s.strip() for s in _SENTENCE.findall(clean) if len(s.strip()) > 1]


def _clip(text: str) -> str:
    return text if len(text) <= MAX_QUOTE_CHARS else text[: MAX_QUOTE_CHARS - 1] + "…"


def best_quotes(retrieval: Retrieval) -> list[Quote]:
    """Up to ``MAX_QUOTES`` sentences from relevant sections: the best one of the best-ranked
    relevant note (search ranks notes better than a single sentence's overlap does), then the
    best covering sentences of any note."""
    candidates: list[Quote] = []
    for note in retrieval.relevant:
        for passage in note.passages:
            if passage.coverage < RELEVANT:
                continue
            context = set(tokens(f"{note.title}\n{passage.heading}"))
            for sentence in sentences(passage.content):
                own = coverage(retrieval.weights, context | set(tokens(sentence)))
                candidates.append(Quote(note, passage.heading, sentence, own))
    if not candidates:
        return []
    candidates.sort(key=lambda q: -q.score)  # stable: ties keep retrieval order
    lead_note = min((q.note for q in candidates), key=lambda n: n.rank)
    lead = next(q for q in candidates if q.note is lead_note)
    floor = candidates[0].score * KEEP_RATIO
    rest = [q for q in candidates if q is not lead and q.score >= floor]
    return [lead, *rest[: MAX_QUOTES - 1]]


def _path(note: RetrievedNote) -> str:
    """The quoted note's path, with its source when it is not the vault's note: several sources
    may hold one path."""
    path = f"`{note.note_id}`"
    return path if note.source == vault_source() else f"{note.source} の {path}"


def extractive_answer(retrieval: Retrieval) -> tuple[str, list[RetrievedNote]]:
    """The answer text (Markdown) and the quoted notes in retrieval order; NOT_FOUND and no notes
    when nothing relevant was retrieved."""
    quotes = best_quotes(retrieval)
    if not quotes:
        return NOT_FOUND, []
    by_note = {(q.note.source, q.note.note_id): q.note for q in quotes}
    cited = sorted(by_note.values(), key=lambda n: n.rank)
    blocks = [INTRO]
    for note in cited:
        for heading in dict.fromkeys(q.heading for q in quotes if q.note is note):
            lines = [q.text for q in quotes if q.note is note and q.heading == heading]
            quoted = "\n".join(f"> {_clip(line)}" for line in lines)
            where = " › ".join(p for p in (note.title or note.note_id, heading) if p)
            blocks.append(f"{quoted}\n\n— {where}（{_path(note)}）")
    return "\n\n".join(blocks), cited
