"""Obsidian's property search, ``[property]`` and ``[property:value]``, as a condition on a
note's frontmatter (``rag.latest_docs.frontmatter``).

- ``[status]`` keeps the notes that have a ``status`` property, whatever its value;
- ``[status:done]`` those whose ``status`` holds ``done`` anywhere in its text, in any case (a
  list holds it when one of its items does: ``[authors:宮沢]`` finds ``authors: [宮沢賢治]``;
  numbers, dates and true/false are read as they are written: ``[version:2]``);
- ``[status:done OR draft]`` either, ``[status:"in progress"]`` a value with spaces;
- ``[status:null]`` those whose ``status`` is there but empty (``status:``, ``""``, ``[]``),
  as in Obsidian.

Property names are compared in any case (``[Status]`` is ``[status]``), as Obsidian's property
names are. The LIKE helpers here are the path filters' too (:mod:`.filters`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from knowledge_assets.core.search.id_lists import from_array

__all__ = [
    "PropertyTest", "holding", "known_properties", "like_escaped", "notes_passing",
    "property_condition",
    "property_names", "property_values", "read_property", "shown_properties",
]  # fmt: skip

# What the value of [name:...] is made of: quoted texts and words, "OR" between alternatives.
_VALUE_TERM = re.compile(r'"([^"]*)"|(\S+)')
_NULL = "null"

# A property's value, or each item of a list, as text: a string as it is, anything else as JSON.
_ITEMS = (
    "jsonb_array_elements_text(CASE jsonb_typeof(p.value) WHEN 'array' THEN p.value"
    " ELSE jsonb_build_array(p.value) END)"
)
# Empty as Obsidian shows it: no value (YAML's "status:"), a blank text, an empty list or map.
_EMPTY = (
    "(p.value IN ('null'::jsonb, '[]'::jsonb, '{}'::jsonb)"
    " OR (jsonb_typeof(p.value) = 'string' AND btrim(p.value #>> '{}') = ''))"
)


@dataclass(frozen=True)
class PropertyTest:
    """One ``[name]`` or ``[name:value]``: the note has the property ``name`` (lower-cased),
    and, when ``values`` or ``empty`` is set, its value holds any of ``values`` or is empty."""

    name: str
    values: tuple[str, ...] = ()
    empty: bool = False


def read_property(text: str) -> PropertyTest:
    """``name`` or ``name:value`` (what stands between the brackets) as a test. A value left
    empty (``status:``, ``status:""``, ``status:a OR``) is kept as ``""`` among the values,
    for the query's reader to refuse."""
    name, colon, value = text.partition(":")
    name = unicodedata.normalize("NFC", name.strip()).lower()
    if not colon:
        return PropertyTest(name)
    values: list[str] = []
    current: list[str] = []
    empty = quoted = False
    for match in [*_VALUE_TERM.finditer(value), None]:
        if match is None or (match[2] == "OR" and match[1] is None):
            if not quoted and current == [_NULL]:
                empty = True
            else:
                values.append(" ".join(current).strip())
            current, quoted = [], False
            continue
        current.append(match[1] if match[1] is not None else match[2])
        quoted = quoted or match[1] is not None
    return PropertyTest(name, tuple(dict.fromkeys(values)), empty)


def like_escaped(text: str) -> str:
    """``text`` with LIKE's wildcards and escape character escaped (backslash, LIKE's default)."""
    return re.sub(r"([\\%_])", r"\\\1", text)


def holding(text: str) -> list[str]:
    """Patterns for a lower-cased text holding ``text`` anywhere, in any case: ``text`` composed
    (NFC) and, where that differs, decomposed (NFD, as macOS may store a Japanese name), so no
    stored text is normalized per row (that tripled the cost of matching 10,000 paths)."""
    low = text.lower()
    forms = dict.fromkeys(unicodedata.normalize(form, low) for form in ("NFC", "NFD"))
    return ["%" + like_escaped(form) + "%" for form in forms]


def property_condition(test: PropertyTest, key: str) -> tuple[sql.Composable, dict[str, Any]]:
    """A boolean SQL condition on ``d`` (rag.latest_docs) for ``test``, and its parameters,
    named ``<key>_name`` and ``<key>_values``."""
    name, values = f"{key}_name", f"{key}_values"
    held: list[sql.Composable] = []
    if test.values:
        held.append(
            sql.SQL("EXISTS (SELECT 1 FROM {} e(t) WHERE lower(e.t) LIKE ANY({}::text[]))").format(
                sql.SQL(_ITEMS), sql.Placeholder(values)
            )
        )
    if test.empty:
        held.append(sql.SQL(_EMPTY))
    cond = sql.SQL(
        "EXISTS (SELECT 1 FROM jsonb_each(d.frontmatter) p WHERE lower(p.key) = {} AND ({}))"
    ).format(
        sql.Placeholder(name),
        sql.SQL(" OR ").join(held) if held else sql.SQL("true"),
    )
    params: dict[str, Any] = {name: test.name}
    if test.values:
        params[values] = [pattern for value in test.values for pattern in holding(value)]
    return cond, params


