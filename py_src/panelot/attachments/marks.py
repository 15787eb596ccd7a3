"""The ``evicted`` marks on the nodes naming an attachment, set and dropped by one walk.

Eviction (:mod:`panelot.attachments.eviction`) marks every image and file block of a
node's ``content`` and ``contentForLlm`` that names an evicted attachment, and any object
naming it in a tool result's free-form ``details``, ``evicted: true``; bringing the bytes
back (:mod:`panelot.attachments.restore`) drops the same marks.
"""

from __future__ import annotations

from typing import Any

__all__ = ["set_marks"]

_BLOCK_LISTS = ("content", "contentForLlm")
_MAX_DEPTH = 32


def _mark(item: dict[str, Any], evicted: bool) -> bool:
    """Set or drop ``item``'s mark; True if it changed."""
    if evicted:
        if item.get("evicted") is True:
            return False
        item["evicted"] = True
        return True
    if "evicted" not in item:
        return False
    del item["evicted"]
    return True


def _details(value: Any, ids: set[str], evicted: bool, depth: int = 0) -> bool:
    """Set or drop the marks of objects in free-form details that name one of ``ids``."""
    if depth > _MAX_DEPTH:
        return False
    changed = False
    if isinstance(value, dict):
        if value.get("attachmentId") in ids:
            changed = _mark(value, evicted)
        for item in value.values():
            changed = _details(item, ids, evicted, depth + 1) or changed
    elif isinstance(value, list):
        for item in value:
            changed = _details(item, ids, evicted, depth + 1) or changed
    return changed


def set_marks(node: dict[str, Any], ids: set[str], evicted: bool) -> bool:
    """Mark (or, with ``evicted`` false, unmark) the node's blocks naming ``ids``.

    Image and file blocks of ``content`` and ``contentForLlm``, and objects in
    ``details``; True if the node changed.
    """
    payload = node.get("payload")
    if not isinstance(payload, dict):
        return False
    changed = False
    for key in _BLOCK_LISTS:
        blocks = payload.get(key)
        for block in blocks if isinstance(blocks, list) else []:
            if (
                isinstance(block, dict)
                and block.get("type") in ("image", "file")
                and block.get("attachmentId") in ids
            ):
                changed = _mark(block, evicted) or changed
    if "details" in payload:
        changed = _details(payload["details"], ids, evicted) or changed
    return changed
