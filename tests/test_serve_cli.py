"""``knowledge-assets serve`` and ``mcp --transport http`` as a user runs them: processes that
listen where they say they do, or say in one line why they cannot."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from tests.browser_support import free_port


def _serve(db_url: str, port: int, *command: str) -> subprocess.Popen[str]:
    env = os.environ | {"DATABASE_URL": db_url, "KA_AUTOMATION": "off", "KA_API_HOSTS": "notes.lan"}
    return subprocess.Popen(
        [sys.executable, "-m", "knowledge_assets.cli", *(command or ("serve",)), "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


@pytest.mark.parametrize("command", [("serve",), ("mcp", "--transport", "http")])
def test_a_port_in_use_is_one_error_before_any_announcement(
    db_url: str, command: tuple[str, ...]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = _serve(db_url, port, *command)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and out == ""
    assert err.splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use",
        "  choose another port with --port, or stop what uses it",
    ]


def test_serve_answers_on_the_port_it_announces(db_url: str) -> None:
    port = free_port()
    proc = _serve(db_url, port)
    try:
        assert proc.stdout is not None
        announced = proc.stdout.readline()
        assert announced.startswith(f"search page http://127.0.0.1:{port}/ · ")
        deadline = time.monotonic() + 60
        while True:  # the socket listens before the line; the app may still be starting
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/api/tags", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve did not answer"
                time.sleep(0.2)
        assert response.status_code == 200 and response.json()["success"] is True
        for host, status in (("notes.lan", 200), ("evil.example", 400)):  # KA_API_HOSTS
            named = httpx.get(f"http://127.0.0.1:{port}/api/tags", headers={"Host": host})
            assert named.status_code == status
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
