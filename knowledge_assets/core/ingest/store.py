"""Runtime SQL for ingest and indexing. Values are always psycopg parameters; table names are
``psycopg.sql.Identifier``s chosen from a fixed set, never user text."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from knowledge_assets.core.ingest.parsing import ParsedDoc

RAW_TABLES = ("docs_local", "docs_github")  # the vault of KA_SOURCE: a folder or a repository
SOURCE_TABLE = re.compile(r"docs_[a-z][a-z0-9_]{0,40}")
_DOC_NAMESPACE = uuid.UUID("6f1c2a57-3f0e-4d8b-9a59-8f1d0e3c7b21")


def doc_id(table: str, path: str) -> uuid.UUID:
    """Deterministic document id, so re-ingesting a path keeps its id and its chunks."""
    return uuid.uuid5(_DOC_NAMESPACE, f"{table}:{path}")


def source_table(name: str) -> str:
    """The raw table of the source named ``name`` (``books`` -> ``docs_books``; ``local`` and
    ``github`` are the vault's)."""
    return f"docs_{name}"


def source_name(table: str) -> str:
    """The name of the source whose raw table is ``table`` (``docs_books`` -> ``books``)."""
    return table.removeprefix("docs_")


def raw_table(table: str) -> sql.Identifier:
    """The identifier of a raw table: ``docs_local``, ``docs_github`` or a declared source's
    ``docs_<name>`` (see :mod:`knowledge_assets.core.sources.registry`)."""
    if table not in RAW_TABLES and not SOURCE_TABLE.fullmatch(table):
        raise ValueError(f"unknown raw table {table!r}")
    return sql.Identifier("raw", table)


def table_exists(conn: psycopg.Connection, table: str) -> bool:
    """True when ``raw.<table>`` exists (a declared source creates it on its first sync)."""
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"raw.{table}",)).fetchone()
    return bool(row and row[0])


def stored_versions(conn: psycopg.Connection, table: str) -> dict[str, str]:
    """path -> version token of every stored document."""
    query = sql.SQL("SELECT file_path, version FROM {}").format(raw_table(table))
    return dict(conn.execute(query).fetchall())


def known_versions(
    stored: Mapping[str, str], conn: psycopg.Connection, table: str
) -> dict[str, str]:
    """``stored`` overridden by the versions of recorded rejections: what a sync need not read.

    Unreadable-folder entries (paths ending in ``/``) are not notes and are left out, as are
    settings files (``.obsidian/app.json``): the source reads them itself at every sync."""
    rejected = conn.execute(
        "SELECT file_path, version FROM raw.rejected_files WHERE source_table = %s"
        " AND file_path NOT LIKE '%%/' AND file_path NOT LIKE '.%%'",
        (table,),
    ).fetchall()
    return {**stored, **dict(rejected)}


def stored_hashes(conn: psycopg.Connection, table: str, paths: Sequence[str]) -> dict[str, str]:
    """path -> content_hash for the given paths that are stored."""
    query = sql.SQL("SELECT file_path, content_hash FROM {} WHERE file_path = ANY(%s)")
    return dict(conn.execute(query.format(raw_table(table)), (list(paths),)).fetchall())


def stored_paths(conn: psycopg.Connection, table: str) -> list[str]:
    """Every stored path of a raw table."""
    query = sql.SQL("SELECT file_path FROM {} ORDER BY file_path").format(raw_table(table))
    return [row[0] for row in conn.execute(query)]


def upsert_docs(
    conn: psycopg.Connection, table: str, docs: Iterable[tuple[ParsedDoc, str]]
) -> None:
    """Insert or update documents; unchanged content only refreshes the version token."""
    query = sql.SQL(
        "INSERT INTO {t} (id, file_path, frontmatter, content, content_hash, version, warnings)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (file_path) DO UPDATE SET frontmatter = EXCLUDED.frontmatter,"
        " content = EXCLUDED.content, content_hash = EXCLUDED.content_hash,"
        " version = EXCLUDED.version, warnings = EXCLUDED.warnings,"
        " fetched_at = CASE WHEN {t}.content_hash = EXCLUDED.content_hash"
        " THEN {t}.fetched_at ELSE now() END"
    ).format(t=raw_table(table))
    rows = [
        (
            doc_id(table, d.path),
            d.path,
            Jsonb(d.frontmatter),
            d.body,
            d.content_hash,
            version,
            list(d.warnings),
        )
        for d, version in docs
    ]
    if rows:
        with conn.cursor() as cur:
            cur.executemany(query, rows)


