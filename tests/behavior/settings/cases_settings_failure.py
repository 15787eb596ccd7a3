"""Settings writes that the storage area refuses (a full area): nothing lost, nothing half-done."""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from behavior.settings.cases_settings import settle
from panelot.bus.receipts import receipt_id
from panelot.idb.errors import QuotaExceededError
from panelot.settings import MemoryArea, MemoryStorageBackend
from panelot.settings.credentials import MemoryKeyStore


def settings_set(sub: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "settings.set",
        "clientId": "c",
        "submissionId": sub,
        "payload": {"group": "ui", "value": value},
    }


async def case_settings_write_over_quota_keeps_the_previous_value(ctx: Ctx) -> None:
    area = MemoryArea()
    host = ctx.host.with_settings(MemoryStorageBackend(area), MemoryKeyStore())
    services = host.services
    store = await ctx.store(host)
    await services.settings.set("ui", {"theme": "dark", "fontSize": 16})
    ref = await services.credentials.set("sk-old-secret-1111", "cred:k")
    before = dict(area.data)
    seen: list[Any] = []
    stop = services.settings.subscribe("ui", lambda g, o, n: seen.append(n.theme))
    area.quota_bytes = area.bytes_in_use()  # full: any growth is refused

    out = await store.send(settings_set("full", {"theme": "light", "fontSize": 16}))
    assert out["status"] == "failed" and out["error"]["name"] == "QuotaExceededError", out
    assert "previous values are kept" in out["error"]["message"]
    assert area.data == before  # nothing written ...
    assert (await services.settings.get("ui")).theme == "dark"  # ... the old value reads back
    assert await store.db.table("commandReceipts").get(receipt_id("c", "full")) is None
    rotated = await store.send(
        {
            "type": "credential.rotate",
            "clientId": "c",
            "submissionId": "rot",
            "payload": {"ref": ref, "secret": "sk-new-secret-2222-and-longer"},
        }
    )
    assert rotated["status"] == "failed" and rotated["error"]["name"] == "QuotaExceededError"
    assert await services.credentials.reveal(ref) == "sk-old-secret-1111"
    await raises(QuotaExceededError, services.backend.set({"settings.ui": 1, "other": "y" * 1000}))
    assert area.data == before  # a refused set writes none of its items
    await settle()
    assert seen == []  # and fires no change event

    area.quota_bytes = None  # room again: the same submission now succeeds
    again = await store.send(settings_set("full", {"theme": "light", "fontSize": 16}))
    assert again == {"status": "completed", "response": {"group": "ui", "version": 1}}
    assert (await services.settings.get("ui")).theme == "light"
    await settle()
    assert seen == ["light"]
    stop()


async def case_settings_set_refuses_a_value_read_before_another_change(ctx: Ctx) -> None:
    host = ctx.host.with_settings(MemoryStorageBackend(MemoryArea()), MemoryKeyStore())
    store = await ctx.store(host)
    seen = (await store.query("settings.get", {"group": "ui"}))["value"]
    other = {**seen, "theme": "dark"}  # another window saves meanwhile
    assert (await store.send(settings_set("other", other)))["status"] == "completed"
    mine = {"type": "settings.set", "clientId": "c", "submissionId": "mine",
            "payload": {"group": "ui", "value": {**seen, "fontSize": 18}, "expect": seen}}  # fmt: skip
    out = await store.send(mine)
    assert out["status"] == "failed" and out["error"]["name"] == "ConflictError", out
    assert out["error"]["field"] == "payload.expect"
    now = (await store.query("settings.get", {"group": "ui"}))["value"]
    assert now["theme"] == "dark" and now["fontSize"] == seen["fontSize"]  # nothing lost
    fresh = {**mine, "submissionId": "fresh",
             "payload": {"group": "ui", "value": {**now, "fontSize": 18}, "expect": now}}  # fmt: skip
    assert (await store.send(fresh))["status"] == "completed"
    assert (await store.query("settings.get", {"group": "ui"}))["value"]["fontSize"] == 18
