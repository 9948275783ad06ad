"""Set-up problems of a run (a bad setting, an unreachable store), reported by its first step as
the one line that names the fix.

A resource that raises while Dagster sets it up fails the run behind Dagster's wrapper: the run
page leads with ``DagsterResourceFunctionError: Error executing resource_fn on ResourceDefinition
vault`` and a traceback, and the line a person needs comes below. So the resources only note what
is wrong with their settings as the run starts (:func:`note_problem`), and every asset calls
:func:`check_setup` before anything else: the first step fails with the line itself, and since
every resource of the run was looked at before that step, no step writes anything first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import dagster as dg
import psycopg

from knowledge_assets.core import secrets
from knowledge_assets.core.failures import first_line

if TYPE_CHECKING:
    from knowledge_assets.resources import PostgresResource

# The problems noted while the run's resources were set up, by run id. Steps of a run executed in
# one process share them (the project's in-process executor); a step in a process of its own sees
# those of its own resources. They are not dropped when the run ends: a resource with a teardown
# is a context manager to Dagster, which a sensor's context then has to be entered for
# (`with build_sensor_context(...)`), so the last _KEPT_RUNS runs' are kept instead, a line each.
_noted: dict[str, dict[str, str]] = {}
_KEPT_RUNS = 64
# Which problem a run reports when several settings are wrong: the source's first, as
# ``knowledge-assets demo`` does.
_ORDER = ("vault", "embedder", "postgres")
STORE_FIX = "start Postgres or fix DATABASE_URL (unset it to use the embedded store), then retry"


class SetupError(dg.Failure):
    """A setting or the store stops the run; the description is one line naming the fix."""


# Dagster shows a step's error as ``module.Class: description``, and the run page leads with it.
# As a builtin the class shows as ``SetupError: vault folder … does not exist: set KA_VAULT_PATH
# …`` rather than behind ``knowledge_assets.setup_checks.``. Dagster records errors as text, so
# the class is never looked up by this name.
SetupError.__module__ = "builtins"


def note_problem(context: dg.InitResourceContext, resource: str, problem: str | None) -> None:
    """Remember ``problem`` with ``resource``'s settings for the run being set up (none outside a
    run: a sensor reports an unusable resource itself)."""
    if problem and context.run is not None:
        note(context.run.run_id, resource, problem)


def note(run_id: str, resource: str, problem: str) -> None:
    """Remember ``problem`` for ``run_id``, forgetting the oldest runs' beyond ``_KEPT_RUNS``."""
    _noted.setdefault(run_id, {})[resource] = problem
    while len(_noted) > _KEPT_RUNS:
        del _noted[next(iter(_noted))]


def check_setup(context: dg.AssetExecutionContext, postgres: PostgresResource) -> None:
    """Raise :class:`SetupError` with the first problem noted for this run, else when the store
    cannot be reached. Called first in every asset, before it writes."""
    noted = _noted.get(context.run.run_id)
    if noted:
        resource = min(noted, key=lambda r: _ORDER.index(r) if r in _ORDER else len(_ORDER))
        raise SetupError(noted[resource], metadata={"resource": resource}, allow_retries=False)
    problem = store_problem(postgres)
    if problem:
        raise SetupError(problem, metadata={"resource": "postgres"})


def store_problem(postgres: PostgresResource) -> str | None:
    """One line, without the password, when the store's URL is unusable or the store cannot be
    reached or prepared (pgvector missing, a migration refused); None when it answers."""
    from knowledge_assets.core.database.db import DatabaseUrlError, MigrationError
    from knowledge_assets.core.database.server_output import EmbeddedStoreError

    where = "DATABASE_URL" if postgres.database_url else "the embedded store"
    try:
        with postgres.connect():
            return None
    except (DatabaseUrlError, MigrationError) as exc:
        line = first_line(exc)
    except EmbeddedStoreError as exc:  # also an old store that could not be carried over
        line = exc.one_line()
    except psycopg.OperationalError as exc:
        line = f"cannot reach the knowledge store ({where}): {first_line(exc)}: {STORE_FIX}"
    return secrets.redact(line, extra=[_password(postgres.database_url)])


def _password(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return str(psycopg.conninfo.conninfo_to_dict(url).get("password") or "") or None
    except psycopg.Error:  # an unreadable URL: its message quotes no part of it
        return None
