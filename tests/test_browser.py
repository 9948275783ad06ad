"""The Dagster UI end to end: ``knowledge-assets dev`` on a fresh database and a copy of the
sample vault, ``raw_docs`` materialized from the asset graph in headless Chromium, and the
materialization's counts shown on the asset page.

Screenshots of every step land in ``tests/artifacts/``. Deselect with ``-m "not browser"``.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser_support import (
    CHROMIUM,
    CHROMIUM_MISSING,
    EXAMPLE_VAULT,
    DagsterDev,
    dagster_ui_page,
    database_uri,
    screenshot,
)

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING),
]

ARTIFACTS = Path(__file__).parent / "artifacts"
RUN_TIMEOUT_S = 180
UI_TIMEOUT_MS = 30_000
SAMPLE_NOTES = 8  # Markdown files in examples/vault

_RUN_STATUS = "query ($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }"
_LATEST_MATERIALIZATION = """
query ($key: AssetKeyInput!) { assetOrError(assetKey: $key) {
  ... on Asset { assetMaterializations(limit: 1) { runId } } } }
"""


@pytest.fixture
def dagster_dev(tmp_path: Path, blank_db_url: str) -> Iterator[DagsterDev]:
    """``knowledge-assets dev`` on a fresh database with a copy of the sample vault and
    every sensor stopped, so the only runs are those launched from the UI."""
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    server = DagsterDev(tmp_path, database_uri(blank_db_url), vault)
    with server:
        yield server


@pytest.fixture
def page(dagster_dev: DagsterDev) -> Iterator[Page]:
    with dagster_ui_page(timeout_ms=UI_TIMEOUT_MS) as page:
        yield page


def _shot(page: Page, name: str) -> None:
    screenshot(page, ARTIFACTS / f"{name}.png", full_page=True)


def _wait_for_run(server: DagsterDev, run_id: str) -> str:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    status = "unknown"
    while time.monotonic() < deadline:
        status = server.graphql(_RUN_STATUS, {"id": run_id})["runOrError"].get("status", status)
        if status in ("SUCCESS", "FAILURE", "CANCELED"):
            return status
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} still {status} after {RUN_TIMEOUT_S} s")


def _latest_materialization_run(server: DagsterDev, asset: str) -> str | None:
    data = server.graphql(_LATEST_MATERIALIZATION, {"key": {"path": [asset]}})
    events = data["assetOrError"].get("assetMaterializations") or []
    return events[0]["runId"] if events else None


def _metadata_value(page: Page, key: str) -> Locator:
    """The value cell of one row of the asset page's metadata table. The first matching row:
    a table value further down (e.g. what_changed) has rows of its own naming the same words."""
    row = page.get_by_role("row").filter(has=page.get_by_role("cell", name=key, exact=True))
    return row.first.get_by_role("cell").last


def test_materialize_raw_docs_from_the_asset_graph(dagster_dev: DagsterDev, page: Page) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)
    try:
        # The asset graph of the ingest group; select raw_docs and materialize just it.
        page.goto(f"{dagster_dev.url}/locations/knowledge_assets/asset-groups/ingest")
        node = page.get_by_text("raw_docs", exact=True).first
        expect(node).to_be_visible()
        _shot(page, "01_asset_graph")
        materialize = page.get_by_role("button", name="Materialize selected")
        for attempt in range(3):
            # Dagster's community dialog can open over the graph as the node is clicked and
            # take the click; the page's handler closes it, and the node is clicked again.
            node.click()
            try:
                expect(materialize).to_be_enabled(timeout=UI_TIMEOUT_MS // 3)
                break
            except AssertionError:
                if attempt == 2:
                    raise
        _shot(page, "02_raw_docs_selected")
        materialize.click()

        # The toast names the run; its "View" link opens the run page, whose URL has the id.
        launched = page.get_by_text(re.compile(r"Launched run \w+"))
        expect(launched).to_be_visible()
        _shot(page, "03_run_launched")
        view = page.get_by_role("button", name="View").or_(page.get_by_role("link", name="View"))
        view.first.click()
        page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}"))
        run_id = page.url.rsplit("/runs/", 1)[1].split("?")[0]
        short_id = re.search(r"Launched run (\w+)", launched.inner_text())
        assert short_id and run_id.startswith(short_id.group(1))

        status = _wait_for_run(dagster_dev, run_id)
        _shot(page, "04_run_page")
        assert status == "SUCCESS", f"run {run_id} ended {status}:\n{dagster_dev.log_tail()}"
        expect(page.get_by_text("Success", exact=True).first).to_be_visible()

        # The asset page shows this run's materialization and its counts.
        assert _latest_materialization_run(dagster_dev, "raw_docs") == run_id
        page.goto(f"{dagster_dev.url}/assets/raw_docs")
        expect(_metadata_value(page, "new")).to_have_text(str(SAMPLE_NOTES))
        for key in ("changed", "unchanged", "deleted", "renamed", "rejected"):
            expect(_metadata_value(page, key)).to_have_text("0")
        expect(_metadata_value(page, "summary")).to_contain_text(f"{SAMPLE_NOTES} new")
        _shot(page, "05_raw_docs_asset")
    except BaseException:
        _shot(page, "failure")
        raise


_LAUNCH_RAW_DOCS = """
mutation ($params: ExecutionParams!) { launchRun(executionParams: $params) {
  __typename ... on LaunchRunSuccess { run { runId } } } }
"""


def test_a_run_stopped_by_a_setting_leads_its_run_page_with_the_fix(
    tmp_path: Path, blank_db_url: str
) -> None:
    """``KA_VAULT_PATH`` names no folder: the run's failure on its page starts with the line that
    says what to set, not with Dagster's wrapper of a resource's error."""
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)
    missing = tmp_path / "no-vault"
    selector = {
        "repositoryLocationName": "knowledge_assets", "repositoryName": "__repository__",
        "jobName": "__ASSET_JOB", "assetSelection": [{"path": ["raw_docs"]}],
    }  # fmt: skip
    with (
        DagsterDev(tmp_path, database_uri(blank_db_url), missing) as server,
        dagster_ui_page(timeout_ms=UI_TIMEOUT_MS) as page,
    ):
        launched = server.graphql(_LAUNCH_RAW_DOCS, {"params": {"selector": selector}})
        run_id = launched["launchRun"]["run"]["runId"]
        assert _wait_for_run(server, run_id) == "FAILURE"
        page.goto(f"{server.url}/runs/{run_id}")
        page.get_by_placeholder("Filter").first.fill("type:STEP_FAILURE")
        line = f"SetupError: vault folder {missing} does not exist: set KA_VAULT_PATH"
        expect(page.get_by_text(line).first).to_be_visible()
        _shot(page, "06_run_stopped_by_a_setting")
        page.get_by_placeholder("Filter").first.fill("")
        expect(page.get_by_text("RUN_FAILURE").first).to_be_visible()
        assert "Error executing resource_fn" not in page.content()
