"""``search.messages``: candidates from the index, every hit checked against ``panelot_v1``.

The index proposes; ``panelot_v1`` decides. Candidates are the docs holding every
term (the last word as a prefix: any of up to ``rank.MAX_EXPANSIONS`` terms it
starts), ordered by the engine's BM25 over the stored counts (lengths not read).
They are read back from ``panelot_v1`` in one transaction, best first, in windows of
twice the limit (at least 20), until the limit is reached or :data:`MAX_CHECKED` were
read; ``total`` is the candidates less those found false and those folded into another
hit of the same message (its attached file matching too: one hit per message). A hit
is returned only if its node exists, is not a tombstone, its thread exists and is not
being deleted, the thread passes the filters, and the text as it is NOW holds the query
(terms, prefix, phrases): an index that lags can miss a hit, never show a false one.
Hits are ranked
by BM25 over the current text (its ``index_terms``, from :data:`_MEMO`; ``rank.Bm25``)
with the index's document frequencies, and the top ones get ``snippet.snippet``.

Warm queries are cheap through memos that never change an answer: the terms memo
(:mod:`.memo`, served only for an equal text), a phrase pattern that rejects an ASCII
text before it is split, and the connection's branch memo (:mod:`.branch`: the hit
threads' ``parentId`` s for ``onVisibleBranch``, and each node's thread so that a node
in a thread the filters refuse is not read; kept true by the change feed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from panelot.idb import Database, Transaction
from panelot.search.branch import BranchMemo, Watch, branch_memo
from panelot.search.extract import node_text, thread_gone, thread_text
from panelot.search.memo import TermsMemo
from panelot.search.postings import read_postings
from panelot.search.rank import PREFIX_DISCOUNT, Bm25, Stats, has_phrase
from panelot.search.reading import att_nodes, load_att_texts
from panelot.search.snippet import snippet
from panelot.search.text import ParsedQuery, ascii_phrase, parse_query

__all__ = ["MAX_CHECKED", "Filters", "Found", "search"]

MAX_CHECKED = 1000
"""The most candidates checked against ``panelot_v1`` per query."""

_BM25 = Bm25()

_MEMO = TermsMemo()
"""The terms of the texts checked last (this context's queries share it)."""

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
    """What the index proposes: candidates best first, how many, and the corpus."""

    ranked: list[str]
    total: int
    df: dict[str, int]
    stats: Stats
    formatted: bool


async def _candidates(index: Database, query: ParsedQuery) -> Found:
    """Read the postings the query needs (tracked by a live query) and rank candidates.

    The index's postings hold counts (``{docId: tf}``) and its docs' lengths are not
    read: :meth:`Bm25.rank` orders the candidates by an estimate; the phrases are checked
    on the current text by :func:`_check`.
    """
    exact = query.all_terms()
    postings, stats, formatted = await index.transaction(
        "r", ["postings", "meta"], lambda tx: read_postings(tx, exact, query.prefix)
    )
    corpus = _stats(stats)
    vocabulary = sorted(
        t for t in postings if query.prefix is not None and t.startswith(query.prefix)
    )
    loose = ParsedQuery(terms=exact, phrases=[], prefix=query.prefix)
    ranked = _BM25.rank(loose, postings, {}, corpus, vocabulary, limit=MAX_CHECKED)
    df = {term: len(docs) for term, docs in postings.items()}
    return Found([s.doc_id for s in ranked.hits], ranked.total, df, corpus, formatted)


def _stats(record: Any) -> Stats:
    """The corpus stats of the index's ``stats`` record (an empty corpus counts as one doc)."""
    docs = record.get("docs") if isinstance(record, dict) else None
    length = record.get("length") if isinstance(record, dict) else None
    docs = docs if isinstance(docs, int) and docs > 0 else 1
    length = length if isinstance(length, int) and length > 0 else docs
    return Stats(docs, length)


def _score(
    terms: Mapping[str, Sequence[int]], length: int, query: ParsedQuery, found: Found
) -> float | None:
    """BM25 of a text (its terms and length) for ``query``; ``None``: it does not match.

    The text matches when it holds every term, a term the prefix starts (any, not only
    the index's expansions) and every phrase at consecutive positions.
    """
    docs, avgdl = found.stats.docs, found.stats.avgdl
    score = 0.0
    for term in query.all_terms():
        held = terms.get(term)
        if not held:
            return None
        idf = _BM25.idf(found.df.get(term, 1), docs)
        score += _BM25.weight(len(held), length, idf, avgdl)
    if not all(has_phrase([terms[t] for t in phrase]) for phrase in query.phrases):
        return None
    if query.prefix is not None:
        best: float | None = None
        for term, held in terms.items():
            if term.startswith(query.prefix):
                share = 1.0 if term == query.prefix else PREFIX_DISCOUNT
                idf = _BM25.idf(found.df.get(term, 1), docs)
                weight = share * _BM25.weight(len(held), length, idf, avgdl)
                best = weight if best is None or weight > best else best
        if best is None:
            return None
        score += best
    return score


async def search(
    db: Database, index: Database, text: str, limit: int, filters: Filters
) -> tuple[dict[str, Any], bool]:
    """``{hits, total}`` for ``text``, and whether the index had its format record."""
    query = parse_query(text)
    if query.empty:
        return {"hits": [], "total": 0}, True
    found = await _candidates(index, query)
    checked = found.ranked
    await load_att_texts(db, checked)  # attachments' text: their Blobs, before the read
    memo = branch_memo(db)
    asked = _Asked(query, filters, found, memo.watcher())

    async def verify(tx: Transaction) -> dict[str, Any]:
        kept = _OnePerNode()
        threads: dict[str, Any] = {}
        rejected = at = 0
        step = max(2 * limit, 20)
        while len(kept) < limit and at < len(checked):
            window = checked[at : at + step]
            at += step
            found_hits = await _verify(tx, window, threads, asked, memo)
            for hit in found_hits:
                kept.add(hit)
            rejected += len(window) - len(found_hits)
        hits = kept.hits()
        hits.sort(key=lambda h: (-h.score, -(h.hit["ts"] or 0)))
        top = hits[:limit]
        for h in top:
            h.hit.update(snippet(h.text, query))
        await _mark_visible(tx, [h.hit for h in top], threads, memo, asked.watch)
        return {"hits": [h.hit for h in top], "total": found.total - rejected - kept.merged}

    return await db.transaction("r", ["threads", "nodes", "attachments"], verify), found.formatted


@dataclass(slots=True)
class _Asked:
    """What checking a candidate needs: the query, the filters, the index's answer.

    ``phrases``: per phrase of the query, the pattern an ASCII text holding it matches
    (:func:`~panelot.search.text.ascii_phrase`; ``None``: no ASCII text holds it).
    """

    query: ParsedQuery
    filters: Filters
    found: Found
    watch: Watch
    """Records node ids as read by the live query running (:meth:`BranchMemo.watcher`)."""
    phrases: list[re.Pattern[str] | None] = field(init=False)

    def __post_init__(self) -> None:
        self.phrases = [ascii_phrase(phrase) for phrase in self.query.phrases]

    def admits(self, thread: Any) -> bool:
        """Whether a hit may be in ``thread`` (a record): it exists and passes the filters."""
        return not thread_gone(thread) and self.filters.admits(thread)

    def may_hold(self, text: str) -> bool:
        """``False`` when ``text`` is ASCII and lacks a phrase: one regex search each."""
        if not self.phrases or not text.isascii():
            return True
        lowered = text.lower()
        return all(p is not None and p.search(lowered) is not None for p in self.phrases)


@dataclass(slots=True)
class _Hit:
    """A verified hit: its score, the hit (its snippet added for the top ones), its text."""

    score: float
    hit: dict[str, Any]
    text: str


@dataclass(slots=True)
class _OnePerNode:
    """The verified hits, one per message.

    A message whose own text and attached file both match is one hit, the better scoring
    (its snippet from that text); ``merged`` counts the hits folded so, which ``total``
    leaves out. A thread's hit (its title or tags, no ``nodeId``) is its own.
    """

    by_node: dict[str, _Hit] = field(default_factory=dict)
    threads: list[_Hit] = field(default_factory=list)
    merged: int = 0

    def add(self, hit: _Hit) -> None:
        """Keep ``hit``, or fold it with the hit already kept for its message."""
        node = hit.hit["nodeId"]
        if node is None:
            self.threads.append(hit)
            return
        held = self.by_node.get(node)
        if held is None:
            self.by_node[node] = hit
            return
        self.merged += 1
        if (hit.score, hit.text) > (held.score, held.text):  # the same choice in any order
            self.by_node[node] = hit

    def hits(self) -> list[_Hit]:
        """Every hit kept."""
        return [*self.by_node.values(), *self.threads]

    def __len__(self) -> int:
        return len(self.by_node) + len(self.threads)


async def _verify(
    tx: Transaction,
    window: list[str],
    threads: dict[str, Any],
    asked: _Asked,
    memo: BranchMemo,
) -> list[_Hit]:
    """The hits of ``window`` (candidate doc ids) as ``panelot_v1`` holds them now.

    A node whose thread ``memo`` knows is read only if that thread (read now) exists
    and passes the filters: the others could not be hits. A live query records them as
    read all the same (``asked.watch``): a change to one runs it again.
    """
    node_ids = [d for d in window if not d.startswith(("thread:", "att:"))]
    known = memo.threads_of(node_ids)
    await _read_threads(tx, set(known.values()), threads)
    wanted = [d for d in node_ids if d not in known or asked.admits(threads[known[d]])]
    if len(wanted) < len(node_ids):
        passed = set(wanted)
        skipped = [d for d in node_ids if d not in passed]
        asked.watch("", skipped)
    nodes = dict(zip(wanted, await tx.table("nodes").bulk_get(wanted), strict=True))
    memo.note(nodes.values())
    nodes.update(await att_nodes(tx, window))  # an attachment: its referencing node
    tids = {d.removeprefix("thread:") for d in window if d.startswith("thread:")}
    tids.update(
        n["threadId"]
        for n in nodes.values()
        if isinstance(n, dict) and isinstance(n.get("threadId"), str)
    )
    await _read_threads(tx, tids, threads)
    hits = []
    for doc_id in window:
        hit = _check(doc_id, nodes, threads, asked)
        if hit is not None:
            hits.append(hit)
    return hits


async def _read_threads(tx: Transaction, tids: set[str], threads: dict[str, Any]) -> None:
    """Add the records of ``tids`` not in ``threads`` yet (one request)."""
    order = sorted(tids - threads.keys())
    if order:
        threads.update(zip(order, await tx.table("threads").bulk_get(order), strict=True))


def _check(
    doc_id: str,
    nodes: dict[str, Any],
    threads: dict[str, Any],
    asked: _Asked,
) -> _Hit | None:
    """The hit ``doc_id`` gives, as ``panelot_v1`` holds it now (``None``: none).

    An ASCII text lacking a phrase is rejected before it is split; the terms of the
    others come from :data:`_MEMO` (``index_terms`` of the text as it is now).
    """
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
    filters = asked.filters
    if text is None or not filters.admits(thread) or not filters.in_range(ts):
        return None
    if not asked.may_hold(text):
        return None
    terms, length = _MEMO.terms(doc_id, text)
    score = _score(terms, length, asked.query, asked.found)
    if score is None:
        return None
    title = thread.get("title")
    hit = {
        "threadId": thread["id"],
        "nodeId": None if node is None else node["id"],
        "title": title if isinstance(title, str) else "",
        "snippet": "",
        "highlights": [],
        "onVisibleBranch": True,
        "ts": ts if isinstance(ts, int | float) else None,
    }
    return _Hit(score, hit, text)


async def _mark_visible(
    tx: Transaction,
    hits: list[dict[str, Any]],
    threads: dict[str, Any],
    memo: BranchMemo,
    watch: Watch,
) -> None:
    """Set ``onVisibleBranch``: whether each node hit is on its thread's path to the leaf.

    The hit threads' ``parentId`` s come from ``memo`` (the records read only of the
    threads whose leaf it does not hold) and each path is walked up from the leaf in
    memory: no request per step.
    """
    wanted: dict[str, set[str]] = {}
    for hit in hits:
        if hit["nodeId"] is not None:
            wanted.setdefault(hit["threadId"], set()).add(hit["nodeId"])
    if not wanted:
        return
    leaves = {tid: threads[tid].get("leafId") for tid in sorted(wanted)}
    parents = await memo.parents(tx, leaves, watch)
    for tid, ids in wanted.items():
        on_path: set[str] = set()
        at = threads[tid].get("leafId")
        steps = 0
        left = set(ids)
        while isinstance(at, str) and left and steps < MAX_PATH:
            if at in left:
                left.discard(at)
                on_path.add(at)
            at = parents.get(at)
            steps += 1
        for hit in hits:
            if hit["threadId"] == tid and hit["nodeId"] is not None:
                hit["onVisibleBranch"] = hit["nodeId"] in on_path
