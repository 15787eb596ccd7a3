"""Storage quota: the host's storage estimate as ``{usage, quota, percent, warn}``.

When IndexedDB refuses a write for lack of space, the browser aborts the transaction
with a ``QuotaExceededError``; the browser core turns it into the project's
:class:`~panelot.idb.errors.QuotaExceededError`, and since the whole transaction
(the command's effect and its receipt) is rolled back, nothing is half-written. The
caller can evict attachments (:func:`panelot.attachments.eviction.evict`) and retry.

The browser's estimate lags: after an eviction freed 40 MiB, Chromium may report the
old usage for minutes (deleted Blobs of an on-disk profile). So each store keeps what
its clean-ups freed (:func:`note_freed`, the store's own byte accounting: the records'
``size``) and takes from the reported usage what the browser has not caught up with yet
(:func:`reconcile`). The estimate then shows the freed space at once, and a second
clean-up decides on the reconciled figure, not on the stale one, so it does not evict
again. The record is the store's, a :class:`~panelot.host.storage.FreedLedger` on its
host (``host.storage.ledger``; another page's or store's clean-up is seen once the
browser reports it), kept only where the browser gives the figures (elsewhere the usage
is the stored total, which never lags: ``attachment.evict`` records nothing), and for
at most :data:`LAG_LIMIT_S` (writes meanwhile can hide the browser catching up).
"""

from __future__ import annotations

import time
from typing import Any

from panelot.attachments.records import attachment_total
from panelot.host import Host, StorageEstimate
from panelot.host.storage import FreedLedger
from panelot.idb import Database

__all__ = [
    "LAG_LIMIT_S",
    "WARN_PERCENT",
    "estimate_from",
    "forget_freed",
    "note_freed",
    "reconcile",
    "reported_usage",
    "storage_estimate",
]

WARN_PERCENT = 80.0
"""Above this share of the quota in use, ``warn`` is true (the data settings page warns)."""


LAG_LIMIT_S = 15 * 60.0
"""How long a clean-up's freed bytes may be taken off a browser figure that still counts them."""


def reconcile(ledger: FreedLedger, reported: int) -> tuple[int, int]:
    """``(usage, lagging)``: the reported usage less what it has not caught up with yet.

    The browser has caught up with as much as its figure fell below the ``ledger``'s
    baseline; the rest of what was freed is still counted in ``reported``
    (``lagging``). Once nothing lags, the record is dropped.
    """
    if not ledger.freed:
        return reported, 0
    if time.monotonic() - ledger.at > LAG_LIMIT_S:
        forget_freed(ledger)
        return reported, 0
    lagging = max(0, ledger.freed - max(0, ledger.baseline - reported))
    if lagging == 0:
        forget_freed(ledger)
    return max(0, reported - lagging), lagging


def note_freed(ledger: FreedLedger, reported_before: int, freed: int) -> None:
    """Record a clean-up that freed ``freed`` bytes; the browser reported ``reported_before``.

    The record goes in ``ledger`` (the store's: its host's ``storage.ledger``).
    """
    if freed <= 0:
        return
    _, lagging = reconcile(ledger, reported_before)
    ledger.baseline = reported_before
    ledger.freed = lagging + freed
    ledger.at = time.monotonic()


def forget_freed(ledger: FreedLedger) -> None:
    """Drop ``ledger``'s record of freed bytes (the browser has caught up; tests)."""
    ledger.baseline = ledger.freed = 0
    ledger.at = 0.0


def estimate_from(usage: int, quota: int | None, reported: int | None = None) -> dict[str, Any]:
    """The estimate's shape from raw figures; ``percent``/``warn`` need a known quota.

    ``usage`` is the reconciled figure, ``reported`` the browser's (the same when absent)
    and ``lagging`` the bytes freed that the browser still counts.
    """
    percent = round(usage * 100.0 / quota, 2) if quota else None
    reported = usage if reported is None else reported
    return {
        "usage": usage,
        "quota": quota,
        "percent": percent,
        "warn": percent is not None and percent > WARN_PERCENT,
        "reported": reported,
        "lagging": max(0, reported - usage),
    }


async def reported_usage(
    estimate: StorageEstimate, db: Database | None = None
) -> tuple[int, int | None]:
    """``(usage, quota)`` as the host's ``estimate`` reports them now.

    In a page that is ``navigator.storage.estimate()``. A host without one (CPython) has
    no quota: the usage is the attachments' total size in ``db`` (0 without one), which
    never lags, and the quota ``None``.
    """
    reported = await estimate()
    if reported is not None:
        return reported
    usage = 0
    if db is not None:
        usage = (await db.transaction("r", ["attachments"], attachment_total))["total"]
    return usage, None


async def storage_estimate(host: Host, db: Database | None = None) -> dict[str, Any]:
    """The storage estimate on ``host``, ``{usage, quota, percent, warn, reported, lagging}``.

    ``usage`` is the host's figure reconciled with its store's clean-ups (its
    ``storage.ledger``, see the module docstring); ``reported`` is the browser's own.
    """
    reported, quota = await reported_usage(host.storage_estimate, db)
    usage, _ = reconcile(host.storage.ledger, reported)
    return estimate_from(usage, quota, reported)
