"""Deleting a message: its tombstone, its tool pair, and a leaf that stays live.

``message.delete`` never removes a record: it sets ``payload.deleted = true``. Two rules
keep the rest of the thread whole, both applied in the same transaction:

* **Tool pairs go together.** A provider refuses a tool call without its result and a
  result without its call, so deleting a ``tool_call`` also tombstones every
  ``tool_result`` below it that answers it (same ``itemId``), and deleting a result
  tombstones its call (the nearest ancestor ``tool_call`` with that ``itemId``) and the
  call's other results.
* **The leaf stays on live content.** When the leaf's path ends in tombstones (the leaf
  itself was deleted, and every node between it and the last live one), the leaf moves
  to the newest live descendant of the last *shown* node on the path, as a branch switch
  would: the other versions at the place below it stay reachable (see
  :mod:`panelot.tree.descent`). Counting from the last live node instead could leave the
  leaf on a turn context whose reply was deleted, a place that shows nothing and so
  offers no selector back to the versions beside it. For the same reason, a delete that
  leaves the path ending in nodes the UI does not show, beside versions (the user
  message above a turn context deleted, say), moves the leaf to the newest of those
  versions (:func:`off_a_hidden_tail`). A thread with no live node keeps its leaf.

:func:`live_leaf` is also how a thread stored with a dead leaf (written by older code
or by other programs sharing the database) is brought back on load.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from panelot.codec import encode
from panelot.idb import Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.tree.descent import is_shown, is_tombstone, newest_live_in, versions_in
from panelot.tree.integrity import TreeIndex, index_nodes, walk_to_root
from panelot.tree.reading import load_thread_records
from panelot.tree.shown import count_in

__all__ = ["delete_message", "live_leaf", "off_a_hidden_tail", "pair_group"]


def _item(node: dict[str, Any], kind: str) -> Any:
    """The ``itemId`` of a node of type ``kind``, or ``None``."""
    if node["type"] != kind:
        return None
    item = node["payload"].get("itemId")
    return item if isinstance(item, str) else None


def _results_below(index: TreeIndex, call_id: str, item: str) -> list[str]:
    """The results answering the call ``call_id`` (same ``itemId``) in its subtree."""
    found: list[str] = []
    seen = {call_id}
    pending = [call_id]
    while pending:
        for kid in index.kids(pending.pop()):
            if kid in seen:
                continue
            seen.add(kid)
            if _item(index.nodes[kid], "tool_result") == item:
                found.append(kid)
            pending.append(kid)
    return found


def _call_above(index: TreeIndex, result_id: str, item: str) -> str | None:
    """The nearest ancestor ``tool_call`` with ``item``, the call a result answers."""
    seen = {result_id}
    current = index.nodes[result_id]["parentId"]
    while current is not None and current not in seen and current in index.nodes:
        seen.add(current)
        if _item(index.nodes[current], "tool_call") == item:
            return str(current)
        current = index.nodes[current]["parentId"]
    return None


def pair_group(index: TreeIndex, node_id: str) -> list[str]:
    """The node and the tool call/results it pairs with: what one delete tombstones."""
    node = index.nodes[node_id]
    call, item = node_id, _item(node, "tool_call")
    if item is None:
        item = _item(node, "tool_result")
        if item is None:
            return [node_id]
        found = _call_above(index, node_id, item)
        if found is None:
            return [node_id]
        call = found
    group = [call, *_results_below(index, call, item)]
    return group if node_id in group else [node_id, *group]


def _off_a_hidden_end(
    index: TreeIndex, leaf_id: str | None, moves: Callable[[Any, str | None], bool]
) -> str | None:
    """``leaf_id``, or the newest live descendant of the last shown node on its path.

    The leaf moves only when its path ends in nodes the UI does not show, and
    ``moves(last node, last shown node or None)`` agrees; it stays when the path cannot
    reach a root (the integrity repair handles that) or nothing live is there.
    """
    walk = walk_to_root(index, leaf_id)
    nodes = index.nodes
    if walk.problem or not walk.path or is_shown(nodes[walk.path[-1]]):
        return leaf_id
    shown = [n for n in walk.path if is_shown(nodes[n])]
    place = shown[-1] if shown else None
    if not moves(nodes[walk.path[-1]], place):
        return leaf_id
    moved = newest_live_in(index, place)
    return moved if moved is not None else leaf_id


def live_leaf(index: TreeIndex, leaf_id: str | None) -> str | None:
    """The leaf a thread should have: ``leaf_id``, unless its path ends in tombstones.

    Then it is the newest live descendant of the last shown node on the path (of the
    roots, when the path shows none); ``leaf_id`` again when the thread has no live
    node, or when the leaf cannot reach a root (the integrity repair handles that).
    """
    return _off_a_hidden_end(index, leaf_id, lambda end, place: is_tombstone(end))


def off_a_hidden_tail(index: TreeIndex, leaf_id: str | None) -> str | None:
    """The leaf, moved off a tail that shows nothing while versions stand beside it.

    When the path below its last shown node holds only nodes the UI does not show (a
    turn context whose reply, or whose user message, was deleted), that place shows no
    node, so no selector leads to the versions there: the leaf then moves to the newest
    live descendant of the last shown node, which is one of them. With no version
    there (a turn that has only begun), the leaf stays.
    """
    return _off_a_hidden_end(index, leaf_id, lambda end, place: bool(versions_in(index, place)))


async def delete_message(tx: Transaction, thread_id: str, node_id: str) -> dict[str, Any]:
    """Tombstone a node and its tool pair, and keep the leaf live; return what changed.

    The whole thread is read (both rules look beyond the node), then the tombstones and
    the leaf are written together. The response is
    ``{"deleted": [ids tombstoned now], "leafId": the thread's leaf}``.
    """
    raw_thread, raw_nodes = await load_thread_records(tx, thread_id)
    if raw_thread is None:
        raise NotFoundError(f"thread {thread_id!r} does not exist", field="threadId")
    index = index_nodes(thread_id, raw_nodes)
    if node_id not in index.nodes:
        raise _missing_or_malformed(raw_nodes, node_id)
    stored = {r["id"]: r for r in raw_nodes if isinstance(r, dict) and r.get("id") in index.nodes}
    changed = []
    for member in pair_group(index, node_id):
        if not is_tombstone(index.nodes[member]):
            index.nodes[member]["payload"]["deleted"] = True  # shared with the stored record
            changed.append(member)
    leaf = raw_thread.get("leafId")
    moved = live_leaf(index, leaf if isinstance(leaf, str) else None)
    if changed:
        moved = off_a_hidden_tail(index, moved)
    writes: list[Awaitable[Any]] = []
    if changed:
        writes.append(tx.table("nodes").bulk_put([stored[m] for m in changed]))
    shown = encode(count_in(index.nodes, moved))
    if moved != leaf or shown != raw_thread.get("shown"):
        writes.append(tx.table("threads").update(thread_id, {"leafId": moved, "shown": shown}))
    await tx.gather(*writes)
    return {"deleted": changed, "leafId": moved}


def _missing_or_malformed(raw_nodes: list[Any], node_id: str) -> Exception:
    """The error for a node the thread's index does not hold."""
    for raw in raw_nodes:
        if isinstance(raw, dict) and raw.get("id") == node_id:
            return ValidationError(
                f"nodeId: the stored node {node_id!r} is malformed and cannot be deleted",
                field="nodeId",
            )
    return NotFoundError(f"node {node_id!r} does not exist in this thread", field="nodeId")
