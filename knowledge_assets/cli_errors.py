"""Expected failures of the command line as one or two readable lines instead of a traceback.

``--debug`` (anywhere on the command line) or ``KA_DEBUG=1`` shows the traceback as well. Every
line printed passes through the secret redaction: a server may have quoted a key.
"""

from __future__ import annotations

import os
import select
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

from knowledge_assets.core import secrets

if TYPE_CHECKING:
    import psycopg
    import pydantic

# psycopg and what reads a failure (knowledge_assets.core.failures) are imported where a failure
# is explained: until main() runs, Ctrl-C can only end in a traceback (cli.build_parser).

DEBUG_FLAG = "--debug"
EXIT_FAILURE = 1
EXIT_USAGE = 2
# A reader that went away (``| head -1``) ends the command as SIGPIPE ends git or cat: quietly,
# with the shell's code for a process killed by SIGPIPE (128 + 13).
EXIT_CLOSED_PIPE = 141
USAGE_HINT = "see `knowledge-assets --help`"
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C: Python's KeyboardInterrupt, or the error Dagster raises in its
    place wherever it handles SIGINT itself (in a run, and while it loads the code location,
    which ``update`` and ``demo`` do after their run to hand its cursor to the sensor)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    dagster = sys.modules.get("dagster")  # not imported: no Dagster error can have been raised
    return dagster is not None and isinstance(exc, dagster.DagsterExecutionInterruptedError)


def debug_requested(argv: list[str]) -> tuple[bool, list[str]]:
    """Whether ``--debug`` was given (or ``KA_DEBUG`` set), and ``argv`` without the flag."""
    rest = [a for a in argv if a != DEBUG_FLAG]
    from knowledge_assets.core.settings import env_flag

    return len(rest) != len(argv) or env_flag("KA_DEBUG"), rest


def explain(exc: BaseException) -> tuple[str, str] | None:
    """(what is wrong, what to do) for an expected failure anywhere in ``exc``'s chain, or None
    for a bug."""
    seen: set[int] = set()
    item: BaseException | None = exc
    while item is not None and id(item) not in seen:
        seen.add(id(item))
        explained = _explain_one(item)
        if explained is not None:
            return explained
        item = item.__cause__ or item.__context__
    return None


def _explain_one(exc: BaseException) -> tuple[str, str] | None:
    import psycopg

    from knowledge_assets.core.database import db
    from knowledge_assets.core.database.db import DatabaseUrlError, MigrationError
    from knowledge_assets.core.database.locks import StoreBusy
    from knowledge_assets.core.database.server_output import EmbeddedStoreError
    from knowledge_assets.core.embedders import EmbeddingError
    from knowledge_assets.core.failures import first_line
    from knowledge_assets.core.preflight import ConfigError
    from knowledge_assets.core.sources.base import SourceError

    if isinstance(exc, psycopg.OperationalError) and _is_connection_failure(exc):
        where = db.store_label()
        return (
            f"cannot reach the knowledge store ({where}): {first_line(exc)}",
            "start Postgres or fix DATABASE_URL (unset it to use the embedded store), then retry",
        )
    if type(exc).__name__ == "OperationalError" and type(exc).__module__.split(".")[0] in (
        "sqlalchemy",
        "psycopg2",
    ):  # Dagster's own storage (run and event records) lost the database
        return (
            f"lost the connection to the store holding Dagster's runs: {first_line(exc)}",
            "check that Postgres is running, then run again: the next run picks up what is missing",
        )
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return ("the query took too long and was cancelled", "narrow it (fewer words, a filter)")
    if isinstance(exc, psycopg.Error):
        return (f"the knowledge store refused the request: {first_line(exc)}",
                "run `knowledge-assets migrate`; if it persists, rerun with --debug and report it")  # fmt: skip
    if isinstance(exc, DatabaseUrlError):
        store = "the embedded store" if exc.variable == "DATABASE_URL" else "the store's URL"
        return (first_line(exc), f"fix {exc.variable}, or unset it to use {store}")
    if isinstance(exc, EmbeddedStoreError):
        return (first_line(exc), exc.fix)
    # Imported here: the command line starts without Dagster or pydantic (``--help``, search).
    import dagster as dg
    import pydantic
    import yaml
    from dagster.components.resolved.errors import ResolutionException
    from dagster_shared.check import CheckError
    from dagster_shared.error import DagsterUnresolvableSymbolError

    if isinstance(exc, pydantic.ValidationError):
        # Read from a defs.yaml, the model is titled KnowledgeSourceModel; built in code,
        # KnowledgeSource. Both are a declaration to fix.
        declaration = exc.title.startswith("KnowledgeSource")
        return (_validation_line(exc), _DECLARATION_FIX if declaration else "")
    if isinstance(exc, dg.DagsterInvalidDefinitionError):
        return (f"the project's definitions do not load: {first_line(exc)}", _DECLARATION_FIX)
    # A defs.yaml that is not YAML, or whose `type:` names no component, reached the user as an
    # "unexpected failure" to report, with no word of which file or what to write.
    if isinstance(exc, yaml.YAMLError):
        return _yaml_line(exc)
    if isinstance(exc, ResolutionException):  # a value Dagster could not render: a template
        cause = exc.__cause__ or exc.__context__
        why = f": {first_line(cause)}" if cause is not None else ""
        return (f"{first_line(exc)}{why}", _DECLARATION_FIX)
    if isinstance(exc, CheckError) and "No components found" in str(exc):
        return (
            "a defs.yaml of the project declares nothing (an empty file)",
            _DECLARATION_FIX + ", or delete the empty file",
        )
    if isinstance(exc, DagsterUnresolvableSymbolError):
        return (
            f"the project's definitions do not load: a defs.yaml names an unknown type:"
            f" {first_line(exc)}",
            f"a declared source's defs.yaml starts with `type: {_SOURCE_TYPE}`",
        )
    if isinstance(exc, ConfigError):
        return (first_line(exc), "fix the setting and run the command again")
    if isinstance(exc, EmbeddingError):
        return (first_line(exc), "check the provider's settings, or search with --mode keyword")
    if isinstance(exc, (SourceError, StoreBusy, MigrationError)):
        return (first_line(exc), "")
    if isinstance(exc, (FileNotFoundError, NotADirectoryError, PermissionError)):
        return (first_line(exc), "check the path and its permissions")
    if isinstance(exc, ValueError):
        return (first_line(exc), USAGE_HINT)
    return None


