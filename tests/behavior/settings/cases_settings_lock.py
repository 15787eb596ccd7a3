"""``settings.set`` with ``expect`` is one read-check-write under the settings lock.

The first writer is held at the pause point ``settings.set.checked`` (after its check,
before its write) while a second writer with the same ``expect`` starts: it must wait
for the lock, then find the value changed. Without the lock both would pass the check.
The same race between two extension pages is in tests/browser/test_settings_lock.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

from behavior import Ctx
from panelot.faults import FAULTS
from panelot.settings import MemoryArea, MemoryStorageBackend
from panelot.settings.credentials import MemoryKeyStore


def settings_set_expecting(
    sub: str, value: dict[str, Any], expect: dict[str, Any]
) -> dict[str, Any]:
    return {
        "type": "settings.set",
        "clientId": "c",
        "submissionId": sub,
        "payload": {"group": "ui", "value": value, "expect": expect},
    }


async def case_settings_set_expect_is_serialized(ctx: Ctx) -> None:
    area = MemoryArea()
    host = ctx.host.with_settings(MemoryStorageBackend(area), MemoryKeyStore())
    services = host.services
    store = await ctx.store(host)
    seen = (await store.query("settings.get", {"group": "ui"}))["value"]
    hold = FAULTS.hold("settings.set.checked")
    try:
        first = asyncio.ensure_future(
            store.send(settings_set_expecting("a", {**seen, "theme": "dark"}, seen))
        )
        await hold.reached.wait()  # the first writer checked, and has not written
        second = asyncio.ensure_future(
            store.send(settings_set_expecting("b", {**seen, "theme": "light"}, seen))
        )
        while not (second.done() or area.waiting):  # it queues for the lock (or, unlocked,
            await asyncio.sleep(0)  # runs its whole read-check-write now)
        hold.release()
        results = [await first, await second]
    finally:
        FAULTS.disarm()
    assert results[0]["status"] == "completed", results
    assert results[1]["status"] == "failed", results
    assert results[1]["error"]["name"] == "ConflictError"
    assert results[1]["error"]["field"] == "payload.expect"
    assert (await services.settings.get("ui")).theme == "dark"  # the winner's value stays


async def case_settings_lock_is_released_after_a_failure(ctx: Ctx) -> None:
    area = MemoryArea()
    host = ctx.host.with_settings(MemoryStorageBackend(area), MemoryKeyStore())
    store = await ctx.store(host)
    seen = (await store.query("settings.get", {"group": "ui"}))["value"]
    bad = await store.send(settings_set_expecting("bad", {**seen, "fontSize": "huge"}, seen))
    assert bad["status"] == "failed" and bad["error"]["name"] == "ValidationError", bad
    ok = await store.send(settings_set_expecting("ok", {**seen, "theme": "dark"}, seen))
    assert ok["status"] == "completed", ok
    assert not area.lock().locked()
