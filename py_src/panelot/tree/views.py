"""The derived views of a stored thread: model context, UI snapshot and Markdown.

Each loads the thread (repairing its leaf when it must, see :mod:`.loading`) and
derives the view with the pure functions of :mod:`.context`.

A *window* of the UI snapshot (:func:`window_of`: the last ``limit`` shown nodes of the
path, or those above the node ``before``) reads only what it returns: it walks from
the leaf up by gets by id in one read-only transaction, and asks the ``parentId``
index for the versions at each returned node's place. It returns exactly the entries
of the full snapshot at those places. Anything the full load would repair or move
met on the walk (no leaf, a leaf on a tombstone, a missing, foreign or malformed
node, a cycle) makes it load the thread in full and cut the window from that; a
break further up than the window reaches is not seen until a window (or the model
context of the next turn, which loads the whole path) reaches it.
"""

from __future__ import annotations

from typing import Any

from panelot.clock import Clock, now_ms
from panelot.idb import Database, Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.tree.context import session_context, thread_markdown, ui_entry, ui_snapshot
from panelot.tree.descent import is_shown, is_tombstone, versions
from panelot.tree.integrity import is_sound
from panelot.tree.loading import load_thread
from panelot.tree.nodes import TREE_TABLES, thread_of
from panelot.tree.reading import newest_nodes

_SPARE = 8
"""Records read beyond twice a window's size, for the versions and notices among them."""

__all__ = ["context_of", "markdown_of", "snapshot_of", "window_of"]


async def context_of(
    db: Database, thread_id: str, leaf_id: str | None = None, clock: Clock = now_ms
) -> dict[str, Any]:
    """``build_session_context``: provider-neutral messages, turn context, path, pending calls.

    An explicit ``leaf_id`` that does not reach a root is a NotFoundError on ``leafId``.
    """
    loaded = await load_thread(db, thread_id, leaf_id, clock)
    if loaded.problem:
        raise NotFoundError(f"leafId: {loaded.problem}", field="leafId")
    return session_context(loaded)


async def snapshot_of(db: Database, thread_id: str, clock: Clock = now_ms) -> dict[str, Any]:
    """The UI snapshot of the thread's current leaf."""
    return ui_snapshot(await load_thread(db, thread_id, None, clock))


async def markdown_of(db: Database, thread_id: str, clock: Clock = now_ms) -> str:
    """The Markdown of the visible path."""
    return thread_markdown(await load_thread(db, thread_id, None, clock))


def _sound_node(raw: Any, node_id: str, thread_id: str) -> dict[str, Any] | None:
    """``raw`` when it is a sound node record ``node_id`` of the thread, else ``None``."""
    if isinstance(raw, dict) and raw.get("id") == node_id and is_sound(raw, thread_id):
        return raw
    return None


async def _read_window(
    tx: Transaction, thread_id: str, limit: int | None, before: str | None
) -> dict[str, Any] | None:
    """The window read from the leaf up, or ``None`` when the full load must decide.

    ``None`` stands for anything :func:`load_thread` would repair or move (no leaf, a
    leaf on a tombstone, a missing or foreign node, a cycle, a malformed record) met on
    the part of the path walked. The thread's newest records are read first, with the
    thread, in one round trip: the walk takes its nodes from them while it can, and
    gets the others one by one; the versions of every place are read together.
    """
    newest = newest_nodes(tx, thread_id, 2 * limit + _SPARE) if limit is not None else None
    if newest is None:
        raw_thread, near = await tx.table("threads").get(thread_id), []
    else:
        raw_thread, near = await tx.gather(tx.table("threads").get(thread_id), newest)
    try:
        thread = thread_of(raw_thread, thread_id)
    except ValidationError:
        return None  # a malformed leaf is repaired by the full load; the rest raises there
    if thread.leaf_id is None:
        return None
    known = {r.get("id"): r for r in near if isinstance(r, dict)}
    picked: list[dict[str, Any]] = []  # the window's shown nodes, leaf first
    above: str | None = None  # the nearest shown node above the window
    passed = before is None
    seen: set[str] = set()
    current: str | None = thread.leaf_id
    while current is not None:
        raw = known[current] if current in known else await tx.table("nodes").get(current)
        node = _sound_node(raw, current, thread_id)
        if node is None or current in seen:
            return None
        if not seen and is_tombstone(node):
            return None  # the leaf on a tombstone: the full load may move it
        seen.add(current)
        if not passed:
            passed = current == before
        elif is_shown(node):
            if limit is not None and len(picked) >= limit:
                above = current
                break
            picked.append(node)
        current = node["parentId"]
    if not passed:
        raise NotFoundError(
            f"before: node {before!r} is not on the thread's visible path", field="before"
        )
    parents = [picked[i + 1]["id"] if i + 1 < len(picked) else above for i in range(len(picked))]
    places = await tx.gather(*(versions(tx, thread_id, parent) for parent in parents))
    out = [
        ui_entry(node, [v["id"] for v in place]) for node, place in zip(picked, places, strict=True)
    ]
    out.reverse()
    return {
        "threadId": thread.id,
        "leafId": thread.leaf_id,
        "nodes": out,
        "hasMore": above is not None,
    }


def _cut(
    snapshot: dict[str, Any], path: list[str], limit: int | None, before: str | None
) -> dict[str, Any]:
    """The window of a full snapshot of ``path``: what :func:`_read_window` reads."""
    shown = snapshot["nodes"]
    if before is not None:
        if before not in path:
            raise NotFoundError(
                f"before: node {before!r} is not on the thread's visible path", field="before"
            )
        above = set(path[: path.index(before)])
        shown = [n for n in shown if n["id"] in above]
    window = shown if limit is None else shown[max(len(shown) - limit, 0) :]
    return {**snapshot, "nodes": window, "hasMore": len(window) < len(shown)}


async def window_of(
    db: Database,
    thread_id: str,
    limit: int | None,
    before: str | None = None,
    clock: Clock = now_ms,
) -> dict[str, Any]:
    """The UI snapshot's last ``limit`` shown nodes (all: ``None``), above ``before`` if given.

    The snapshot's fields and ``hasMore``: whether shown nodes remain above the window.
    ``before`` not on the visible path is a NotFoundError on ``before``.
    """
    if limit is not None and limit < 0:
        raise ValidationError("limit: must be a non-negative integer", field="limit")
    read = await db.transaction(
        "r", TREE_TABLES, lambda tx: _read_window(tx, thread_id, limit, before)
    )
    if read is not None:
        return read
    loaded = await load_thread(db, thread_id, None, clock)
    return _cut(ui_snapshot(loaded), loaded.path, limit, before)
