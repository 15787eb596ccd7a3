"""``sync.fetch`` of a 32 MiB attachment streams it: Python's heap does not grow with it.

A CPython store pushes a thread with a 32 MiB attachment to the open test server; a
store in a fresh page pulls with no room in its budget (the attachment stays on the
server), then ``sync.fetch`` brings it. ``Host.http`` with ``blob`` reads the response
as a stream, each chunk copied into Python only for the MD5 and the size count, and the
Blob is built from the stream's own chunks: the wasm heap may grow by a small constant,
not by the data's size (reading it whole, as the pull did, takes the body and its join:
twice the data). The fetched Blob's bytes are the pushed ones, and no PyProxy is left.
"""

from __future__ import annotations

import base64
import hashlib
import urllib.request
import uuid
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from behavior.sync import OPEN_ENV
from browser_harness import run_py, wait_ready
from loops import run_async
from panelot.host import memory_host
from panelot.idb import MemoryFactory
from panelot.store import PanelotStore

MIB = 1024 * 1024
SIZE = 32 * MIB
MAX_GROWTH = 8 * MIB

PULL = """
import gc, json
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
host = browser_host()
store = await PanelotStore.open(BrowserFactory(), host, name={name!r}, search=False)
try:
    await store.command("sync.configure", {{"server": {server!r}, "database": {database!r}}})
    budget = host.storage.budget
    host.storage.set_budget(1000)
    report = await store.command("sync.pull", {{}})
    host.storage.set_budget(budget)
finally:
    store.close()
gc.collect()
json.dumps(report)
"""

FETCH = """
import gc, hashlib, json
from panelot.host import browser_host
from panelot.idb.blobs import blob_size
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
store = await PanelotStore.open(BrowserFactory(), browser_host(), name={name!r}, search=False)
try:
    got = await store.command("sync.fetch", {{"attachmentId": {aid!r}}})
    record = await store.db.table("attachments").get({aid!r})
    size = blob_size(record["bytes"])
    del record
finally:
    store.close()
gc.collect()
json.dumps({{"got": got, "size": size}})
"""

DIGEST = """
import hashlib, json
from panelot.host import browser_host
from panelot.idb.blobs import blob_head
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
store = await PanelotStore.open(BrowserFactory(), browser_host(), name={name!r}, search=False)
try:
    record = await store.db.table("attachments").get({aid!r})
    head = await blob_head(record["bytes"], 65536)
finally:
    store.close()
json.dumps(hashlib.sha256(head).hexdigest())
"""

CLEANUP = """
import json
from panelot.idb.browser import BrowserFactory
from panelot.sync.state import state_name
for n in ({name!r}, state_name({name!r})):
    await BrowserFactory().delete(n)
json.dumps(True)
"""

HEAP = "() => window.panelot.py._module.HEAP8.length"
COUNT = "() => window.panelot.py._module.pyproxy_alloc_map.size"


async def _pushed(server: str, database: str, data: bytes) -> str:
    """A CPython store pushes a thread with ``data`` as an attachment; its id."""
    store = await PanelotStore.open(MemoryFactory(), memory_host(), search=False)
    try:
        await store.command("sync.configure", {"server": server, "database": database})
        tid = await store.create_thread("Heavy")
        put = {"threadId": tid, "kind": "file", "mime": "application/octet-stream"}
        put["dataBase64"] = base64.b64encode(data).decode()
        aid = str((await store.command("attachment.put", put))["attachmentId"])
        await store.command("sync.push", {})
    finally:
        store.close()
    return aid


@pytest.fixture
def page(browser: Browser, web_server: str) -> Iterator[Page]:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{web_server}index.html")
        wait_ready(page)
        yield page
    finally:
        context.close()


def test_fetching_a_32_mib_attachment_does_not_grow_the_wasm_heap(
    page: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = f"heap-{uuid.uuid4().hex[:12]}"
    request = urllib.request.Request(f"{server}/{database}", method="PUT")  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
        assert response.status in (201, 202)
    data = hashlib.shake_256(b"heap").digest(SIZE)
    aid = run_async(_pushed(server, database, data))
    name = f"t-fetch-{uuid.uuid4().hex[:8]}"
    try:
        report = run_py(page, PULL.format(name=name, server=server, database=database))
        assert report["onServer"] == [f"attachments:{aid}"], report
        page.evaluate("() => window.panelot.py._module.enable_pyproxy_allocation_tracing()")
        before, proxies = page.evaluate(HEAP), page.evaluate(COUNT)
        out = run_py(page, FETCH.format(name=name, aid=aid))
        after = page.evaluate(HEAP)
        assert out["got"]["fetched"] is True and out["size"] == SIZE, out
        growth = after - before
        assert growth <= MAX_GROWTH, f"the wasm heap grew by {growth / MIB:.1f} MiB"
        assert page.evaluate(COUNT) == proxies, "a PyProxy was left"
        head = run_py(page, DIGEST.format(name=name, aid=aid))
        assert head == hashlib.sha256(data[:65536]).hexdigest()
    finally:
        page.evaluate("() => window.panelot.py._module.disable_pyproxy_allocation_tracing()")
        run_py(page, CLEANUP.format(name=name))
