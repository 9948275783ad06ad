"""Images in the note view: the vault's own image files show (found as Obsidian finds them), an
image the vault folder does not hold says so instead of looking like a missing note, and
``GET /api/attachments/{path}`` serves image files of the vault folder and nothing else. Unit
tests of the renderer, then the route on a real server."""

from __future__ import annotations

import http.client
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.api import attachments
from knowledge_assets.api.attachments import VaultFiles
from knowledge_assets.api.markdown import render_note
from knowledge_assets.core.links.resolve import NoteLinks
from tests.api_support import api_server
from tests.markdown_vault import png

NOTES = [("local", "docs/overview/ecosystem.md"), ("local", "docs/reference/jsx/README.md")]
NOTE = "docs/overview/ecosystem.md"
NOT_IN_VAULT = '<span class="image-missing">画像はボールトにありません: '
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>'


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A docs site kept as a vault: images beside notes and in an attachments folder, a hidden
    folder, a secret beside the vault, and symlinks that lead out of it or to a note."""
    root = tmp_path_factory.mktemp("images")
    vault = root / "vault"
    files = {
        "docs/overview/ecosystem/map.svg": SVG, "docs/overview/pic.png": png(),
        "attachments/diagram.png": png(), "docs/overview/ecosystem.md": b"# x\n",
        "docs/overview/my pic.png": png(),
        ".obsidian/icon.png": png(), "notes.txt": b"secret", "Photos/Cat.JPG": b"\xff\xd8\xff",
        # one file whose name holds a backslash: a Windows path, refused by name, not by absence
        "attachments\\diagram.png": png(),
    }  # fmt: skip
    for path, data in files.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_bytes(data)
    (root / "secret.png").write_bytes(b"not yours")
    os.symlink(root / "secret.png", vault / "outside.png")
    os.symlink(vault / "docs/overview/ecosystem.md", vault / "note.png")
    os.symlink(vault / "attachments/diagram.png", vault / "inside.png")
    return vault


def render(text: str, vault: Path | None, source: str = "local", path: str = NOTE) -> str:
    files = VaultFiles(vault) if vault else None
    return render_note(text, NoteLinks(path, lambda: NOTES, source=source, files=files))


def img(path: str, alt: str = "", extra: str = "") -> str:
    return (
        f'<img class="vault-image" src="/api/attachments/{path}" alt="{alt}"{extra} loading="lazy"'
    )


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("![写真](pic.png)", img("docs/overview/pic.png", "写真")),  # beside the note
        ("![](../overview/pic.png)", img("docs/overview/pic.png")),
        ("![](/attachments/diagram.png)", img("attachments/diagram.png")),  # from the root
        ("![](/overview/pic.png)", img("docs/overview/pic.png")),  # a docs site's root: docs/
        ("![[diagram.png]]", img("attachments/diagram.png")),  # Obsidian: by its name
        ("![[diagram.png|300]]", img("attachments/diagram.png", extra=' width="300"')),
        ("![[diagram.png|30x20]]", img("attachments/diagram.png", extra=' width="30" height="20"')),
        ("![[diagram.png|構成図]]", img("attachments/diagram.png", "構成図")),
        ("![[photos/cat.jpg]]", img("Photos/Cat.JPG")),  # case aside, as links to notes
        ("![](ecosystem/map.svg)", img("docs/overview/ecosystem/map.svg")),
        ("![](inside.png)", img("inside.png")),  # a symlink within the vault
        # A raw <img> whose src is written as an address (Notion's and Typora's exports).
        ('<img src="my%20pic.png">', img("docs/overview/my%20pic.png")),
        (
            "[![](/overview/ecosystem/map.svg)](/overview/ecosystem/map.svg)",
            '<a href="/api/attachments/docs/overview/ecosystem/map.svg">'
            + img("docs/overview/ecosystem/map.svg"),
        ),
        (
            "![図](/img/ecosystem.png)",
            NOT_IN_VAULT + 'ecosystem.png<span class="image-alt">図</span>',
        ),
        ("[![](/img/a.png)](/img/a.png)", "<p>" + NOT_IN_VAULT + "a.png</span></p>"),
        ("![](outside.png)", NOT_IN_VAULT + "outside.png</span>"),  # a symlink out of the vault
        ("![](note.png)", NOT_IN_VAULT + "note.png</span>"),  # a symlink to a note
        ("![](.obsidian/icon.png)", NOT_IN_VAULT + "icon.png</span>"),  # a hidden folder
        ("![](../../../secret.png)", NOT_IN_VAULT + "secret.png</span>"),
        (
            "![x](https://example.com/a.png)",
            '<img src="https://example.com/a.png" alt="x" loading="lazy" />',
        ),
    ],
)
def test_an_image_shows_from_the_vault_or_says_it_is_not_there(vault: Path, markdown: str, expected: str) -> None:  # fmt: skip
    html = render(markdown, vault)
    assert expected in html
    assert "wikilink missing" not in html  # never the look of a missing note


@pytest.mark.parametrize("source", ["github", "archive"])
def test_without_the_vault_folder_an_image_says_it_is_not_in_the_vault(vault: Path, source: str) -> None:  # fmt: skip
    """A GitHub vault has no files here; a declared source's images are not the vault's."""
    files = vault if source == "archive" else None
    html = render("![図](pic.png) ![[diagram.png]]", files, source=source)
    assert html.count(NOT_IN_VAULT) == 2 and "<img" not in html


def test_a_listing_in_progress_does_not_hold_up_other_notes(tmp_path: Path) -> None:
    """While one request lists a vault again, another is answered from the previous listing
    at once, and the next request after the walk sees the vault's new images."""
    (tmp_path / "a.png").write_bytes(png())
    files = VaultFiles(tmp_path)
    assert files.find("a.png", "") == "a.png"
    listing = attachments._CACHE[tmp_path]
    (tmp_path / "b.png").write_bytes(png())
    listing.at = 0.0  # the listing has expired
    found: list[str | None] = []
    with listing.walking:  # another request is walking the vault
        worker = threading.Thread(target=lambda: found.append(files.find("a.png", "")))
        worker.start()
        worker.join(timeout=10)
        assert not worker.is_alive(), "the request waited for the other request's walk"
        assert found == ["a.png"]
        assert files.find("b.png", "") is None  # not listed yet
    assert files.find("b.png", "") == "b.png"  # the walk came round


