"""Run ``knowledge-assets dev`` (Dagster webserver + daemon) in the background for browser tests
and the documentation screenshots: its own Dagster home, a given database and a given vault."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType

from knowledge_assets.core.db import PROJECT_ROOT

CHROMIUM = Path("/usr/bin/chromium")
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


class DagsterDev:
    """``knowledge-assets dev`` on a free loopback port, in its own process group.

    ``workdir`` receives the Dagster home (a copy of the project's ``dagster.yaml``, so runs and
    events go to the same Postgres as the knowledge store), Dagster's local files and the log.
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
        shutil.copy(PROJECT_ROOT / "dagster.yaml", self.home / "dagster.yaml")
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
            time.sleep(0.5)
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
