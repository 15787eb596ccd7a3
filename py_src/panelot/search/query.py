"""``search.messages``: candidates from the index, every hit checked against ``panelot_v1``.

The index proposes; ``panelot_v1`` decides. Candidates are the docs holding every
term (the last word as a prefix: any of up to :data:`PREFIX_TERMS` terms it starts),
ordered by a first BM25 estimate (term frequencies only). They are read back from
``panelot_v1`` in one transaction, best first, in windows of twice the limit (at least
20), until the limit is reached or :data:`MAX_CHECKED` were read; ``total`` is the
candidates less those found false. A hit is returned only if its node exists, is not
a tombstone, its thread exists and is not being deleted, the thread passes the
filters, and the text as it is NOW holds the query (terms, prefix, phrases): an index
that lags can miss a hit, never show a false one. Hits are ranked by BM25 over the
current text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.idb import Database, Transaction
from panelot.search._interim_rank import ParsedQuery, bm25, matches, parse_query, snippet
from panelot.search._interim_tokens import Token, tokens
from panelot.search.extract import node_text, thread_gone, thread_text

__all__ = ["MAX_CHECKED", "PREFIX_TERMS", "Filters", "Found", "search"]

PREFIX_TERMS = 50
"""The most index terms the last word expands to as a prefix."""

MAX_CHECKED = 1000
"""The most candidates checked against ``panelot_v1`` per query."""

MAX_PATH = 100_000
"""The most nodes walked from a leaf to tell whether a hit is on the visible branch."""


@dataclass(frozen=True, slots=True)
class Filters:
    """Which threads a search looks in (``None``: any)."""

    folder: str | None = None
    tag: str | None = None
    pinned: bool | None = None
    archived: bool = False
    start: float | None = None
    end: float | None = None

    def admits(self, thread: dict[str, Any]) -> bool:
        """Whether ``thread`` passes the thread filters."""
        if bool(thread.get("archived")) != self.archived:
            return False
        if self.pinned is not None and bool(thread.get("pinned")) != self.pinned:
            return False
        if self.folder is not None and thread.get("folderId") != self.folder:
            return False
        tags = thread.get("tags")
        return self.tag is None or (isinstance(tags, list) and self.tag in tags)

    def in_range(self, ts: Any) -> bool:
        """Whether a hit's time is within ``start``..``end``."""
        if self.start is None and self.end is None:
            return True
        if not isinstance(ts, int | float):
            return False
        return (self.start is None or ts >= self.start) and (self.end is None or ts <= self.end)


@dataclass(slots=True)
class Found:
    """What the index proposes: candidate doc ids with a first score, and the corpus."""

    scores: dict[str, float]
    docs: int
    formatted: bool


async def _candidates(index: Database, query: ParsedQuery) -> Found:
    """Read the postings the query needs (tracked by a live query) and score candidates."""

    async def body(tx: Transaction) -> tuple[Any, Any, list[Any], list[Any]]:
        meta = await tx.table("meta").bulk_get(["format", "stats"])
        held = await tx.table("postings").bulk_get(query.terms) if query.terms else []
        expanded: list[Any] = []
        if query.prefix is not None:
            expanded = (
                await tx.table("postings")
                .where("term")
                .starts_with(query.prefix)
                .limit(PREFIX_TERMS)
                .to_list()
            )
        return meta[0], meta[1], held, expanded

    fmt, stats, held, expanded = await index.transaction("r", ["postings", "meta"], body)
    total = stats.get("docs", 0) if isinstance(stats, dict) else 0
    total = total if isinstance(total, int) and total > 0 else 1
    lists: list[dict[str, Any]] = []
    for record in held:
        docs = record.get("docs") if isinstance(record, dict) else None
        if not isinstance(docs, dict):
            return Found({}, total, fmt is not None)  # a term no doc holds: nothing matches
        lists.append(docs)
    if query.prefix is not None:
        union: dict[str, Any] = {}
        for record in expanded:
            docs = record.get("docs") if isinstance(record, dict) else None
            if isinstance(docs, dict):
                for doc_id, tf in docs.items():
                    union[doc_id] = max(union.get(doc_id, 0), tf) if isinstance(tf, int) else 1
        lists.append(union)
    if not lists:
        return Found({}, total, fmt is not None)
    lists.sort(key=len)
    ids = set(lists[0])
    for docs in lists[1:]:
        ids &= docs.keys()
    scores = {doc_id: 0.0 for doc_id in ids}
    for docs in lists:
        df = len(docs)
        for doc_id in ids:
            tf = docs[doc_id]
            scores[doc_id] += bm25(tf if isinstance(tf, int) else 1, df, total, 1, 1.0)
    return Found(scores, total, isinstance(fmt, dict))


def _score(found: list[Token], query: ParsedQuery, docs: int) -> float:
    """BM25 of a text's tokens for the query (df 1: the estimate ranks within one query)."""
    counts: dict[str, int] = {}
    for token in found:
        counts[token.term] = counts.get(token.term, 0) + 1
    score = sum(bm25(counts.get(t, 0), 1, docs, len(found), 40.0) for t in query.terms)
    if query.prefix is not None:
        tf = sum(n for term, n in counts.items() if term.startswith(query.prefix))
        score += bm25(tf, 1, docs, len(found), 40.0)
    return score


