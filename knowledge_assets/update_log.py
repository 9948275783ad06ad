"""What ``knowledge-assets update --verbose`` prints beyond the summary (seed 002's 詳細ログ).

While the run goes, each line its steps log (progress with rate and time left, a rejected file, a
date left empty) reaches the terminal as it is logged, as ``HH:MM:SS step  message``: Dagster's
console logger would print the run id and logger name on every line too. After each asset's
summary, the files its materialization lists (re-chunked, rejected, left out, ...) follow, a few
per list. Everything is redacted and control characters are escaped, as the warnings are.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import dagster as dg

TERMINAL_LOGGER = "terminal"
# Files shown per list after an asset's summary; the rest are counted.
SHOWN_PER_LIST = 10


class _TerminalHandler(logging.Handler):
    """One line per record: the time, the step, the message. On stdout, in order with the
    summary that follows (a hook's log gets both through one pipe)."""

    def emit(self, record: logging.LogRecord) -> None:
        from knowledge_assets.core import secrets
        from knowledge_assets.search_cli import shown_path

        # Dagster's record metadata (a dict): the step and the message as the step logged it.
        meta: Mapping[str, Any] = getattr(record, "dagster_meta", None) or {}
        step = meta.get("step_key") or "run"
        message = meta.get("orig_message") or record.getMessage()
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        level = "" if record.levelno < logging.WARNING else f"{record.levelname.lower()}: "
        line = f"  {stamp} {step}  {level}{shown_path(secrets.redact(str(message)))}"
        print(line, file=sys.stdout, flush=True)


@dg.logger(
    config_schema=None, description="update --verbose: each line the steps log, as they log it"
)
def terminal_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    del init_context  # no configuration
    log = logging.Logger("knowledge-assets-update", level=logging.INFO)
    log.addHandler(_TerminalHandler())
    return log


def verbose(
    job: dg.JobDefinition, config: dict[str, Any]
) -> tuple[dg.JobDefinition, dict[str, Any]]:
    """``job`` with the terminal logger beside its own, and ``config`` switching it on."""
    job = job.with_logger_defs({**job.loggers, TERMINAL_LOGGER: terminal_logger})
    return job, {**config, "loggers": {**config.get("loggers", {}), TERMINAL_LOGGER: {}}}


def listed_files(metadata: Mapping[str, dg.MetadataValue]) -> Iterator[str]:
    """``name: a.md, b.md (draft), … and 12 more`` for each non-empty list of files in an
    asset's metadata."""
    from knowledge_assets.defs.metadata import rows_left_out
    from knowledge_assets.search_cli import shown_path

    for name, value in metadata.items():
        if not isinstance(value, dg.TableMetadataValue) or not value.records:
            continue
        records = list(value.records)
        # A long list's last record counts the rows the materialization left out.
        hidden = rows_left_out(records[-1]) or 0
        records = records[:-1] if hidden else records
        items = [_item(record.data, shown_path) for record in records[:SHOWN_PER_LIST]]
        more = len(records) - len(items) + hidden
        tail = f", … and {more:,} more" if more > 0 else ""
        yield f"{name.replace('_', ' ')}: " + ", ".join(items) + tail


# Columns whose values say themselves (``a.md (new)``); others are named (``key date``).
_SELF_EXPLAINING = frozenset({"change", "reason", "warning", "section"})


def _item(data: Mapping[str, Any], show: Callable[[str], str]) -> str:
    """A table row as ``file (the rest)``; a row without a file as its values."""
    values = {k: v for k, v in data.items() if v not in (None, "")}
    head = values.pop("file", None)
    rest = ", ".join(str(v) if k in _SELF_EXPLAINING else f"{k} {v}" for k, v in values.items())
    if head is None:
        return show(rest)
    return show(str(head)) + (f" ({show(rest)})" if rest else "")
