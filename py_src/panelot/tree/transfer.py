"""JSON export and import of whole threads.

An export holds the ThreadMeta and every node, tombstones and all types included:
``{"format": "panelot.thread", "version": 1, "exportedAt", "thread", "nodes"}``.

Import is where untrusted data enters. Before anything is written, the pre-check
validates every node's payload against its type, the tree (unique ids and seqs,
parents inside the thread, no cycles, a leaf that reaches a root), the bounds below
and the thread's title, tag and folder limits (``records.check_thread_bounds``), and
reports every problem it finds. The thread is then written under fresh
ids in one transaction, so a failed import leaves nothing and a repeated import
makes an independent copy.

An import is not an edit: the thread keeps its ``createdAt`` and ``updatedAt`` and every
node its ``ts``, so the list reads as it did where the file was made (a copy sits beside
its original, not on top of the list). A thread whose ``updatedAt`` is missing or not a
time (:func:`~panelot.clock.stamp_from`) takes the newest of its nodes' ``ts`` and its
``createdAt``, the time it was last written to; ``createdAt`` itself is required.

An import makes a new thread: of the thread record it keeps what the user gave it (title,
times, tags, pinned, archived, folder, preset) and drops the state of the database it came
from (:data:`NOT_IMPORTED`): it never arrives marked ``deleting``, its ``scopeOrigins``
start empty, its ``stats`` are counted from its nodes, it has no ``requestCut`` (the
overflow rescue's cut names items by the ids it had), and its ``parentThreadId`` is kept
only when that thread comes in the same bundle (under its fresh id).
"""

from __future__ import annotations

import json
from typing import Any

from panelot.clock import Clock, new_id, now_ms, stamp_from
from panelot.codec import encode
from panelot.errors import ImportError_
from panelot.idb import Database, Transaction
from panelot.idb.errors import PanelotError
from panelot.tree.integrity import (
    index_nodes,
    nodes_off_root,
    nodes_on_cycles,
    seq_order,
    walk_to_root,
)
from panelot.tree.nodes import TREE_TABLES, get_thread
from panelot.tree.reading import load_nodes
from panelot.tree.records import (
    check_thread_bounds,
    node_from_wire,
    thread_from_wire,
    thread_to_wire,
)
from panelot.tree.shown import count_in

__all__ = [
    "BUNDLE_FORMAT",
    "EXPORT_FORMAT",
    "MAX_BUNDLE_THREADS",
    "MAX_IMPORT_CHARS",
    "MAX_IMPORT_NODES",
    "MAX_NODE_CHARS",
    "NOT_IMPORTED",
    "export_thread",
    "import_thread",
    "precheck_bundle",
    "precheck_import",
    "stats_of",
    "tree_problems",
]

EXPORT_FORMAT = "panelot.thread"
BUNDLE_FORMAT = "panelot.all"
"""Several thread exports in one file: ``{format, version: 1, threads: [export...]}``."""
MAX_BUNDLE_THREADS = 10_000
"""Most threads one bundle may hold."""
MAX_IMPORT_NODES = 20_000
"""Most nodes one imported thread may have."""
MAX_NODE_CHARS = 2_000_000
"""Largest JSON size of one imported node."""
MAX_IMPORT_CHARS = 64_000_000
"""Largest JSON size of a whole import."""


async def export_thread(db: Database, thread_id: str, clock: Clock = now_ms) -> dict[str, Any]:
    """Return the full JSON export of a thread."""

    async def body(tx: Transaction) -> dict[str, Any]:
        thread = await get_thread(tx, thread_id)
        nodes = await load_nodes(tx, thread_id)
        nodes.sort(key=seq_order)
        return {
            "format": EXPORT_FORMAT,
            "version": 1,
            "exportedAt": clock(),
            "thread": thread_to_wire(thread),
            "nodes": nodes,
        }

    return await db.transaction("r", TREE_TABLES, body)