def delete_docs(conn: psycopg.Connection, table: str, paths: Sequence[str]) -> int:
    """Delete documents (and their rejections) by path; returns how many documents went."""
    query = sql.SQL("DELETE FROM {} WHERE file_path = ANY(%s)").format(raw_table(table))
    count = conn.execute(query, (list(paths),)).rowcount
    clear_rejections(conn, table, paths)
    return count


def rename_docs(conn: psycopg.Connection, table: str, pairs: Sequence[tuple[str, str]]) -> int:
    """Move documents to new paths in place, in one statement; the id follows the path so it
    stays deterministic."""
    if not pairs:
        return 0
    olds, news = [old for old, _ in pairs], [new for _, new in pairs]
    query = sql.SQL(
        "UPDATE {t} AS d SET file_path = m.new, id = m.id"
        " FROM unnest(%s::text[], %s::text[], %s::uuid[]) AS m(old, new, id)"
        " WHERE d.file_path = m.old"
    ).format(t=raw_table(table))
    return conn.execute(query, (olds, news, [doc_id(table, n) for n in news])).rowcount


def move_rejections(conn: psycopg.Connection, table: str, pairs: Sequence[tuple[str, str]]) -> None:
    """Move the rejections of renamed files with them: a stored note that broke keeps its last
    good version, moved to the new path, and the reason it is rejected must move too (it stayed
    listed under a path that no longer exists, and the new path was not listed)."""
    if not pairs:
        return
    olds, news = [old for old, _ in pairs], [new for _, new in pairs]
    conn.execute(
        "DELETE FROM raw.rejected_files WHERE source_table = %s AND file_path = ANY(%s)"
        " AND NOT file_path = ANY(%s)",
        (table, news, olds),
    )
    conn.execute(
        "UPDATE raw.rejected_files r SET file_path = m.new FROM unnest(%s::text[], %s::text[])"
        " AS m(old, new) WHERE r.source_table = %s AND r.file_path = m.old",
        (olds, news, table),
    )


def record_rejections(
    conn: psycopg.Connection, table: str, rejections: Iterable[tuple[str, str, str]]
) -> None:
    """Remember (path, reason, version) so an unchanged bad file is not re-read every sync."""
    rows = [(table, path, reason, version) for path, reason, version in rejections]
    if rows:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO raw.rejected_files (source_table, file_path, reason, version)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (source_table, file_path) DO UPDATE"
                " SET reason = EXCLUDED.reason, version = EXCLUDED.version, seen_at = now()",
                rows,
            )


def clear_rejections(conn: psycopg.Connection, table: str, paths: Sequence[str]) -> None:
    conn.execute(
        "DELETE FROM raw.rejected_files WHERE source_table = %s AND file_path = ANY(%s)",
        (table, list(paths)),
    )


def clear_folder_rejections(conn: psycopg.Connection, table: str, keep: Sequence[str]) -> None:
    """Forget the entries a source lists of itself, except the ``keep`` ones: unreadable
    folders (paths ending in ``/``) and settings files (paths starting with ``.``, such as
    ``.obsidian/app.json``: no note is read from a hidden folder)."""
    conn.execute(
        "DELETE FROM raw.rejected_files WHERE source_table = %s"
        " AND (file_path LIKE '%%/' OR file_path LIKE '.%%') AND NOT file_path = ANY(%s)",
        (table, list(keep)),
    )


def rejections(conn: psycopg.Connection, table: str) -> list[tuple[str, str]]:
    """Every currently rejected (path, reason) of a source table."""
    return conn.execute(
        "SELECT file_path, reason FROM raw.rejected_files WHERE source_table = %s"
        " ORDER BY file_path",
        (table,),
    ).fetchall()


