"""Step 1 of seed 001's pipeline: hybrid search, grouped into the top-K notes.

Search returns chunks (sections); the answer cites notes, so hits are grouped by note in rank
order and the first ``top_k`` notes kept, each with its matching sections. A note's relevance is
how much of the question its best section covers, each question term weighted by its rarity in
the store (IDF from the keyword statistics): a rare term such as a name counts for more than
"する", and a term no note contains counts fully against the match. Question words (何, どこ,
what, is, …) are not terms (``question.content_terms``): every note "covers" 何. Fused search scores are only
meaningful as an order, so this coverage is what decides whether anything relevant was found.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date

import psycopg

from knowledge_assets.answer.question import content_terms
from knowledge_assets.core.chunks.tokenize import tokens
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search import SearchFilters, SearchHit, search
from knowledge_assets.core.search.note_sources import vault_source
from knowledge_assets.core.search.notes import latest_fields
from knowledge_assets.core.search.operators import read_query

DEFAULT_TOP_K = 5
CHUNKS_PER_QUERY = 50  # sections searched per question: enough to fill five notes
RELEVANT = 0.35  # weighted share of the question a section must cover to count as relevant
HIGH, MEDIUM = 0.75, 0.5


@dataclass(frozen=True)
class Passage:
    """One retrieved section of a note."""

    chunk_id: str
    heading: str
    content: str
    score: float
    coverage: float
    retrievers: tuple[str, ...]
    terms: frozenset[str] = frozenset()  # its keyword lexemes and its note title's tokens


@dataclass
class RetrievedNote:
    """A retrieved note: identity, the metadata the context shows, and its matching sections."""

    note_id: str  # the vault-relative path: with source, what get-note, similar and the page take
    source: str  # the note's source (``local``, ``books``): several sources may hold one path
    title: str
    tags: tuple[str, ...]
    rank: int
    passages: list[Passage] = field(default_factory=list)
    created: date | None = None
    updated: date | None = None
    content: str = ""
    # What the context calls the note and the model cites: its path, unless another retrieved
    # note has the same path (see ``_cite_ids``).
    cite_id: str = ""

    @property
    def coverage(self) -> float:
        return max((p.coverage for p in self.passages), default=0.0)

    @property
    def relevance(self) -> str:
        """high / medium / low, from the best section's coverage of the question."""
        c = self.coverage
        return "high" if c >= HIGH else "medium" if c >= MEDIUM else "low"


@dataclass(frozen=True)
class Retrieval:
    """What retrieval found for one question, best note first."""

    question: str
    notes: list[RetrievedNote]
    model: str | None
    search_ms: float
    weights: dict[str, float]  # question term -> IDF weight

    @property
    def relevant(self) -> list[RetrievedNote]:
        return [n for n in self.notes if n.coverage >= RELEVANT]

    @property
    def found(self) -> bool:
        return bool(self.relevant)


def term_weights(conn: psycopg.Connection, terms: list[str]) -> dict[str, float]:
    """BM25's IDF of each term over the stored sections; unknown terms get the highest weight."""
    if not terms:
        return {}
    total = conn.execute("SELECT ndocs FROM rag.keyword_totals").fetchone()
    n = max(int(total[0]) if total else 0, 1)
    rows = conn.execute(
        "SELECT lexeme, ndoc FROM rag.keyword_lexemes WHERE lexeme = ANY(%s)", (terms,)
    ).fetchall()
    ndoc = {r[0]: int(r[1]) for r in rows}
    return {t: math.log(1 + (n - ndoc.get(t, 0) + 0.5) / (ndoc.get(t, 0) + 0.5)) for t in terms}


def coverage(weights: dict[str, float], text_tokens: set[str]) -> float:
    """The share of the question's term weight that ``text_tokens`` contains (0 to 1)."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return sum(w for t, w in weights.items() if t in text_tokens) / total


def retrieve(
    conn: psycopg.Connection,
    question: str,
    *,
    top_k: int = DEFAULT_TOP_K,
    filters: SearchFilters | None = None,
    embedder: Embedder | None = None,
) -> Retrieval:
    """Hybrid search for ``question``, grouped into the ``top_k`` best notes with metadata (a
    question may hold search operators, e.g. ``tag:日記`` or ``-雪``: they narrow the search)."""
    parts = read_query(conn, question)
    response = search(
        conn, question, mode="hybrid", filters=filters, limit=CHUNKS_PER_QUERY, embedder=embedder,
        parts=parts,
    )  # fmt: skip
    question = parts.words  # its operators and excluded words only narrowed it
    weights = term_weights(conn, content_terms(question))
    # A note is its source and its path: the vault and a declared source may hold the same path.
    notes: dict[tuple[str, str], RetrievedNote] = {}
    hits: list[SearchHit] = []
    for hit in response.hits:
        key = (hit.source, hit.file_path)
        if key not in notes:
            if len(notes) >= top_k:
                continue
            notes[key] = RetrievedNote(hit.file_path, hit.source, hit.title, hit.tags, len(notes) + 1)  # fmt: skip
        hits.append(hit)
    lexemes = _chunk_lexemes(conn, [h.chunk_id for h in hits])
    titles = {key: set(tokens(note.title)) for key, note in notes.items()}
    for hit in hits:
        key = (hit.source, hit.file_path)
        own = lexemes.get(hit.chunk_id) or set(tokens(f"{hit.heading}\n{hit.content}"))
        own |= titles[key]
        notes[key].passages.append(
            Passage(hit.chunk_id, hit.heading, hit.content, hit.score, coverage(weights, own), hit.retrievers, frozenset(own))
        )  # fmt: skip
    ranked = list(notes.values())
    _add_metadata(conn, ranked)
    _cite_ids(ranked)
    return Retrieval(question, ranked, response.model, response.timings["total_ms"], weights)


def _chunk_lexemes(conn: psycopg.Connection, chunk_ids: list[str]) -> dict[str, set[str]]:
    """The keyword lexemes stored with each chunk (title, headings and text, as indexed): no
    second tokenization of what search just matched."""
    if not chunk_ids:
        return {}
    rows = conn.execute(
        "SELECT id::text, tsvector_to_array(tokens) FROM rag.chunks WHERE id = ANY(%s::uuid[])",
        (chunk_ids,),
    ).fetchall()
    return {r[0]: set(r[1] or ()) for r in rows}


def _add_metadata(conn: psycopg.Connection, notes: list[RetrievedNote]) -> None:
    """Dates and the whole body of each note, in one query."""
    if not notes:
        return
    found = latest_fields(conn, [(n.source, n.note_id) for n in notes])
    for note in notes:
        row = found.get((note.source, note.note_id))
        if row is not None:
            note.created, note.updated, note.content = (
                row["created"],
                row["updated"],
                row["content"],
            )


def _cite_ids(notes: list[RetrievedNote]) -> None:
    """Give each note the id the model is to cite it by: its path, or ``path (source)`` when
    another retrieved note has the same path and a path alone would not name this one (it is
    not the vault's). Every retrieved note then has its own id, and a path the model cites
    names the note that the path names everywhere else."""
    vault = vault_source()
    sources: dict[str, list[str]] = {}
    for note in notes:
        sources.setdefault(note.note_id, []).append(note.source)
    for note in notes:
        shared = len(sources[note.note_id]) > 1 and note.source != vault
        note.cite_id = f"{note.note_id} ({note.source})" if shared else note.note_id
