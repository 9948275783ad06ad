"""Quoted phrases in a query (``"東京 大学" 歴史``): as in Obsidian's search box, a phrase in
double quotes must be there as written.

A passage holds a phrase when its keyword tokens hold the phrase's tokens side by side: its one
token, or each pair of its adjacent tokens (:func:`word_lexemes`), as an excluded
``-"two words"`` is judged. Every pair is its own lexeme in the keyword index, so the test is
answered by the index alone, without reading a passage's text or tokens: ``"東京 大学"`` holds
``東京の大学`` and ``東京大学`` (particles are not indexed), not ``大学 東京``. The phrase's words
are searched as the query's other words are, so they also rank.

Every quoted phrase must hold (as Obsidian's words do). Hits are passages that hold them all;
a statement over notes alone (a look-up of titles) keeps the notes with such a passage.
"""

from __future__ import annotations

import functools
import re

import psycopg
from psycopg import sql

from knowledge_assets.core.chunks.tokenize import bigrams, quote_lexeme, tokens
from knowledge_assets.core.search.id_lists import from_array

# A phrase: double quotes around text without quotes. An excluded -"phrase" is gone by the time
# the words are read (operators.split_query), and so are the quotes of path:"my notes/".
_QUOTED = re.compile(r'"([^"]*)"')


def quoted_phrases(words: str) -> tuple[str, ...]:
    """The quoted phrases of a query's words, in order, each once."""
    return tuple(dict.fromkeys(m[1].strip() for m in _QUOTED.finditer(words)))


def word_lexemes(word: str) -> list[str]:
    """The keyword-index lexemes a section holds when its text contains ``word`` (or a phrase):
    its one token, or each pair of its adjacent tokens (``味噌ラーメン`` is ``味噌 ラーメン``), so
    a word Sudachi cuts in two is matched as written rather than as either half anywhere. Empty
    for a word the index keeps nothing of (a particle, punctuation)."""
    return list(_lexemes(word))


# A search reads a phrase's lexemes several times (its refusal, its look-up, the keyword leg,
# each statement's filter), and an excluded word's twice: Sudachi analyses each once.
@functools.lru_cache(maxsize=1024)
def _lexemes(word: str) -> tuple[str, ...]:
    toks = tokens(word)
    return tuple(toks[:1] if len(toks) == 1 else dict.fromkeys(bigrams(toks)))


def refusal(phrases: tuple[str, ...]) -> str | None:
    """Why a query's phrases cannot be searched: one the index keeps nothing of (it would keep
    every passage, or none); None when each holds a word."""
    for phrase in phrases:
        if not word_lexemes(phrase):
            return (
                f'"{phrase}" holds no word search keeps (particles and punctuation are not'
                ' indexed): quote words, e.g. "東京 大学"'
            )
    return None


def phrase_lexemes(phrases: tuple[str, ...]) -> list[str]:
    """The lexemes a passage holds when it holds every phrase (:func:`word_lexemes` each)."""
    return list(dict.fromkeys(lx for phrase in phrases for lx in word_lexemes(phrase)))


def phrase_query(phrases: tuple[str, ...]) -> str:
    """A tsquery literal matching a passage that holds every phrase (checked by
    :func:`refusal` first)."""
    return _all_of(phrase_lexemes(phrases))


def _all_of(lexemes: list[str]) -> str:
    return " & ".join(quote_lexeme(lx) for lx in lexemes)


def phrase_condition(phrases: tuple[str, ...], chunks: str | None) -> sql.Composable:
    """The SQL condition that the passage ``chunks`` (an alias of rag.chunks) holds every
    phrase, parameter ``f_phrase``; without ``chunks``, that a section of the note ``d`` does."""
    if chunks is not None:
        return sql.SQL("{}.tokens @@ %(f_phrase)s::tsquery").format(sql.Identifier(chunks))
    return sql.SQL(
        "EXISTS (SELECT 1 FROM rag.chunks pc WHERE pc.document_id = d.id"
        " AND pc.tokens @@ %(f_phrase)s::tsquery)"
    )


# Up to how many passages a phrase is looked up into. A phrase most passages hold (a common
# word in quotes) is tested passage by passage instead: listing the 54,230 passages of a word
# 28% of them hold took 400 ms at 10,000 notes, and such a test passes for most passages a
# scan meets.
LISTED_MAX = 20000


def passages_holding(
    conn: psycopg.Connection, phrases: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The passages holding every phrase and their notes (ids as text), from the keyword index
    alone, so each statement of a search keeps those passages by their ids rather than reading
    the tokens of every passage it meets; None when more than ``LISTED_MAX`` passages hold them
    (judged first by the keyword statistics: the rarest lexeme's count of passages)."""
    lexemes = phrase_lexemes(phrases)
    rarest = conn.execute(
        "SELECT min(ndoc) FROM rag.keyword_lexemes WHERE lexeme = ANY(%s::text[])", (lexemes,)
    ).fetchone()
    if rarest and rarest[0] is not None and rarest[0] > LISTED_MAX:
        return None
    row = conn.execute(
        "SELECT count(*), array_agg(id)::text, array_agg(DISTINCT document_id)::text"
        " FROM (SELECT id, document_id FROM rag.chunks WHERE tokens @@ %s::tsquery LIMIT %s) x",
        (_all_of(lexemes), LISTED_MAX + 1),
        prepare=False,  # planned for this query's phrase (search_sql.fetch_dicts says why)
    ).fetchone()
    if row is None or row[0] > LISTED_MAX:
        return None
    return from_array(row[1]), from_array(row[2])
