"""Tree operations on ``threads`` and ``nodes``, inside a caller's transaction.

Each function takes a running :class:`~panelot.idb.Transaction` over at least
``threads`` and ``nodes`` so that callers (the store facade, the command bus with its
receipt) can put several of them, and a receipt, in one atomic unit.
"""

from __future__ import annotations

from typing import Any

from panelot.clock import Clock, new_id, now_ms
from panelot.codec import encode, id_field
from panelot.idb import Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.tree.descent import children, is_shown, is_tombstone, newest_descendant, versions
from panelot.tree.reading import last_node, top_seq
from panelot.tree.records import (
    AssistantMessage,
    ShownCount,
    ThreadMeta,
    ThreadNode,
    check_thread_bounds,
    node_from_wire,
    payload_from_wire,
    thread_from_wire,
    thread_to_wire,
)
from panelot.tree.shown import shown_after

__all__ = [
    "LEAF",
    "PATCHABLE",
    "TREE_TABLES",
    "append_node",
    "create_thread",
    "edit_message",
    "get_node",
    "get_thread",
    "regenerate",
    "siblings",
    "switch_branch",
    "thread_of",
    "updated_thread",
]

TREE_TABLES = ("threads", "nodes")
"""The tables every tree operation's transaction must cover."""

LEAF = "\0leaf"
"""Default ``parent_id`` of :func:`append_node`: the thread's current leaf."""


async def get_thread(tx: Transaction, thread_id: str) -> ThreadMeta:
    """Return a thread's metadata; NotFoundError if absent."""
    return thread_of(await tx.table("threads").get(id_field(thread_id, "threadId")), thread_id)


def thread_of(raw: Any, thread_id: str) -> ThreadMeta:
    """The metadata of the stored thread record ``raw`` (read under ``thread_id``).

    NotFoundError when there is none; ValidationError when it is malformed.
    """
    if raw is None:
        raise NotFoundError(f"thread {thread_id!r} does not exist", field="threadId")
    return thread_from_wire(raw)


async def get_node(tx: Transaction, node_id: str, thread_id: str | None = None) -> ThreadNode:
    """Return a node; NotFoundError if absent or (with ``thread_id``) in another thread."""
    raw = await tx.table("nodes").get(id_field(node_id, "nodeId"))
    if raw is None or (thread_id is not None and raw.get("threadId") != thread_id):
        raise NotFoundError(f"node {node_id!r} does not exist in this thread", field="nodeId")
    return node_from_wire(raw)


async def create_thread(
    tx: Transaction,
    *,
    title: str = "",
    folder_id: str | None = None,
    tags: list[str] | None = None,
    preset: str | None = None,
    clock: Clock = now_ms,
) -> ThreadMeta:
    """Create an empty thread; its title, tags and folder are bounded (``check_thread_bounds``)."""
    check_thread_bounds({"title": title, "tags": tags, "folderId": folder_id})
    now = clock()
    thread = ThreadMeta(
        id=new_id(),
        title=title,
        created_at=now,
        updated_at=now,
        leaf_id=None,
        tags=list(tags or []),
        folder_id=folder_id,
        preset=preset,
        shown=ShownCount(None),
    )
    await tx.table("threads").add(thread_to_wire(thread))
    return thread


