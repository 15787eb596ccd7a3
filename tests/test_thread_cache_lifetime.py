"""The thread cache never keeps a connection alive: a dropped store is collected with it."""

from __future__ import annotations

import gc
import weakref

from loops import run_async
from panelot.idb import MemoryFactory
from panelot.store import PanelotStore
from panelot.tree.cache import thread_cache


def test_a_closed_and_dropped_store_is_collected_with_its_cache() -> None:
    async def open_read_close() -> tuple[weakref.ref[object], weakref.ref[object]]:
        store = await PanelotStore.open(MemoryFactory(), name="cache-lifetime")
        tid = await store.create_thread("kept")
        await store.append(tid, "user_message", {"content": [{"type": "text", "text": "q"}]})
        await store.context(tid)
        await store.context(tid)  # the second read keeps the thread
        cache = thread_cache(store.db)
        assert cache.threads == [tid]
        refs = weakref.ref(store.db), weakref.ref(cache)
        store.close()
        return refs

    db_ref, cache_ref = run_async(open_read_close())
    gc.collect()
    assert db_ref() is None, "the cache's registry kept a closed connection alive"
    gc.collect()  # the cache left the registry with the connection; its own cycle goes now
    assert cache_ref() is None


def test_views_of_a_connection_that_does_not_observe_add_no_listeners() -> None:
    async def views() -> tuple[int, int]:
        store = await PanelotStore.open(MemoryFactory(), name="cache-listeners")
        tid = await store.create_thread("unobserved")
        store.db.observe = False
        await store.context(tid)
        before = store.db.feed.listeners
        for _ in range(5):
            await store.context(tid)
        after = store.db.feed.listeners
        store.close()
        return before, after

    before, after = run_async(views())
    assert after == before, f"each view subscribed another cache: {before} -> {after}"
