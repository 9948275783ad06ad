"""Take ``docs/backfill.png``: the dialog that backfills the ``embeddings`` model partitions.

The script builds a throwaway deployment: an embedded Postgres and a Dagster home in a
temporary directory, the sample vault, Voyage's ``voyage-3-lite`` offered as a second model
(``KA_EMBED_MODELS``; nothing is sent to Voyage), and the whole graph materialized once for the
default model (``knowledge-assets demo``). It then runs ``knowledge-assets dev`` with every sensor
stopped, opens the ``embeddings`` asset in headless Chromium (Debian's ``/usr/bin/chromium``),
clicks "Materialize…", selects every model partition so the dialog offers "Launch backfill",
and saves the screenshot without launching anything. Run it from the project's virtualenv::

    .venv/bin/python scripts/screenshot_backfill.py [--out docs/backfill.png]
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
SECOND_MODEL = {"KA_EMBED_MODELS": "voyage:voyage-3-lite"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Take docs/backfill.png.")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "backfill.png")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print(CHROMIUM_MISSING, file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="ka-screenshot-") as tmp:
        # One model embedded already by the demo run: the backfill is what adds the next one,
        # which has to be configured to be offered as a partition.
        with demo_deployment(Path(tmp), SECOND_MODEL) as (server, _):
            _screenshot(server.url, args.out, args.width, args.height)
    print(f"wrote {args.out}")
    return 0


def _screenshot(base_url: str, out: Path, width: int, height: int) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    with dagster_ui_page(width, height, TIMEOUT_MS) as page:
        page.goto(f"{base_url}/assets/embeddings")
        page.get_by_role("button", name="Materialize").first.click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_text("Partition selection")).to_be_visible()
        # Every model: the one already embedded only reuses its vectors, the new one is
        # embedded. (A single partition would be launched as one run, not a backfill.)
        dialog.get_by_role("button", name="All", exact=True).click()
        expect(dialog.get_by_role("button", name="Launch backfill")).to_be_enabled()
        screenshot(page, out, settle_ms=500)  # let the selection summary settle


if __name__ == "__main__":
    sys.exit(main())
