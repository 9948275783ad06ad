"""The offline answer: the sentences of the retrieved sections that answer the question, quoted
with the note each comes from, and a confidence read from them. Needs no LLM and no network, so
it works on a fresh install.

The sentences of the sections relevant to the question are scored by
:mod:`~knowledge_assets.answer.scoring`. The best sentence leads; up to two more follow when they
cover ``KEEP_RATIO`` of what it covers and score ``SCORE_RATIO`` of its score. The lead's note is
cited first.

Confidence: high when the lead with its title and headings holds all of the question's weight
(``FULL``), or when the lead sentence itself holds ``HIGH`` of it (with its title and headings
when its section is named by the topic) and its title and headings hold ``ABOUT_HIGH`` of it (of
the topic, for a typed question); for a definition question either way only when it defines
the topic or its section is named by it. Medium when the lead with its title and headings
covers ``MEDIUM``; else low. When no section is relevant the answer is
「情報が見つかりませんでした」.
"""

from __future__ import annotations

from knowledge_assets.answer.prompt import NOT_FOUND
from knowledge_assets.answer.retrieve import HIGH, MEDIUM, Retrieval, RetrievedNote
from knowledge_assets.answer.scoring import Quote, Scorer
from knowledge_assets.core.search.note_sources import vault_source

MAX_QUOTES = 3
MAX_QUOTE_CHARS = 400
# A further sentence is quoted when it covers at least KEEP_RATIO of what the best one covers
# and scores at least SCORE_RATIO of its score.
KEEP_RATIO = 0.6
SCORE_RATIO = 0.5
ABOUT_HIGH = 0.5  # the lead's section must be about the question this much for high confidence
# A lead that holds all of the question's weight, with its title and headings, is high too: on
# jsquad's tuning half such answers (55% of them) held the gold answer 94% of the time, the
# others 81% (bench/ask.py).
FULL = 0.999
INTRO = "ノートの該当箇所です（LLM が設定されていないため、ノートからそのまま引用しています）。"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_QUOTE_CHARS else text[: MAX_QUOTE_CHARS - 1] + "…"


def best_quotes(retrieval: Retrieval, scorer: Scorer | None = None) -> list[Quote]:
    """Up to ``MAX_QUOTES`` sentences of the relevant sections, best first; none when no
    section covers ``RELEVANT`` of the question. ``scorer``: the retrieval's, if made already."""
    scorer = scorer or Scorer(retrieval)
    candidates: list[Quote] = []
    for note in retrieval.notes:
        for index, passage in enumerate(note.passages):
            if scorer.relevant(passage):
                candidates += scorer.quotes(note, index, passage.heading, passage.content)
    candidates.sort(key=lambda q: -q.score)  # stable: ties keep retrieval order
    if not candidates or candidates[0].score <= 0:
        return []
    lead = candidates[0]
    chosen = [lead]
    seen = {lead.text}
    for quote in candidates[1:]:
        if len(chosen) >= MAX_QUOTES or quote.score < lead.score * SCORE_RATIO:
            break
        if quote.text not in seen and quote.coverage >= lead.coverage * KEEP_RATIO:
            chosen.append(quote)
            seen.add(quote.text)
    return chosen


def confidence(retrieval: Retrieval, quotes: list[Quote], scorer: Scorer | None = None) -> str:
    """high / medium / low, from what the quotes themselves show (see the module doc)."""
    if not quotes:
        return "low"
    scorer = scorer or Scorer(retrieval)
    lead = quotes[0]
    # A section named by the topic is about it in every sentence: its heading counts as said.
    said = lead.terms | lead.context if lead.named else lead.terms
    answers = scorer.question.kind != "definition" or lead.defines > 0 or lead.named
    full = lead.coverage >= FULL
    if answers and (full or (scorer.share(scorer.weights, said) >= HIGH and lead.about >= ABOUT_HIGH)):  # fmt: skip
        return "high"
    return "medium" if lead.coverage >= MEDIUM else "low"


def _path(note: RetrievedNote) -> str:
    """The quoted note's path, with its source when it is not the vault's note: several sources
    may hold one path."""
    path = f"`{note.note_id}`"
    return path if note.source == vault_source() else f"{note.source} の {path}"


def extractive_answer(
    retrieval: Retrieval,
) -> tuple[str, list[tuple[RetrievedNote, str]], str]:
    """The answer text (Markdown), the quoted notes (the lead's first) each with the confidence
    its own quotes give, and the answer's confidence (the lead note's); NOT_FOUND, no notes and
    low when nothing answers."""
    scorer = Scorer(retrieval)  # the question read once, for the quotes and each note's confidence
    quotes = best_quotes(retrieval, scorer)
    if not quotes:
        return NOT_FOUND, [], "low"
    notes = list({(q.note.source, q.note.note_id): q.note for q in quotes}.values())
    blocks = [INTRO]
    cited = []
    for note in notes:
        mine = [q for q in quotes if q.note is note]  # best first: the lead's section leads
        cited.append((note, confidence(retrieval, mine, scorer)))
        for heading in dict.fromkeys(q.heading for q in mine):
            lines = sorted((q for q in mine if q.heading == heading), key=lambda q: q.order)
            quoted = "\n".join(f"> {_clip(q.text)}" for q in lines)
            title = note.title or note.note_id
            where = " › ".join(p for p in (title, heading if heading != title else "") if p)
            blocks.append(f"{quoted}\n\n— {where}（{_path(note)}）")
    return "\n\n".join(blocks), cited, cited[0][1]