def precheck_import(data: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Validate an export; return the thread and nodes (wire form) or raise ImportError_."""
    if not isinstance(data, dict):
        raise ImportError_(["data: must be an object"])
    try:
        size = len(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ImportError_([f"data: not plain JSON ({exc})"]) from None
    if size > MAX_IMPORT_CHARS:
        raise ImportError_([f"data: {size} characters, more than {MAX_IMPORT_CHARS}"])
    problems: list[str] = []
    if data.get("format") != EXPORT_FORMAT or data.get("version") != 1:
        problems.append(f"format: expected {EXPORT_FORMAT!r} version 1")
    raw_thread, undated = _undated(data.get("thread"))
    try:
        thread = thread_from_wire(raw_thread, "thread")
        check_thread_bounds(raw_thread, "thread")
    except PanelotError as exc:
        raise ImportError_([exc.message, *problems]) from None
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, list):
        raise ImportError_(["nodes: must be a list", *problems])
    if len(raw_nodes) > MAX_IMPORT_NODES:
        raise ImportError_([f"nodes: {len(raw_nodes)} nodes, more than {MAX_IMPORT_NODES}"])
    nodes = []
    seen_ids: set[str] = set()
    seen_seqs: set[int] = set()
    for i, raw in enumerate(raw_nodes):
        where = f"nodes[{i}]"
        if len(json.dumps(raw)) > MAX_NODE_CHARS:
            problems.append(f"{where}: larger than {MAX_NODE_CHARS} characters")
            continue
        try:
            node = node_from_wire(raw, where)
        except PanelotError as exc:
            problems.append(exc.message)
            continue
        if node.thread_id != thread.id:
            problems.append(f"{where}.threadId: {node.thread_id!r} is not the thread {thread.id!r}")
        if node.id in seen_ids:
            problems.append(f"{where}.id: {node.id!r} appears twice")
        if node.seq in seen_seqs or node.seq < 1:
            problems.append(f"{where}.seq: {node.seq} is repeated or not positive")
        seen_ids.add(node.id)
        seen_seqs.add(node.seq)
        nodes.append(encode(node))
    problems += tree_problems(thread.id, thread.leaf_id, nodes)
    if problems:
        raise ImportError_(problems)
    if undated:
        thread.updated_at = max([thread.created_at, *(n["ts"] for n in nodes)])
    return thread_to_wire(thread), nodes


def _undated(raw: Any) -> tuple[Any, bool]:
    """The thread record to check, and whether its ``updatedAt`` is to be derived.

    A record whose ``updatedAt`` is missing or not a time is checked with a stand-in
    (0), which :func:`precheck_import` replaces once the nodes are known.
    """
    if isinstance(raw, dict) and stamp_from(raw.get("updatedAt")) is None:
        return {**raw, "updatedAt": 0}, True
    return raw, False


def tree_problems(
    thread_id: str, leaf_id: str | None, nodes: list[dict[str, Any]], where: str = ""
) -> list[str]:
    """What is wrong with a thread's tree: parents outside it, cycles, a bad leaf.

    ``nodes`` are the thread's nodes in wire form, each already checked on its own;
    ``where`` prefixes each problem (``threads['t1'].``).
    """
    problems = []
    ids = {n["id"] for n in nodes}
    index = index_nodes(thread_id, nodes)
    off_root = nodes_off_root(index)
    on_cycle = nodes_on_cycles(index, off_root)
    for node in nodes:
        if node["parentId"] is not None and node["parentId"] not in ids:
            problems.append(
                f"{where}nodes: {node['id']!r} has parent {node['parentId']!r} outside the thread"
            )
        elif node["id"] in on_cycle:
            problems.append(f"{where}nodes: {node['id']!r} is on a cycle")
        elif node["id"] in off_root:
            problems.append(
                f"{where}nodes: {node['id']!r} does not reach a root"
                " (a cycle or a parent outside the thread is above it)"
            )
    walk = walk_to_root(index, leaf_id)
    if walk.problem:
        problems.append(f"{where}thread.leafId: {walk.problem}")
    return problems


NOT_IMPORTED = (
    "deleting",
    "deletingSince",
    "scopeOrigins",
    "parentThreadId",
    "stats",
    "requestCut",
)
"""Thread fields an import does not take from the file (see :func:`_fresh_ids`)."""


def stats_of(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """A thread's ``stats`` as appending its nodes (wire form) in seq order counts them.

    Every assistant message is a turn (tombstones too: deleting does not uncount one);
    its ``usage`` adds its tokens and cost, as :func:`panelot.tree.nodes.append_node` does.
    """
    turns, tokens, cost = 0, 0, 0.0
    for node in sorted(nodes, key=seq_order):
        if node["type"] != "assistant_message":
            continue
        turns += 1
        usage = node["payload"].get("usage")
        if usage is not None:
            tokens += usage["inputTokens"] + usage["outputTokens"]
            cost = round(cost + (usage.get("costUsd") or 0.0), 10)
    return {"turns": turns, "totalTokens": tokens, "costUsd": cost}


def _fresh_ids(
    thread: dict[str, Any], nodes: list[dict[str, Any]], thread_id: str, threads: dict[str, str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The thread and its nodes under fresh ids, links remapped, times kept.

    An import makes a new thread, so it keeps only what the user gave the thread
    (title, times, leaf, tags, pinned, archived, folder, preset): it never arrives
    being deleted (``deleting``, ``deletingSince``), carries no origins approved
    elsewhere (``scopeOrigins``), its ``stats`` and ``shown`` are counted from its nodes,
    and its ``parentThreadId`` is kept only when that thread comes in the same import
    (``threads``: the fresh id of the first imported thread of each id in the file).
    """
    ids = {n["id"]: new_id() for n in nodes}
    remapped = [
        {**n, "id": ids[n["id"]], "threadId": thread_id, "parentId": ids.get(n["parentId"])}
        for n in nodes
    ]
    leaf = thread.get("leafId")
    new_leaf = ids[leaf] if leaf else None
    fresh = {k: v for k, v in thread.items() if k not in NOT_IMPORTED}
    fresh.update(id=thread_id, leafId=new_leaf, stats=stats_of(nodes))
    fresh["shown"] = encode(count_in({n["id"]: n for n in remapped}, new_leaf))
    fresh["scopeOrigins"] = []
    parent = threads.get(thread.get("parentThreadId") or "")
    if parent is not None:
        fresh["parentThreadId"] = parent
    return fresh, remapped


async def _write(tx: Transaction, checked: list[tuple[dict[str, Any], list[Any]]]) -> Any:
    """Write checked threads under fresh ids, all in ``tx``; return ``[(id, nodes)]``."""
    written = []
    threads, rows = [], []
    fresh_ids = [new_id() for _ in checked]
    by_file_id: dict[str, str] = {}
    for (thread, _), thread_id in zip(checked, fresh_ids, strict=True):
        by_file_id.setdefault(thread["id"], thread_id)
    for (thread, nodes), thread_id in zip(checked, fresh_ids, strict=True):
        fresh, remapped = _fresh_ids(thread, nodes, thread_id, by_file_id)
        threads.append(fresh)
        rows += remapped
        written.append((fresh["id"], len(remapped)))
    await tx.gather(
        tx.table("threads").bulk_add(threads), *([tx.table("nodes").bulk_add(rows)] if rows else [])
    )
    return written


def precheck_bundle(data: Any) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Validate a :data:`BUNDLE_FORMAT` file; every problem names its thread and field."""
    if not isinstance(data, dict):
        raise ImportError_(["data: must be an object"])
    if data.get("format") != BUNDLE_FORMAT or data.get("version") != 1:
        raise ImportError_([f"format: expected {BUNDLE_FORMAT!r} version 1"])
    threads = data.get("threads")
    if not isinstance(threads, list) or len(threads) > MAX_BUNDLE_THREADS:
        raise ImportError_([f"threads: must be a list of at most {MAX_BUNDLE_THREADS} threads"])
    try:
        size = len(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ImportError_([f"data: not plain JSON ({exc})"]) from None
    if size > MAX_IMPORT_CHARS:
        raise ImportError_([f"data: {size} characters, more than {MAX_IMPORT_CHARS}"])
    checked, problems = [], []
    for i, one in enumerate(threads):
        try:
            checked.append(precheck_import(one))
        except ImportError_ as exc:
            meta = one.get("thread") if isinstance(one, dict) else None
            title = meta.get("title") if isinstance(meta, dict) else None
            named = f" (in {title!r})" if isinstance(title, str) and title else ""
            problems += [f"threads[{i}].{p}{named}" for p in exc.problems]
    if problems:
        raise ImportError_(problems)
    return checked


async def import_thread(tx: Transaction, data: Any) -> dict[str, Any]:
    """Import an export under fresh ids inside ``tx``, keeping its times.

    A thread export returns ``{threadId, nodes}``. A bundle (:data:`BUNDLE_FORMAT`, the
    side panel's "everything" file) is all or nothing: every thread is checked before
    any is written, and the response is ``{threadIds, threads, nodes}``.
    """
    if isinstance(data, dict) and data.get("format") == BUNDLE_FORMAT:
        written = await _write(tx, precheck_bundle(data))
        return {
            "threadIds": [tid for tid, _ in written],
            "threads": len(written),
            "nodes": sum(n for _, n in written),
        }
    ((thread_id, count),) = await _write(tx, [precheck_import(data)])
    return {"threadId": thread_id, "nodes": count}
