"""Search operators typed in a query, written as in Obsidian's search box.

- ``tag:日記`` (or ``tag:#日記``) keeps the notes carrying that tag or one nested under it, in any
  case, as the tag filter does; with several ``tag:``, the notes carrying every one of them, as
  in Obsidian, and with tags chosen beside the query (``--tag``, the page's tag list, any of
  which a note may carry), the notes that hold both.
- ``path:projects/`` keeps the notes whose vault path starts with it, as ``--path-prefix`` does
  (Obsidian matches the text anywhere in the path; a folder prefix is what a vault's notes are
  narrowed by here); ``path:"my notes/"`` for a path with spaces.

The words left are what is searched, so ``path:日記/ 旅行`` searches 旅行 among the notes under
日記/. An operator is a word of its own: ``git tag:`` (no value) and ``mytag:x`` stay words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import pairwise

from knowledge_assets.core.search.search_sql import SearchFilters

__all__ = ["QueryParts", "UnsearchableQuery", "narrowed", "split_query"]

_OPERATOR = re.compile(r'(?<!\S)(tag|path):(?:"([^"]*)"|([^\s"]\S*))(?!\S)', re.IGNORECASE)


class UnsearchableQuery(ValueError):
    """The query's operators leave nothing to search (no words, an empty value, two paths)."""


@dataclass(frozen=True)
class QueryParts:
    """A query's words, and the tags and path prefixes its operators name."""

    words: str
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    @property
    def has_operators(self) -> bool:
        return bool(self.tags or self.paths)


def split_query(query: str) -> QueryParts:
    """``query`` read for ``tag:`` and ``path:`` operators."""
    tags: list[str] = []
    paths: list[str] = []
    for found in _OPERATOR.finditer(query):
        value = (found[2] if found[2] is not None else found[3]).strip()
        (tags if found[1].lower() == "tag" else paths).append(value)
    if not tags and not paths:
        return QueryParts(query)
    words = " ".join(_OPERATOR.sub(" ", query).split())
    return QueryParts(words, tuple(tags), tuple(paths))


def narrowed(filters: SearchFilters | None, parts: QueryParts) -> SearchFilters | None:
    """``filters`` with the operators of ``parts`` added; :class:`UnsearchableQuery` says why
    the query cannot be searched (an empty operator, no words, two paths that exclude each
    other)."""
    if not parts.has_operators:
        return filters
    # A tag of "#" alone names none either: the filter would keep it as given and match no note.
    tags = [t.lstrip("#").strip() for t in parts.tags]
    empty = [f"{kind}:" for kind, values in (("tag", tags), ("path", parts.paths)) if "" in values]
    if empty:
        raise UnsearchableQuery(
            f'{empty[0]}"" names nothing: give it a value, e.g. tag:日記 or path:projects/'
        )
    if not parts.words:
        raise UnsearchableQuery(
            "the query has operators but no words to search for: add some words, e.g. "
            "`tag:日記 旅行` (to list the notes carrying a tag: `knowledge-assets tags 日記`)"
        )
    base = filters or SearchFilters()
    prefix = _one_prefix([p.lstrip("/") for p in parts.paths], base.path_prefix)
    return replace(base, all_tags=(*base.all_tags, *parts.tags), path_prefix=prefix)


def _one_prefix(typed: list[str], given: str | None) -> str | None:
    """The one path prefix that holds every prefix named: the longest, when each starts with
    the next shorter one."""
    named = sorted({*typed, *([given] if given else [])}, key=len)
    for shorter, longer in pairwise(named):
        if not longer.startswith(shorter):
            raise UnsearchableQuery(
                f"path:{longer} and path:{shorter} exclude each other: a note lies under one "
                "folder, so search with one of them"
            )
    return named[-1] if named else None
