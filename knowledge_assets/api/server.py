"""``knowledge-assets serve``: the API and the search page under uvicorn."""

from __future__ import annotations

import gc
import sys

from knowledge_assets.answer import Asker, LLMConfigError
from knowledge_assets.api.app import create_app
from knowledge_assets.api.settings import ApiConfigError, ApiSettings
from knowledge_assets.api.store import check_roles
from knowledge_assets.cli_errors import EXIT_FAILURE, EXIT_USAGE
from knowledge_assets.ports import listening, report_unusable


def banner(host: str, port: int, asker: Asker) -> str:
    """Where the page and the API docs are, as addresses a terminal makes links of (an IPv6
    host in brackets), and who writes the answers."""
    base = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    settings = asker.settings
    llm = (
        "answers quote the notes (no LLM configured)"
        if settings.offline
        else f"answers by {settings.provider} {settings.model}"
    )
    return f"search page {base}/ · API docs {base}/docs · {llm} · Ctrl-C stops"


# Young-generation collections every 10,000 new objects rather than 700: rendering a huge note
# makes hundreds of thousands of tokens, and the collector's passes over them were a third to
# two thirds of its time (a 1.2 MB note: 1.33 s, 0.46 s with this; bench/note_render.py).
GC_THRESHOLD = (10_000, 10, 10)


def tune_gc() -> None:
    """Collect less often while serving, with what the start-up made left out of collections
    (it stays for the server's life: every full collection went over it again)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


def serve(host: str, port: int) -> int:
    """Check the settings and the database roles, then serve until interrupted."""
    import uvicorn

    try:
        settings = ApiSettings.resolve(host, port)
        asker = Asker()
        app = create_app(settings, asker)
    except (ApiConfigError, LLMConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    problems = check_roles(settings.reader_url, settings.writer_url)
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        sock = listening(host, port)
    except OSError as exc:
        report_unusable(host, port, exc)
        return EXIT_FAILURE
    print(banner(host, port, asker), flush=True)
    config = uvicorn.Config(app, log_level="warning")
    tune_gc()
    with sock:
        uvicorn.Server(config).run(sockets=[sock])
    return 0
