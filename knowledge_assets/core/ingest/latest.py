"""Version superseding: which documents are the newest version of a note (seed 000's ``previous``).

A document named in another document's ``previous`` (by path, by file name, with or without
``.md``, or as an Obsidian ``[[wikilink]]``) is superseded. Each entry names one note, found as a
wikilink is (:mod:`knowledge_assets.core.links.resolve`): of several notes with the name, the one
beside the naming note, else the one with the shortest path, so ``previous: "[[index]]"`` does
not hide every ``index.md`` of the vault. Drafts (``draft: true``, seed 004) and
documents without a body are excluded too. Cycles in ``previous`` are broken deterministically: of
the documents in a cycle, the one with the highest ``version`` (then the latest ``updated``, then
the greatest path) is kept, the others are superseded by it, and the cycle is reported.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import psycopg

from knowledge_assets.core.ingest import latest_state, store
from knowledge_assets.core.ingest.conventions import Conventions
from knowledge_assets.core.links.resolve import note_finder

_WIKILINK = re.compile(r"^\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]$")


@dataclass(frozen=True)
class DocInfo:
    """What superseding needs to know about one raw document."""

    path: str
    frontmatter: Mapping[str, Any]
    has_body: bool


@dataclass
class LatestPlan:
    """The outcome: kept paths, and why every other path was excluded."""

    kept: list[str] = field(default_factory=list)
    superseded: dict[str, str] = field(default_factory=dict)  # old path -> newer path
    drafts: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    cycles: list[list[str]] = field(default_factory=list)
    unresolved: list[tuple[str, str]] = field(default_factory=list)  # (path, previous not found)
    bad_dates: list[tuple[str, str, str]] = field(default_factory=list)  # (path, key, value)


def previous_refs(frontmatter: Mapping[str, Any]) -> list[str]:
    """The ``previous`` entries of a frontmatter, as a list of strings."""
    value = frontmatter.get("previous")
    items = value if isinstance(value, list) else [value] if value else []
    return [str(item).strip() for item in items if item is not None and str(item).strip()]


def _ref_target(ref: str) -> str:
    """What a ``previous`` entry names: a wikilink's target without heading or alias."""
    match = _WIKILINK.match(ref)
    return (match.group(1) if match else ref).strip()


def supersede_edges(docs: Iterable[DocInfo]) -> tuple[dict[str, set[str]], list[tuple[str, str]]]:
    """newer path -> older paths it names, and references that match no document (a note that
    names itself supersedes nothing)."""
    refs = [(doc, previous_refs(doc.frontmatter)) for doc in docs]
    if not any(named for _, named in refs):
        return {}, []  # the usual vault: no note names a previous version, nothing to index
    find = note_finder(doc.path for doc, _ in refs)
    edges: dict[str, set[str]] = {}
    unresolved: list[tuple[str, str]] = []
    for doc, named in refs:
        for ref in named:
            target = find(_ref_target(ref), posixpath.dirname(doc.path))
            if target is None or target == doc.path:
                unresolved.append((doc.path, ref))
            else:
                edges.setdefault(doc.path, set()).add(target)
    return edges, unresolved


def plan_latest(docs: Iterable[DocInfo], conventions: Conventions | None = None) -> LatestPlan:
    """Decide which documents belong in ``latest_docs``."""
    conventions = conventions or Conventions()
    docs = sorted(docs, key=lambda d: d.path)
    by_path = {d.path: d for d in docs}
    edges, unresolved = supersede_edges(docs)
    plan = LatestPlan(unresolved=unresolved)
    component_of: dict[str, int] = {}
    for number, component in enumerate(_cycles(edges)):
        winner = max(component, key=lambda p: _recency(by_path[p].frontmatter, p))
        plan.cycles.append(sorted(component))
        component_of.update(dict.fromkeys(component, number))
        plan.superseded.update({p: winner for p in sorted(component) if p != winner})
    for newer, olders in sorted(edges.items()):
        for old in sorted(olders):
            # inside a cycle only the winner's verdict counts
            if component_of.get(old, -1) != component_of.get(newer, -2):
                plan.superseded.setdefault(old, newer)
    for doc in docs:
        if doc.path in plan.superseded:
            continue
        if conventions.draft_marker(doc.frontmatter):
            plan.drafts.append(doc.path)
        elif not doc.has_body:
            plan.empty.append(doc.path)
        else:
            plan.kept.append(doc.path)
            for found in (
                conventions.created(doc.frontmatter),
                conventions.updated(doc.frontmatter),
            ):
                if found.unparseable and found.key:
                    plan.bad_dates.append((doc.path, found.key, str(found.raw)[:100]))
    plan.bad_dates = sorted(set(plan.bad_dates))
    return plan


def _recency(frontmatter: Mapping[str, Any], path: str) -> tuple[float, str, str]:
    version = frontmatter.get("version")
    try:
        number = float(version) if version is not None else float("-inf")
    except (TypeError, ValueError):
        number = float("-inf")
    return (number, str(frontmatter.get("updated") or ""), path)


