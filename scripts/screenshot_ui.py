"""Take the UI screenshots in ``docs/``: the asset graph, an asset's overview (description,
columns, metadata), an asset's checks, and a run.

Like ``scripts/screenshot_backfill.py`` it builds a throwaway deployment
(``tests.browser_support.demo_deployment``: an embedded Postgres and a Dagster home in a
temporary directory, the sample vault, one ``knowledge-assets demo`` run, then
``knowledge-assets dev`` with automation stopped) and opens each page in headless Chromium
(Debian's ``/usr/bin/chromium``). Run it from the project's virtualenv::

    .venv/bin/python scripts/screenshot_ui.py [--out-dir docs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser_support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_MISSING,
    dagster_ui_page,
    demo_deployment,
    screenshot,
)

TIMEOUT_MS = 60_000
SETTLE_MS = 1500  # lazy panels fill in after the page reports it has loaded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Take the UI screenshots in docs/.")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "docs")
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print(CHROMIUM_MISSING, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ka-screenshot-") as tmp:
        with demo_deployment(Path(tmp)) as (server, run_id):
            _screenshots(server.url, run_id, args.out_dir)
    print(f"wrote the screenshots to {args.out_dir}")
    return 0


def _screenshots(base_url: str, run_id: str, out: Path) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    with dagster_ui_page(1400, 900, TIMEOUT_MS) as page:
        page.goto(f"{base_url}/overview")
        skip = page.get_by_role("button", name="Skip")
        if skip.is_visible(timeout=10_000):
            skip.click()
        # Everything upstream of embeddings, expanded (the global view starts with the
        # groups collapsed).
        page.goto(f"{base_url}/assets/embeddings?view=lineage&lineageScope=upstream&lineageDepth=4")
        expect(page.get_by_text("latest_docs").first).to_be_visible()
        page.wait_for_timeout(3000)  # the graph lays itself out after loading
        screenshot(page, out / "ui-graph.png", settle_ms=SETTLE_MS)

        page.goto(f"{base_url}/assets/chunks")
        expect(page.get_by_text("The searchable sections").first).to_be_visible()
        screenshot(page, out / "ui-asset.png", full_page=True, settle_ms=SETTLE_MS)

        page.goto(f"{base_url}/assets/embeddings?view=checks")
        expect(page.get_by_text("active_model_covers_every_chunk").first).to_be_visible()
        screenshot(page, out / "ui-checks.png", settle_ms=SETTLE_MS)

        page.goto(f"{base_url}/runs/{run_id}")
        expect(page.get_by_text("Success").first).to_be_visible()
        screenshot(page, out / "ui-run.png", settle_ms=SETTLE_MS)


if __name__ == "__main__":
    sys.exit(main())
