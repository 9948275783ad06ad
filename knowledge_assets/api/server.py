"""``knowledge-assets serve``: the API and the search page under uvicorn."""

from __future__ import annotations

import sys

from knowledge_assets.answer import Asker, LLMConfigError
from knowledge_assets.api.app import create_app
from knowledge_assets.api.settings import ApiConfigError, ApiSettings
from knowledge_assets.api.store import check_roles
from knowledge_assets.cli_errors import EXIT_FAILURE, EXIT_USAGE
from knowledge_assets.ports import listening, report_unusable


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
        sock = listening(host, port)
    except OSError as exc:
        report_unusable(host, port, exc)
        return EXIT_FAILURE
    llm = "offline answers (no LLM configured)" if asker.settings.offline else f"answers by {asker.settings.provider} {asker.settings.model}"  # fmt: skip
    print(f"knowledge-assets on http://{host}:{port}/  (API docs: /docs; {llm})", flush=True)
    config = uvicorn.Config(create_app(settings, asker), log_level="warning")
    with sock:
        uvicorn.Server(config).run(sockets=[sock])
    return 0
