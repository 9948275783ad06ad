"""Whether a local process still runs, for the records that outlive the process they name (the
embedded server's user list, a run's process tag)."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """True while a process with id ``pid`` exists on this machine, whoever owns it."""
    try:
        os.kill(pid, 0)  # signal 0 only checks that the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True
