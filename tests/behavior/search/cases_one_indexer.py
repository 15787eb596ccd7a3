"""One search indexer among the contexts that share a lock (the host's ``search_lock``).

Two stores of one database on hosts with the same lock: the first indexes, the second
only queries (its batches never run) and finds what the first indexed. When the first
closes, the second is granted the lock, catches up (a write made in between included)
and indexes from then on. The lock here is :func:`panelot.host.local_lock` on both
cores; the extension's Web Lock is tested in real Chromium
(tests/browser/test_e2e_search_panels.py).
"""

from __future__ import annotations

import asyncio
import dataclasses

from behavior import Ctx
from behavior.payloads import answer, text
from behavior.search.cases_index import find, node_ids, settled
from behavior.waiting import until
from panelot.host import local_lock
from panelot.store import PanelotStore


async def found(store: PanelotStore, words: str, expected: list[str]) -> None:
    """Wait until ``search.messages`` for ``words`` in ``store`` gives ``expected`` nodes."""
    loop = asyncio.get_event_loop()
    deadline = loop.time() + 10
    while (got := node_ids(await find(store, words))) != expected:
        assert loop.time() < deadline, f"{words!r}: {got}, not {expected}"
        await asyncio.sleep(0.01)


async def case_only_the_lock_holder_indexes_and_another_takes_over(ctx: Ctx) -> None:
    plain = await ctx.store()
    name = plain.db.name
    plain.close()
    host = dataclasses.replace(plain.host, search_lock=local_lock)
    first = await PanelotStore.open(ctx.factory, host, name, clock=ctx.clock)
    ctx.stores.append(first)
    second = await PanelotStore.open(ctx.factory, host, name, clock=ctx.clock)
    ctx.stores.append(second)
    assert first.search is not None and second.search is not None
    await until(lambda: first.search is not None and first.search.indexing, 10, "the lock")
    await settled(first)
    tid = await second.create_thread("Zoo")
    node = await second.append(tid, "user_message", text("a marmot in the snow"))
    await found(second, "marmot", [node["nodeId"]])  # indexed by the first, read here
    assert not second.search.indexing and second.search.batches == 0
    assert first.search.batches > 0
    await settled(first)
    await settled(second)  # heard, and an index commit followed

    first.close()  # the holder goes: the second is granted the lock
    await until(lambda: second.search is not None and second.search.indexing, 10, "takeover")
    later = await second.append(tid, "assistant_message", answer("and an ocelot"))
    await settled(second)
    assert node_ids(await find(second, "ocelot")) == [later["nodeId"]]
    assert second.search.batches > 0
