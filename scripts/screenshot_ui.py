"""Take the UI screenshots in ``docs/``: the asset graph, an asset's overview (description,
columns, metadata), an asset's checks, a run, and a first build's log filtered to its progress
lines.

Like ``scripts/screenshot_backfill.py`` it builds a throwaway deployment
(``tests.browser_support.demo_deployment``: an embedded Postgres and a Dagster home in a
temporary directory, the sample vault, one ``knowledge-assets demo`` run, then
``knowledge-assets dev`` with automation stopped) and opens each page in headless Chromium
(Debian's ``/usr/bin/chromium``). The progress lines need a vault large enough to take a
while: a second deployment gets the jsquad notes of ``../shared/eval`` replicated, as
``bench/scale.py`` does (``--progress-notes 0`` skips it). Run it from the project's
virtualenv::

    .venv/bin/python scripts/screenshot_ui.py [--out-dir docs] [--progress-notes 600]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from common import JSQUAD  # noqa: E402
from scale_vaults import build_vault  # noqa: E402

from tests.browser_support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_MISSING,
    dagster_ui_page,
    demo_deployment,
    screenshot,
)

TIMEOUT_MS = 60_000
SETTLE_MS = 1500  # lazy panels fill in after the page reports it has loaded
# In every progress line (``chunks: 250/600 notes (41%), 85 notes/s, about 4 s left``), as a
# rate per second: the log's filter keeps those lines and hides the lines without it.
PROGRESS_FILTER = "/s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Take the UI screenshots in docs/.")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "docs")
    parser.add_argument(
        "--progress-notes", type=int, default=600, metavar="N",
        help="notes of the first build whose progress lines ui-progress.png shows (0: skip it)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print(CHROMIUM_MISSING, file=sys.stderr)
        return 2
    if args.progress_notes and not (JSQUAD / "vault").is_dir():
        print(f"{JSQUAD / 'vault'} is missing: put ../shared beside the project, or pass"
              " --progress-notes 0", file=sys.stderr)  # fmt: skip
        return 2
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    with tempfile.TemporaryDirectory(prefix="ka-screenshot-") as tmp:
        with demo_deployment(Path(tmp) / "sample") as (server, run_id):
            _screenshots(server.url, run_id, args.out_dir)
        if args.progress_notes:
            notes = Path(tmp) / "notes"
            build_vault(notes, args.progress_notes)
            with demo_deployment(Path(tmp) / "large", notes=notes) as (server, run_id):
                _progress(server.url, run_id, args.out_dir / "ui-progress.png")
    print(f"wrote the screenshots to {args.out_dir}")
    return 0


def _screenshots(base_url: str, run_id: str, out: Path) -> None:
    from playwright.sync_api import expect

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
        # The checks list also renders each name in a hidden element that measures it for
        # truncation, and that one may come first.
        check = page.get_by_text("active_model_covers_every_chunk").filter(visible=True)
        expect(check.first).to_be_visible()
        screenshot(page, out / "ui-checks.png", settle_ms=SETTLE_MS)

        _open_run(page, base_url, run_id)
        screenshot(page, out / "ui-run.png", settle_ms=SETTLE_MS)


def _progress(base_url: str, run_id: str, out: Path) -> None:
    """A first build's run log, filtered to its progress lines."""
    from playwright.sync_api import expect

    with dagster_ui_page(1400, 900, TIMEOUT_MS) as page:
        _open_run(page, base_url, run_id)
        page.get_by_placeholder("Filter").first.fill(PROGRESS_FILTER)
        expect(page.get_by_text("vector index:").first).to_be_visible()
        page.mouse.move(800, 880)  # below the log's lines: no hover marks on the timeline
        screenshot(page, out, settle_ms=SETTLE_MS)


def _open_run(page: Any, base_url: str, run_id: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{base_url}/runs/{run_id}")
    expect(page.get_by_text("Success").first).to_be_visible()


if __name__ == "__main__":
    sys.exit(main())
