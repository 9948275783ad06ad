"""``knowledge-assets serve``: the API and the search page under uvicorn."""

from __future__ import annotations

import socket
import sys

from knowledge_assets.answer import Asker, LLMConfigError
from knowledge_assets.api.app import create_app
from knowledge_assets.api.settings import ApiConfigError, ApiSettings
from knowledge_assets.api.store import check_roles
from knowledge_assets.cli_errors import EXIT_FAILURE, EXIT_USAGE


def serve(host: str, port: int) -> int:
    """Check the settings and the database roles, then serve until interrupted."""
    import uvicorn

    try:
        settings = ApiSettings.resolve(host, port)
        asker = Asker()
    except (ApiConfigError, LLMConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    problems = check_roles(settings.reader_url, settings.writer_url)
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        sock = _listening(host, port)
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        print("  choose another port with --port, or stop what uses it", file=sys.stderr)
        return EXIT_FAILURE
    llm = "offline answers (no LLM configured)" if asker.settings.offline else f"answers by {asker.settings.provider} {asker.settings.model}"  # fmt: skip
    print(f"knowledge-assets on http://{host}:{port}/  (API docs: /docs; {llm})", flush=True)
    config = uvicorn.Config(create_app(settings, asker), log_level="warning")
    with sock:
        uvicorn.Server(config).run(sockets=[sock])
    return 0


def _listening(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` before the address is announced: a port in use is then
    one line, not the announcement followed by uvicorn's bind error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock
