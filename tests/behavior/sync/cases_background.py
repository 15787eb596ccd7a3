"""``sync_once``: the background sync the service worker's alarm runs (docs/sync.md).

Against the real test server, on both cores: not configured, it sends nothing; configured,
it pulls what another device pushed and pushes what this store has, in one call; a
server it cannot reach is a report naming the failure, never a raise. (The Web Lock the
worker takes first is JS: tests/browser/test_e2e_sync_loop.py.)
"""

from __future__ import annotations

from behavior import Ctx
from behavior.payloads import text
from behavior.sync import all_docs, push, server, synced_store
from panelot.sync.background import sync_once


async def case_a_background_sync_without_a_configuration_sends_nothing(ctx: Ctx) -> None:
    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)
    await store.create_thread("Never synced")
    assert await sync_once(store) == {"configured": False}
    status = await store.query("sync.status")
    assert status["lastPush"] is None and status["lastPull"] is None, status


async def case_a_background_sync_pulls_then_pushes(ctx: Ctx) -> None:
    other, database = await synced_store(ctx)
    theirs = await other.create_thread("From the other device")
    await other.append(theirs, "user_message", text("written there"))
    await push(other)

    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)
    await store.command("sync.configure", {"server": server(), "database": database})
    mine = await store.create_thread("From this device")
    result = await sync_once(store)
    assert result["configured"] is True and result["ok"] is True, result
    assert result["pull"]["written"] == 2 and result["pull"]["refused"] == [], result
    assert result["push"]["pushed"] == 1, result  # this store's thread, not what it pulled
    pulled = await store.db.table("threads").get(theirs)
    assert pulled is not None and pulled["title"] == "From the other device", pulled
    on_server = await all_docs(ctx, database)
    assert on_server[f"threads:{mine}"]["record"]["title"] == "From this device"
    status = await store.query("sync.status")
    assert status["running"] is False, status  # one sync, no loop left behind


async def case_a_background_sync_that_fails_says_why(ctx: Ctx) -> None:
    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)
    # Port 9 on loopback (discard): nothing listens there in the tests.
    await store.command("sync.configure", {"server": "http://127.0.0.1:9", "database": "panelot"})
    result = await sync_once(store)
    assert result["configured"] is True and result["ok"] is False, result
    assert result["error"]["name"] == "NetworkError", result
    assert "127.0.0.1:9" in result["error"]["message"], result
