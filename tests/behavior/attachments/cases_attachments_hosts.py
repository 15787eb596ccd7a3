"""The attachment budget and the freed ledger belong to a store's host: two stores share neither."""

from __future__ import annotations

from dataclasses import replace

from behavior import Ctx
from behavior.attachments.cases_attachments import put
from panelot.attachments.eviction import DEFAULT_BUDGET
from panelot.host import Host, memory_host
from panelot.store import PanelotStore

USAGE, QUOTA = 10_000, 12_000
"""The figures both hosts' fake browser reports, unchanged whatever is freed (it lags)."""


async def _lagging_estimate() -> tuple[int, int | None]:
    return USAGE, QUOTA


def _host() -> Host:
    """A fresh memory host whose storage estimate lags like a browser's."""
    return replace(memory_host(), storage_estimate=_lagging_estimate)


async def _total(store: PanelotStore) -> int:
    return int((await store.query("attachment.usage", {}))["total"])


async def case_two_stores_on_two_hosts_keep_their_own_budget_and_freed_ledger(ctx: Ctx) -> None:
    a, b = await ctx.store(_host()), await ctx.store(_host())
    assert a.host.storage is not b.host.storage
    a.host.storage.set_budget(1500)
    assert (await a.query("attachment.usage", {}))["budget"] == 1500
    assert (await b.query("attachment.usage", {}))["budget"] == DEFAULT_BUDGET
    for bad in (-1, True, 1.5):
        try:
            b.host.storage.set_budget(bad)  # type: ignore[arg-type]
        except ValueError as e:
            assert "whole number of bytes" in str(e)
        else:
            raise AssertionError(f"set_budget({bad!r}) was accepted")
    assert b.host.storage.budget == DEFAULT_BUDGET
    # The same puts on each: a's second put evicts the first (a's budget), b's does not.
    for store in (a, b):
        x, y = await store.create_thread("X"), await store.create_thread("Y")
        await put(store, x, b"x" * 1000)
        await put(store, y, b"y" * 1000)
    assert (await _total(a), await _total(b)) == (1000, 2000)
    # A clean-up on a: its estimate takes off what the browser still counts; b's does not.
    out = await a.command("attachment.evict", {"budget": 0})
    assert (out["evicted"], out["freed"]) == (1, 1000)
    seen_a = await a.query("storage.estimate", {})
    seen_b = await b.query("storage.estimate", {})
    assert (seen_a["usage"], seen_a["reported"], seen_a["lagging"]) == (USAGE - 1000, USAGE, 1000)
    assert (seen_b["usage"], seen_b["reported"], seen_b["lagging"]) == (USAGE, USAGE, 0)
    assert b.host.storage.ledger.freed == 0 and a.host.storage.ledger.freed == 1000
