"""The session context a model request is built from: the newest turns within the budget.

:func:`request_context_of` loads the thread as the other views do
(:func:`panelot.tree.loading.load_thread`), but borrows the thread cache's own records
and what its memo keeps (:mod:`panelot.tree.path_memo`), and builds the messages of the
part :func:`panelot.request.history.history_start` keeps only.
"""

from __future__ import annotations

import marshal
from typing import Any

from panelot.clock import Clock, now_ms
from panelot.idb import Database
from panelot.idb.errors import NotFoundError
from panelot.request.history import PathChars, history_start
from panelot.request.rescue import Sources
from panelot.tree.context import session_context, visible_ids
from panelot.tree.loading import load_thread
from panelot.tree.path_memo import held_visible

__all__ = ["request_context_of"]


async def request_context_of(
    db: Database,
    thread_id: str,
    leaf_id: str | None,
    budget: int | None,
    clock: Clock = now_ms,
    sources: Sources | None = None,
) -> dict[str, Any]:
    """The session context a model request is built from: the newest turns within ``budget``.

    The messages start at the node :func:`panelot.request.history.history_start` picks
    (``None``: all); ``path`` is the visible path from that node to the leaf, and
    ``history`` says ``{contextBudget, droppedNodes, firstNodeId}``. It reads the thread
    cache's records without copying them all, and each node's size once per cache
    entry: a turn on a long thread does not decode or measure every record again.
    ``sources``, when given, is filled with the nodes the messages come from (the
    overflow rescue names items by node: :class:`panelot.request.rescue.Sources`).
    """
    loaded = await load_thread(db, thread_id, leaf_id, clock, shared=True)
    if loaded.problem:
        raise NotFoundError(f"leafId: {loaded.problem}", field="leafId")
    visible = held_visible(loaded.memo, loaded.path) or visible_ids(loaded)
    nodes = loaded.index.nodes
    if loaded.memo is not None:  # the last path's measure: a turn measures its new nodes
        path = loaded.memo.get("path_chars")
        if not isinstance(path, PathChars):
            path = loaded.memo["path_chars"] = PathChars()
        path.measure(visible, nodes, loaded.memo.setdefault("chars", {}))
        start = path.start(budget)
    else:
        start = history_start([nodes[i] for i in visible], budget)
    derived = session_context(loaded, start, visible)
    if sources is not None:
        for node_id in visible[start:]:
            node = nodes[node_id]
            if node["type"] == "user_message":
                sources.user.append(node_id)
            elif node["type"] == "tool_result":
                item = (node.get("payload") or {}).get("itemId")
                if isinstance(item, str):
                    sources.tool.setdefault(item, node_id)
    derived["path"] = visible[start:]  # the part sent: a long path is not carried whole
    # The records may be the thread cache's own: what is returned is a copy.
    context: dict[str, Any] = marshal.loads(marshal.dumps(derived))
    context["history"] = {
        "contextBudget": budget,
        "droppedNodes": start,
        "firstNodeId": visible[start] if visible else None,
    }
    return context
