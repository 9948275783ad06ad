"""The ``knowledge-assets`` command: run the pipeline, open the UI, search what it wrote."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _demo(args: argparse.Namespace) -> int:
    from knowledge_assets.launcher import run_demo

    return run_demo(full=args.full)


def _dev(args: argparse.Namespace) -> int:
    from knowledge_assets.launcher import run_dev

    return run_dev(host=args.host, port=args.port)


def _migrate(args: argparse.Namespace) -> int:
    from knowledge_assets.core import db

    applied = db.migrate(db.resolve_url())
    print("applied: " + (", ".join(applied) if applied else "nothing (schema is current)"))
    return 0


def _mcp(args: argparse.Namespace) -> int:
    from knowledge_assets.mcp_server import serve

    return serve(transport=args.transport, port=args.port)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered."""
    parser = argparse.ArgumentParser(prog="knowledge-assets", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="materialize the whole graph once and print what landed")
    demo.add_argument("--full", action="store_true", help="compare the whole source")
    demo.set_defaults(func=_demo)
    dev = sub.add_parser("dev", help="open the Dagster UI and daemon on the same Postgres")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=3000)
    dev.set_defaults(func=_dev)
    sub.add_parser("migrate", help="apply schema migrations").set_defaults(func=_migrate)
    mcp = sub.add_parser("mcp", help="serve read-only search to LLM clients over MCP")
    mcp.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    mcp.add_argument("--port", type=int, default=8765, help="loopback port for --transport http")
    mcp.set_defaults(func=_mcp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``knowledge-assets`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