_SOURCE_TYPE = "knowledge_assets.components.KnowledgeSource"
_DECLARATION_FIX = "fix the declared source (knowledge_assets/defs/sources/<name>/defs.yaml)"


def _yaml_line(exc: BaseException) -> tuple[str, str]:
    """``<file> is not valid YAML: <problem> (line 4, column 9)`` and what to fix."""
    from knowledge_assets.core.failures import first_line

    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or first_line(exc)
    if mark is None:
        return (f"a YAML file does not load: {problem}", "fix the file's YAML")
    where = (
        f"{mark.name} is not valid YAML: {problem} (line {mark.line + 1}, column {mark.column + 1})"
    )
    return (where, _DECLARATION_FIX if mark.name.endswith("defs.yaml") else "fix the file's YAML")


def _validation_line(exc: pydantic.ValidationError) -> str:
    """``KnowledgeSource: kind: Input should be 'local', 'github', 'books' or 'bookmarks'`` (and
    how many more problems), instead of pydantic's ``1 validation error for ...`` header."""
    errors = exc.errors()
    first = errors[0] if errors else {"loc": (), "msg": str(exc)}
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {len(errors) - 1:,} more)" if len(errors) > 1 else ""
    return f"{exc.title}: {where + ': ' if where else ''}{first['msg']}{more}"


def _is_connection_failure(exc: psycopg.OperationalError) -> bool:
    """A failure to connect or a dropped connection, as opposed to e.g. a resource limit."""
    if exc.sqlstate is None:  # raised by the client: could not connect, connection lost
        return True
    return exc.sqlstate.startswith("08") or exc.sqlstate in ("57P01", "57P02", "57P03")


def run_reporting(fn: Callable[[], int], *, debug: bool, command: str | None = None) -> int:
    """``fn()``'s exit code; an exception becomes one or two lines on stderr and exit code 1.
    ``command`` (``ask``) points a bad value's hint at that command's help."""
    try:
        code = fn()
        sys.stdout.flush()  # a closed pipe shows here, not at exit where Python reports it
        return code
    except BrokenPipeError:
        if not _stdout_closed():  # a pipe of the command's own (a subprocess, a socket) broke
            raise
        return closed_pipe()
    except Exception as exc:
        if debug:
            traceback.print_exception(secrets.scrubbed(exc), file=sys.stderr)
        explained = explain(exc)
        if explained is None:
            from knowledge_assets.core.failures import first_line

            what = f"unexpected failure: {type(exc).__name__}: {first_line(exc)}"
            todo = "" if debug else "run again with --debug for the traceback, and report it"
        else:
            what, todo = explained
        if command and todo == USAGE_HINT:
            todo = f"see `knowledge-assets {command} --help`"
        print(f"error: {secrets.redact(what)}", file=sys.stderr)
        if todo:
            print(f"  {todo}", file=sys.stderr)
        return EXIT_FAILURE
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _stdout_closed() -> bool:
    """Whether the reader of standard output went away: the write end of a pipe whose reader
    closed polls as an error. Without a descriptor (output captured in-process) it is taken as
    closed, as before this check."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
    except (AttributeError, OSError, ValueError):
        return True
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poll.poll(0))


def closed_pipe() -> int:
    """The exit code after the reader of standard output closed the pipe; what is left unwritten
    goes to /dev/null, so flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (captured in-process): nothing to flush
        pass
    return EXIT_CLOSED_PIPE