def note_warnings(
    conn: psycopg.Connection, table: str, paths: Sequence[str] | None = None
) -> list[tuple[str, list[str]]]:
    """(path, warnings) of the stored notes of ``table`` that have warnings (of ``paths`` only,
    when given), by path."""
    query = sql.SQL(
        "SELECT file_path, warnings FROM {} WHERE warnings <> '{{}}'"
        " AND (%(p)s::text[] IS NULL OR file_path = ANY(%(p)s::text[])) ORDER BY file_path"
    ).format(raw_table(table))
    return [(r[0], list(r[1])) for r in conn.execute(query, {"p": paths})]


def sync_state(conn: psycopg.Connection, key: str) -> str | None:
    row = conn.execute(
        "SELECT last_sha FROM meta.sync_state WHERE source_key = %s", (key,)
    ).fetchone()
    return row[0] if row else None


def set_sync_state(
    conn: psycopg.Connection, key: str, head: str, table: str, location: str | None = None
) -> None:
    """Record ``head`` as the last synced state of source ``key`` (of raw table ``table``),
    read from ``location`` (the folder, or owner/repo@branch/prefix)."""
    conn.execute(
        "INSERT INTO meta.sync_state (source_key, last_sha, source_table, location)"
        " VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (source_key) DO UPDATE SET last_sha = EXCLUDED.last_sha,"
        " source_table = EXCLUDED.source_table, synced_at = clock_timestamp(),"
        " location = coalesce(EXCLUDED.location, meta.sync_state.location)",
        (key, head, table, location),
    )


class LastSync(NamedTuple):
    """The sync that last changed a raw table: its source key and where it read from."""

    key: str
    location: str | None


def last_sync(conn: psycopg.Connection, table: str) -> LastSync | None:
    """The source key (and location) whose sync last changed ``table``, if known (sql/023,
    sql/040)."""
    row = conn.execute(
        "SELECT source_key, location FROM meta.sync_state WHERE source_table = %s"
        " ORDER BY synced_at DESC LIMIT 1",
        (table,),
    ).fetchone()
    return LastSync(row[0], row[1]) if row else None


def raw_count(conn: psycopg.Connection, table: str) -> int:
    row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(raw_table(table))).fetchone()
    return int(row[0]) if row else 0


def doc_infos(conn: psycopg.Connection, table: str) -> list[tuple[str, dict[str, Any], bool, str]]:
    """(path, frontmatter, has_body, content hash) per raw document; a body of headings only
    counts as empty."""
    query = sql.SQL("SELECT file_path, frontmatter, has_body, content_hash FROM {}").format(
        raw_table(table)
    )
    return conn.execute(query).fetchall()


class KeptDoc(NamedTuple):
    """A document ``latest_docs`` keeps: its path, file-name slug and dates (read by the
    frontmatter conventions)."""

    path: str
    slug: str
    created: dt.date | None = None
    updated: dt.date | None = None
    content_hash: str | None = None  # the version it was read from: a newer one is not written


# The two fields a row takes from its source's settings (meta.sources), unless its frontmatter
# sets them. The vault of KA_SOURCE is no declared source (no meta.sources row): its notes are
# notes. A heading is bounded: it is a category's name, and its index refuses a value over
# 2,700 bytes.
_SOURCE_EXPRESSIONS = {
    # Only a text names a content type: `type: [project, active]` became the JSON text of the
    # list, which no filter matches.
    "content_type": sql.SQL(
        "coalesce(rag.frontmatter_text(d.frontmatter -> 'content_type'),"
        " rag.frontmatter_text(d.frontmatter -> 'type'), s.content_type, 'notes')"
    ),
    "top_heading": sql.SQL(
        "left(coalesce(rag.frontmatter_title(d.frontmatter -> 'heading'), s.default_heading), 500)"
    ),
}
_SOURCE_FIELDS = sql.SQL(
    "UPDATE rag.latest_docs l SET content_type = n.content_type, top_heading = n.top_heading"
    " FROM (SELECT d.id, {content_type} AS content_type, {top_heading} AS top_heading"
    "  FROM {raw} d LEFT JOIN meta.sources s ON s.source_table = %(table)s) n"
    " WHERE l.id = n.id AND l.source_table = %(table)s"
    " AND (l.content_type, l.top_heading) IS DISTINCT FROM (n.content_type, n.top_heading)"
)


