"""Storage quota: ``navigator.storage.estimate()`` as ``{usage, quota, percent, warn}``.

When IndexedDB refuses a write for lack of space, the browser aborts the transaction
with a ``QuotaExceededError``; the browser core turns it into the project's
:class:`~panelot.idb.errors.QuotaExceededError`, and since the whole transaction
(the command's effect and its receipt) is rolled back, nothing is half-written. The
caller can evict attachments (:func:`panelot.attachments.eviction.evict`) and retry.
"""

from __future__ import annotations

import sys
from typing import Any

from panelot.attachments.records import attachment_total
from panelot.idb import Database

__all__ = ["WARN_PERCENT", "estimate_from", "storage_estimate"]

WARN_PERCENT = 80.0
"""Above this share of the quota in use, ``warn`` is true (the data settings page warns)."""


def estimate_from(usage: int, quota: int | None) -> dict[str, Any]:
    """The estimate's shape from raw figures; ``percent``/``warn`` need a known quota."""
    percent = round(usage * 100.0 / quota, 2) if quota else None
    return {
        "usage": usage,
        "quota": quota,
        "percent": percent,
        "warn": percent is not None and percent > WARN_PERCENT,
    }


async def storage_estimate(db: Database | None = None) -> dict[str, Any]:
    """``navigator.storage.estimate()`` as ``{usage, quota, percent, warn}``.

    Outside a browser (the memory core) there is no quota: ``usage`` is the
    attachments' total size in ``db`` (0 without one), ``quota`` and ``percent`` are
    ``None`` and ``warn`` is false.
    """
    if sys.platform == "emscripten":
        import js

        storage = getattr(js.navigator, "storage", None)
        if storage is not None:
            raw = await storage.estimate()
            return estimate_from(int(raw.usage or 0), int(raw.quota or 0) or None)
    usage = 0
    if db is not None:
        usage = (await db.transaction("r", ["attachments"], attachment_total))["total"]
    return estimate_from(usage, None)