async def search(
    db: Database, index: Database, text: str, limit: int, filters: Filters
) -> tuple[dict[str, Any], bool]:
    """``{hits, total}`` for ``text``, and whether the index had its format record."""
    query = parse_query(text)
    if query.empty:
        return {"hits": [], "total": 0}, True
    found = await _candidates(index, query)
    ranked = sorted(found.scores, key=lambda d: (-found.scores[d], d))
    checked = ranked[:MAX_CHECKED]

    async def verify(tx: Transaction) -> dict[str, Any]:
        hits: list[tuple[float, dict[str, Any]]] = []
        threads: dict[str, Any] = {}
        rejected = at = 0
        step = max(2 * limit, 20)
        while len(hits) < limit and at < len(checked):
            window = checked[at : at + step]
            at += step
            found_hits = await _verify(tx, window, threads, query, filters, found.docs)
            hits.extend(found_hits)
            rejected += len(window) - len(found_hits)
        hits.sort(key=lambda h: (-h[0], -(h[1]["ts"] or 0)))
        top = [h for _, h in hits[:limit]]
        await _mark_visible(tx, top, threads)
        return {"hits": top, "total": len(ranked) - rejected}

    return await db.transaction("r", ["threads", "nodes"], verify), found.formatted


async def _verify(
    tx: Transaction,
    window: list[str],
    threads: dict[str, Any],
    query: ParsedQuery,
    filters: Filters,
    docs: int,
) -> list[tuple[float, dict[str, Any]]]:
    """The hits of ``window`` (candidate doc ids) as ``panelot_v1`` holds them now."""
    node_ids = [d for d in window if not d.startswith("thread:")]
    nodes = dict(zip(node_ids, await tx.table("nodes").bulk_get(node_ids), strict=True))
    tids = {d.removeprefix("thread:") for d in window if d.startswith("thread:")}
    tids.update(
        n["threadId"]
        for n in nodes.values()
        if isinstance(n, dict) and isinstance(n.get("threadId"), str)
    )
    order = sorted(tids - threads.keys())
    threads.update(zip(order, await tx.table("threads").bulk_get(order), strict=True))
    hits = []
    for doc_id in window:
        hit = _check(doc_id, nodes, threads, query, filters, docs)
        if hit is not None:
            hits.append(hit)
    return hits


def _check(
    doc_id: str,
    nodes: dict[str, Any],
    threads: dict[str, Any],
    query: ParsedQuery,
    filters: Filters,
    docs: int,
) -> tuple[float, dict[str, Any]] | None:
    """The hit ``doc_id`` gives, as ``panelot_v1`` holds it now (``None``: none)."""
    if doc_id.startswith("thread:"):
        node = None
        thread = threads.get(doc_id.removeprefix("thread:"))
        if thread_gone(thread) or not isinstance(thread, dict):
            return None
        text: str | None = thread_text(thread)
        ts = thread.get("updatedAt")
    else:
        node = nodes.get(doc_id)
        tid = node.get("threadId") if isinstance(node, dict) else None
        thread = threads.get(tid) if isinstance(tid, str) else None
        if thread_gone(thread):
            return None
        text = node_text(node)
        ts = node.get("ts") if isinstance(node, dict) else None
    assert isinstance(thread, dict)
    if text is None or not filters.admits(thread) or not filters.in_range(ts):
        return None
    found = tokens(text)
    if not matches(text, query, found):
        return None
    shown = snippet(text, query, found=found)
    title = thread.get("title")
    hit = {
        "threadId": thread["id"],
        "nodeId": None if node is None else node["id"],
        "title": title if isinstance(title, str) else "",
        "snippet": shown["snippet"],
        "highlights": shown["highlights"],
        "onVisibleBranch": True,
        "ts": ts if isinstance(ts, int | float) else None,
    }
    return _score(found, query, docs), hit


async def _mark_visible(
    tx: Transaction, hits: list[dict[str, Any]], threads: dict[str, Any]
) -> None:
    """Set ``onVisibleBranch``: whether each node hit is on its thread's path to the leaf."""
    wanted: dict[str, set[str]] = {}
    for hit in hits:
        if hit["nodeId"] is not None:
            wanted.setdefault(hit["threadId"], set()).add(hit["nodeId"])
    for tid, ids in wanted.items():
        on_path: set[str] = set()
        at = threads[tid].get("leafId")
        steps = 0
        left = set(ids)
        while isinstance(at, str) and left and steps < MAX_PATH:
            if at in left:
                left.discard(at)
                on_path.add(at)
            node = await tx.table("nodes").get(at)
            at = node.get("parentId") if isinstance(node, dict) else None
            steps += 1
        for hit in hits:
            if hit["threadId"] == tid and hit["nodeId"] is not None:
                hit["onVisibleBranch"] = hit["nodeId"] in on_path
