"""``knowledge-assets dev`` started in the background by a script: a stop still reaches
``dagster dev``. A shell script's ``cmd &`` starts ``cmd`` with SIGINT ignored, ``dagster dev``
inherited that, and Dagster takes SIGTERM as SIGINT: the stop was ignored and the UI, the
daemon and the supervisor kept running until killed one by one."""

from __future__ import annotations

import signal
import subprocess
import sys

import psutil
import pytest

from knowledge_assets.core.database.db import PROJECT_ROOT

# What ``dagster dev`` does with signals: SIGTERM handled as SIGINT is.
_DAGSTER_LIKE = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.getsignal(signal.SIGINT))\n"
    "print('ready', flush=True)\n"
    "time.sleep(120)\n"
)
_SUPERVISOR = (
    "import sys\n"
    "from knowledge_assets.launcher import supervise\n"
    f"sys.exit(supervise([sys.executable, '-c', {_DAGSTER_LIKE!r}]))\n"
)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell script's `&` starts a command


def test_sigterm_stops_dev_started_with_sigint_ignored() -> None:
    supervisor = subprocess.Popen(
        [sys.executable, "-c", _SUPERVISOR],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_sigint,
    )
    children: list[psutil.Process] = []
    try:
        assert supervisor.stdout is not None
        assert supervisor.stdout.readline().strip() == "ready"
        children = psutil.Process(supervisor.pid).children()
        assert len(children) == 1
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=30) is not None
        _, alive = psutil.wait_procs(children, timeout=10)
        assert alive == []
    finally:  # a failed run leaves no process behind
        for process in children:
            if process.is_running():
                process.kill()
        supervisor.kill()
        supervisor.wait(timeout=10)


def test_dev_does_not_open_with_dagsters_supersession_warning() -> None:
    """``dagster dev`` printed ``SupersessionWarning: Function `dev_command` is superseded …
    Use 'dg dev' instead.`` first thing on every start of ``knowledge-assets dev``."""
    from knowledge_assets.launcher import dev_command

    command = dev_command("127.0.0.1", 3000)
    flags = command[1 : command.index("-m")]
    warn = (
        "import warnings\n"
        "from dagster_shared.utils.warnings import SupersessionWarning\n"
        'warnings.warn("Function `dev_command` is superseded and its usage is discouraged.'
        " Use 'dg dev' instead.\", SupersessionWarning)\n"
    )
    quiet = subprocess.run([sys.executable, *flags, "-c", warn], capture_output=True, text=True)
    loud = subprocess.run([sys.executable, "-c", warn], capture_output=True, text=True)
    assert "SupersessionWarning" in loud.stderr
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_dev_on_a_port_in_use_is_one_error_before_anything_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With port 3000 taken (another dev server), dev announced "Serving dagster-webserver on
    http://127.0.0.1:3000", logged the webserver's bind error among the daemon's lines, and kept
    the daemon running with no UI: the address showed the other server's page."""
    import socket

    from knowledge_assets import launcher

    started: list[list[str]] = []
    monkeypatch.setattr(launcher, "supervise", lambda command: started.append(command) or 0)
    monkeypatch.setattr(launcher, "prepare_environment", lambda: "postgresql://unused")
    monkeypatch.setattr(launcher, "fail_dead_runs_now", lambda: None)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert launcher.run_dev("127.0.0.1", port) == 1
    assert started == []
    assert capsys.readouterr().err.splitlines()[-2:] == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use",
        "  choose another port with --port, or stop what uses it",
    ]
