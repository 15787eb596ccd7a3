"""The merge rules of a pull (docs/sync.md "Merges"), as pure functions.

* :func:`winner` — CouchDB's winning leaf: a live one first, then the highest
  generation, then the highest revision id;
* :func:`merge_leaves` — the leaves of one document (a conflict) merged into one body,
  the same on every device whatever order they come in;
* :func:`merge_thread` — a thread's clocked fields by clock, ``createdAt`` the smaller,
  ``updatedAt`` the larger; a field changed here since the last sync wins (it gets a
  newer clock when it is pushed);
* :func:`merge_node` — append-only: a tombstone wins, else the local record stays
  (its local ``evicted`` flags with it);
* :func:`library_wins` — whole record, the newer clock;
* :func:`early_leaf` — the server's leaf of a thread whose node has not come here yet
  (a thread's document can arrive before its nodes): the leaf this device keeps
  meanwhile is not a change made here (:func:`known_with_leaf`), a push sends the
  server's leaf, and the leaf is taken once its node comes;
* :func:`settle_leaf` — where a merged thread's leaf goes: the merged ``leafId`` once
  its node is here, moved to the newest live descendant when pulled nodes extend its
  branch, then off a tombstoned end (``tree.tombstones``).
"""

from __future__ import annotations

import copy
from collections.abc import Container, Iterable
from typing import Any, TypeGuard

from panelot.sync.clock import parse_hlc
from panelot.sync.mapping import CLOCKED_THREAD_FIELDS, LOCAL_THREAD_FIELDS
from panelot.sync.revs import rev_number
from panelot.tree.descent import is_tombstone, newest_live_in
from panelot.tree.integrity import TreeIndex
from panelot.tree.tombstones import live_leaf

__all__ = [
    "early_leaf",
    "known_with_leaf",
    "library_wins",
    "merge_leaves",
    "merge_node",
    "merge_thread",
    "settle_leaf",
    "winner",
]

_MISSING = object()


def _rank(leaf: dict[str, Any]) -> tuple[bool, int, str]:
    rev = leaf["_rev"]
    return (not leaf.get("_deleted", False), rev_number(rev), rev)


def winner(leaves: list[dict[str, Any]]) -> dict[str, Any]:
    """The winning leaf revision of a document (CouchDB's rule)."""
    return max(leaves, key=_rank)


def _clock(clocks: Any, name: str) -> str:
    value = clocks.get(name) if isinstance(clocks, dict) else None
    return value if isinstance(value, str) else ""


def merge_leaves(table: str, leaves: list[dict[str, Any]]) -> dict[str, Any]:
    """One body (``{record, clocks?}``) from every live leaf of a document.

    Threads merge field by field by clock, nodes keep a tombstone, library records take
    the newer clock; the winner's body otherwise. Deterministic: the leaves are ordered
    by revision first.
    """
    live = sorted((leaf for leaf in leaves if not leaf.get("_deleted")), key=_rank)
    best = copy.deepcopy(winner(leaves))
    if len(live) < 2:
        return best
    if table == "threads":
        record, clocks = dict(best["record"]), dict(best.get("clocks") or {})
        for leaf in live:
            for name in CLOCKED_THREAD_FIELDS:
                theirs = _clock(leaf.get("clocks"), name)
                if theirs > clocks.get(name, ""):
                    clocks[name] = theirs
                    value = leaf["record"].get(name, _MISSING)
                    if value is _MISSING:
                        record.pop(name, None)
                    else:
                        record[name] = copy.deepcopy(value)
            _times(record, leaf["record"])
        best["record"], best["clocks"] = record, clocks
    elif table == "nodes":
        for leaf in live:
            if is_tombstone(leaf["record"]):
                best["record"] = copy.deepcopy(leaf["record"])
    else:
        newest = max(live, key=lambda leaf: (_clock(leaf.get("clocks"), "record"), _rank(leaf)))
        best["record"] = copy.deepcopy(newest["record"])
        best["clocks"] = copy.deepcopy(newest.get("clocks"))
    return best


def _times(merged: dict[str, Any], other: dict[str, Any]) -> None:
    """``createdAt`` the smaller, ``updatedAt`` the larger (numbers only)."""
    for name, smaller in (("createdAt", True), ("updatedAt", False)):
        mine, theirs = merged.get(name), other.get(name)
        if _number(mine) and _number(theirs):
            merged[name] = min(mine, theirs) if smaller else max(mine, theirs)
        elif _number(theirs):
            merged[name] = theirs


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _newest_ms(clocks: dict[str, str]) -> int:
    found = 0
    for value in clocks.values():
        try:
            found = max(found, parse_hlc(value)[0])
        except (TypeError, ValueError):
            continue
    return found