def _cycles(edges: Mapping[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


@dataclass
class LatestReport:
    """What a ``latest_docs`` refresh did."""

    plan: LatestPlan
    upserted: int
    removed: int


def refresh_latest(
    conn: psycopg.Connection, table: str, conventions: Conventions | None = None
) -> LatestReport:
    """Bring ``rag.latest_docs`` up to date for one raw table, in one transaction.

    Only files changed since the last refresh are read and classified again, while no note
    names a previous version (``previous`` links notes to each other: then every file is
    planned again, as after a change of the conventions or the source's settings, or of a
    latest row by anything but a refresh)."""
    conventions = conventions or Conventions()
    key = latest_state.settings_key(conn, table, conventions)
    last = latest_state.saved(conn, table, key)
    if last is None:  # the first refresh, or the settings changed: a source's content_type or
        store.apply_source_fields(conn, table)  # default_heading reaches its unchanged rows
    if last is None or last.rows != latest_state.rows_digest(conn, table):
        return _refresh_all(conn, table, conventions, key)
    changed, gone = latest_state.changes(conn, table, last.excluded)
    if not changed and not gone:
        plan = plan_from_json(last.plan, latest_state.kept_paths(conn, table))
        conn.commit()
        return LatestReport(plan=plan, upserted=0, removed=0)
    linked = last.plan.get("superseded") or last.plan.get("unresolved") or last.plan.get("cycles")
    if linked or any(previous_refs(fm or {}) for _, fm, _, _ in changed):
        return _refresh_all(conn, table, conventions, key)
    return _refresh_some(conn, table, conventions, key, last, changed, gone)


def _refresh_all(
    conn: psycopg.Connection, table: str, conventions: Conventions, key: str
) -> LatestReport:
    """Plan every file of ``table`` and write the outcome."""
    rows = store.doc_infos(conn, table)
    infos = {path: DocInfo(path, fm or {}, bool(has_body)) for path, fm, has_body, _ in rows}
    hashes = {path: digest for path, _, _, digest in rows}
    plan = plan_latest(infos.values(), conventions)
    kept = _kept_docs(plan.kept, infos, hashes, conventions)
    kept_paths = set(plan.kept)
    excluded = {p: h for p, h in hashes.items() if p not in kept_paths}
    with conn.transaction():
        upserted, removed = store.write_latest(conn, table, kept)
        in_cycles = {p for cycle in plan.cycles for p in cycle}
        store.write_superseded(conn, table, plan.superseded, in_cycles)
        latest_state.save(conn, table, key, dataclasses.asdict(plan), excluded)
    return LatestReport(plan=plan, upserted=upserted, removed=removed)


def _refresh_some(
    conn: psycopg.Connection, table: str, conventions: Conventions, key: str,
    last: latest_state.Saved, changed: list[tuple[str, Any, Any, str]], gone: list[str],
) -> LatestReport:  # fmt: skip
    """Classify the changed files alone (no note links to another) and merge them into the
    stored plan; write the latest rows of the changed and gone files only."""
    infos = {path: DocInfo(path, fm or {}, bool(has_body)) for path, fm, has_body, _ in changed}
    hashes = {path: digest for path, _, _, digest in changed}
    part = plan_latest(infos.values(), conventions)
    touched = set(infos) | set(gone)
    old = plan_from_json(last.plan, latest_state.kept_paths(conn, table))
    plan = LatestPlan(
        kept=sorted([p for p in old.kept if p not in touched] + part.kept),
        drafts=sorted([p for p in old.drafts if p not in touched] + part.drafts),
        empty=sorted([p for p in old.empty if p not in touched] + part.empty),
        bad_dates=sorted([b for b in old.bad_dates if b[0] not in touched] + part.bad_dates),
    )
    excluded = {p: h for p, h in last.excluded.items() if p not in touched}
    excluded |= {p: hashes[p] for p in part.drafts + part.empty}
    kept = _kept_docs(part.kept, infos, hashes, conventions)
    with conn.transaction():
        upserted, removed = store.write_latest(conn, table, kept, scope=sorted(touched))
        latest_state.save(conn, table, key, dataclasses.asdict(plan), excluded)
    return LatestReport(plan=plan, upserted=upserted, removed=removed)


def _kept_docs(
    paths: Iterable[str], infos: Mapping[str, DocInfo], hashes: Mapping[str, str],
    conventions: Conventions,
) -> list[store.KeptDoc]:  # fmt: skip
    from knowledge_assets.core.chunks.chunking import slug_from_filename

    return [
        store.KeptDoc(
            path,
            slug_from_filename(path),
            conventions.created(infos[path].frontmatter).date,
            conventions.updated(infos[path].frontmatter).date,
            hashes[path],
        )
        for path in paths
    ]


def plan_from_json(data: Mapping[str, Any], kept: list[str]) -> LatestPlan:
    """A plan as :func:`dataclasses.asdict` stored it (JSON has lists where it had tuples),
    with the ``kept`` paths (stored as the latest rows)."""
    return LatestPlan(
        kept=kept,
        superseded=dict(data.get("superseded", {})),
        drafts=list(data.get("drafts", [])),
        empty=list(data.get("empty", [])),
        cycles=[list(c) for c in data.get("cycles", [])],
        unresolved=[(p, r) for p, r in data.get("unresolved", [])],
        bad_dates=[(p, k, v) for p, k, v in data.get("bad_dates", [])],
    )


def merge_reports(reports: Iterable[LatestReport]) -> LatestReport:
    """One report for the refreshes of several sources."""
    merged = LatestReport(plan=LatestPlan(), upserted=0, removed=0)
    for report in reports:
        plan = report.plan
        merged.plan.kept += plan.kept
        merged.plan.superseded.update(plan.superseded)
        merged.plan.drafts += plan.drafts
        merged.plan.empty += plan.empty
        merged.plan.cycles += plan.cycles
        merged.plan.unresolved += plan.unresolved
        merged.plan.bad_dates += plan.bad_dates
        merged.upserted += report.upserted
        merged.removed += report.removed
    return merged
