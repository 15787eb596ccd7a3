"""Children of a node, the versions at a place, and the descent to the newest of them.

A tombstone never makes live content unreachable, and neither does a node the UI does
not show (a turn context, an interaction response). Seen through such nodes, the tree
is what a user navigates: the *versions* at a place are the shown nodes whose nearest
shown ancestor is the place's parent (the thread's roots when there is none), so a
tombstone's children count as children of its nearest live ancestor, as the session
context already treats them. A branch selector offers exactly these versions.

A branch switch moves the leaf to the *newest live descendant* of a node: from it,
repeatedly to its newest version (highest seq); where a node has none, to its newest
live hidden child (a turn that has only begun), until a node has neither.

The two searches are written once, as generators that yield the node whose children
they need and receive them (:data:`Lookup`), so the same rules run over a loaded
thread in memory (:func:`versions_in`, :func:`newest_live_in`) and over IndexedDB
(:func:`newest_descendant`). Asking IndexedDB for each level's children costs one round
trip per level, so a long descent (a branch of 50 messages) would cost 50. Instead,
after :data:`LEVELS_BY_QUERY` levels the descent reads, in one request, the links (no
payloads, only their type and tombstone flag) of the thread's nodes with a higher seq
than where it stands: every descendant was appended later, so it has one. The rest of
the descent is walked in memory, and its last node is still asked for its children,
so a descent that stopped early goes on level by level. A record whose seq breaks that
rule (corrupt data, or a seq that is not a key) is not in the one read, so the walk in
memory does not see it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

from panelot.idb import MAX_KEY, Transaction
from panelot.tree.integrity import TreeIndex, numeric_seq, seq_order

__all__ = [
    "HIDDEN_TYPES",
    "LEVELS_BY_QUERY",
    "LINKS",
    "children",
    "is_shown",
    "is_tombstone",
    "newest_descendant",
    "newest_live_in",
    "versions",
    "versions_in",
]

LEVELS_BY_QUERY = 8
"""Levels descended one query each before the later nodes are read at once."""

LINKS = ("id", "threadId", "parentId", "seq", "type", "payload.deleted")
"""What the descent reads of a node: its links, its type and its tombstone flag."""

HIDDEN_TYPES = frozenset({"turn_context", "interaction_response"})
"""Node types the UI does not show: looked through when versions are counted."""

T = TypeVar("T")
Search = Generator[str | None, list[Any], T]
"""A search that yields a node id (``None``: the roots) and is sent its children."""


def is_tombstone(record: Any) -> bool:
    """Whether a node record (whole, or read with :data:`LINKS`) is a tombstone."""
    payload = record.get("payload") if isinstance(record, dict) else None
    return isinstance(payload, dict) and bool(payload.get("deleted"))


def _hidden_type(record: Any) -> bool:
    kind = record.get("type") if isinstance(record, dict) else None
    return isinstance(kind, str) and kind in HIDDEN_TYPES


def is_shown(record: Any) -> bool:
    """Whether the UI shows a node: neither a tombstone nor of a hidden type."""
    return not is_tombstone(record) and not _hidden_type(record)


def _below(parent_id: str | None, keep: Callable[[Any], bool]) -> Search[list[Any]]:
    """The nodes ``keep`` takes whose nearest kept ancestor is ``parent_id``, by seq.

    Every other node below is looked through, each at most once, so corrupt parent
    links that loop end the search instead of repeating it.
    """
    found: list[Any] = []
    expanded: set[str | None] = {parent_id}
    pending: list[str | None] = [parent_id]
    while pending:
        for kid in (yield pending.pop()):
            if not isinstance(kid, dict) or not isinstance(kid.get("id"), str):
                continue  # a corrupt record: it links nothing
            if keep(kid):
                found.append(kid)
            elif kid["id"] not in expanded:
                expanded.add(kid["id"])
                pending.append(kid["id"])
    return sorted(found, key=seq_order) if len(found) > 1 else found


def _hidden_live(record: Any) -> bool:
    return not is_tombstone(record) and _hidden_type(record)


def _next(parent_id: str | None) -> Search[list[Any]]:
    """The candidates of one descent step: the versions below, else live hidden nodes."""
    kids = yield from _below(parent_id, is_shown)
    if kids:
        return kids
    return (yield from _below(parent_id, _hidden_live))


def _descend(current: Any, seen: set[str], levels: int | None = None) -> Search[tuple[Any, bool]]:
    """Step from the record ``current`` to the newest candidate, ``levels`` times at most.

    Returns the record reached and whether the descent ended there (no candidate, or
    the newest one already seen: a loop in corrupt links).
    """
    steps = 0
    while levels is None or steps < levels:
        kids = yield from _next(current["id"])
        if not kids or kids[-1]["id"] in seen:
            return current, True
        current = kids[-1]
        seen.add(current["id"])
        steps += 1
    return current, False


def _newest_live(start: str | None) -> Search[str | None]:
    """The newest live descendant of ``start``; of the roots (``None`` if none) for ``None``."""
    if start is None:
        roots = yield from _next(None)
        if not roots:
            return None
        first = roots[-1]
    else:
        first = {"id": start}
    reached, _ = yield from _descend(first, {first["id"]})
    return str(reached["id"])


def _in_memory(search: Search[T], lookup: Callable[[str | None], list[Any]]) -> T:
    """Run a search, answering it with ``lookup``."""
    try:
        wanted = next(search)
        while True:
            wanted = search.send(lookup(wanted))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def _queried(search: Search[T], lookup: Callable[[str | None], Awaitable[list[Any]]]) -> T:
    """Run a search, answering it with an awaited ``lookup``."""
    try:
        wanted = next(search)
        while True:
            wanted = search.send(await lookup(wanted))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _index_lookup(index: TreeIndex) -> Callable[[str | None], list[Any]]:
    nodes = index.nodes
    return lambda parent_id: [nodes[kid] for kid in index.kids(parent_id)]


def versions_in(index: TreeIndex, parent_id: str | None) -> list[Any]:
    """The versions below ``parent_id`` in a loaded thread (node records, by seq)."""
    return _in_memory(_below(parent_id, is_shown), _index_lookup(index))


def newest_live_in(index: TreeIndex, start: str | None) -> str | None:
    """The newest live descendant of ``start`` in a loaded thread (see the module)."""
    return _in_memory(_newest_live(start), _index_lookup(index))


async def children(tx: Transaction, thread_id: str, parent_id: str | None) -> list[Any]:
    """The children of ``parent_id`` in the thread, by seq: their :data:`LINKS` only."""
    nodes = tx.table("nodes")
    if parent_id is None:
        rows = await nodes.where("threadId").equals(thread_id).pick(*LINKS).to_list()
        kids = [r for r in rows if r.get("parentId") is None]
    else:
        rows = await nodes.where("parentId").equals(parent_id).pick(*LINKS).to_list()
        kids = [r for r in rows if r.get("threadId") == thread_id]
    return sorted(kids, key=seq_order) if len(kids) > 1 else kids


async def versions(
    tx: Transaction, thread_id: str, parent_id: str | None, first: list[Any] | None = None
) -> list[Any]:
    """The versions below ``parent_id``, read by query (links only, by seq).

    ``first``, when given, is the children of ``parent_id`` already read.
    """

    async def lookup(node_id: str | None) -> list[Any]:
        if first is not None and node_id == parent_id:
            return first
        return await children(tx, thread_id, node_id)

    return await _queried(_below(parent_id, is_shown), lookup)


async def _later_links(tx: Transaction, thread_id: str, seq: float) -> dict[Any, list[Any]]:
    """The links of the thread's nodes stored with a seq above ``seq``, by parent."""
    rows = (
        await tx.table("nodes")
        .where("[threadId+seq]")
        .between([thread_id, seq], [thread_id, MAX_KEY], False, True)
        .pick(*LINKS)
        .to_list()
    )
    by_parent: dict[Any, list[Any]] = {}
    for row in rows:
        if row.get("threadId") == thread_id:
            by_parent.setdefault(row.get("parentId"), []).append(row)
    return by_parent


async def newest_descendant(tx: Transaction, thread_id: str, start: dict[str, Any]) -> str:
    """The id of the newest live descendant of the node record ``start``, read by query.

    That is ``start`` itself when it has no candidate below. The descent stops at a
    node it has seen, so corrupt parent links cannot loop.
    """

    async def by_query(parent_id: str | None) -> list[Any]:
        return await children(tx, thread_id, parent_id)

    seen = {str(start["id"])}
    current, done = await _queried(_descend(start, seen, LEVELS_BY_QUERY), by_query)
    if done:
        return str(current["id"])
    number = numeric_seq(current.get("seq"))
    if number is not None:
        later = await _later_links(tx, thread_id, number)
        current, _ = _in_memory(_descend(current, seen), lambda p: later.get(p, []))
    current, _ = await _queried(_descend(current, seen), by_query)
    return str(current["id"])