async def append_node(
    tx: Transaction,
    thread_id: str,
    node_type: str,
    payload: Any,
    parent_id: str | None = LEAF,
    clock: Clock = now_ms,
) -> ThreadNode:
    """Append a node: next seq, parent check, move the leaf, update time and stats.

    Two round trips: the thread and its last node are read together, then the node and
    the thread are written together. The parent is read only when it is not that last
    node (after a branch switch, or an explicit ``parent_id``).
    """
    raw_thread, last = await tx.gather(
        tx.table("threads").get(id_field(thread_id, "threadId")), last_node(tx, thread_id)
    )
    if raw_thread is None:
        raise NotFoundError(f"thread {thread_id!r} does not exist", field="threadId")
    thread = thread_from_wire(raw_thread)
    typed = payload_from_wire(node_type, payload)
    parent = thread.leaf_id if parent_id == LEAF else parent_id
    known = {last["id"]: last} if isinstance(last, dict) and isinstance(last.get("id"), str) else {}
    if parent is not None and parent not in known:
        raw_parent = await tx.table("nodes").get(id_field(parent, "parentId"))
        if raw_parent is None or raw_parent.get("threadId") != thread_id:
            raise ValidationError(
                f"parentId: node {parent!r} does not exist in thread {thread_id!r}",
                field="parentId",
            )
        known[parent] = raw_parent
    now = clock()
    node = ThreadNode(
        id=new_id(),
        thread_id=thread_id,
        parent_id=parent,
        seq=await top_seq(tx, thread_id, last) + 1,
        ts=now,
        type=node_type,  # type: ignore[arg-type]
        payload=typed,
    )
    wire = encode(node)
    thread.shown = await shown_after(tx, thread, node.id, {**known, node.id: wire})
    thread.leaf_id, thread.updated_at = node.id, now
    if isinstance(typed, AssistantMessage):
        usage = typed.usage
        stats = thread.stats
        stats.turns += 1
        if usage is not None:
            stats.total_tokens += usage.input_tokens + usage.output_tokens
            stats.cost_usd = round(stats.cost_usd + (usage.cost_usd or 0.0), 10)
    await tx.gather(tx.table("nodes").add(wire), tx.table("threads").put(thread_to_wire(thread)))
    return node


async def edit_message(
    tx: Transaction, thread_id: str, node_id: str, payload: Any, clock: Clock = now_ms
) -> ThreadNode:
    """Edit a user message: a new sibling under its parent, which becomes the leaf."""
    original = await get_node(tx, node_id, thread_id)
    if original.type != "user_message":
        raise ValidationError("nodeId: only user messages can be edited", field="nodeId")
    return await append_node(tx, thread_id, "user_message", payload, original.parent_id, clock)


async def regenerate(
    tx: Transaction, thread_id: str, user_node_id: str, payload: Any, clock: Clock = now_ms
) -> ThreadNode:
    """Write a regenerated answer: a new assistant branch under the user message."""
    user = await get_node(tx, user_node_id, thread_id)
    if user.type != "user_message":
        raise ValidationError("userNodeId: must be a user message", field="userNodeId")
    return await append_node(tx, thread_id, "assistant_message", payload, user.id, clock)


async def _shown_parent(tx: Transaction, raw: dict[str, Any]) -> tuple[str | None, list[Any]]:
    """The nearest shown ancestor of the stored node ``raw`` and that ancestor's children.

    The parent and its children are read in one round trip; a parent the UI does not
    show (a tombstone, a turn context) sends the walk one level up. The walk is bounded
    by the ancestors it has seen.
    """
    thread_id, parent_id = raw["threadId"], raw.get("parentId")
    seen: set[str] = set()
    while parent_id is not None and parent_id not in seen:
        seen.add(parent_id)
        parent, kids = await tx.gather(
            tx.table("nodes").get(parent_id), children(tx, thread_id, parent_id)
        )
        if parent is None or parent.get("threadId") != thread_id or is_shown(parent):
            return parent_id, kids
        parent_id = parent.get("parentId")
        if parent_id is not None and not isinstance(parent_id, str):
            parent_id = None
    return None, await children(tx, thread_id, None)


async def siblings(tx: Transaction, node_id: str) -> list[dict[str, Any]]:
    """The versions at the node's place, ordered by seq: ``[{id, seq}]``.

    They are the shown nodes whose nearest shown ancestor is the node's (see
    :mod:`panelot.tree.descent`); the node is among them unless the UI does not show it.
    Only links are read, not payloads.
    """
    raw = await tx.table("nodes").get(id_field(node_id, "nodeId"))
    if raw is None:
        raise NotFoundError(f"node {node_id!r} does not exist in this thread", field="nodeId")
    thread_id, parent_id = raw.get("threadId"), raw.get("parentId")
    if not isinstance(thread_id, str) or not (parent_id is None or isinstance(parent_id, str)):
        raise ValidationError(
            f"nodeId: the stored node {node_id!r} has no valid threadId/parentId", field="nodeId"
        )
    place, first = await _shown_parent(tx, raw)
    found = await versions(tx, thread_id, place, first)
    return [{"id": k["id"], "seq": k["seq"]} for k in found]


