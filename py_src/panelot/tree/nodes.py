"""Tree operations on ``threads`` and ``nodes`` (seed §3), inside a caller's transaction.

Each function takes a running :class:`~panelot.idb.Transaction` over at least
``threads`` and ``nodes`` so that callers (the store facade, the command bus with its
receipt) can put several of them, and a receipt, in one atomic unit.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from panelot.codec import encode
from panelot.idb import MAX_KEY, MIN_KEY, Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.surrogates import check_well_formed
from panelot.tree.descent import children, is_shown, is_tombstone, newest_descendant, versions
from panelot.tree.integrity import index_nodes, numeric_seq, walk_to_root
from panelot.tree.records import (
    AssistantMessage,
    ThreadMeta,
    ThreadNode,
    check_thread_bounds,
    node_from_wire,
    payload_from_wire,
    thread_from_wire,
    thread_to_wire,
)

__all__ = [
    "LEAF",
    "PATCHABLE",
    "TREE_TABLES",
    "Clock",
    "append_node",
    "create_thread",
    "edit_message",
    "get_node",
    "get_thread",
    "last_seq",
    "load_nodes",
    "load_thread_records",
    "now_ms",
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

Clock = Callable[[], int]


def now_ms() -> int:
    """Milliseconds since the epoch: the store's timestamps."""
    return int(time.time() * 1000)


def new_id() -> str:
    """A new UUID string."""
    return str(uuid.uuid4())


def _text(value: Any, name: str, limit: int) -> str:
    """An id (``threadId``, ``nodeId``, ``parentId``): a well-formed string of at most ``limit``."""
    if not isinstance(value, str) or len(value) > limit:
        raise ValidationError(f"{name}: must be a string of at most {limit} characters", field=name)
    return check_well_formed(value, name)


async def get_thread(tx: Transaction, thread_id: str) -> ThreadMeta:
    """Return a thread's metadata; NotFoundError if absent."""
    return thread_of(await tx.table("threads").get(_text(thread_id, "threadId", 200)), thread_id)


def thread_of(raw: Any, thread_id: str) -> ThreadMeta:
    """The metadata of the stored thread record ``raw`` (read under ``thread_id``).

    NotFoundError when there is none; ValidationError when it is malformed.
    """
    if raw is None:
        raise NotFoundError(f"thread {thread_id!r} does not exist", field="threadId")
    return thread_from_wire(raw)


async def get_node(tx: Transaction, node_id: str, thread_id: str | None = None) -> ThreadNode:
    """Return a node; NotFoundError if absent or (with ``thread_id``) in another thread."""
    raw = await tx.table("nodes").get(_text(node_id, "nodeId", 200))
    if raw is None or (thread_id is not None and raw.get("threadId") != thread_id):
        raise NotFoundError(f"node {node_id!r} does not exist in this thread", field="nodeId")
    return node_from_wire(raw)


def _last_node(tx: Transaction, thread_id: str) -> Awaitable[Any]:
    """The thread's node with the highest seq (raw), read through ``[threadId+seq]``."""
    return (
        tx.table("nodes")
        .where("[threadId+seq]")
        .between([thread_id, MIN_KEY], [thread_id, MAX_KEY])
        .last()
    )


async def last_seq(tx: Transaction, thread_id: str) -> int:
    """The thread's highest seq (0 when empty), read through ``[threadId+seq]``."""
    return await _top_seq(tx, thread_id, await _last_node(tx, thread_id))


async def _top_seq(tx: Transaction, thread_id: str, last: Any) -> int:
    """The seq of ``last`` (0 for none); a corrupt one (text, array, infinite) means a scan."""
    seq = numeric_seq(last.get("seq")) if last else 0
    if seq is None:  # such records sort after every number in [threadId+seq]
        seqs = [numeric_seq(r.get("seq")) for r in await load_nodes(tx, thread_id)]
        seq = max((s for s in seqs if s is not None), default=0)
    return int(seq)


async def load_nodes(tx: Transaction, thread_id: str) -> list[Any]:
    """Every stored node record of a thread (raw), through the ``threadId`` index."""
    return await tx.table("nodes").where("threadId").equals(thread_id).to_list()


#: Nodes read with the thread in a load's first round trip (see load_thread_records).
FIRST_NODES = 500
#: About this many nodes per part of the rest of a longer thread, in at most MAX_PARTS.
PART_NODES = 800
MAX_PARTS = 16


def _by_seq(
    tx: Transaction,
    thread_id: str,
    lower: Any = MIN_KEY,
    upper: Any = MAX_KEY,
    include_lower: bool = True,
    include_upper: bool = True,
    limit: int | None = None,
) -> Awaitable[list[Any]]:
    """The thread's records in ``[threadId+seq]`` (seqs within the bounds), in seq order."""
    found = (
        tx.table("nodes")
        .where("[threadId+seq]")
        .between([thread_id, lower], [thread_id, upper], include_lower, include_upper)
    )
    return (found if limit is None else found.limit(limit)).to_list()


def _count(tx: Transaction, thread_id: str) -> Awaitable[int]:
    return tx.table("nodes").where("threadId").equals(thread_id).count()