def notes_passing(
    conn: psycopg.Connection, groups: Sequence[Sequence[PropertyTest]]
) -> tuple[tuple[str, ...], bool]:
    """The ids (``rag.latest_docs.id`` as text) of the latest notes for which, in every group,
    one of its tests holds, and True; or, when those are most notes, the ids of the others, and
    False (a list of most notes costs a search more: filters._only says why). Each note's
    frontmatter is read once per search: left in every statement of a search, the test was
    read again for each chunk a vector scan looked at, and a hybrid search kept to one note in
    59 took 558 ms p50 at 10,000 notes that way (bench/results/property_latency.txt)."""
    conds: list[sql.Composable] = []
    params: dict[str, Any] = {}
    for i, group in enumerate(groups):
        tests = [property_condition(test, f"p{i}_{j}") for j, test in enumerate(group)]
        conds.append(sql.SQL("({})").format(sql.SQL(" OR ").join(c for c, _ in tests)))
        params.update({k: v for _, p in tests for k, v in p.items()})
    # OFFSET 0 keeps the sub-query whole: pulled up, its test would be read once per FILTER.
    query = sql.SQL(
        "SELECT array_agg(id) FILTER (WHERE t)::text, array_agg(id) FILTER (WHERE NOT t)::text"
        " FROM (SELECT d.id, {} AS t FROM rag.latest_docs d OFFSET 0) x"
    ).format(sql.SQL(" AND ").join(conds))
    row = conn.execute(query, params, prepare=False).fetchone()
    passing, failing = (from_array(row[0]), from_array(row[1])) if row else ((), ())
    return (passing, True) if len(passing) <= len(failing) else (failing, False)


def known_properties(conn: psycopg.Connection, names: Collection[str]) -> set[str]:
    """Which of ``names`` (lower-cased) some latest note has as a property: each name's
    search stops at the first note that has it."""
    rows = conn.execute(
        "SELECT n FROM unnest(%s::text[]) n WHERE EXISTS (SELECT 1 FROM rag.latest_docs d,"
        " jsonb_object_keys(d.frontmatter) k WHERE lower(k) = n)",
        (sorted(names),),
    ).fetchall()
    return {r[0] for r in rows}


def property_names(conn: psycopg.Connection) -> list[str]:
    """The property names the latest notes use, lower-cased as ``[property]`` reads them, the
    most used first."""
    rows = conn.execute(
        "SELECT lower(k) FROM rag.latest_docs, jsonb_object_keys(frontmatter) k"
        " GROUP BY 1 ORDER BY count(*) DESC, 1"
    ).fetchall()
    return [r[0] for r in rows]


def property_values(conn: psycopg.Connection, name: str, limit: int = 5) -> list[str]:
    """The values (a list's items) the latest notes give the property ``name``, the most used
    first, blank ones left out."""
    query = sql.SQL(
        "SELECT e.t FROM rag.latest_docs d, jsonb_each(d.frontmatter) p, {} e(t)"
        " WHERE lower(p.key) = %s AND btrim(e.t) <> ''"
        " GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT %s"
    ).format(sql.SQL(_ITEMS))
    return [r[0] for r in conn.execute(query, (name, limit)).fetchall()]


# Shown elsewhere in every view of a note: as its name, its tag chips and its aliases, and (the
# default date keys) its created / updated line.
_SHOWN_APART = {"title", "tags", "aliases", "created", "createdat", "updated", "updatedat"}


def shown_properties(frontmatter: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """A note's other frontmatter properties as Obsidian's properties block lists them, by name
    (the store's jsonb keeps no key order): (name, value as text); a list's items joined by
    ", ", an empty value as "", a map as JSON."""
    out = []
    for name, value in sorted((frontmatter or {}).items(), key=lambda kv: str(kv[0]).casefold()):
        if str(name).lower() in _SHOWN_APART:
            continue
        items = value if isinstance(value, list) else [value]
        out.append((str(name), ", ".join(_text(item) for item in items)))
    return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"  # as YAML (and [done:true]) writes it
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)
