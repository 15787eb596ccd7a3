"""``sync_once``: one background sync, what the service worker's ``panelot.sync`` alarm runs.

The worker (``extension/sw.js``) calls it through ``panelot.runtime.run_sync`` only when
sync is configured and it holds the profile's Web Lock ``panelot-sync`` (no panel's
continuous loop syncs meanwhile). It asks the store, as a client of its own, for
``sync.status`` and then ``sync.now`` (pull, then push); the worker then lets Python go.
A failure is reported, never raised: the next alarm tries again (docs/sync.md, "The
service worker"). The store's sync section is told it runs in the background
(:attr:`~panelot.sync.section.Syncer.context`): its progress says so, and its failure
is kept for every context's ``sync.status`` (:mod:`panelot.sync.failure`).
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol

from panelot.sync.progress import BACKGROUND
from panelot.sync.section import Syncing

__all__ = ["CLIENT_ID", "Bus", "sync_once"]

CLIENT_ID = "sw-sync"
"""The client id of background syncs (their receipts name it)."""


class Bus(Protocol):
    """What ``sync_once`` needs of the store: its queries and commands."""

    async def query(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Run a read query; its result (raises on failure)."""
        ...

    async def send(self, command: Any) -> dict[str, Any]:
        """Run a bus command; its terminal envelope."""
        ...


async def sync_once(store: Bus) -> dict[str, Any]:
    """One ``sync.now`` with the saved configuration.

    ``{configured: False}`` when sync is not configured (nothing is sent); else
    ``{configured: True, ok: True, pull, push}`` (``sync.now``'s report) or
    ``{configured: True, ok: False, error: {name, message, field?}}``.
    """
    if isinstance(store, Syncing) and store.sync is not None:
        store.sync.context = BACKGROUND  # this store syncs in the service worker
    status = await store.query("sync.status", {})
    if not isinstance(status, dict) or not status.get("configured"):
        return {"configured": False}
    command = {"type": "sync.now", "clientId": CLIENT_ID, "payload": {}}
    response = await store.send({**command, "submissionId": uuid.uuid4().hex})
    if response.get("status") != "completed":
        return {"configured": True, "ok": False, "error": response.get("error")}
    report = response.get("response")
    return {"configured": True, "ok": True, **(report if isinstance(report, dict) else {})}
