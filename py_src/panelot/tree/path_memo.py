"""A long thread's index and path, kept between loads and extended with what is new.

Indexing a cached thread's records and walking from its leaf to the root are each
linear in the thread's length: ~10 ms together on a 10,000-node thread in the page,
paid by every model request of a turn. Over the records a thread cache entry lends
(:meth:`panelot.tree.cache.ThreadCache.records` with ``shared``), this keeps both in
the entry's memo, which goes when the entry goes (any change to a cached node):

* the index of the first ``count`` records. The entry's records only grow, by nodes
  of higher seq, so the next load indexes only the records after them
  (:func:`~panelot.tree.integrity.extend_index`); a record that is not sound, or one
  out of order, indexes everything again, as :func:`~panelot.tree.integrity.index_nodes`
  would;
* the last path walked, with each node's position on it and its visible nodes. A
  walk from a new leaf stops at the first node on that path (whose way to the root is
  known) and joins the two; anything unusual (a missing node, a walk longer than the
  thread) is walked again by :func:`~panelot.tree.integrity.walk_to_root`, which
  says what is wrong.

Only readers that neither change nor return the records use it (the model request);
the index and path it gives are the memo's own, to read only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from panelot.tree.integrity import TreeIndex, Walk, extend_index, index_nodes, walk_to_root

__all__ = ["held_visible", "indexed", "walked"]

_KEY = "path"


@dataclass(slots=True)
class _Held:
    index: TreeIndex
    count: int
    path: list[str] = field(default_factory=list)
    pos: dict[str, int] = field(default_factory=dict)
    visible: list[str] = field(default_factory=list)


def indexed(memo: dict[str, Any], thread_id: str, rows: list[Any]) -> TreeIndex:
    """The index of ``rows`` (an entry's lent records), from the memo where it can."""
    held = memo.get(_KEY)
    if isinstance(held, _Held) and held.count <= len(rows):
        if extend_index(held.index, rows[held.count :]):
            held.count = len(rows)
            return held.index
    index = index_nodes(thread_id, rows)
    memo.pop(_KEY, None)
    if not index.problems:
        memo[_KEY] = _Held(index, len(rows))
    return index


def _visible(index: TreeIndex, ids: list[str]) -> list[str]:
    nodes = index.nodes
    return [i for i in ids if not nodes[i]["payload"].get("deleted")]


def walked(memo: dict[str, Any], index: TreeIndex, leaf_id: str | None) -> Walk:
    """:func:`walk_to_root` from ``leaf_id``, joined to the last path walked where it meets it."""
    held = memo.get(_KEY)
    if not isinstance(held, _Held) or held.index is not index or leaf_id is None:
        return walk_to_root(index, leaf_id)
    nodes = index.nodes
    chain: list[str] = []
    limit = len(nodes)
    current: str | None = leaf_id
    while current is not None and current not in held.pos:
        node = nodes.get(current)
        if node is None or len(chain) >= limit:
            return walk_to_root(index, leaf_id)  # says what is wrong
        chain.append(current)
        current = node["parentId"]
    chain.reverse()
    if current is not None and held.pos[current] == len(held.path) - 1:
        start = len(held.path)  # the leaf is below the last one: the path grows
        held.path.extend(chain)
        held.visible.extend(_visible(index, chain))
    else:
        start = 0 if current is None else held.pos[current] + 1
        held.path = [*held.path[:start], *chain]
        held.pos = {}
        held.visible = _visible(index, held.path)
        start = 0
    for i in range(start, len(held.path)):
        held.pos[held.path[i]] = i
    return Walk(list(held.path))


def held_visible(memo: dict[str, Any] | None, path: list[str]) -> list[str] | None:
    """The visible nodes of ``path`` when it is the memo's last path walked, else ``None``."""
    held = memo.get(_KEY) if memo is not None else None
    if not isinstance(held, _Held) or len(held.path) != len(path) or not path:
        return None
    if held.path[-1] != path[-1]:
        return None
    return list(held.visible)
