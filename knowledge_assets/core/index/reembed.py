"""Re-embedding a subset of the notes: which documents a filter selects, and replacing their
vectors of one model in place.

Replacing upserts each batch (``ON CONFLICT ... DO UPDATE``) instead of deleting first, so search
never sees a note without vectors while it is being re-embedded, and every finished batch is
committed on its own.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import psycopg

from knowledge_assets.core.database.db import Connect
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.index import index_store
from knowledge_assets.core.index.embed_batches import EmbedReport
from knowledge_assets.core.index.embedding_text import default_template
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.progress import Progress


@dataclass(frozen=True)
class DocumentFilter:
    """Which latest documents to (re-)embed; the criteria that are set must all match.

    ``paths``: exact file paths; ``path_prefix``: e.g. ``projects/``; ``tag``: a tag (of the
    frontmatter or the text) in any case, or a tag nested under it (``project`` selects ``Project/Alpha``), as search
    filters match tags; a leading ``#`` is ignored on both sides.
    """

    paths: tuple[str, ...] = ()
    path_prefix: str = ""
    tag: str = ""

    @property
    def is_empty(self) -> bool:
        """True when nothing restricts the selection (every document is meant)."""
        return not (self.paths or self.path_prefix or self.tag.lstrip("#"))

    def describe(self) -> str:
        """The selection as the run log and the metadata name it: the run config's fields as
        set (``paths: a.md, b.md; tag: 旅``), not Python's lists and quotes, or ``every note``."""
        parts = []
        if self.paths:
            parts.append(f"paths: {', '.join(self.paths)}")
        if self.path_prefix:
            parts.append(f"path_prefix: {self.path_prefix}")
        if self.tag.lstrip("#"):
            parts.append(f"tag: {self.tag.lstrip('#')}")
        return "; ".join(parts) or "every note"


def matching_documents(
    conn: psycopg.Connection, selection: DocumentFilter
) -> list[tuple[uuid.UUID, str]]:
    """(id, file_path) of every latest document the filter selects, by path."""
    return conn.execute(
        "SELECT d.id, d.file_path FROM rag.latest_docs d"
        " WHERE (cardinality(%(paths)s::text[]) = 0 OR d.file_path = ANY(%(paths)s::text[]))"
        " AND (%(prefix)s = '' OR starts_with(d.file_path, %(prefix)s))"
        # The search filters' rule (search_sql.filter_clause): tag_paths holds the folded keys of
        # each tag and its parents (sql/027, sql/029), so `Project` selects `project/alpha`.
        " AND (%(tag)s = '' OR d.tag_paths && rag.tag_keys(ARRAY[%(tag)s]::text[]))"
        " ORDER BY d.file_path",
        {
            "paths": list(selection.paths),
            "prefix": selection.path_prefix,
            "tag": selection.tag.lstrip("#"),
        },
    ).fetchall()


@dataclass
class SubsetReport:
    """What a (subset) embedding pass did: the selection, the notes it matched, how many vectors
    were replaced (``force``) and the embedding pass that followed."""

    selection: str
    documents: list[str]
    replaced: int
    embed: EmbedReport


def embed_selection(
    conn: psycopg.Connection,
    embedder: Embedder,
    selection: DocumentFilter,
    *,
    force: bool = False,
    template: str | None = None,
    batch_size: int | None = None,
    progress: Progress | None = None,
    watch: Connect | None = None,
) -> SubsetReport:
    """Embed what is missing for the selected notes (every note when the filter is empty) and,
    with ``force``, first embed their already-embedded texts again and overwrite those vectors.

    Raises :class:`NothingSelected` when a non-empty filter matches no latest note, so a typo in
    a path or tag fails loudly instead of embedding nothing.
    """
    ids: list[uuid.UUID] | None = None
    documents: list[str] = []
    if not selection.is_empty:
        matched = matching_documents(conn, selection)
        conn.commit()
        if not matched:
            raise NothingSelected(f"no latest note matches {selection.describe()}")
        ids = [doc_id for doc_id, _ in matched]
        documents = [path for _, path in matched]
    template = template or default_template(embedder.model)
    covered = index_store.count_texts(conn, embedder.model, ids, template)[1] if force else 0
    conn.commit()
    report = embed_missing(
        conn, embedder, template=template, document_ids=ids, batch_size=batch_size, force=force,
        progress=progress, watch=watch,
    )  # fmt: skip
    # With force every selected text was sent again: those that had vectors count as replaced
    # (texts, as ``covered`` counts them; a text in parts took as many vectors more).
    replaced = min(covered, report.texts_embedded)
    report.texts_embedded -= replaced
    report.embedded -= replaced
    return SubsetReport(selection.describe(), documents, replaced, report)


class NothingSelected(ValueError):
    """A document filter matched no latest note."""
