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
"""

from __future__ import annotations

import json
from typing import Any

from panelot.clock import Clock, new_id, now_ms
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
    "export_thread",
    "import_thread",
    "precheck_bundle",
    "precheck_import",
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
    try:
        thread = thread_from_wire(data.get("thread"), "thread")
        check_thread_bounds(data["thread"], "thread")
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
    return thread_to_wire(thread), nodes


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


def _fresh_ids(
    thread: dict[str, Any], nodes: list[dict[str, Any]], now: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The thread and its nodes under fresh ids, links remapped."""
    ids = {n["id"]: new_id() for n in nodes}
    thread_id = new_id()
    remapped = [
        {**n, "id": ids[n["id"]], "threadId": thread_id, "parentId": ids.get(n["parentId"])}
        for n in nodes
    ]
    leaf = thread.get("leafId")
    new_leaf = ids[leaf] if leaf else None
    counts = count_in({n["id"]: n for n in remapped}, new_leaf)
    fresh = {
        **thread,
        "id": thread_id,
        "leafId": new_leaf,
        "updatedAt": now,
        "shown": encode(counts),
    }
    return fresh, remapped


async def _write(tx: Transaction, checked: list[tuple[dict[str, Any], list[Any]]], now: int) -> Any:
    """Write checked threads under fresh ids, all in ``tx``; return ``[(id, nodes)]``."""
    written = []
    threads, rows = [], []
    for thread, nodes in checked:
        fresh, remapped = _fresh_ids(thread, nodes, now)
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


async def import_thread(tx: Transaction, data: Any, clock: Clock = now_ms) -> dict[str, Any]:
    """Import an export under fresh ids inside ``tx``.

    A thread export returns ``{threadId, nodes}``. A bundle (:data:`BUNDLE_FORMAT`, the
    side panel's "everything" file) is all or nothing: every thread is checked before
    any is written, and the response is ``{threadIds, threads, nodes}``.
    """
    if isinstance(data, dict) and data.get("format") == BUNDLE_FORMAT:
        written = await _write(tx, precheck_bundle(data), clock())
        return {
            "threadIds": [tid for tid, _ in written],
            "threads": len(written),
            "nodes": sum(n for _, n in written),
        }
    ((thread_id, count),) = await _write(tx, [precheck_import(data)], clock())
    return {"threadId": thread_id, "nodes": count}