async def _refuse_stranding(tx: Transaction, thread_id: str, raw: dict[str, Any]) -> None:
    """Refuse a switch to a hidden node below which nothing is shown, beside versions.

    A turn context whose reply was deleted shows nothing: with the leaf there, the place
    it stands at would show no node, so no selector would lead back to the versions of
    that place. Switching there is refused while such versions exist.
    """
    if await versions(tx, thread_id, raw["id"]):
        return
    place, first = await _shown_parent(tx, raw)
    if await versions(tx, thread_id, place, first):
        raise ValidationError(
            f"nodeId: nothing below node {raw['id']!r} is shown, so the versions at its"
            " place would be out of reach; switch to one of them",
            field="nodeId",
        )


async def switch_branch(
    tx: Transaction, thread_id: str, node_id: str, clock: Clock = now_ms
) -> str:
    """Move the leaf to the newest live descendant of ``node_id`` (see :mod:`.descent`).

    The descent stops at a node it has seen before, so corrupt parent links cannot loop.
    A deleted node is refused, and so is a hidden node with nothing shown below it while
    its place has versions (the view would offer no way back to them).
    """
    thread_key, node_key = (
        id_field(thread_id, "threadId"),
        id_field(node_id, "nodeId"),
    )
    raw_thread, raw_node = await tx.gather(
        tx.table("threads").get(thread_key), tx.table("nodes").get(node_key)
    )
    if raw_thread is None:
        raise NotFoundError(f"thread {thread_id!r} does not exist", field="threadId")
    thread = thread_from_wire(raw_thread)
    if raw_node is None or raw_node.get("threadId") != thread_id:
        raise NotFoundError(f"node {node_id!r} does not exist in this thread", field="nodeId")
    if is_tombstone(raw_node):
        raise ValidationError(
            f"nodeId: node {node_id!r} was deleted; switch to one of the live versions",
            field="nodeId",
        )
    if not is_shown(raw_node):
        await _refuse_stranding(tx, thread_id, raw_node)
    current = await newest_descendant(tx, thread_id, raw_node)
    thread.shown = await shown_after(tx, thread, current, {node_key: raw_node})
    thread.leaf_id, thread.updated_at = current, clock()
    await tx.table("threads").put(thread_to_wire(thread))
    return current


PATCHABLE = frozenset({"title", "tags", "pinned", "archived", "folderId", "preset", "scopeOrigins"})
"""The thread fields ``thread.update`` may change."""


def updated_thread(raw: Any, thread_id: str, patch: Any, clock: Clock = now_ms) -> ThreadMeta:
    """The stored thread record ``raw`` with a metadata patch applied; nothing is written.

    The patch may change title, tags, pinned, archived, folderId, preset and
    scopeOrigins; the result is validated as a whole, and what the patch changes is held
    to the limits of :func:`~panelot.tree.records.check_thread_bounds` (a stored title already
    over its limit does not stop a patch that leaves it alone or repeats it). The caller
    writes it (``thread.update`` stages the write with its receipt).
    """
    id_field(thread_id, "threadId")
    if not isinstance(patch, dict):
        raise ValidationError("patch: must be an object", field="patch")
    unknown = sorted(set(patch) - PATCHABLE)
    if unknown:
        raise ValidationError(f"patch.{unknown[0]}: cannot be changed", field=f"patch.{unknown[0]}")
    current = thread_to_wire(thread_of(raw, thread_id))
    merged = thread_from_wire({**current, **patch, "updatedAt": clock()}, "patch")
    check_thread_bounds({k: v for k, v in patch.items() if current.get(k) != v}, "patch")
    return merged
