"""Whether a database's pgvector can hold the store, checked before any migration runs.

The store needs pgvector 0.7 or later: vectors are indexed and searched as ``halfvec``. A server
with an older one takes the migrations and fails later, at the first vector index or search
(no such type); a server without pgvector, or a role that may not create it (it takes a
superuser), fails inside the first migration. This says first, in one line, which version is
there and what to run instead. The embedded server always has a recent one and its role is a
superuser, so only a ``DATABASE_URL`` server can fail here.
"""

from __future__ import annotations

import re

import psycopg

MIN_VERSION = (0, 7)
INSTALL = "https://github.com/pgvector/pgvector#installation"


def parse(version: str | None) -> tuple[int, int] | None:
    """``"0.8.1"`` → ``(0, 8)``; None for no version or one without major and minor numbers."""
    found = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(found[1]), int(found[2])) if found else None


def _old(version: str | None) -> bool:
    parsed = parse(version)
    return parsed is None or parsed < MIN_VERSION


def problem(
    installed: str | None, offered: str | None, *, creator: tuple[str, str] | None = None
) -> str | None:
    """What is wrong and what to do, in one line, or None when the store can be created.

    ``installed``: the ``vector`` extension's version in this database (None: not created yet);
    ``offered``: the newest version the server can create or update to (None: not installed);
    ``creator``: (role, database) when that role may not create the extension there (pgvector
    is not a trusted extension: it takes a superuser), else None.
    """
    need = f"pgvector {'.'.join(map(str, MIN_VERSION))} or later"
    if installed is None and offered is None:
        return (
            f"this Postgres server has no pgvector; the store needs {need}: install it on the "
            f"server ({INSTALL}), or unset DATABASE_URL to use the embedded store"
        )
    if installed is None:
        if _old(offered):
            return (
                f"this Postgres server offers pgvector {offered}; the store needs {need} "
                f"(halfvec): install a newer one on the server ({INSTALL}), or unset DATABASE_URL"
            )
        if creator is None:
            return None
        role, database = creator
        return (
            f"pgvector {offered} is on the server but not created in database {database}, and "
            f"role {role} may not create it: have a superuser run CREATE EXTENSION vector; in "
            f"{database}, then run again"
        )
    if not _old(installed):
        return None
    if not _old(offered):
        return (
            f"this database has pgvector {installed} and the server offers {offered}: run "
            "ALTER EXTENSION vector UPDATE; in it as its owner, then run again"
        )
    return (
        f"this database has pgvector {installed}; the store needs {need} (halfvec): install a "
        f"newer one on the server ({INSTALL}), run ALTER EXTENSION vector UPDATE; in this "
        "database, then run again"
    )


def check(conn: psycopg.Connection) -> str | None:
    """:func:`problem` for the database ``conn`` is connected to, as its role."""
    row = conn.execute(
        "SELECT e.extversion, a.default_version,"
        # Whether this role may create the offered version here (superuser, or a trusted
        # extension and the CREATE privilege on the database).
        " (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user)"
        "  OR coalesce((SELECT (NOT v.superuser OR v.trusted)"
        "   FROM pg_available_extension_versions v"
        "   WHERE v.name = 'vector' AND v.version = a.default_version), false)"
        "  AND has_database_privilege(current_database(), 'CREATE'),"
        " current_user, current_database()"
        " FROM (SELECT 1) one"
        " LEFT JOIN pg_extension e ON e.extname = 'vector'"
        " LEFT JOIN pg_available_extensions a ON a.name = 'vector'"
    ).fetchone()
    if row is None:  # the query always returns its one row
        return None
    installed, offered, may_create, role, database = row
    return problem(installed, offered, creator=None if may_create else (role, database))