async def _rest_by_seq(tx: Transaction, thread_id: str, after: Any, expected: int) -> list[Any]:
    """The records after seq ``after``, read as parallel parts split by seq.

    Appends number a thread's seqs densely, so ``expected`` more records split the seqs
    after ``after`` into parts of about :data:`PART_NODES`. The parts cover every key
    after ``after`` whatever the seqs are (the last one is open-ended): a guess that
    misses only makes the parts uneven.
    """
    start = numeric_seq(after)
    parts = min(MAX_PARTS, -(-expected // PART_NODES))
    step = -(-expected // parts)
    points = [] if start is None else [start + step * i for i in range(parts)]
    cuts = points[1:]
    # One open read for a seq that is no number, a short rest, or seqs so large that
    # adding to them stops making them larger (floats past 2**53) or overflows.
    if not cuts or cuts[-1] == math.inf or any(a >= b for a, b in zip(points, cuts, strict=False)):
        return await _by_seq(tx, thread_id, after, include_lower=False)
    bounds = [after, *cuts, MAX_KEY]
    # Each part takes its lower bound but the first (``after`` was read), not its upper.
    reads = [
        _by_seq(tx, thread_id, bounds[i], bounds[i + 1], i > 0, i == parts - 1)
        for i in range(parts)
    ]
    return [row for part in await tx.gather(*reads) for row in part]


async def load_thread_records(tx: Transaction, thread_id: str) -> tuple[Any, list[Any]]:
    """The raw thread record (``None`` if absent) and its raw nodes in seq order.

    The thread, its first :data:`FIRST_NODES` nodes and the node count are read in one
    round trip. The nodes are read through ``[threadId+seq]``, so they come already
    ordered as :func:`~panelot.tree.integrity.index_nodes` wants them. The rest of a longer
    thread is read in a second round trip as several reads at once, split by seq: the
    marshal writer and Python's decode of one part then overlap IndexedDB's read of the
    next, where one read of everything made them follow it (measured in Chromium: the
    context of a 10,000-node thread took ~440-475 ms with one read, ~350 ms in parts).

    A record whose seq is not a key (missing, null, a boolean, an object) is not in that
    index, and several records with the seq at the first round trip's end may be cut
    between the two: when the count through ``threadId`` says that the reads did not
    get each record once, every record is read through ``threadId`` instead.
    """
    raw, rows, total = await tx.gather(
        tx.table("threads").get(_text(thread_id, "threadId", 200)),
        _by_seq(tx, thread_id, limit=FIRST_NODES),
        _count(tx, thread_id),
    )
    if len(rows) == FIRST_NODES and total > FIRST_NODES:
        rows += await _rest_by_seq(tx, thread_id, rows[-1]["seq"], total - FIRST_NODES)
    return raw, rows if total == len(rows) else await load_nodes(tx, thread_id)


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
        tx.table("threads").get(_text(thread_id, "threadId", 200)), _last_node(tx, thread_id)
    )
    if raw_thread is None:
        raise NotFoundError(f"thread {thread_id!r} does not exist", field="threadId")
    thread = thread_from_wire(raw_thread)
    typed = payload_from_wire(node_type, payload)
    parent = thread.leaf_id if parent_id == LEAF else parent_id
    if parent is not None and not (last is not None and last.get("id") == parent):
        raw_parent = await tx.table("nodes").get(_text(parent, "parentId", 200))
        if raw_parent is None or raw_parent.get("threadId") != thread_id:
            raise ValidationError(
                f"parentId: node {parent!r} does not exist in thread {thread_id!r}",
                field="parentId",
            )
    now = clock()
    node = ThreadNode(
        id=new_id(),
        thread_id=thread_id,
        parent_id=parent,
        seq=await _top_seq(tx, thread_id, last) + 1,
        ts=now,
        type=node_type,  # type: ignore[arg-type]
        payload=typed,
    )
    thread.leaf_id, thread.updated_at = node.id, now
    if isinstance(typed, AssistantMessage):
        usage = typed.usage
        stats = thread.stats
        stats.turns += 1
        if usage is not None:
            stats.total_tokens += usage.input_tokens + usage.output_tokens
            stats.cost_usd = round(stats.cost_usd + (usage.cost_usd or 0.0), 10)
    await tx.gather(
        tx.table("nodes").add(encode(node)), tx.table("threads").put(thread_to_wire(thread))
    )
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
    raw = await tx.table("nodes").get(_text(node_id, "nodeId", 200))
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


async def switch_branch(
    tx: Transaction, thread_id: str, node_id: str, clock: Clock = now_ms
) -> str:
    """Move the leaf to the newest live descendant of ``node_id`` (see :mod:`.descent`).

    The descent stops at a node it has seen before, so corrupt parent links cannot loop.
    """
    thread_key, node_key = _text(thread_id, "threadId", 200), _text(node_id, "nodeId", 200)
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
    current = await newest_descendant(tx, thread_id, raw_node)
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
    _text(thread_id, "threadId", 200)
    if not isinstance(patch, dict):
        raise ValidationError("patch: must be an object", field="patch")
    unknown = sorted(set(patch) - PATCHABLE)
    if unknown:
        raise ValidationError(f"patch.{unknown[0]}: cannot be changed", field=f"patch.{unknown[0]}")
    current = thread_to_wire(thread_of(raw, thread_id))
    merged = thread_from_wire({**current, **patch, "updatedAt": clock()}, "patch")
    check_thread_bounds({k: v for k, v in patch.items() if current.get(k) != v}, "patch")
    return merged


async def check_leaf(tx: Transaction, thread: ThreadMeta) -> tuple[bool, list[str]]:
    """Tell whether the thread's leaf reaches a root; return the problems seen."""
    index = index_nodes(thread.id, await load_nodes(tx, thread.id))
    walk = walk_to_root(index, thread.leaf_id)
    problems = list(index.problems)
    if walk.problem:
        problems.append(walk.problem)
    return walk.problem is None, problems