def apply_source_fields(conn: psycopg.Connection, table: str) -> int:
    """Give every latest row of ``table`` the content type and heading its source's settings
    give it now: rows are otherwise rewritten only when their file changes, so a source's new
    ``content_type`` or ``default_heading`` never reached its notes. Returns the rows changed."""
    query = _SOURCE_FIELDS.format(raw=raw_table(table), **_SOURCE_EXPRESSIONS)
    return conn.execute(query, {"table": table}).rowcount


# The kept documents' rows of ``rag.latest_docs``, written from the raw table ``{raw}``.
_UPSERT_LATEST = sql.SQL(
    "INSERT INTO rag.latest_docs (id, source_table, file_path, title, tags, aliases,"
    " content_type, frontmatter, content, content_hash, created, updated,"
    " doc_type, top_heading, url)"
    " SELECT d.id, %(table)s, d.file_path,"
    # The first H1 outside comments: a template's "<!-- # … -->" or "%% # … %%" is no title.
    # Only a note holding an opener pays for the regular expressions over its whole text ("%%%%"
    # is "%%" once psycopg has read it).
    # A title that is no text is read as the chunker reads it (sql/R__views_frontmatter_titles.sql).
    " coalesce(rag.frontmatter_title(d.frontmatter -> 'title'),"
    "   substring(CASE WHEN strpos(d.content, '<!--') > 0 OR strpos(d.content, '%%%%') > 0"
    "     THEN regexp_replace(regexp_replace(d.content, '<!--.*?-->', '', 'g'),"
    "       '%%%%.*?%%%%', '', 'g') ELSE d.content END"
    "     from '(?n)^#[ \\t]+([^\\n]+)'), k.slug),"
    " rag.note_tags(d.frontmatter -> 'tags'),"
    " rag.jsonb_text_array(d.frontmatter -> 'aliases'),"
    " {content_type},"
    " d.frontmatter, d.content, d.content_hash,"
    " k.created, k.updated,"
    " coalesce(s.doc_type, 'markdown_note'),"
    " {top_heading},"
    " nullif(btrim(d.frontmatter ->> 'url'), '')"
    " FROM {raw} d JOIN unnest(%(paths)s::text[], %(slugs)s::text[],"
    "   %(created)s::date[], %(updated)s::date[], %(hashes)s::text[])"
    "   AS k(path, slug, created, updated, hash)"
    "   ON k.path = d.file_path AND coalesce(k.hash = d.content_hash, true)"
    " LEFT JOIN meta.sources s ON s.source_table = %(table)s"
    # Unchanged rows are filtered before the title expression is evaluated.
    " WHERE NOT EXISTS (SELECT 1 FROM rag.latest_docs l WHERE l.id = d.id"
    "   AND l.content_hash = d.content_hash AND l.file_path = d.file_path"
    "   AND l.created IS NOT DISTINCT FROM k.created"
    "   AND l.updated IS NOT DISTINCT FROM k.updated)"
    " ON CONFLICT (id) DO UPDATE SET file_path = EXCLUDED.file_path,"
    # The inline tags stay until the chunk refresh reads the new text (core.chunks.inline_tags).
    " title = EXCLUDED.title, tags = rag.merge_tags(EXCLUDED.tags, rag.latest_docs.inline_tags),"
    " aliases = EXCLUDED.aliases,"
    " content_type = EXCLUDED.content_type, frontmatter = EXCLUDED.frontmatter,"
    " content = EXCLUDED.content, content_hash = EXCLUDED.content_hash,"
    " created = EXCLUDED.created, updated = EXCLUDED.updated,"
    " doc_type = EXCLUDED.doc_type, top_heading = EXCLUDED.top_heading, url = EXCLUDED.url"
    " WHERE rag.latest_docs.content_hash IS DISTINCT FROM EXCLUDED.content_hash"
    " OR rag.latest_docs.file_path IS DISTINCT FROM EXCLUDED.file_path"
    " OR rag.latest_docs.created IS DISTINCT FROM EXCLUDED.created"
    " OR rag.latest_docs.updated IS DISTINCT FROM EXCLUDED.updated"
)


