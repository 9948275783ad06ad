"""``knowledge-assets hooks install``: a git ``post-commit`` hook that keeps the index current.

The hook runs ``knowledge-assets update`` in the background and returns at once, so a commit is
never held up by syncing or embedding; the update's output goes to ``knowledge-assets.log`` in the
repository's git folder. It only starts an update when the commit touched a note (``.md``,
``.markdown``) or a bookmark file (``.json``). A hook someone else wrote is never overwritten.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MARKER = "# knowledge-assets post-commit hook"
HOOK_NAME = "post-commit"
SIDE_NAME = "knowledge-assets-post-commit"  # beside someone else's post-commit hook
LOG_NAME = "knowledge-assets.log"


class HookError(RuntimeError):
    """The hook could not be installed; the message says what to do."""


@dataclass(frozen=True)
class Installed:
    """Where the hook went and where its runs log to."""

    hook: Path
    log: Path
    replaced: bool


def git_path(repo: Path, name: str) -> Path:
    """A path inside the repository's git folder (``hooks`` honours ``core.hooksPath``)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--path-format=absolute", "--git-path", name],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
    except FileNotFoundError:
        raise HookError("git is not installed") from None
    except subprocess.CalledProcessError:
        raise HookError(
            f"{repo} is not inside a git repository: run `git init` there first"
        ) from None
    return Path(out)


def hook_script(project: Path, python: str, vault: Path, log: Path, *, no_embeddings: bool) -> str:
    """The hook's text. Settings that are not secrets are fixed at install time (defaults the
    caller's environment may still override); secrets come from the environment of the commit."""
    args = ["-m", "knowledge_assets.cli", "update", "--quiet"]
    if no_embeddings:
        args.append("--no-embeddings")
    command = " ".join(shlex.quote(a) for a in [python, *args])
    data_dir = os.environ.get("KA_DATA_DIR") or str(project / ".data")
    return f"""#!/bin/sh
{MARKER} (written by `knowledge-assets hooks install`; remove it with `hooks uninstall`).
# Starts an incremental update in the background and returns at once: the commit is not held up.
git -c core.quotePath=false diff-tree --root --no-commit-id --name-only -r HEAD 2>/dev/null \\
  | grep -qiE '\\.(md|markdown|json)"?$' || exit 0
export KA_VAULT_PATH="${{KA_VAULT_PATH:-{vault}}}"
export KA_DATA_DIR="${{KA_DATA_DIR:-{data_dir}}}"
cd {shlex.quote(str(project))} || exit 0
nohup {command} >> {shlex.quote(str(log))} 2>&1 < /dev/null &
exit 0
"""


def install(vault: Path, project: Path, *, no_embeddings: bool = False) -> Installed:
    """Write the post-commit hook into the git repository holding ``vault``."""
    vault = vault.expanduser().resolve()
    hooks = git_path(vault, "hooks")
    hook = hooks / HOOK_NAME
    foreign = hook.exists() and MARKER not in hook.read_text(errors="replace")
    # Someone else's hook is never overwritten: ours goes beside it, for theirs to call.
    target = hooks / SIDE_NAME if foreign else hook
    replaced = target.exists()
    log = git_path(vault, LOG_NAME)
    hooks.mkdir(parents=True, exist_ok=True)
    target.write_text(hook_script(project, sys.executable, vault, log, no_embeddings=no_embeddings))
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if foreign:
        raise HookError(
            f"{hook} already exists and was not written by knowledge-assets, so the update hook"
            f" went to {target}: add this line to {hook} to run it too: {shlex.quote(str(target))}"
        )
    return Installed(hook=hook, log=log, replaced=replaced)


def uninstall(vault: Path) -> Path | None:
    """Remove the hook (and the one written beside a foreign hook) if knowledge-assets wrote
    it; returns the removed path."""
    hooks = git_path(vault.expanduser().resolve(), "hooks")
    removed = None
    for hook in (hooks / SIDE_NAME, hooks / HOOK_NAME):
        if hook.exists() and MARKER in hook.read_text(errors="replace"):
            hook.unlink()
            removed = hook
    return removed
