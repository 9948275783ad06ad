"""Which source a note is read from when several sources hold the same path.

A note is identified by its source and its path: ``rag.latest_docs`` is unique on
``(source_table, file_path)``, so the vault and a declared source may both hold
``daily/2024-01-01.md``. A source's name is its raw table without ``docs_`` (``local`` or
``github`` for the vault of ``KA_SOURCE``, ``books`` for ``raw.docs_books``).

A path given without a source names the vault's note when the vault has one, else the note of
the one source that has it; a path that several other sources hold is :class:`AmbiguousNote`.
Latest notes come first: a draft in the vault does not hide a current note of another source.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import psycopg
from psycopg import sql

from knowledge_assets.core.ingest.store import source_name, source_table
from knowledge_assets.core.settings import env

__all__ = [
    "AmbiguousNote",
    "NoteRef",
    "UnknownSource",
    "in_source",
    "locate",
    "same_path",
    "source_name",
    "source_table",
    "vault_source",
]


class UnknownSource(ValueError):
    """A source name that names no source of the store."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name, self.known = name, tuple(known)
        super().__init__(f"unknown source {name!r}: the sources are {', '.join(self.known)}")


class AmbiguousNote(LookupError):
    """A path held by several sources, none of them the vault, and no source given."""

    def __init__(self, file_path: str, sources: Iterable[str]) -> None:
        self.file_path, self.sources = file_path, tuple(sources)
        super().__init__(self.explain("source=NAME"))

    def explain(self, option: str) -> str:
        """The one-line error, telling how to name a source with ``option`` (``--source NAME``)."""
        return (
            f"{self.file_path!r} is in more than one source ({', '.join(self.sources)}):"
            f" pass {option} to say which"
        )


@dataclass(frozen=True)
class NoteRef:
    """One stored note: its path and its source's raw table; ``also_in`` names the other
    sources holding the same path (whether the source was named or chosen by the rule above)."""

    file_path: str
    table: str
    also_in: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return source_name(self.table)


def in_source(source: str | None) -> str:
    """`` in source NAME`` for messages about a note of a named source, else nothing."""
    return f" in source {source}" if source else ""


def vault_table() -> str:
    """The raw table of the vault configured by ``KA_SOURCE``."""
    return "docs_github" if env("KA_SOURCE", "local") == "github" else "docs_local"


def vault_source() -> str:
    """The name of the vault's source: what a path given alone names first."""
    return source_name(vault_table())


def known_sources(conn: psycopg.Connection) -> dict[str, str]:
    """name -> raw table of every source: the vault, the declared sources, and the other vault
    table while it still holds files (``KA_SOURCE`` was switched); the vault first."""
    vault = vault_table()
    rows = conn.execute(
        "SELECT source_table FROM meta.sources"
        " UNION SELECT 'docs_local' WHERE %(v)s = 'docs_local'"
        "  OR EXISTS (SELECT 1 FROM raw.docs_local)"
        " UNION SELECT 'docs_github' WHERE %(v)s = 'docs_github'"
        "  OR EXISTS (SELECT 1 FROM raw.docs_github)",
        {"v": vault},
    ).fetchall()
    tables = sorted((r[0] for r in rows), key=lambda t: (t != vault, t))
    return {source_name(t): t for t in tables}


def locate(
    conn: psycopg.Connection, file_path: str, source: str | None = None, *,
    latest_only: bool = False,
) -> NoteRef | None:  # fmt: skip
    """The note at ``file_path`` in ``source`` (any, by the rule above, when None), or None
    when no such note is stored (with ``latest_only``: no latest note). Raises
    :class:`UnknownSource` and :class:`AmbiguousNote`.

    Paths are compared in Unicode NFC (:func:`same_path`): a name typed composed finds the note
    a Mac stored decomposed. The ref holds the path as stored, which every read by path uses."""
    known = known_sources(conn)
    if source is not None and source not in known:
        raise UnknownSource(source, known)
    # Every source is looked at, also when one is named: the others are shown either way.
    latest = _latest_tables(conn, file_path, list(known.values()))
    stored = {} if latest_only else _stored_tables(conn, file_path, list(known.values()))
    named = [known[source]] if source is not None else None
    vault = vault_table()
    table = choose(file_path, _among(list(latest), named), vault) or choose(
        file_path, _among(list(stored), named), vault
    )
    if table is None:
        return None
    others = sorted({*latest, *stored} - {table})
    path = latest.get(table) or stored[table]
    return NoteRef(path, table, tuple(source_name(t) for t in others))


def _among(tables: list[str], named: list[str] | None) -> list[str]:
    return tables if named is None else [t for t in tables if t in named]


def choose(file_path: str, tables: list[str], vault: str) -> str | None:
    """Which of ``tables`` holding ``file_path`` a path alone names: ``vault``, else the only
    one; raises :class:`AmbiguousNote` for several others."""
    if vault in tables:
        return vault
    if len(tables) > 1:
        raise AmbiguousNote(file_path, sorted(source_name(t) for t in tables))
    return tables[0] if tables else None


def same_path(conn: psycopg.Connection, column: str = "file_path") -> sql.Composable:
    """The condition that ``column`` names the path ``%(p)s``: equal, or equal once both are in
    Unicode NFC (sql/041 indexes ``normalize(file_path, NFC)``). What is stored stays the user's
    own file name; only the comparison is normalized. A server whose encoding is not UTF-8
    cannot normalize: there the paths must be equal."""
    col = sql.Identifier(column)
    if conn.info.parameter_status("server_encoding") != "UTF8":
        return sql.SQL("{} = %(p)s").format(col)
    return sql.SQL("({c} = %(p)s OR normalize({c}, NFC) = normalize(%(p)s, NFC))").format(c=col)


def _latest_tables(conn: psycopg.Connection, file_path: str, tables: list[str]) -> dict[str, str]:
    """Table -> stored path of the latest notes at ``file_path`` among ``tables`` (the exact
    path first, when a table holds it in two forms)."""
    query = sql.SQL(
        "SELECT DISTINCT ON (source_table) source_table, file_path FROM rag.latest_docs"
        " WHERE {same} AND source_table = ANY(%(t)s)"
        " ORDER BY source_table, file_path <> %(p)s, file_path"
    ).format(same=same_path(conn))
    return dict(conn.execute(query, {"p": file_path, "t": tables}).fetchall())


def _stored_tables(conn: psycopg.Connection, file_path: str, tables: list[str]) -> dict[str, str]:
    """Table -> stored path, for the tables among ``tables`` whose raw table holds a version
    of ``file_path``."""
    if not tables:
        return {}
    query = sql.SQL(" UNION ALL ").join(
        sql.SQL("(SELECT {name}, file_path FROM {table} WHERE {same}"
                " ORDER BY file_path <> %(p)s, file_path LIMIT 1)").format(
            name=sql.Literal(t), table=sql.Identifier("raw", t), same=same_path(conn)
        )
        for t in tables
    )  # fmt: skip
    return dict(sorted(conn.execute(query, {"p": file_path}).fetchall()))
