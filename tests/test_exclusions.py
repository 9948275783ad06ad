"""Vault folders and files left out of the index, as Obsidian's *Excluded files* setting leaves
them out of its search (``.obsidian/app.json``) and as ``KA_VAULT_EXCLUDE`` names them."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest import store
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.exclusions import (
    Exclusions,
    SettingsUnreadable,
    obsidian_filters,
)
from knowledge_assets.core.sources.github import GitHubSource
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.defs.ingest.assets import raw_metadata
from tests.fakes.github_server import FakeGitHub


@pytest.mark.parametrize(
    ("entry", "path", "excluded"),
    [
        ("Templates/", "Templates/日記.md", True),
        ("Templates/", "Templates2/a.md", False),
        ("Templates", "Templates/日記.md", True),
        ("/Templates/", "Templates/日記.md", True),  # a leading slash: from the vault's root
        ("Daily/2023", "Daily/2023-01-01.md", True),  # Obsidian: a prefix of the path
        ("Daily/2023", "Daily/2024-01-01.md", False),
        ("inbox.md", "inbox.md", True),
        ("*.excalidraw.md", "drawings/図.excalidraw.md", True),
        ("*.excalidraw.md", "drawings/図.md", False),
        ("/^Clippings\\//", "Clippings/記事.md", True),
        ("/^Clippings\\//", "notes/Clippings/記事.md", False),
        ("/[unclosed/", "[unclosed.md", False),  # not a regular expression: ignored
        # A folder's name may hold brackets: they are no character class.
        ("Archive [2020]/", "Archive [2020]/メモ.md", True),
        ("Archive [2020]/", "Archive 2/メモ.md", False),
        ("*[old].md", "notes/a [old].md", True),
        ("*[old].md", "notes/ao.md", False),
        # macOS may list a name decomposed (ブ as フ and ゛) where the setting holds it composed.
        ("ブログ/", unicodedata.normalize("NFD", "ブログ/記事.md"), True),
        (unicodedata.normalize("NFD", "ブログ/"), "ブログ/記事.md", True),
        ("/^ブログ\\//", unicodedata.normalize("NFD", "ブログ/記事.md"), True),
        ("Templates\\", "Templates/日記.md", True),  # a Windows separator
        # An entry naming no path leaves nothing out (as a prefix it matched every path).
        ("/", "日記.md", False),
        ("//", "日記.md", False),
        ("\\", "日記.md", False),
    ],
)
def test_an_entry_leaves_out_the_paths_it_names(entry: str, path: str, excluded: bool) -> None:
    assert Exclusions([entry]).excludes(path) is excluded


@pytest.mark.parametrize("entry", ["/", "//", "Archive [2020]/", "ブログ/"])
def test_a_vault_walk_prunes_only_the_folders_an_entry_names(tmp_path: Path, entry: str) -> None:
    for folder in ("Archive [2020]", "ブログ", "日記"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "メモ.md").write_text("本文", encoding="utf-8")
    kept = set(LocalSource(tmp_path, exclude=[entry]).scan())
    left_out = {f"{entry.strip('/')}/メモ.md"} if entry.strip("/") else set()
    assert {unicodedata.normalize("NFC", p) for p in kept} == {
        "Archive [2020]/メモ.md", "ブログ/メモ.md", "日記/メモ.md"
    } - left_out  # fmt: skip


def test_a_pattern_may_name_a_folder_by_itself() -> None:
    exclusions = Exclusions(["Archive/*/old"])
    assert exclusions.excludes_folder("Archive/2020/old")
    assert exclusions.excludes_anywhere("Archive/2020/old/メモ.md")
    assert not exclusions.excludes_anywhere("Archive/2020/new/メモ.md")


def test_a_regular_expression_leaves_out_a_folder_only_when_it_matches_its_files() -> None:
    """``/old$/`` matched the folder's name and pruned it, though it matches none of its files."""
    assert not Exclusions(["/old$/"]).excludes_folder("notes/old")
    assert not Exclusions(["/old$/"]).excludes_anywhere("notes/old/メモ.md")
    assert Exclusions(["/^Clippings\\//"]).excludes_folder("Clippings")


