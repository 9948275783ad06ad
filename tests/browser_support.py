"""Run ``knowledge-assets dev`` (Dagster webserver + daemon) in the background for browser tests
and the documentation screenshots: its own Dagster home, a given database and a given vault.
Open pages in headless Chromium and save what they show."""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import yaml

from knowledge_assets.core.database.db import PROJECT_ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_MISSING = f"{CHROMIUM} is missing (apt-get install chromium)"
EXAMPLE_VAULT = PROJECT_ROOT / "examples" / "vault"

_LOCATION_STATUS = """
query { workspaceOrError { ... on Workspace { locationEntries {
  name loadStatus locationOrLoadError { __typename ... on PythonError { message } }
} } } }
"""


def database_uri(conninfo: str) -> str:
    """A ``postgresql://`` URI for a libpq connection string (``key=value`` or already a URI):
    ``DATABASE_URL`` must be a URI, since Dagster's storage takes it as a SQLAlchemy URL."""
    import psycopg

    if "://" in conninfo:
        return conninfo
    info = {k: str(v) for k, v in psycopg.conninfo.conninfo_to_dict(conninfo).items()}
    user = urllib.parse.quote(info.pop("user", ""), safe="")
    password = info.pop("password", "")
    if password:
        user += ":" + urllib.parse.quote(password, safe="")
    host = info.pop("host", "")
    port = info.pop("port", "")
    if host.startswith("/"):  # a Unix socket directory goes into the query string
        info["host"], host = host, ""
        if port:
            info["port"], port = port, ""
    netloc = (user + "@" if user else "") + host + (":" + port if port else "")
    dbname = urllib.parse.quote(info.pop("dbname", ""), safe="")
    query = urllib.parse.urlencode(info)
    return f"postgresql://{netloc}/{dbname}" + ("?" + query if query else "")


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def chromium_args() -> list[str]:
    """Flags for Debian's Chromium in a container: no sandbox as root, no /dev/shm limits."""
    args = ["--disable-dev-shm-usage", "--disable-gpu"]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    return args


# One Chromium per test process, started by its first page and stopped as the process ends (or
# before a test that is not a browser test, see stop_browser):
# starting Playwright's driver and the browser took 1-2 s, which every browser test paid. Each
# page gets a browser context of its own, as isolated as a new browser (cookies, storage,
# history, routes).
_shared: dict[str, Any] = {}


def _browser() -> Browser:
    browser: Browser | None = _shared.get("browser")
    if browser is not None and browser.is_connected():
        return browser
    if "playwright" not in _shared:
        from playwright.sync_api import sync_playwright

        _shared["playwright"] = sync_playwright().start()
        atexit.register(stop_browser)
    browser = _shared["playwright"].chromium.launch(
        executable_path=str(CHROMIUM), headless=True, args=chromium_args()
    )
    _shared["browser"] = browser
    return browser


def stop_browser() -> None:
    """Stop the shared Chromium and Playwright's driver, if started. Playwright's sync API keeps
    an event loop running in the thread while it lives, so a test that runs asyncio itself (the
    MCP client) must not start with it alive: conftest stops it before every test not marked
    ``browser``."""
    with suppress(Exception):  # already gone with a crashed driver
        _shared.pop("browser").close()
    with suppress(Exception):
        _shared.pop("playwright").stop()


@contextmanager
def chromium_page(width: int = 1400, height: int = 900, timeout_ms: int = 30_000) -> Iterator[Page]:
    """A page of Debian's Chromium, headless, in a browser context of its own that is closed on
    leaving the block."""
    context = _browser().new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.set_default_timeout(timeout_ms)
        yield page
    finally:
        context.close()


@contextmanager
def dagster_ui_page(
    width: int = 1400, height: int = 900, timeout_ms: int = 30_000
) -> Iterator[Page]:
    """A :func:`chromium_page` for the Dagster UI, whose first visit may greet with a newsletter
    dialog: it is skipped whenever it shows up."""
    with chromium_page(width, height, timeout_ms) as page:
        page.add_locator_handler(
            page.get_by_text("Join the Dagster community"),
            lambda: page.get_by_role("button", name="Skip").click(),
        )
        yield page


def screenshot(page: Page, path: Path, *, full_page: bool = False, settle_ms: int = 0) -> None:
    """Save what ``page`` shows to ``path``, after ``settle_ms`` for lazy panels to settle."""
    from playwright.sync_api import expect

    if settle_ms:
        page.wait_for_timeout(settle_ms)
    # A dialog that showed up while settling is dismissed first: Playwright runs the page's
    # locator handlers (see dagster_ui_page) before an auto-waiting assertion, not before a
    # screenshot.
    expect(page.locator("body")).to_be_visible()
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=full_page)


