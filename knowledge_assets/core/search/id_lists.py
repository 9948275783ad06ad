"""Lists of ids (notes, passages) between a search's statements, as one text parameter each.

A search reads the ids once (the notes a property test keeps, the passages holding a phrase)
and every later statement tests rows against the list. psycopg adapts a Python list item by
item (6 ms for 5,000 ids, in every statement), so the ids travel as one ``uuid[]`` literal, and
come back from Postgres as ``array_agg(id)::text``.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["as_array", "from_array"]


def as_array(ids: Iterable[str]) -> str:
    """``{a,b}``: the ids as one ``uuid[]`` literal, for ``%s::uuid[]``."""
    return "{" + ",".join(ids) + "}"


def from_array(text: str | None) -> tuple[str, ...]:
    """The ids of a ``uuid[]`` read as text (``{a,b}``); none for NULL (an empty aggregate)."""
    return tuple(text[1:-1].split(",")) if text else ()