def write_latest(
    conn: psycopg.Connection, table: str, kept: Sequence[KeptDoc],
    scope: Sequence[str] | None = None,
) -> tuple[int, int]:  # fmt: skip
    """Make ``rag.latest_docs`` hold exactly the kept documents of ``table`` (of the paths in
    ``scope`` only, when given: the other rows are left as they are).

    Rows whose content and dates are unchanged are not touched; rows no longer kept are
    deleted, and their chunks go with them (ON DELETE CASCADE): the keyword tokens of those
    whose content arrives at another path (a renamed note) are kept for the chunks step
    (``sql/065``). Returns (upserted, deleted).
    """
    paths = [k.path for k in kept]
    upserted = conn.execute(
        _UPSERT_LATEST.format(raw=raw_table(table), **_SOURCE_EXPRESSIONS),
        {
            "table": table,
            "paths": paths,
            "slugs": [k.slug for k in kept],
            "created": [k.created for k in kept],
            "updated": [k.updated for k in kept],
            "hashes": [k.content_hash for k in kept],
        },
    ).rowcount
    # An anti-join, not NOT = ANY(array): that compares every row with every kept path.
    gone = conn.execute(
        "SELECT l.id FROM rag.latest_docs l WHERE l.source_table = %(t)s"
        " AND (%(scope)s::text[] IS NULL OR l.file_path = ANY(%(scope)s::text[]))"
        " AND NOT EXISTS (SELECT 1 FROM unnest(%(kept)s::text[]) AS k(path)"
        "  WHERE k.path = l.file_path)",
        {"t": table, "kept": paths, "scope": scope},
    ).fetchall()
    if not gone:
        return upserted, 0
    ids = [row[0] for row in gone]
    conn.execute(_KEEP_RENAMED_TOKENS, {"gone": ids, "kept": paths, "t": table})
    deleted = conn.execute("DELETE FROM rag.latest_docs WHERE id = ANY(%s::uuid[])", (ids,))
    return upserted, deleted.rowcount


# The tokens of the chunks of departing rows whose content a kept row without chunks holds.
_KEEP_RENAMED_TOKENS = (
    "WITH gone AS (SELECT id, content_hash FROM rag.latest_docs WHERE id = ANY(%(gone)s::uuid[])),"
    " arrived AS (SELECT a.content_hash FROM rag.latest_docs a"
    "  JOIN unnest(%(kept)s::text[]) AS k(path) ON k.path = a.file_path"
    "  WHERE a.source_table = %(t)s AND a.content_hash IN (SELECT content_hash FROM gone)"
    "   AND NOT EXISTS (SELECT 1 FROM rag.chunks x WHERE x.document_id = a.id))"
    " INSERT INTO rag.departed_tokens (text_hash, chunker_sig, tokens, token_count)"
    " SELECT c.text_hash, c.chunker_sig, c.tokens, c.token_count FROM rag.chunks c"
    " WHERE c.document_id IN (SELECT g.id FROM gone g"
    "  WHERE g.content_hash IN (SELECT content_hash FROM arrived))"
)


def write_superseded(
    conn: psycopg.Connection, table: str, superseded: Mapping[str, str], cycles: set[str]
) -> None:
    """Replace the superseded-version list of ``table``."""
    conn.execute("DELETE FROM rag.superseded_docs WHERE source_table = %s", (table,))
    rows = [
        (doc_id(table, old), table, old, newer, old in cycles) for old, newer in superseded.items()
    ]
    if rows:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO rag.superseded_docs (id, source_table, file_path, superseded_by,"
                " in_cycle) VALUES (%s, %s, %s, %s, %s)",
                rows,
            )
