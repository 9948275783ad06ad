"""``knowledge-assets ask``: answer a question from the notes, with the notes it comes from.

Offline (no ``KA_LLM_PROVIDER``) the answer quotes the best passages; with an LLM configured it
is written by the model and streamed as it arrives. Every answer is kept in the Q&A history;
``--conversation ID`` asks a follow-up with the earlier turns of that conversation.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from knowledge_assets.answer import Answer, Asker, LLMConfigError, LLMError, Source
from knowledge_assets.answer import history as qa_history
from knowledge_assets.answer.config import EXTRACTIVE_MODEL
from knowledge_assets.answer.context import DEFAULT_BUDGET, DEFAULT_STRATEGY, STRATEGIES
from knowledge_assets.cli_args import int_in, port
from knowledge_assets.core.chunks.chunk_text import is_blank
from knowledge_assets.core.counts import counted
from knowledge_assets.core.database import db
from knowledge_assets.core.search import MAX_QUERY_CHARS, SearchFilters
from knowledge_assets.core.search.note_sources import vault_source
from knowledge_assets.search_cli import (
    EMPTY_STORE,
    _fail,
    _store_is_empty,
    one_line,
    say,
    shown_path,
)

MAX_TOP_K = 20  # as the HTTP API's topK
# A context below a few hundred tokens holds no section; above, it outgrows every model's window.
MIN_BUDGET, MAX_BUDGET = 200, 200_000


def _note_line(s: Source, relevance: bool = True) -> str:
    # A note of another source than the vault is read with `get PATH --source NAME`.
    where = "" if s.source == vault_source() else f", source {s.source}"
    level = f", relevance {s.relevance}" if relevance else ""
    return f"{one_line(s.title)}  ({shown_path(s.note_id)}{where}{level})"


def _print_sources(result: Answer, conversation_id: str | None) -> None:
    say()
    if result.sources:
        say("sources:")
        for i, s in enumerate(result.sources, start=1):
            say(f"  [{i}] {_note_line(s)}")
    if result.related:
        say("search found these notes, but the answer cites none of them:")
        for s in result.related:
            say(f"  - {_note_line(s, relevance=False)}")
    for warning in result.warnings:
        say(f"warning: {warning}", file=sys.stderr)
    m = result.metadata
    # An offline answer (quoted, no LLM) uses no tokens: no count to show.
    tokens = "" if m["model"] == EXTRACTIVE_MODEL else f" · {counted(m['tokensUsed'], 'token')}"
    say(
        f"-- confidence {result.confidence} · {m['model']}{tokens}"
        f" · {counted(m['retrievedNotes'], 'note')} retrieved · {m['responseTime']:.0f} ms"
    )
    if conversation_id:  # an answer not kept cannot be followed up
        say(f'-- follow up with: knowledge-assets ask --conversation {conversation_id} "…"')


class UnknownConversation(ValueError):
    """A follow-up to a conversation the Q&A history does not hold."""


def _answer(args: argparse.Namespace, conn: Any, asker: Asker, conversation_id: str) -> Answer:
    earlier = qa_history.turns(conn, conversation_id) if args.conversation else []
    if args.conversation and not earlier:
        raise UnknownConversation(
            f"no conversation {conversation_id} in the Q&A history (answers asked with --no-save"
            " are not kept): ask without --conversation to start one"
        )
    filters = SearchFilters(tags=tuple(args.tag)) if args.tag else None
    result: Answer | None = None
    shown = ""
    try:
        for event in asker.events(conn, args.question, history=earlier, filters=filters):
            if event.kind == "delta" and not args.json:
                say(event.data, end="", flush=True)
                shown += event.data
            elif event.kind == "done":
                result = event.data
    except LLMError:
        if shown:  # the error goes on a line of its own, not after the half-written answer
            say(flush=True)
        raise
    assert result is not None
    if not args.json and not shown.strip():  # the model said nothing: the answer says so
        say(result.answer, end="", flush=True)
    return result


def _ask(args: argparse.Namespace) -> int:
    if is_blank(args.question):  # as search refuses an empty query: a usage error, not a run
        return _fail("the question is empty: give the question to answer")
    if len(args.question) > MAX_QUERY_CHARS:  # the question is searched as it is asked
        return _fail(
            f"the question is {len(args.question):,} characters long; a question takes at most"
            f" {MAX_QUERY_CHARS:,}: shorten it to what you want to know"
        )
    try:
        asker = Asker(top_k=args.top_k, budget=args.budget, strategy=args.strategy)
        conversation_id = (
            qa_history.parse_conversation_id(args.conversation)
            if args.conversation
            else qa_history.new_conversation_id()
        )
    except (LLMConfigError, ValueError) as exc:
        return _fail(str(exc))
    with db.connect(db.store_url()) as conn:
        if _store_is_empty(conn):
            return _fail(EMPTY_STORE)
        try:
            result = _answer(args, conn, asker, conversation_id)
        except UnknownConversation as exc:
            return _fail(str(exc))
        except LLMError as exc:
            return _fail(f"{exc} (unset KA_LLM_PROVIDER for offline answers)")
        if not args.no_save:
            qa_history.record(conn, result, conversation_id)
    if args.json:
        print(json.dumps(result.to_dict() | {"conversationId": conversation_id}, ensure_ascii=False, indent=2))  # fmt: skip
    else:
        _print_sources(result, None if args.no_save else conversation_id)
    return 0


def _serve(args: argparse.Namespace) -> int:
    from knowledge_assets.api.server import serve

    return serve(args.host, args.port)


def add_commands(sub: Any) -> None:
    """Register ``ask`` and ``serve`` on the CLI's sub-parsers."""
    ask = sub.add_parser("ask", help="answer a question from the notes, citing them", description=__doc__)  # fmt: skip
    ask.add_argument("question", help="what you want to know, in your own words")
    ask.add_argument("--conversation", metavar="ID", help="continue a conversation (follow-up)")
    ask.add_argument(
        "--tag", action="append", metavar="T", help="only notes with any of these tags"
    )
    ask.add_argument("--top-k", type=int_in(1, MAX_TOP_K), default=5, help="notes retrieved (default 5)")  # fmt: skip
    ask.add_argument(
        "--budget",
        type=int_in(MIN_BUDGET, MAX_BUDGET),
        default=DEFAULT_BUDGET,
        help=f"context tokens (default {DEFAULT_BUDGET})",
    )
    ask.add_argument("--strategy", choices=STRATEGIES, default=DEFAULT_STRATEGY, help="context: best sections or whole notes")  # fmt: skip
    ask.add_argument("--no-save", action="store_true", help="do not keep it in the Q&A history")
    ask.add_argument("--json", action="store_true", help="print JSON")
    ask.set_defaults(func=_ask)
    serve = sub.add_parser("serve", help="serve the HTTP API and the search page")
    serve.add_argument("--host", default="127.0.0.1", help="other than loopback needs KA_API_TOKEN")
    serve.add_argument("--port", type=port, default=8000, help="port to listen on (default 8000)")
    serve.set_defaults(func=_serve)
