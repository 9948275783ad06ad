"""The page's Content-Security-Policy in headless Chromium: the note view renders notes' HTML
through an allowlist, and should anything slip past it, the browser still runs no script the
page did not load from the server itself."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING),
]
# What a sanitizer miss would put in the page: a handler, a javascript: address, inline script.
SLIPPED = (
    '<img src="/nowhere.png" onerror="window.hacked = \'onerror\'">'
    '<a id="js" href="javascript:window.hacked = \'link\'">link</a>'
    "<iframe srcdoc=\"<script>parent.hacked = 'srcdoc'</script>\"></iframe>"
)


def test_html_that_slipped_into_a_note_runs_no_script(server_url: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "rain.md").write_text("# 雨\n\n| 左 | 右 |\n|:--|--:|\n| a | b |\n", encoding="utf-8")
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings())) as base,
        chromium_page(timeout_ms=60_000) as page,
    ):
        for address in ("/", "/notes/rain.md"):
            policy = httpx.get(base + address).headers.get("content-security-policy", "")
            assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, policy
        page.goto(base + "/notes/rain.md")
        expect(page.locator("#note-title")).to_have_text("雨")  # the page's own scripts run
        right = page.locator("#note-body td").last
        assert right.evaluate("e => getComputedStyle(e).textAlign") == "right"  # inline style kept
        page.evaluate("html => document.querySelector('#note-body').insertAdjacentHTML('beforeend', html)", SLIPPED)  # fmt: skip
        page.locator("#js").click()
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.hacked") is None
