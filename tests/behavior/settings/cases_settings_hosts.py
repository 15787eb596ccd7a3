"""Settings belong to a store's host: two stores in one process share none by accident."""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from panelot.host import memory_host
from panelot.store import PanelotStore

UI_DARK = {"theme": "dark", "fontSize": 18}


async def theme(store: PanelotStore) -> Any:
    """The ``ui`` group's theme as the store's ``settings.get`` answers."""
    return (await store.query("settings.get", {"group": "ui"}))["value"]["theme"]


async def case_two_stores_on_two_hosts_share_no_settings(ctx: Ctx) -> None:
    a = await ctx.store(memory_host())
    b = await ctx.store(memory_host())
    await a.command("settings.set", {"group": "ui", "value": UI_DARK})
    await a.command("credential.set", {"secret": "sk-host-a-0123456789", "ref": "cred:a"})
    assert await theme(a) == "dark"
    assert await theme(b) == "system"  # the default: a's write is not b's
    assert await b.query("credential.list") == []
    assert a.services is not b.services and a.host.services is a.services


async def case_stores_opened_without_a_host_share_no_settings(ctx: Ctx) -> None:
    """``PanelotStore.open(factory)`` gives each store a fresh memory host of its own."""
    opened = []
    for _ in range(2):
        store = await PanelotStore.open(ctx.factory, name=ctx.new_name(), clock=ctx.clock)
        ctx.dbs.append(store.db)
        opened.append(store)
    c, d = opened
    await c.command("settings.set", {"group": "ui", "value": UI_DARK})
    assert (await theme(c), await theme(d)) == ("dark", "system")


async def case_stores_on_one_host_share_its_settings(ctx: Ctx) -> None:
    a = await ctx.store()
    same = await ctx.store(a.host)
    await a.command("settings.set", {"group": "ui", "value": UI_DARK})
    assert await theme(same) == "dark"
    assert same.services is a.services
