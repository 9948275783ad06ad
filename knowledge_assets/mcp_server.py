"""Serve the knowledge store to LLM clients over MCP: ``python -m knowledge_assets.mcp_server``
or ``knowledge-assets mcp``.

stdio (the default) is what Claude Desktop and Claude Code launch; ``--transport http`` serves
streamable HTTP on a loopback port at ``/mcp``. The store is found like everywhere else
(``DATABASE_URL``, else the embedded Postgres) and read as the read-only ``ka_reader`` role
(``KA_READER_URL`` overrides the derived URL). At start-up the active model's query embedder
loads in the background, so the first search does not wait for it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from knowledge_assets.cli_args import Parser
from knowledge_assets.cli_args import port as port_number
from knowledge_assets.core.plain_text import plain_doc
from knowledge_assets.ports import listening, report_unusable

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8765
TRANSPORTS = ("stdio", "http")


def serve(transport: str = "stdio", port: int = DEFAULT_PORT) -> int:
    """Run the server until the client disconnects (stdio) or the process is interrupted (http)."""
    from knowledge_assets.mcp import build_server

    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}; expected one of {TRANSPORTS}")
    if transport == "http":
        try:  # FastMCP binds the port itself: this finds one in use before anything starts
            listening(LOOPBACK, port).close()
        except OSError as exc:
            report_unusable(LOOPBACK, port, exc)
            return 1
    server = build_server(warm_up=True)  # the first search does not wait for the model
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            print(f"MCP server on http://{LOOPBACK}:{port}/mcp", file=sys.stderr, flush=True)
            server.run("streamable-http", host=LOOPBACK, port=port)
    except KeyboardInterrupt:
        return 130
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The server's options, shared with the ``knowledge-assets mcp`` sub-command."""
    parser.add_argument(
        "--transport", choices=TRANSPORTS, default="stdio",
        help="stdio (default): launched by the client; http: a server on a loopback port",
    )  # fmt: skip
    parser.add_argument(
        "--port", type=port_number, default=DEFAULT_PORT, help="loopback port for --transport http"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m knowledge_assets.mcp_server``."""
    parser = Parser(prog="knowledge-assets-mcp", description=plain_doc(__doc__))
    add_arguments(parser)
    args = parser.parse_args(argv)
    return serve(args.transport, args.port)


if __name__ == "__main__":
    sys.exit(main())