@pytest.mark.parametrize(
    ("text", "filters"),
    [
        ('{"userIgnoreFilters": ["Templates/", "/^x/"]}', ("Templates/", "/^x/")),
        ('{"alwaysUpdateLinks": true}', ()),
        ('{"userIgnoreFilters": []}', ()),
    ],
)
def test_obsidians_excluded_files_are_read_from_its_settings(
    tmp_path: Path, text: str, filters: tuple[str, ...]
) -> None:
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_text(text, encoding="utf-8")
    assert obsidian_filters(tmp_path) == filters
    assert obsidian_filters(tmp_path / "no-vault") == ()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"{not json", "is not valid JSON (Expecting property name"),
        (b"[]", "holds a JSON list, not an object"),
        (b'"Templates/"', "holds a JSON string, not an object"),
        (b'{"userIgnoreFilters": "Templates/"}', '"userIgnoreFilters" that is not a list'),
        (b'{"userIgnoreFilters": ["Templates/", 3]}', "not a list of texts"),
        (b'{"userIgnoreFilters": ["\x83e"]}', "is not UTF-8 text"),
        # ignored, the entry's notes (a private folder, perhaps) were indexed unsaid
        (
            b'{"userIgnoreFilters": ["/(/"]}',
            "entry '/(/' that is not a regular expression Python reads (missing ), unterminated subpattern at position 0)",
        ),
        (
            b'{"userIgnoreFilters": ["/^\\\\p{Script=Han}/"]}',
            "that is not a regular expression Python reads (bad escape \\p",
        ),
        # valid JSON deeper than Python's parser goes: it failed the whole sync (RecursionError)
        (b"[" * 200_000 + b"]" * 200_000, "is nested too deeply to be Obsidian's settings"),
        (b" " * 1_000_001, "is over 1,000,000 bytes"),
    ],
)
def test_a_settings_file_that_is_not_obsidians_settings_is_named_with_its_reason(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    """Taken for "no Excluded files", it had the folders the user left out indexed unsaid."""
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_bytes(data)
    with pytest.raises(SettingsUnreadable, match=re.escape(reason)):
        obsidian_filters(tmp_path)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_settings_file_that_is_no_regular_file_is_named_not_read(
    tmp_path: Path, kind: str
) -> None:
    """Reading a named pipe blocked the sync (and the sensor) for good; a link to a device that
    never ends would be read without end."""
    (tmp_path / ".obsidian").mkdir()
    settings = tmp_path / ".obsidian" / "app.json"
    if kind == "fifo":
        os.mkfifo(settings)
    else:
        settings.symlink_to("/dev/zero")
    with pytest.raises(SettingsUnreadable, match="is not a regular file"):
        obsidian_filters(tmp_path)


def test_unreadable_settings_hold_new_notes_back_and_delete_none_until_fixed(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    settings = vault / ".obsidian" / "app.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"userIgnoreFilters": ["Templates/"]}), encoding="utf-8")
    with db.connect(db_url) as conn:
        assert sorted(sync_source(conn, LocalSource(vault)).new) == ["drawings/図.excalidraw.md", "日記/一日.md"]  # fmt: skip
        settings.write_text('{"userIgnoreFilters": ["Templates/"', encoding="utf-8")
        (vault / "日記/二日.md").write_text("# 二日\n", encoding="utf-8")
        (vault / "drawings/図.excalidraw.md").unlink()
        broken = sync_source(conn, LocalSource(vault))
        reasons = dict(store.rejections(conn, "docs_local"))
        still = sync_source(conn, LocalSource(vault))
        settings.write_text(json.dumps({"userIgnoreFilters": ["Templates/"]}), encoding="utf-8")
        source = LocalSource(vault)
        head = source.head()
        fixed = sync_source(conn, source)
        after = dict(store.rejections(conn, "docs_local"))
    # No excluded note indexed, none deleted for the file; a note really gone still goes.
    assert (broken.new, broken.deleted) == ([], ["drawings/図.excalidraw.md"])
    assert reasons[".obsidian/app.json"].startswith(
        "is not valid JSON (Expecting ',' delimiter, line 1 column 36): Obsidian's Excluded files"
        " are unknown, so 3 new notes wait until it is fixed"
    )
    assert "set Excluded files again in Obsidian" in reasons[".obsidian/app.json"]
    assert head != broken.head  # the sensor sees the fix
    # Named as unreadable at every run while it is, never as a file unchanged since or gone.
    assert [p for p, _ in still.unreadable] == [".obsidian/app.json"]
    assert (still.still_rejected, still.new, still.deleted) == ([], [], [])
    assert "0 rejected, .obsidian/app.json unreadable" in raw_metadata(still, "docs_local")["summary"].value  # fmt: skip
    assert (fixed.new, fixed.forgotten, after) == (["日記/二日.md"], [], {})


def test_a_note_renamed_while_the_settings_are_unreadable_stays_until_they_are_fixed(
    db_url: str, tmp_path: Path
) -> None:
    """Its new path waits (it may be an excluded folder): deleting its old path took it out of
    search until the fix, while the run said stored notes are kept."""
    vault = _vault(tmp_path / "vault")
    settings = vault / ".obsidian" / "app.json"
    settings.parent.mkdir()
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        settings.write_text("{not json", encoding="utf-8")
        (vault / "日記/一日.md").rename(vault / "日記/ついたち.md")
        broken = sync_source(conn, LocalSource(vault))
        held = set(store.stored_paths(conn, "docs_local"))
        settings.write_text("{}", encoding="utf-8")
        fixed = sync_source(conn, LocalSource(vault))
        after = set(store.stored_paths(conn, "docs_local"))
    assert (broken.new, broken.deleted) == ([], []) and "日記/一日.md" in held
    assert fixed.renamed == [("日記/一日.md", "日記/ついたち.md")] and fixed.deleted == []
    assert "日記/ついたち.md" in after and "日記/一日.md" not in after


def _vault(root: Path) -> Path:
    for path in (
        "日記/一日.md",
        "Templates/日記.md",
        "Templates/会議.md",
        "drawings/図.excalidraw.md",
    ):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"# {path}\n\n本文。\n", encoding="utf-8")
    return root


def test_excluded_notes_are_not_indexed_and_leave_the_store_once_excluded(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        first = sync_source(conn, LocalSource(vault))
        assert len(first.new) == 4
        (vault / ".obsidian").mkdir()
        (vault / ".obsidian" / "app.json").write_text(
            json.dumps({"userIgnoreFilters": ["Templates/"]}), encoding="utf-8"
        )
        again = sync_source(conn, LocalSource(vault, exclude=["*.excalidraw.md"]))
        stored = [r[0] for r in conn.execute("SELECT file_path FROM raw.docs_local")]
    assert sorted(again.deleted) == ["Templates/会議.md", "Templates/日記.md", "drawings/図.excalidraw.md"]  # fmt: skip
    assert stored == ["日記/一日.md"]


def test_a_github_vault_leaves_out_the_excluded_paths_in_full_and_diff_syncs() -> None:
    with FakeGitHub(token="ghp_exclusions_test") as gh:
        gh.commit({"vault/a.md": b"# a\n", "vault/Templates/t.md": b"# t\n", "vault/b/x.md": b"# x\n"})  # fmt: skip
        source = GitHubSource(
            gh.repo, prefix="vault", token="ghp_exclusions_test", base_url=gh.base_url,
            sleep=lambda _s: None, exclude=["Templates/", "/^b\\//"],
        )  # fmt: skip
        full = source.changes(None, {})
        assert full.fetch == ["vault/a.md"]
        gh.commit({"vault/Templates/t.md": b"# t edited\n", "vault/c.md": b"# c\n"})
        diff = source.changes(full.head, {"vault/a.md": full.versions["vault/a.md"]})
        assert diff.fetch == ["vault/c.md"]


def test_a_github_note_excluded_since_it_was_stored_leaves_the_store_without_a_full_sync() -> None:
    """A comparison lists only the files that changed: a stored note under a folder excluded
    since stays unless it is listed as gone (and a removed file is gone, excluded or not)."""
    with FakeGitHub(token="ghp_exclusions_test") as gh:
        gh.commit({"vault/a.md": b"# a\n", "vault/Templates/t.md": b"# t\n", "vault/old/o.md": b"# o\n"})  # fmt: skip
        before = GitHubSource(
            gh.repo, prefix="vault", token="ghp_exclusions_test", base_url=gh.base_url,
            sleep=lambda _s: None,
        )  # fmt: skip
        full = before.changes(None, {})
        assert sorted(full.fetch) == ["vault/Templates/t.md", "vault/a.md", "vault/old/o.md"]
        known = dict(full.versions)
        after = GitHubSource(
            gh.repo, prefix="vault", token="ghp_exclusions_test", base_url=gh.base_url,
            sleep=lambda _s: None, exclude=["Templates/", "old/"],
        )  # fmt: skip
        same_head = after.changes(full.head, known)
        assert sorted(same_head.deleted) == ["vault/Templates/t.md", "vault/old/o.md"]
        gh.commit({"vault/a.md": b"# a edited\n", "vault/old/o.md": None})
        diff = after.changes(full.head, known)
    assert diff.fetch == ["vault/a.md"]
    assert sorted(diff.deleted) == ["vault/Templates/t.md", "vault/old/o.md"]


def test_a_github_note_no_longer_excluded_comes_back_at_the_next_sync(db_url: str) -> None:
    """A comparison lists only the files a commit changed: notes under a folder excluded when
    they were synced never came back once the exclusion was removed, short of a full sync."""
    with FakeGitHub(token="ghp_exclusions_test") as gh:
        gh.commit({"vault/a.md": b"# a\n", "vault/Templates/t.md": b"# t\n"})

        def source(*exclude: str) -> GitHubSource:
            return GitHubSource(
                gh.repo, prefix="vault", token="ghp_exclusions_test", base_url=gh.base_url,
                sleep=lambda _s: None, exclude=exclude,
            )  # fmt: skip

        with db.connect(db_url) as conn:
            assert sync_source(conn, source("Templates/")).new == ["vault/a.md"]
            back = sync_source(conn, source())
            again = sync_source(conn, source())
            assert sync_source(conn, source("Templates/")).deleted == ["vault/Templates/t.md"]
    assert back.new == ["vault/Templates/t.md"] and (again.new, again.deleted) == ([], [])
