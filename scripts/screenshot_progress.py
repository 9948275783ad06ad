"""Take ``docs/ui-progress.png``: the log of a first build, filtered to its progress lines.

A first build of a few hundred notes writes a progress line every few seconds per stage (files
read, notes chunked, passages embedded, the index builds), with rate and time left. This script
builds such a vault (the jsquad notes of ``../shared/eval`` replicated, as ``bench/scale.py``
does), a throwaway deployment around it (``tests.browser_support.demo_deployment``: an embedded
Postgres, one ``knowledge-assets demo`` run with the default model, ``knowledge-assets dev``),
and opens that run's page in headless Chromium (Debian's ``/usr/bin/chromium``)::

    .venv/bin/python scripts/screenshot_progress.py [--notes 600] [--out docs/ui-progress.png]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

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
    parser = argparse.ArgumentParser(description="Take docs/ui-progress.png.")
    parser.add_argument("--notes", type=int, default=600, help="notes in the vault")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "ui-progress.png")
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print(CHROMIUM_MISSING, file=sys.stderr)
        return 2
    if not (JSQUAD / "vault").is_dir():
        print(f"{JSQUAD / 'vault'} is missing: clone ../shared beside the project", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ka-screenshot-") as tmp:
        notes = Path(tmp) / "notes"
        build_vault(notes, args.notes)
        with demo_deployment(Path(tmp) / "deployment", notes=notes) as (server, run_id):
            _screenshot(server.url, run_id, args.out)
    print(f"wrote {args.out}")
    return 0


def _screenshot(base_url: str, run_id: str, out: Path) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    with dagster_ui_page(1400, 900, TIMEOUT_MS) as page:
        page.goto(f"{base_url}/runs/{run_id}")
        expect(page.get_by_text("Success").first).to_be_visible()
        page.get_by_placeholder("Filter").first.fill(PROGRESS_FILTER)
        expect(page.get_by_text("vector index:").first).to_be_visible()
        page.mouse.move(800, 880)  # below the log's lines: no hover marks on the timeline
        screenshot(page, out, settle_ms=SETTLE_MS)


if __name__ == "__main__":
    sys.exit(main())