def test_a_vault_too_large_to_list_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("a.png", "b.png", "c.png", "d.png"):
        (tmp_path / name).write_bytes(png())
    monkeypatch.setattr(attachments, "MAX_LISTED", 2)
    monkeypatch.setattr(attachments, "INDEX_SECONDS", 0.0)
    files = VaultFiles(tmp_path)
    with caplog.at_level(logging.WARNING, logger=attachments.__name__):
        assert files.find("a.png", "") == "a.png"
        assert files.find("d.png", "") is None  # past the bound
        time.sleep(0.01)
        files.find("a.png", "")  # listed again: the warning is not repeated
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "more than 2 files" in warnings[0]


@pytest.fixture(scope="module")
def base(server_url: str, vault: Path) -> Iterator[str]:
    with api_server(server_url, Asker(LLMSettings()), vault=vault) as base:
        yield base


def test_an_image_of_the_vault_is_served_with_its_type(base: str) -> None:
    with httpx.Client(base_url=base, timeout=30) as client:
        found = client.get("/api/attachments/attachments/diagram.png")
        svg = client.get("/api/attachments/docs/overview/ecosystem/map.svg")
        jpeg = client.get("/api/attachments/Photos/Cat.JPG")
    assert found.status_code == 200 and found.content == png()
    assert found.headers["content-type"] == "image/png"
    assert found.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in found.headers["content-security-policy"]
    assert svg.headers["content-type"] == "image/svg+xml"
    # Opened on its own, the SVG is a download and may run nothing.
    assert svg.headers["content-disposition"] == "attachment"
    assert "default-src 'none'" in svg.headers["content-security-policy"]
    assert jpeg.headers["content-type"] == "image/jpeg"


def raw_get(base: str, path: str) -> int:
    """The status of GET ``path`` sent as written (httpx would resolve its dot segments)."""
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.mark.parametrize(
    "path",
    [
        "../secret.png", "..%2Fsecret.png", "%2E%2E/secret.png", "docs/..%2F..%2Fsecret.png",
        "%2Fetc%2Fpasswd", "outside.png",  # a symlink out of the vault
        "note.png",  # a symlink to a note: not an image whatever its name
        "notes.txt", "docs/overview/ecosystem.md", ".obsidian/icon.png", "docs", "nope.png",
        "attachments/diagram.png%00.txt", "attachments\\diagram.png",
    ],
)  # fmt: skip
def test_nothing_but_an_image_inside_the_vault_is_served(base: str, path: str) -> None:
    assert raw_get(base, "/api/attachments/" + path) == 404


def test_a_github_vault_serves_no_files(server_url: str) -> None:
    with api_server(server_url, Asker(LLMSettings())) as base:
        assert httpx.get(base + "/api/attachments/attachments/diagram.png").status_code == 404


def test_off_loopback_an_image_needs_the_token(server_url: str, vault: Path) -> None:
    with api_server(server_url, Asker(LLMSettings()), token="s3cret", vault=vault) as base:
        url = base + "/api/attachments/attachments/diagram.png"
        assert httpx.get(url).status_code == 401
        assert httpx.get(url, headers={"Authorization": "Bearer s3cret"}).status_code == 200
