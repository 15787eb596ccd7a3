"""The storage estimate reconciled with a store's clean-ups (the browser's lags)."""

from __future__ import annotations

from behavior import Ctx
from panelot.attachments.quota import forget_freed, note_freed, reconcile
from panelot.host import memory_host


async def case_reconcile_takes_off_what_the_browser_still_counts(ctx: Ctx) -> None:
    ledger = memory_host().storage.ledger
    forget_freed(ledger)
    assert reconcile(ledger, 1000) == (1000, 0)
    note_freed(ledger, 1000, 300)  # a clean-up freed 300 bytes; the browser said 1000
    assert reconcile(ledger, 1000) == (700, 300)  # the browser's figure has not moved
    assert reconcile(ledger, 800) == (700, 100)  # it caught up with 200
    note_freed(ledger, 800, 50)  # a second clean-up: 100 still lag, 50 more freed
    assert reconcile(ledger, 800) == (650, 150)
    assert reconcile(ledger, 650) == (650, 0)  # caught up: the record is dropped
    assert reconcile(ledger, 900) == (900, 0)  # later growth is the browser's own figure
    note_freed(ledger, 900, 0)  # nothing freed: nothing recorded
    assert reconcile(ledger, 900) == (900, 0)


async def case_evict_storage_percent_is_checked_and_spares_without_a_quota(ctx: Ctx) -> None:
    store = await ctx.store()
    bad = await store.send(
        {"type": "attachment.evict", "clientId": "c", "submissionId": "bad",
         "payload": {"storagePercent": 150}}
    )  # fmt: skip
    assert bad["status"] == "failed" and bad["error"]["field"] == "payload.storagePercent", bad
    tid = await store.create_thread("A")
    put = await store.command(
        "attachment.put",
        {"threadId": tid, "kind": "file", "mime": "text/plain", "dataBase64": "eHh4"},
    )
    out = await store.command("attachment.evict", {"storagePercent": 70})
    assert out["evicted"] == 0  # within the budget, and the storage is not over 80%
    assert await store.db.table("attachments").get(put["attachmentId"]) is not None
