"""Search operators typed in a query, written as in Obsidian's search box.

- ``tag:日記`` (or ``tag:#日記``) keeps the notes carrying that tag or one nested under it, in any
  case, as the tag filter does; with several ``tag:``, the notes carrying every one of them, as
  in Obsidian, and with tags chosen beside the query (``--tag``, the page's tag list, any of
  which a note may carry), the notes that hold both.
- ``path:日記`` keeps the notes whose vault path holds that text anywhere, in any case, as
  Obsidian's ``path:`` does (``path:2026-01`` finds ``日記/2026-01-10.md``; ``path:日記/`` the
  notes of a folder named so, at any depth); ``path:"my notes/"`` for text with spaces. With
  several, each must hold, and ``--path-prefix`` too.
- ``-tag:日記``, ``-path:日記`` and ``-word`` (``-"two words"``) leave out the notes the operator
  or the word would match: a note is left out when any of its sections holds the word, judged by
  the keyword index's tokens as keyword search reads them (``-走る`` leaves out 走った too), or
  when its title holds it as text.

The words left are what is searched, so ``path:日記/ 旅行 -雪`` searches 旅行 among the notes of a
日記/ folder that never mention 雪. An operator is a word of its own: ``git tag:`` (no value),
``mytag:x``, ``e-mail``, a lone ``-``, ``--x`` and ``->`` stay words, and so do the full-width
``－`` and ``：`` of a Japanese keyboard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from knowledge_assets.core.search.filters import SearchFilters, word_lexemes

__all__ = ["QueryParts", "UnsearchableQuery", "listed", "narrowed", "split_query"]

_OPERATOR = re.compile(r'(?<!\S)(-?)(tag|path):(?:"([^"]*)"|([^\s"]\S*))(?!\S)', re.IGNORECASE)
# A word (starting with a letter or digit) or a quoted phrase after "-": "--x", "->" and "-)"
# stay words.
_EXCLUDED = re.compile(r'(?<!\S)-(?:"([^"]*)"|(\w\S*))(?!\S)')
# "-tag:" without a value: an exclusion left unfinished, not the word "tag".
_BARE_OPERATOR = re.compile(r"(tag|path):", re.IGNORECASE)


class UnsearchableQuery(ValueError):
    """The query's operators leave nothing to search (no words, an empty value, an excluded
    word search cannot see)."""


@dataclass(frozen=True)
class QueryParts:
    """A query's words, and the tags, paths and words its operators keep or leave out."""

    words: str
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    not_tags: tuple[str, ...] = ()
    not_paths: tuple[str, ...] = ()
    not_words: tuple[str, ...] = ()

    @property
    def has_operators(self) -> bool:
        return self != QueryParts(self.words)

    @property
    def lists_notes(self) -> bool:
        """Operators and no words: as in Obsidian, the query lists the notes they keep."""
        return self.has_operators and not self.words

    @property
    def excludes_only(self) -> bool:
        """Only exclusions: no tag: or path: names the notes to keep."""
        return self.has_operators and not (self.words or self.tags or self.paths)


def split_query(query: str) -> QueryParts:
    """``query`` read for ``tag:``, ``path:`` and ``-`` operators."""
    found: dict[str, list[str]] = {k: [] for k in ("tag", "path", "-tag", "-path", "-")}
    for match in _OPERATOR.finditer(query):
        value = match[3] if match[3] is not None else match[4]
        found[match[1] + match[2].lower()].append(value.strip())
    rest = _OPERATOR.sub(" ", query)
    for match in _EXCLUDED.finditer(rest):
        word = (match[1] if match[1] is not None else match[2]).strip()
        bare = _BARE_OPERATOR.fullmatch(word)
        found["-" + bare[1].lower() if bare else "-"].append("" if bare else word)
    if not any(found.values()):
        return QueryParts(query)
    return QueryParts(
        " ".join(_EXCLUDED.sub(" ", rest).split()),
        *(tuple(found[k]) for k in ("tag", "path", "-tag", "-path", "-")),
    )


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
        exclude_tags=(*base.exclude_tags, *parts.not_tags),
        exclude_paths=(*base.exclude_paths, *parts.not_paths),
        exclude_words=(*base.exclude_words, *parts.not_words),
    )


def _refuse_empty(parts: QueryParts) -> None:
    """Refuse an operator without a value, and an excluded word the keyword index keeps nothing
    of (a particle, punctuation): leaving it out would silently exclude nothing."""
    # A tag of "#" alone names none either: the filter would keep it as given and match no note.
    tags, not_tags = ([t.lstrip("#").strip() for t in ts] for ts in (parts.tags, parts.not_tags))
    for kind, values in (
        ("tag:", tags), ("path:", parts.paths), ("-tag:", not_tags),
        ("-path:", parts.not_paths), ("-", parts.not_words),
    ):  # fmt: skip
        if "" in values:
            example = "-会議" if kind == "-" else f"{kind}日記"
            raise UnsearchableQuery(f'{kind}"" names nothing: give it a value, e.g. {example}')
    for word in parts.not_words:
        if not word_lexemes(word):
            raise UnsearchableQuery(
                f"-{word} excludes nothing: search keeps no word of it (particles and "
                "punctuation are not indexed); exclude a word, e.g. -会議"
            )
