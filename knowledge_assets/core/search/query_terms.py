"""The terms of a query as Obsidian's search box reads them: ``tag:``, ``path:`` and ``file:``
operators, ``[property]`` searches, ``-`` exclusions, and ``OR`` chains between two terms
(:mod:`.operators` reads a whole query with them)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Container

from knowledge_assets.core.search.properties import read_property

OPERATOR = re.compile(r'(?<!\S)(-?)(tag|path|file):(?:"([^"]*)"|([^\s"]\S*))(?!\S)', re.IGNORECASE)
# [name] or [name:value]: a name holding no bracket, quote or colon, a value up to the "]" (one
# in quotes is text); spaces may stand inside ([status:in progress]). Not [[links]] nor [a](b).
PROPERTY = re.compile(r'(?<!\S)(-?)\[(\s*[^\[\]":\s][^\[\]":]*(?::(?:"[^"]*"|[^\]"])*)?)\](?!\S)')
# A word (starting with a letter or digit) or a quoted phrase after "-": "--x", "->" and "-)"
# stay words.
EXCLUDED = re.compile(r'(?<!\S)-(?:"([^"]*)"|(\w\S*))(?!\S)')
# "OR" in upper case as a term of its own; it joins the terms beside it (:func:`or_chains`).
_OR = "OR"
_TERM = re.compile(
    PROPERTY.pattern + r'|(?<!\S)-?(?:(?:tag|path|file):)?"[^"]*"(?!\S)|\S+', re.IGNORECASE
)
# "-tag:" without a value: an exclusion left unfinished, not the word "tag".
BARE_OPERATOR = re.compile(r"(tag|path|file):", re.IGNORECASE)
KINDS = ("tag", "path", "file")
PROP = "property"  # the kind of [name:value], read out of a query as the others are


def operator_value(match: re.Match[str]) -> str:
    """The value of a ``tag:``, ``path:`` or ``file:`` operator, quoted or not."""
    return (match[3] if match[3] is not None else match[4]).strip()


def names_property(match: re.Match[str], properties: Container[str] | None) -> bool:
    """Whether a bracketed term is a property search: always without ``properties`` (the
    lower-cased names some note has), else when it names one of them."""
    return properties is None or read_property(match[2]).name in properties


def or_chains(query: str) -> tuple[str, dict[str, list[tuple[str, ...]]], str]:
    """``query`` without its ``OR`` chains (``a OR b OR c``), the values of the chains of
    ``tag:``, ``path:``, ``file:`` or ``[property]`` operators by kind, and why a chain cannot be read ("" when
    all can).

    A chain of words only loses its ``OR``: its words are searched as any other words are. An
    ``OR`` that does not stand between two terms (first, last, doubled) is a word."""
    terms = list(_TERM.finditer(query))
    groups: dict[str, list[tuple[str, ...]]] = {k: [] for k in (*KINDS, PROP)}
    problem, cut, i = "", [], 1
    while i < len(terms) - 1:
        if terms[i][0] != _OR or _OR in (terms[i - 1][0], terms[i + 1][0]):
            i += 1
            continue
        chain = [terms[i - 1]]
        while i < len(terms) - 1 and terms[i][0] == _OR and terms[i + 1][0] != _OR:
            chain.append(terms[i + 1])
            i += 2
        # Joined by OR, a bracketed term is a test even naming no note's property (it keeps no
        # note, the others of its group may): the OR says it was meant as one.
        read = [_operator(t[0], None) for t in chain]
        kinds = {r[0] if r else _word_kind(t[0]) for t, r in zip(chain, read, strict=True)}
        start, end = chain[0].start(), chain[-1].end()
        if len(kinds) == 1 and kinds <= {*KINDS, PROP}:
            groups[kinds.pop()].append(tuple(r[1] for r in read if r))
            cut.append((start, end))
        else:  # only the ORs go: words are searched as any words are; two kinds are refused
            cut += [(a.end(), b.start()) for a, b in itertools.pairwise(chain)]
            if kinds != {"word"} and not problem:
                problem = _or_refusal(query[start:end])
    for start, end in reversed(cut):
        query = query[:start] + " " + query[end:]
    return query, groups, problem


def _operator(term: str, properties: Container[str] | None) -> tuple[str, str] | None:
    """The kind (``-tag`` for an exclusion) and value of a term that is one operator."""
    if found := OPERATOR.fullmatch(term):
        return found[1] + found[2].lower(), operator_value(found)
    if (found := PROPERTY.fullmatch(term)) and names_property(found, properties):
        return found[1] + PROP, found[2]
    return None


def _word_kind(term: str) -> str:
    return "-" if EXCLUDED.fullmatch(term) else "word"


def _or_refusal(chain: str) -> str:
    return (
        f"{chain!r}: OR joins two tag:, two path: or two file: operators (tag:旅行 OR tag:出張),"
        " two [property] searches, or two words; write the query without this OR, or search each part on its own"
    )
