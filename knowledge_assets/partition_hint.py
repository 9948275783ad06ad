"""A one-line message instead of a traceback when Dagster's CLI is asked for ``embeddings``
without a partition (``dg launch --assets embeddings``).

Dagster's CLI refuses a partitioned asset without ``--partition`` with an internal check failure
before any project code runs, so the only place to word it is the process's exception hook. The
process that raises it has loaded the code location, which installs this hook; every other
exception goes to the hook that was there before.
"""

from __future__ import annotations

import sys
from types import TracebackType

_NO_PARTITION = "no '--partition' option was provided"


def _partition_hint(
    kind: type[BaseException], error: BaseException, tb: TracebackType | None
) -> None:
    if _NO_PARTITION not in str(error):
        _previous_hook(kind, error, tb)
        return
    from knowledge_assets.defs.index.partitions import model_keys

    keys = model_keys()
    print(
        f"error: embeddings has one partition per embedding model ({', '.join(keys)}): "
        f"add --partition {keys[0]}",
        file=sys.stderr,
    )


_previous_hook = sys.excepthook


def install() -> None:
    """Put the hint in front of the current exception hook (once per process)."""
    global _previous_hook
    if sys.excepthook is not _partition_hint:
        _previous_hook = sys.excepthook
        sys.excepthook = _partition_hint