@contextmanager
def demo_deployment(
    workdir: Path, env: dict[str, str] | None = None, notes: Path = EXAMPLE_VAULT
) -> Iterator[tuple[DagsterDev, str]]:
    """A throwaway deployment for the documentation screenshots, all under ``workdir``: a copy
    of the sample vault (or of the folder ``notes``), an embedded Postgres, the whole graph
    materialized once for the default model (``knowledge-assets demo``), then
    ``knowledge-assets dev`` with automation stopped. ``env`` adds settings for both. Yields
    the running server and the id of the demo's run."""
    from knowledge_assets.core.database.embedded import start as embedded_server

    vault = workdir / "vault"
    shutil.copytree(notes, vault)
    # Stopped (pg_ctl stop) on leaving the block, before the directory is removed.
    with embedded_server(workdir / "pg") as postgres:
        server = DagsterDev(workdir, database_uri(postgres.get_uri()), vault, env)
        demo = subprocess.run(
            [sys.executable, "-m", "knowledge_assets.cli", "demo"],
            cwd=PROJECT_ROOT,
            env=server.env,
            check=True,
            capture_output=True,
            text=True,
        )
        run_id = re.findall(r"run succeeded: (\S+)", demo.stdout)[-1]
        with server:
            yield server, run_id


class DagsterDev:
    """``knowledge-assets dev`` on a free loopback port, in its own process group.

    ``workdir`` receives the Dagster home (the project's ``dagster.yaml``, so runs and events go
    to the same Postgres as the knowledge store, with the run queue read every second),
    Dagster's local files and the log.
    The code servers listen on Unix sockets, so the webserver port is the only one taken.
    """

    def __init__(
        self, workdir: Path, database_url: str, vault: Path, env: dict[str, str] | None = None
    ) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "dagster-dev.log"
        self.home = workdir / "dagster_home"
        self.home.mkdir(parents=True, exist_ok=True)
        config = yaml.safe_load((PROJECT_ROOT / "dagster.yaml").read_text(encoding="utf-8"))
        # The daemon looks at the run queue every 5 s by default: a run launched from the UI
        # would wait 2.5 s on average before it starts. Once a second, the queue is the same.
        config["run_coordinator"]["config"]["dequeue_interval_seconds"] = 1
        (self.home / "dagster.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        data = workdir / "data"
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "DAGSTER_HOME": str(self.home),
            "KA_DATA_DIR": str(data),
            # The sensor would sync the vault before the UI does: start automation stopped,
            # so the only runs are the ones launched from the UI.
            "KA_AUTOMATION": "off",
            "KA_SOURCE": "local",
            "KA_VAULT_PATH": str(vault),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        self.command = [
            sys.executable, "-m", "knowledge_assets.cli", "dev",
            "--host", "127.0.0.1", "--port", str(self.port),
        ]  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> DagsterDev:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self, timeout: float = 120.0) -> None:
        """Start the webserver and daemon; return once the code location has loaded."""
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            self.command,
            cwd=PROJECT_ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # Dagster treats SIGTERM as SIGINT; a caller started in the background ignores
            # SIGINT, and that would be inherited, so restore the default.
            preexec_fn=_default_sigint,
        )
        log.close()
        try:
            self._wait_until_loaded(timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_until_loaded(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"dagster dev exited early:\n{self.log_tail()}")
            try:
                entries = self.graphql(_LOCATION_STATUS)["workspaceOrError"]["locationEntries"]
            except (OSError, KeyError, TypeError, ValueError) as error:
                last = repr(error)
            else:
                last = repr(entries)
                if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                    errors = [
                        e
                        for e in entries
                        if e["locationOrLoadError"]["__typename"] == "PythonError"
                    ]
                    if errors:
                        raise RuntimeError(f"code location failed to load: {errors}")
                    return
            time.sleep(0.2)
        raise TimeoutError(
            f"dagster dev not ready after {timeout:.0f} s ({last}):\n{self.log_tail()}"
        )

    def graphql(self, query: str, variables: dict[str, object] | None = None) -> dict:
        """POST a GraphQL query to the webserver and return its ``data``."""
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(
            f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            payload = json.load(response)
        if payload.get("errors"):
            raise ValueError(payload["errors"])
        data: dict = payload["data"]
        return data

    def stop(self, grace: float = 20.0) -> None:
        """Stop the whole process group: SIGTERM, then SIGKILL for what is left after ``grace``."""
        process, self.process = self.process, None
        if process is None:
            return
        _signal_group(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            process.poll()  # reap the leader, so a zombie does not count as alive
            if not _signal_group(process.pid, 0):
                break
            time.sleep(0.2)
        else:
            _signal_group(process.pid, signal.SIGKILL)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the ``dagster dev`` output."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to a process group; False if the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True
