"""Search operators typed in a query, written as in Obsidian's search box.

- ``tag:日記`` (or ``tag:#日記``) keeps the notes carrying that tag or one nested under it, in any
  case, as the tag filter does; with several ``tag:``, the notes carrying every one of them, as
  in Obsidian, and with tags chosen beside the query (``--tag``, the page's tag list, any of
  which a note may carry), the notes that hold both.
- ``path:日記`` keeps the notes whose vault path holds that text anywhere, in any case, as
  Obsidian's ``path:`` does (``path:2026-01`` finds ``日記/2026-01-10.md``; ``path:日記/`` the
  notes of a folder named so, at any depth); ``path:"my notes/"`` for text with spaces. With
  several, each must hold, and ``--path-prefix`` too.
- ``file:2026-01`` keeps the notes whose file name (the last part of the path, with its
  extension) holds that text, in any case, as Obsidian's ``file:`` does: ``file:日記`` finds
  ``日記まとめ.md`` but not the notes of a 日記/ folder. With several, each must hold.
- ``tag:旅行 OR tag:出張`` keeps the notes carrying either tag, and ``path:日記 OR path:メモ`` those
  whose path holds either text (``file:`` likewise), as ``OR`` (upper case, between two terms)
  reads in Obsidian.
  Between words it changes nothing (``雨 OR 雪``: search already finds a note holding any of
  them, best first) and is not searched as a word; joining an operator with a word or with an
  operator of another kind is refused with the reason, as there are no parentheses to group by.
- ``[status]``, ``[status:done]``, ``[status:done OR draft]`` and ``[status:null]`` keep the notes
  with that frontmatter property, one whose value holds that text (in any case), either, or an
  empty one, as Obsidian's property search does (:mod:`.properties`); ``[a:x] OR [b:y]`` either.
  Read against the store (:func:`read_query`), a bracketed term naming no note's property is text,
  unless an ``OR`` joins it to another test.
- ``-tag:日記``, ``-path:日記``, ``-file:日記``, ``-[status:done]`` and ``-word``
  (``-"two words"``) leave out the notes the operator or the word would match: a note is left out when any of its sections holds
  the word, judged by the keyword index's tokens as keyword search reads them (``-走る`` leaves
  out 走った too), or when its title holds it as text.

A phrase in double quotes stays among the words (it is searched too) and must be there as
written (:mod:`.phrases`).

The words left are what is searched, so ``path:日記/ 旅行 -雪`` searches 旅行 among the notes of a
日記/ folder that never mention 雪. An operator is a word of its own: ``git tag:`` (no value),
``mytag:x``, ``e-mail``, a lone ``-``, ``--x`` and ``->`` stay words, and so do the full-width
``－`` and ``：`` of a Japanese keyboard.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, replace

import psycopg

from knowledge_assets.core.search.filters import SearchFilters, UnsearchableQuery, word_lexemes
from knowledge_assets.core.search.properties import known_properties, read_property
from knowledge_assets.core.search.query_terms import (
    BARE_OPERATOR,
    EXCLUDED,
    KINDS,
    OPERATOR,
    PROP,
    PROPERTY,
    names_property,
    operator_value,
    or_chains,
)

__all__ = [
    "QueryParts", "UnsearchableQuery", "listed", "narrowed", "property_terms", "read_query",
    "split_query",
]  # fmt: skip


@dataclass(frozen=True)
class QueryParts:
    """A query's words, and the tags, paths, file names and words its operators keep or leave
    out."""

    words: str
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    not_tags: tuple[str, ...] = ()
    not_paths: tuple[str, ...] = ()
    not_words: tuple[str, ...] = ()
    # Operators joined by OR: each group keeps the notes any of its values would keep.
    any_tags: tuple[tuple[str, ...], ...] = ()
    any_paths: tuple[tuple[str, ...], ...] = ()
    files: tuple[str, ...] = ()
    not_files: tuple[str, ...] = ()
    any_files: tuple[tuple[str, ...], ...] = ()
    # [property] tests as typed between the brackets (properties.read_property reads them).
    properties: tuple[str, ...] = ()
    not_properties: tuple[str, ...] = ()
    any_properties: tuple[tuple[str, ...], ...] = ()
    # Why the query's OR cannot be read (it joins a word with an operator, or two kinds).
    or_problem: str = ""

    @property
    def has_operators(self) -> bool:
        return self != QueryParts(self.words)

    @property
    def lists_notes(self) -> bool:
        """Operators and no words: as in Obsidian, the query lists the notes they keep."""
        return self.has_operators and not self.words

    @property
    def excludes_only(self) -> bool:
        """Only exclusions: no tag:, path: or file: names the notes to keep."""
        kept = self.tags or self.paths or self.files or self.any_tags or self.any_paths
        kept = kept or self.any_files or self.properties or self.any_properties
        return self.has_operators and not (self.words or kept)

    @property
    def all_tags(self) -> tuple[str, ...]:
        """Every tag the query names to keep, alone or in an OR group."""
        return _alone_or_grouped(self.tags, self.any_tags)

    @property
    def all_paths(self) -> tuple[str, ...]:
        """Every path text the query names to keep, alone or in an OR group."""
        return _alone_or_grouped(self.paths, self.any_paths)

    @property
    def all_properties(self) -> tuple[str, ...]:
        """Every ``[property]`` test the query names to keep, alone or in an OR group."""
        return _alone_or_grouped(self.properties, self.any_properties)

    @property
    def all_files(self) -> tuple[str, ...]:
        """Every file-name text the query names to keep, alone or in an OR group."""
        return _alone_or_grouped(self.files, self.any_files)


def _alone_or_grouped(
    alone: tuple[str, ...], groups: tuple[tuple[str, ...], ...]
) -> tuple[str, ...]:
    return (*alone, *(value for group in groups for value in group))


def split_query(query: str, properties: Container[str] | None = None) -> QueryParts:
    """``query`` read for ``tag:``, ``path:``, ``file:``, ``[property]``, ``-`` and ``OR``
    operators. With ``properties`` (lower-cased names), a bracketed term naming none of them is
    text, as :func:`read_query` reads a query against the store."""
    query, groups, problem = or_chains(query)
    kinds = (*KINDS, PROP)
    found: dict[str, list[str]] = {k: [] for k in (*kinds, *(f"-{k}" for k in kinds), "-")}
    for match in OPERATOR.finditer(query):
        found[match[1] + match[2].lower()].append(operator_value(match))
    for match in PROPERTY.finditer(query):
        if names_property(match, properties):
            found[match[1] + PROP].append(match[2])
    rest = PROPERTY.sub(
        lambda m: " " if names_property(m, properties) else m[0], OPERATOR.sub(" ", query)
    )
    for match in EXCLUDED.finditer(rest):
        word = (match[1] if match[1] is not None else match[2]).strip()
        bare = BARE_OPERATOR.fullmatch(word)
        found["-" + bare[1].lower() if bare else "-"].append("" if bare else word)
    if not (any(found.values()) or any(groups.values()) or problem):
        return QueryParts(query)
    return QueryParts(
        " ".join(EXCLUDED.sub(" ", rest).split()),
        tags=tuple(found["tag"]),
        paths=tuple(found["path"]),
        not_tags=tuple(found["-tag"]),
        not_paths=tuple(found["-path"]),
        not_words=tuple(found["-"]),
        any_tags=tuple(groups["tag"]),
        any_paths=tuple(groups["path"]),
        files=tuple(found["file"]),
        not_files=tuple(found["-file"]),
        any_files=tuple(groups["file"]),
        properties=tuple(found[PROP]),
        not_properties=tuple(found["-" + PROP]),
        any_properties=tuple(groups[PROP]),
        or_problem=problem,
    )


def read_query(conn: psycopg.Connection, query: str) -> QueryParts:
    """``query`` read as :func:`split_query` reads it, a bracketed term being a property test
    only when some latest note has that property: pasted text or a question an LLM client
    writes holds ``[x]``, ``[1]`` or ``[注意]`` as words, and read as tests they would keep no
    note. The store is asked only when the query holds such a term."""
    names = {read_property(typed).name for typed in property_terms(query)}
    return split_query(query, known_properties(conn, names) if names else None)


def property_terms(query: str) -> list[str]:
    """What stands between the brackets of each ``[property]`` term of ``query``."""
    return [m[2] for m in PROPERTY.finditer(query)]


def narrowed(filters: SearchFilters | None, parts: QueryParts) -> SearchFilters | None:
    """``filters`` with the operators of ``parts`` added; :class:`UnsearchableQuery` says why
    the query cannot be searched (an operator without a value, an excluded word search cannot
    see, no words)."""
    if not parts.has_operators:
        return filters
    kept = listed(filters, parts)  # an operator without a value is refused first
    if not parts.words:
        raise UnsearchableQuery(
            "the query has operators but no words to search for: add some words, e.g. "
            "`旅行 tag:日記 -雪` (to list the notes the operators keep, search for them alone:"
            " `knowledge-assets search 'tag:日記 -雪'`)"
        )
    return kept


def listed(filters: SearchFilters | None, parts: QueryParts) -> SearchFilters:
    """``filters`` with the operators of a query of operators alone (:attr:`QueryParts.lists_notes`)
    added: the filters whose notes the query lists, as Obsidian's search box does for
    ``path:日記/`` or ``tag:日記 -tag:仕事``. An exclusion alone (``-tag:仕事``) keeps every note but
    those it leaves out, as in Obsidian; whoever lists them says so
    (:attr:`QueryParts.excludes_only`) rather than seeming to list one folder or tag.
    :class:`UnsearchableQuery` for an operator without a value or an excluded word the index
    keeps nothing of."""
    _refuse_empty(parts)
    return _with_operators(filters, parts)


def _with_operators(filters: SearchFilters | None, parts: QueryParts) -> SearchFilters:
    base = filters or SearchFilters()
    return replace(
        base,
        all_tags=(*base.all_tags, *parts.tags),
        path_contains=(*base.path_contains, *parts.paths),
        tag_groups=(*base.tag_groups, *parts.any_tags),
        path_groups=(*base.path_groups, *parts.any_paths),
        file_contains=(*base.file_contains, *parts.files),
        file_groups=(*base.file_groups, *parts.any_files),
        exclude_tags=(*base.exclude_tags, *parts.not_tags),
        exclude_paths=(*base.exclude_paths, *parts.not_paths),
        exclude_files=(*base.exclude_files, *parts.not_files),
        exclude_words=(*base.exclude_words, *parts.not_words),
        properties=(*base.properties, *map(read_property, parts.properties)),
        property_groups=(
            *base.property_groups,
            *(tuple(map(read_property, group)) for group in parts.any_properties),
        ),
        exclude_properties=(*base.exclude_properties, *map(read_property, parts.not_properties)),
    )


def _refuse_empty(parts: QueryParts) -> None:
    """Refuse an operator without a value, and an excluded word the keyword index keeps nothing
    of (a particle, punctuation): leaving it out would silently exclude nothing."""
    if parts.or_problem:
        raise UnsearchableQuery(parts.or_problem)
    # A tag of "#" alone names none either: the filter would keep it as given and match no note.
    tags, not_tags = (
        [t.lstrip("#").strip() for t in ts] for ts in (parts.all_tags, parts.not_tags)
    )
    for kind, values in (
        ("tag:", tags), ("path:", parts.all_paths), ("file:", parts.all_files),
        ("-tag:", not_tags), ("-path:", parts.not_paths), ("-file:", parts.not_files),
        ("-", parts.not_words),
    ):  # fmt: skip
        if "" in values:
            example = "-会議" if kind == "-" else f"{kind}日記"
            raise UnsearchableQuery(f'{kind}"" names nothing: give it a value, e.g. {example}')
    for typed in (*parts.all_properties, *parts.not_properties):
        if "" in (test := read_property(typed)).values:
            name = test.name
            raise UnsearchableQuery(
                f"[{typed}] names nothing after the colon: give it a value, e.g. [{name}:done],"
                f" or write [{name}] for the notes that have {name}"
            )
    for word in parts.not_words:
        if not word_lexemes(word):
            raise UnsearchableQuery(
                f"-{word} excludes nothing: search keeps no word of it (particles and "
                "punctuation are not indexed); exclude a word, e.g. -会議"
            )
