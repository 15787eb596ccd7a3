"""Walking a thread's tree safely, whatever is stored.

Nodes are handled here as raw stored dicts with only a light structural check, so a
10,000-node thread is indexed quickly and a malformed record is reported rather than
raised. Every walk is bounded by the thread's node count: a cycle, a missing node, or
a parent in another thread ends the walk with a problem, never a hang.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from panelot.idb.keys import is_finite_number

__all__ = [
    "TreeIndex",
    "Walk",
    "best_leaf",
    "extend_index",
    "index_nodes",
    "is_sound",
    "nodes_off_root",
    "nodes_on_cycles",
    "numeric_seq",
    "seq_order",
    "walk_to_root",
]


@dataclass(slots=True)
class TreeIndex:
    """A thread's readable nodes by id, their children in seq order, and what was wrong.

    ``nodes`` holds the nodes in ``(seq, id)`` order. ``children`` is derived from them
    on first use: a context walks parents only, and building a child list per node for
    it was a measurable part of loading a 10,000-node thread.
    """

    thread_id: str
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    _children: dict[str | None, list[str]] | None = field(default=None, repr=False)

    @property
    def children(self) -> dict[str | None, list[str]]:
        """Child ids by parent id (``None``: the roots), each list in seq order."""
        if self._children is None:
            children: dict[str | None, list[str]] = {}
            for ident, node in self.nodes.items():
                parent = node["parentId"]
                kids = children.get(parent)
                if kids is None:
                    children[parent] = [ident]
                else:
                    kids.append(ident)
            self._children = children
        return self._children

    def kids(self, node_id: str | None) -> list[str]:
        """Child ids of ``node_id`` (``None``: the roots), ordered by seq."""
        return self.children.get(node_id, [])


def numeric_seq(value: Any) -> int | float | None:
    """``value`` when it is a usable seq (a finite number, not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if is_finite_number(value) else None


def seq_order(raw: Any) -> tuple[int, float, str]:
    """A sort key for raw node records: numeric seqs in order, anything malformed last."""
    if not isinstance(raw, dict):
        return (2, 0.0, "")
    seq = numeric_seq(raw.get("seq"))
    ident = raw.get("id")
    return (0 if seq is not None else 1, seq or 0.0, ident if isinstance(ident, str) else "")


def _malformed(raw: Any, thread_id: str) -> str | None:
    if not isinstance(raw, dict):
        return "is not an object"
    checks = (
        ("id", isinstance(raw.get("id"), str)),
        ("threadId", raw.get("threadId") == thread_id),
        ("parentId", raw.get("parentId") is None or isinstance(raw.get("parentId"), str)),
        ("seq", numeric_seq(raw.get("seq")) is not None),
        ("type", isinstance(raw.get("type"), str)),
        ("payload", isinstance(raw.get("payload"), dict)),
    )
    for name, ok in checks:
        if not ok:
            return f"has an invalid {name}"
    return None


def is_sound(raw: Any, thread_id: str) -> bool:
    """The quick form of ``_malformed(raw) is None`` for the common, sound record."""
    try:
        parent, seq = raw["parentId"], raw["seq"]
        return (
            type(raw["id"]) is str
            and raw["threadId"] == thread_id
            and (parent is None or type(parent) is str)
            and (type(seq) is int or (type(seq) is float and math.isfinite(seq)))
            and type(raw["type"]) is str
            and type(raw["payload"]) is dict
        )
    except (KeyError, TypeError, IndexError):  # the slow check says what is wrong
        return False


def index_nodes(thread_id: str, raw_nodes: list[Any]) -> TreeIndex:
    """Index the readable nodes of a thread; malformed ones are left out and reported."""
    return _index_sound(thread_id, raw_nodes) or _index_checked(thread_id, raw_nodes)


def extend_index(index: TreeIndex, rows: list[Any]) -> bool:
    """Add ``rows`` to a sound ``index``, as :func:`index_nodes` of all of them would.

    ``rows`` must be sound records coming after every indexed one in ``(seq, id)``
    order, with new ids; otherwise nothing changes and the answer is ``False``.
    """
    if not rows:
        return True
    if index.problems:
        return False
    nodes = index.nodes
    last = nodes[next(reversed(nodes))] if nodes else None
    previous = (last["seq"], last["id"]) if last is not None else None
    added: set[str] = set()
    for raw in rows:
        if not is_sound(raw, index.thread_id) or raw["id"] in nodes or raw["id"] in added:
            return False
        key = (raw["seq"], raw["id"])
        if previous is not None and key <= previous:
            return False
        previous = key
        added.add(raw["id"])
    for raw in rows:
        nodes[raw["id"]] = raw
    index._children = None
    return True


def _index_sound(thread_id: str, raw_nodes: list[Any]) -> TreeIndex | None:
    """The index in one pass when every record is sound (the common case), else ``None``.

    Records that already come in ``(seq, id)`` order (a ``[threadId+seq]`` read) are
    indexed as they come; any other order is sorted first, as :func:`_index_checked` does.
    """
    index = TreeIndex(thread_id)
    nodes = index.nodes
    isfinite = math.isfinite
    ordered = True
    prev_seq: float = -math.inf
    prev_id = ""
    try:
        for raw in raw_nodes:
            ident, parent, seq = raw["id"], raw["parentId"], raw["seq"]
            kind = type(seq)
            if not (
                type(ident) is str
                and raw["threadId"] == thread_id
                and (parent is None or type(parent) is str)
                and (kind is int or (kind is float and isfinite(seq)))
                and type(raw["type"]) is str
                and type(raw["payload"]) is dict
            ):
                return None
            if not ordered:
                continue
            if seq < prev_seq or (seq == prev_seq and ident < prev_id):
                ordered = False
                continue
            prev_seq, prev_id = seq, ident
            nodes[ident] = raw
    except (KeyError, TypeError, IndexError):  # the checked path says what is wrong
        return None
    if ordered:
        return index
    return _build(index, sorted(raw_nodes, key=_seq_id))


def _index_checked(thread_id: str, raw_nodes: list[Any]) -> TreeIndex:
    """The index with each record checked: malformed ones are left out and reported."""
    index = TreeIndex(thread_id)
    readable = []
    for raw in raw_nodes:
        if is_sound(raw, thread_id):
            readable.append(raw)
            continue
        problem = _malformed(raw, thread_id)
        if problem is not None:
            ident = raw.get("id") if isinstance(raw, dict) else None
            index.problems.append(f"node {ident!r} {problem}")
            continue
        readable.append({**raw, "parentId": raw.get("parentId")})  # absent means a root
    readable.sort(key=_seq_id)
    return _build(index, readable)


def _build(index: TreeIndex, readable: list[dict[str, Any]]) -> TreeIndex:
    """Fill a new ``index`` (children not derived yet) from records in ``(seq, id)`` order."""
    nodes = index.nodes
    nodes.clear()
    for node in readable:
        nodes[node["id"]] = node
    return index


def _seq_id(node: dict[str, Any]) -> tuple[Any, Any]:
    return node["seq"], node["id"]


@dataclass(slots=True)
class Walk:
    """A leaf-to-root walk: the path root→leaf when it reached a root, else the problem."""

    path: list[str]
    problem: str | None = None


def walk_to_root(index: TreeIndex, leaf_id: str | None) -> Walk:
    """Follow parents from ``leaf_id`` to a root, at most node-count steps."""
    if leaf_id is None:
        if index.nodes:
            return Walk([], "the thread has nodes but no leaf")
        return Walk([])
    # The common, sound walk needs no bookkeeping; anything unusual (a missing node, a
    # walk longer than the thread, i.e. a cycle) is walked again with it, to say what.
    nodes = index.nodes
    path: list[str] = []
    append = path.append
    limit = len(nodes)
    current: str | None = leaf_id
    while current is not None:
        node = nodes.get(current)
        if node is None or len(path) >= limit:
            return _walk_checked(index, leaf_id)
        append(current)
        current = node["parentId"]
    path.reverse()
    return Walk(path)


def _walk_checked(index: TreeIndex, leaf_id: str) -> Walk:
    """:func:`walk_to_root` with cycle detection: the path, or what stopped the walk."""
    path: list[str] = []
    seen: set[str] = set()
    current: str | None = leaf_id
    limit = len(index.nodes) + 1
    while current is not None:
        if len(path) >= limit or current in seen:
            return Walk([], f"the walk from {leaf_id!r} loops at {current!r}")
        node = index.nodes.get(current)
        if node is None:
            what = "leaf" if current == leaf_id else "parent"
            return Walk([], f"{what} {current!r} is missing from the thread")
        seen.add(current)
        path.append(current)
        current = node["parentId"]
    path.reverse()
    return Walk(path)


def nodes_on_cycles(index: TreeIndex, off_root: set[str]) -> set[str]:
    """Ids of the nodes of ``off_root`` that lie on a cycle of parent links.

    The others of ``off_root`` hang below a cycle or below a parent outside the thread.
    Linear: each node is walked once.
    """
    done: set[str] = set()
    on_cycle: set[str] = set()
    for start in off_root:
        path: list[str] = []
        position: dict[str, int] = {}
        current: str | None = start
        while current in off_root and current not in done:
            if current in position:
                on_cycle.update(path[position[current] :])
                break
            position[current] = len(path)
            path.append(current)
            current = index.nodes[current]["parentId"]
        done.update(path)
    return on_cycle


def best_leaf(index: TreeIndex) -> tuple[str | None, list[str]]:
    """Return the highest-seq leaf that reaches a root, and its path (or ``None``)."""
    leaves = [nid for nid in index.nodes if not index.kids(nid)]
    for nid in sorted(leaves, key=lambda i: (index.nodes[i]["seq"], i), reverse=True):
        walk = walk_to_root(index, nid)
        if walk.problem is None:
            return nid, walk.path
    return None, []


def nodes_off_root(index: TreeIndex) -> set[str]:
    """Ids of the nodes that do not reach a root (a cycle or a missing parent above them).

    Linear in the node count: each node's verdict is settled once and shared by
    everything below it, so a hostile 20,000-node chain costs 20,000 steps, not 2*10^8.
    """
    reaches: dict[str, bool] = {}
    for start in index.nodes:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = start
        verdict = True
        while current is not None and current not in reaches:
            if current in on_path or current not in index.nodes:
                verdict = False
                break
            on_path.add(current)
            path.append(current)
            current = index.nodes[current]["parentId"]
        else:
            verdict = True if current is None else reaches[current]
        for node_id in path:
            reaches[node_id] = verdict
    return {node_id for node_id, ok in reaches.items() if not ok}
