"""Deterministic revision ids: ``<n+1>-<md5 of canonical JSON>`` (docs/sync.md Merges).

A revision's hash is the MD5 of the RFC 8785 canonical JSON (:mod:`panelot.canonical`)
of ``{"parent": <parent rev or null>, "deleted": <bool>, "body": <body>}``. The same
parent, flag and body always give the same id, on every device.
"""

from __future__ import annotations

import hashlib
from typing import Any

from panelot.canonical import canonical_json

__all__ = ["next_rev", "rev_hash", "rev_number", "revisions"]


def rev_number(rev: str | None) -> int:
    """The generation of ``rev`` (``3`` for ``3-abc``); 0 for none."""
    if rev is None:
        return 0
    head, sep, tail = rev.partition("-")
    if not sep or not head.isdigit() or not tail:
        raise ValueError(f"{rev!r} is not a revision id")
    return int(head)


def rev_hash(rev: str) -> str:
    """The hash part of ``rev``."""
    rev_number(rev)
    return rev.partition("-")[2]


def next_rev(parent: str | None, deleted: bool, body: Any) -> str:
    """The child revision of ``parent`` (``None``: the first) for ``body``."""
    text = canonical_json({"parent": parent, "deleted": deleted, "body": body})
    digest = hashlib.md5(text, usedforsecurity=False).hexdigest()
    return f"{rev_number(parent) + 1}-{digest}"


def revisions(rev: str, parent: str | None) -> dict[str, Any]:
    """The ``_revisions`` of ``rev`` (its hash, then its parent's), for ``new_edits: false``."""
    ids = [rev_hash(rev)] + ([] if parent is None else [rev_hash(parent)])
    return {"start": rev_number(rev), "ids": ids}