def merge_thread(
    local: dict[str, Any] | None,
    known: dict[str, Any] | None,
    remote: dict[str, Any],
    remote_clocks: dict[str, str],
) -> dict[str, Any]:
    """The merged thread record (local fields kept from ``local``; stats, shown apart).

    ``known`` is the state's row of the document (what the server last had of it, with
    ``fields`` and ``clocks``): a local field that differs from it changed here since and
    wins. Without a row (a lost sync state), the local fields win only when the local
    thread's ``updatedAt`` is newer than every clock of the server's document.
    """
    if local is None:
        fresh = copy.deepcopy(remote)
        fresh["scopeOrigins"] = []  # approved on no device but this one (a local field)
        return fresh
    merged = dict(local)
    fields = known.get("fields") if known is not None and not known.get("deleted") else None
    newer_here = _number(local.get("updatedAt")) and local["updatedAt"] > _newest_ms(remote_clocks)
    for name in CLOCKED_THREAD_FIELDS:
        mine = local.get(name, _MISSING)
        if isinstance(fields, dict):
            local_wins = fields.get(name, _MISSING) != mine
        else:
            local_wins = bool(newer_here)
        if local_wins:
            continue
        theirs = remote.get(name, _MISSING)
        if theirs is _MISSING:
            merged.pop(name, None)
        else:
            merged[name] = copy.deepcopy(theirs)
    for name, value in remote.items():  # fields no rule names: the local ones stay
        if name not in merged and name not in LOCAL_THREAD_FIELDS:
            merged[name] = copy.deepcopy(value)
    _times(merged, remote)
    return merged


def early_leaf(known: dict[str, Any] | None, nodes: Container[str], local_leaf: Any) -> str | None:
    """The leaf the server's thread names when its node is not among ``nodes``, else none.

    ``known`` is the state's row of the thread's document (its ``fields`` are the
    server's, its ``keptLeaf`` the leaf this device kept when it pulled them);
    ``nodes``, the ids of the thread's nodes here; ``local_leaf``, the thread's leaf
    here. A leaf moved here since it was kept is a change of this device: none.
    """
    if known is None or known.get("deleted"):
        return None
    fields = known.get("fields")
    leaf = fields.get("leafId") if isinstance(fields, dict) else None
    if not isinstance(leaf, str) or leaf in nodes:
        return None
    if "keptLeaf" in known and known["keptLeaf"] != local_leaf:
        return None
    return leaf


def known_with_leaf(known: dict[str, Any] | None, leaf: Any) -> dict[str, Any] | None:
    """``known`` with ``leaf`` as the server's ``leafId`` (a kept leaf: not changed here)."""
    if known is None or not isinstance(known.get("fields"), dict):
        return known
    return {**known, "fields": {**known["fields"], "leafId": leaf}}


def merge_node(local: dict[str, Any] | None, remote: dict[str, Any]) -> dict[str, Any] | None:
    """The node record to write, or ``None`` when the local one stays as it is."""
    if local is None:
        return copy.deepcopy(remote)
    if is_tombstone(remote) and not is_tombstone(local):
        return copy.deepcopy(remote)
    return None


def library_wins(
    local: dict[str, Any] | None,
    local_changed: bool,
    known: dict[str, Any] | None,
    remote_clocks: Any,
) -> bool:
    """Whether a pulled library record replaces the local one (the newer clock wins).

    A record changed here since the last sync gets a new clock when pushed: it wins.
    """
    if local is None:
        return True
    if local_changed:
        return False
    known_clock = _clock(None if known is None else known.get("clocks"), "record")
    return _clock(remote_clocks, "record") >= known_clock


def _descends(index: TreeIndex, node_id: str, ancestor: str) -> bool:
    seen: set[str] = set()
    current: Any = node_id
    while isinstance(current, str) and current not in seen:
        if current == ancestor:
            return True
        seen.add(current)
        node = index.nodes.get(current)
        current = None if node is None else node.get("parentId")
    return False


def settle_leaf(
    index: TreeIndex,
    merged_leaf: Any,
    local_leaf: Any,
    pulled: Iterable[str],
) -> str | None:
    """The thread's leaf after a pull (see the module)."""
    nodes = index.nodes
    if isinstance(merged_leaf, str) and merged_leaf in nodes:
        leaf: str | None = merged_leaf
    elif isinstance(local_leaf, str) and local_leaf in nodes:
        leaf = local_leaf
    else:
        leaf = newest_live_in(index, None)
    if leaf is not None and any(_descends(index, nid, leaf) for nid in pulled if nid != leaf):
        leaf = newest_live_in(index, leaf) or leaf
    return live_leaf(index, leaf)
