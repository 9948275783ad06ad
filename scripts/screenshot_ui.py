"""Take the UI screenshots in ``docs/``: the asset graph, an asset's overview (description,
columns, metadata), an asset's checks, and a run.

Like ``scripts/screenshot_backfill.py`` it builds a throwaway deployment (an embedded Postgres
and a Dagster home in a temporary directory, the sample vault, one ``knowledge-assets demo``
run), starts ``knowledge-assets dev`` with automation stopped and opens each page in headless
Chromium (Debian's ``/usr/bin/chromium``). Run it from the project's virtualenv::

    .venv/bin/python scripts/screenshot_ui.py [--out-dir docs]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from knowledge_assets.core.embedded import start as embedded_server  # noqa: E402
from tests.browser_support import (  # noqa: E402
    CHROMIUM,
    EXAMPLE_VAULT,
    DagsterDev,
    chromium_args,
    database_uri,
)

TIMEOUT_MS = 60_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Take the UI screenshots in docs/.")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "docs")
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: apt-get install chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ka-screenshot-") as tmp:
        workdir = Path(tmp)
        vault = workdir / "vault"
        shutil.copytree(EXAMPLE_VAULT, vault)
        # Stopped (pg_ctl stop) on leaving the block, before the directory is removed.
        with embedded_server(workdir / "pg") as postgres:
            server = DagsterDev(workdir, database_uri(postgres.get_uri()), vault)
            demo = subprocess.run(
                [sys.executable, "-m", "knowledge_assets.cli", "demo"],
                cwd=ROOT,
                env=server.env,
                check=True,
                capture_output=True,
                text=True,
            )
            run_id = re.findall(r"run succeeded: (\S+)", demo.stdout)[-1]
            with server:
                _screenshots(server.url, run_id, args.out_dir)
    print(f"wrote the screenshots to {args.out_dir}")
    return 0


def _screenshots(base_url: str, run_id: str, out: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=chromium_args()
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(TIMEOUT_MS)
            page.add_locator_handler(
                page.get_by_text("Join the Dagster community"),
                lambda: page.get_by_role("button", name="Skip").click(),
            )
            page.goto(f"{base_url}/overview")
            skip = page.get_by_role("button", name="Skip")
            if skip.is_visible(timeout=10_000):
                skip.click()
            # Everything upstream of embeddings, expanded (the global view starts with the
            # groups collapsed).
            page.goto(
                f"{base_url}/assets/embeddings?view=lineage&lineageScope=upstream&lineageDepth=4"
            )
            expect(page.get_by_text("latest_docs").first).to_be_visible()
            page.wait_for_timeout(3000)  # the graph lays itself out after loading
            _shot(page, out / "ui-graph.png")

            page.goto(f"{base_url}/assets/chunks")
            expect(page.get_by_text("The searchable sections").first).to_be_visible()
            _shot(page, out / "ui-asset.png", full_page=True)

            page.goto(f"{base_url}/assets/embeddings?view=checks")
            expect(page.get_by_text("active_model_covers_every_chunk").first).to_be_visible()
            _shot(page, out / "ui-checks.png")

            page.goto(f"{base_url}/runs/{run_id}")
            expect(page.get_by_text("Success").first).to_be_visible()
            _shot(page, out / "ui-run.png")
        finally:
            browser.close()


def _shot(page: object, path: Path, full_page: bool = False) -> None:
    page.wait_for_timeout(1500)  # type: ignore[attr-defined]  # let lazy panels settle
    page.screenshot(path=str(path), full_page=full_page)  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
