"""``knowledge-assets hooks install``: a git hook that keeps the index current (seed 002, 5.1/5.2).

The ``post-commit`` hook (the default) runs ``knowledge-assets update`` in the background and
returns at once, so a commit is never held up by syncing or embedding. It only starts an update
when the commit touched a note (``.md``, ``.markdown``) or a bookmark file (``.json``).
The ``pre-push`` hook (``--pre-push``) brings the index up to date before each push and says so
in one line; the push goes on whether the update succeeds or not (the index is local, and a
failed update must not keep notes from their remote). Either way the update's output goes to
``knowledge-assets.log`` in the repository's git folder. A hook someone else wrote is never
overwritten.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

POST_COMMIT, PRE_PUSH = "post-commit", "pre-push"
KINDS = (POST_COMMIT, PRE_PUSH)
LOG_NAME = "knowledge-assets.log"


def marker(kind: str = POST_COMMIT) -> str:
    """The line that marks a hook of ``kind`` as written by knowledge-assets."""
    return f"# knowledge-assets {kind} hook"


def side_name(kind: str = POST_COMMIT) -> str:
    """Where the hook goes beside someone else's hook of the same kind."""
    return f"knowledge-assets-{kind}"


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


def hook_script(
    project: Path, python: str, vault: Path, log: Path, *, no_embeddings: bool,
    kind: str = POST_COMMIT,
) -> str:  # fmt: skip
    """The hook's text. Settings that are not secrets are fixed at install time (defaults the
    caller's environment may still override); secrets come from the environment of the commit
    or push."""
    args = ["-m", "knowledge_assets.cli", "update", "--quiet"]
    if no_embeddings:
        args.append("--no-embeddings")
    command = " ".join(shlex.quote(a) for a in [python, *args])
    data_dir = os.environ.get("KA_DATA_DIR") or str(project / ".data")
    # Quoted for the shell: a folder's name may hold a space, a quote or a $.
    setup = "".join(
        f'[ -n "${{{name}:-}}" ] || {name}={shlex.quote(value)}\nexport {name}\n'
        for name, value in (("KA_VAULT_PATH", str(vault)), ("KA_DATA_DIR", data_dir))
    )
    setup += f"cd {shlex.quote(str(project))} || exit 0\n"
    head = f"#!/bin/sh\n{marker(kind)} (written by `knowledge-assets hooks install`;"
    head += " remove it with `hooks uninstall`).\n"
    logged = shlex.quote(str(log))
    if kind == PRE_PUSH:
        return f"""{head}# Brings the index up to date before the push; the push goes on either way.
{setup}echo "knowledge-assets: updating the index before the push" >&2
if {command} >> {logged} 2>&1 < /dev/null; then
  echo "knowledge-assets: index up to date" >&2
else
  echo "knowledge-assets: the index update failed (the push goes on); see "{logged} >&2
fi
exit 0
"""
    return f"""{head}# Starts an incremental update in the background and returns at once: the commit is not held up.
git -c core.quotePath=false diff-tree --root --no-commit-id --name-only -r HEAD 2>/dev/null \\
  | grep -qiE '\\.(md|markdown|json)"?$' || exit 0
{setup}nohup {command} >> {logged} 2>&1 < /dev/null &
exit 0
"""


def install(
    vault: Path, project: Path, *, no_embeddings: bool = False, kind: str = POST_COMMIT
) -> Installed:
    """Write the hook of ``kind`` into the git repository holding ``vault``."""
    vault = vault.expanduser().resolve()
    hooks = git_path(vault, "hooks")
    hook = hooks / kind
    foreign = hook.exists() and marker(kind) not in hook.read_text(errors="replace")
    # Someone else's hook is never overwritten: ours goes beside it, for theirs to call.
    target = hooks / side_name(kind) if foreign else hook
    replaced = target.exists()
    log = git_path(vault, LOG_NAME)
    hooks.mkdir(parents=True, exist_ok=True)
    script = hook_script(
        project, sys.executable, vault, log, no_embeddings=no_embeddings, kind=kind
    )
    target.write_text(script)
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if foreign:
        raise HookError(
            f"{hook} already exists and was not written by knowledge-assets, so the update hook"
            f" went to {target}: add this line to {hook} to run it too: {shlex.quote(str(target))}"
        )
    return Installed(hook=hook, log=log, replaced=replaced)


def uninstall(vault: Path) -> list[Path]:
    """Remove every hook knowledge-assets wrote (also those written beside a foreign hook);
    returns the removed paths."""
    hooks = git_path(vault.expanduser().resolve(), "hooks")
    removed = []
    for kind in KINDS:
        for hook in (hooks / side_name(kind), hooks / kind):
            if hook.exists() and marker(kind) in hook.read_text(errors="replace"):
                hook.unlink()
                removed.append(hook)
    return removed
