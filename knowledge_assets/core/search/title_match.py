"""A query that is a note's title finds that note first; one that is a heading, that section.

People look notes up by their titles. BM25 over a chunk's headings and body cannot see that a
query *is* a title: a note titled ``パッケージ`` ranked fifth for the query ``パッケージ``, behind
``パッケージの使い方`` and other notes saying the word more often (bench/known_item.py). So keyword
and hybrid search move the best hit of each note the query names to the front, in the order the
ranking gave them; every other hit keeps its order after them.

Titles and queries are compared as typed words, not as tokens: NFKC-folded (``ＡＢＣ``, ``ｶﾅ``),
lowercased, hiragana read as katakana (a title typed unconverted, ``ぱっけーじ``), and only letters
and digits kept (spaces, ``・``, brackets and emoji do not count). A title ``X (Y)`` is also named
by ``X`` (``マーキュリー (惑星)``: the name and what tells it apart) and, when ``Y`` is Latin
script, by ``Y``: Japanese technical writing gives a term with its English name that way
(``ジェネリクス (generics)``). Such a note comes after the notes whose whole title the query is
(``RAG設計メモ`` before ``RAG設計メモ（初版）``). A parenthesised part inside a title
(``列挙型(enum)の問題点``) names nothing on its own.

A `##` heading is remembered the same way: after the notes it titles, a query that is a
section's heading moves that section (the first of each note) up, so ``Mapの操作`` opens the
section of that name rather than one that says Map and 操作 more often.

A note the ranking did not find is still put first when its title, one of its Obsidian aliases,
one of the short names ``X (Y)`` gives it or its file name *is* the query: the store looks such
notes up by this key (:mod:`.known_items`), so ``ぱっけーじ`` finds ``パッケージ`` when no passage
shares a keyword with it, ``generics`` finds ``ジェネリクス (generics)`` when no passage says it,
and an alias or a file name (``rag-design`` for ``20251230_rag-design.md`` titled ``RAG設計メモ``)
finds its note as Obsidian's quick switcher does (after the whole titles, before the short
names).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from knowledge_assets.core.chunks.chunk_text import file_name_parts, slug_from_filename
from knowledge_assets.core.search.search_hits import SearchHit

# The tiers a query names notes in, first to last: by the whole title, by an alias or the file
# name (names the person gave the note), by a short name the title gives, by a section's heading.
TITLE, ALIAS, SHORT_NAME, HEADING = 0, 1, 2, 3

_HIRAGANA = re.compile(r"[\u3041-\u3096]")
# A title ending in one parenthesised part, half- or full-width (NFKC makes both half-width).
# Written as rag.short_name_keys (sql/058) can write it: no \s, whose meaning in PostgreSQL
# follows the locale (the keys drop white space anyway), and "." crossing line breaks, as there.
_GLOSS = re.compile(r"(.*)\(([^()]*)\)", re.DOTALL)
_LATIN = re.compile(r"[A-Za-z0-9 .,'&+/-]*[A-Za-z][A-Za-z0-9 .,'&+/-]*")


@lru_cache(maxsize=8192)  # a search compares up to 50 hits, mostly of the same few notes
def title_key(text: str) -> str:
    """What a title and a query are compared by (``列挙型 （ＥＮＵＭ）`` → ``列挙型enum``)."""
    # A word-final sigma is a sigma: str.lower() writes a final Σ as ς, and the store's key
    # (rag.title_key, sql/057) folds letter by letter.
    folded = unicodedata.normalize("NFKC", text).lower().replace("ς", "σ")
    # Hiragana and katakana differ by 0x60 code points, letter for letter.
    folded = _HIRAGANA.sub(lambda m: chr(ord(m.group()) + 0x60), folded)
    return "".join(ch for ch in folded if ch.isalnum())


@lru_cache(maxsize=8192)
def short_names(title: str) -> tuple[str, str]:
    """The keys of X and, when Latin, of Y for a title ``X (Y)``; ``""`` where there is none.

    The store holds the same pair for each note (``rag.short_name_keys``, sql/058), so the
    known-item lookup finds a note by them too.
    """
    gloss = _GLOSS.fullmatch(unicodedata.normalize("NFKC", title).strip())
    if gloss is None:
        return "", ""
    name, gloss_text = gloss.groups()
    return title_key(name), title_key(gloss_text) if _LATIN.fullmatch(gloss_text.strip()) else ""


def file_name_keys(file_path: str) -> tuple[str, str]:
    """The keys of a note's file name without its extension and of seed 000's slug (that name
    less a ``prefix_``): ``20251230_rag-design.md`` gives ``20251230ragdesign`` and
    ``ragdesign``. The store holds the same pair for each note (``rag.file_name_keys``,
    sql/064)."""
    name, stem = file_name_parts(file_path)
    return title_key(stem or name), title_key(slug_from_filename(file_path))


def other_names(title: str) -> set[str]:
    """The keys that name a note titled ``X (Y)`` besides its whole title: X, and Y if Latin."""
    return {k for k in short_names(title) if k}


def naming(title: str, key: str) -> int | None:
    """:data:`TITLE` when ``key`` is the whole title, :data:`SHORT_NAME` when it is one of
    :func:`other_names`, else None."""
    whole = title_key(title)
    if key == whole:
        return TITLE
    # Both parts of "X (Y)" are pieces of the whole title's key: most titles are ruled out here.
    return SHORT_NAME if key in whole and key in other_names(title) else None


def titles_first(
    hits: list[SearchHit], query: str, looked_up: Sequence[tuple[int, SearchHit]] = ()
) -> list[SearchHit]:
    """``hits`` with the best hit of each note ``query`` names moved to the front: notes with
    that whole title first, then those it names by an alias or their file name, then by a short
    name, then the sections with that heading (one per note), each group in the ranking's order.

    ``looked_up``: the notes the store found with their tiers (:data:`TITLE`, :data:`ALIAS`,
    :data:`SHORT_NAME`; :mod:`.known_items`), each with a hit to show when the ranking did not
    find it; such notes come after the ranked ones of their group, in the order given. A moved
    hit's score becomes at least the first hit's, so scores never rise down the list.
    """
    key = title_key(query)
    if not key or not (hits or looked_up):
        return hits
    named = _named_in(hits, key)
    best: dict[tuple[str, str], SearchHit] = {}
    for hit in hits:
        best.setdefault((hit.source, hit.file_path), hit)
    for tier, found in looked_up:
        note = (found.source, found.file_path)
        if note in named:  # found by the ranking too: its place there, its better tier
            named[note] = (min(tier, named[note][0]), named[note][1])
        else:
            named[note] = (tier, best.get(note, found))
    if not named:
        return hits
    moved = [h for _, h in sorted(named.values(), key=lambda pair: pair[0])]  # stable
    top = max(h.score for h in [*hits[:1], *moved])
    ids = {h.chunk_id for h in moved}
    return [replace(h, score=top) for h in moved] + [h for h in hits if h.chunk_id not in ids]


def _named_in(hits: list[SearchHit], key: str) -> dict[tuple[str, str], tuple[int, SearchHit]]:
    """The notes among ``hits`` that ``key`` names, by title or heading: (tier, best hit)."""
    named: dict[tuple[str, str], tuple[int, SearchHit]] = {}
    for hit in hits:
        note = (hit.source, hit.file_path)
        if note in named:
            continue
        tier = naming(hit.title, key)
        if tier is None and title_key(hit.heading) == key:
            tier = HEADING  # the section this heading opens, not the note's best hit
        if tier is not None:
            named[note] = (tier, hit)
    return named
