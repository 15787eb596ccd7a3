"""``thread.sent``: what the next request for a path leaves out, without reading any bytes.

The panel shows it in the thread: where the part sent begins (the history budget,
:mod:`panelot.request.history`) and which items go as a stub (the stale rule of
:mod:`panelot.request.slimming`), a summary, or cut (a cut the overflow rescue recorded
for the model, :mod:`panelot.request.rescue`). It loads the path as ``thread.request``
does and reads the attachments' metadata only::

    {firstNodeId, droppedNodes, contextBudget,
     items: [{key, nodeId, attachmentId?, how: "stub" | "summary" | "cut"}]}

A recorded cut names an item by key; it is listed as ``cut`` when that item is on the
part sent and large enough to be cut (an attachment-backed item by its record's
``size``): as ``summary`` when it has a done summary (for ``model`` first; found
without reading its bytes, :func:`panelot.request.summaries.summarized`), else ``cut``.
Stale items the request sends as their summary are listed as ``summary``.
"""

from __future__ import annotations

from typing import Any

from panelot.clock import Clock
from panelot.idb import Database
from panelot.request.build import read_meta
from panelot.request.context import request_context_of
from panelot.request.rescue import RESCUE_ITEM_CHARS, Sources, item_key
from panelot.request.rescued import min_budget
from panelot.request.slimming import SlimOptions, referenced_attachments, slim_context
from panelot.request.summaries import summarized
from panelot.tree.records import RequestCut

__all__ = ["sent_of"]


def _size(meta: dict[str, Any] | None) -> int:
    size = meta.get("size") if meta else None
    return size if isinstance(size, int) and not isinstance(size, bool) else 0


def _listed(
    before: list[dict[str, Any]],
    after: list[dict[str, Any]],
    sources: Sources,
    meta: dict[str, dict[str, Any]],
    keys: frozenset[str],
    with_summary: dict[str, str],
) -> list[dict[str, Any]]:
    """The items of the slimmed messages ``after`` that are stubs, summaries or cut."""
    out: list[dict[str, Any]] = []
    nodes = sources.node_of(before)
    for i, message in enumerate(after):
        node = nodes[i]
        if node is None:
            continue
        for where, field in (("c", "content"), ("e", "attachedContext")):
            items = message.get(field)
            originals = before[i].get(field)
            for pos, item in enumerate(items if isinstance(items, list) else []):
                if not isinstance(item, dict):
                    continue
                original = originals[pos] if isinstance(originals, list) else item
                ident = original.get("attachmentId") if isinstance(original, dict) else None
                ident = ident if isinstance(ident, str) else None
                if where == "c" and original.get("type") not in ("file", "text"):
                    ident = None  # an image: its own rules, not listed here
                    if not item.get("summary"):
                        continue
                key = item_key(node, where, pos, ident)
                if item.get("stale"):
                    how = "stub"
                elif item.get("summary"):
                    how = "summary"
                elif key in keys and _long(original, ident, meta):
                    how = "summary" if ident in with_summary else "cut"
                else:
                    continue
                entry: dict[str, Any] = {"key": key, "nodeId": node, "how": how}
                if ident is not None:
                    entry["attachmentId"] = ident
                out.append(entry)
    return out


def _long(item: dict[str, Any], ident: str | None, meta: dict[str, dict[str, Any]]) -> bool:
    text = item.get("text")
    length = len(text) if isinstance(text, str) else _size(meta.get(ident or ""))
    return length > RESCUE_ITEM_CHARS


async def sent_of(
    db: Database,
    thread_id: str,
    leaf_id: str | None,
    budget: int | None,
    clock: Clock,
    recorded: RequestCut | None,
    model: str | None = None,
) -> dict[str, Any]:
    """What the next request for the path leaves out (see the module docstring)."""
    if recorded is not None:
        budget = min_budget(budget, recorded.context_budget)
    sources = Sources()
    context = await request_context_of(db, thread_id, leaf_id, budget, clock, sources)
    named = referenced_attachments(context)
    meta = await read_meta(db, named)
    with_summary = await summarized(db, thread_id, named, model)
    slim = slim_context(context, meta, SlimOptions(), with_summary)
    keys = frozenset(recorded.item_keys) if recorded is not None else frozenset()
    history = context["history"]
    return {
        "firstNodeId": history["firstNodeId"],
        "droppedNodes": history["droppedNodes"],
        "contextBudget": history["contextBudget"],
        "items": _listed(
            context["messages"], slim.context["messages"], sources, meta, keys, with_summary
        ),
    }
