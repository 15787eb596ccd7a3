"""Search in real Chromium: a page killed while its writes wait to be indexed.

The page's indexer is held (``Indexer.paused()``, kept by a task that never lets go)
while messages and an attached text file are committed to ``panelot_v1``: they are
written, their index batch never is. The page is then closed, as a crash would end
it, and a new page of the same profile opens the store: start-up catches the index
up from the thread stamps, and every message and the file's text are found. Each
step waits for the state that proves it landed (``search.status`` no longer lagging).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from browser_harness import run_py, wait_ready
from quota_support import own_browser  # noqa: F401 - the shared fixture

LATE = 60
"""Messages committed while the indexer is held."""


@pytest.fixture()
def own_context(own_browser: Browser) -> Iterator[BrowserContext]:  # noqa: F811
    """A fresh browser context: its storage outlives a page, not the test."""
    context = own_browser.new_context()
    yield context
    context.close()


def open_web_page(context: BrowserContext, base_url: str) -> Page:
    """A harness page of ``context`` with ``window.panelot`` booted."""
    page = context.new_page()
    page.goto(f"{base_url}index.html")
    wait_ready(page)
    return page


_OPEN = """
import asyncio, json
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore

async def settled(store, timeout=60.0):
    loop = asyncio.get_event_loop()
    deadline = loop.time() + timeout
    while True:
        status = await store.query("search.status")
        if not status["lagging"] and status["format"] is not None:
            return status
        assert loop.time() < deadline, f"the index still lags: {{status}}"
        await asyncio.sleep(0.02)

async def find(store, text):
    return await store.query("search.messages", {{"text": text, "limit": 100}})

store = await PanelotStore.open(BrowserFactory(), browser_host(), {name!r})
"""

_BEFORE_THE_KILL = (
    _OPEN
    + """
tid = await store.create_thread("Spices")
await store.append(tid, "user_message", {{"content": [{{"type": "text", "text": "tamarind first"}}]}})
await settled(store)
assert len((await find(store, "tamarind"))["hits"]) == 1

held, hold_forever = asyncio.Event(), asyncio.Event()
async def hold():
    async with store.search.paused():  # no batch can run: the page dies first
        held.set()
        await hold_forever.wait()
HOLDER = asyncio.ensure_future(hold())
await held.wait()
late = []
for i in range({late}):
    text = f"tamarind late {{i}}"
    late.append((await store.append(tid, "user_message",
                 {{"content": [{{"type": "text", "text": text}}]}}))["nodeId"])
sent = await store.send({{"type": "message.send", "clientId": "c", "submissionId": "s",
    "payload": {{"threadId": tid, "content": [{{"type": "text", "text": "the list"}},
                                             {{"type": "file", "upload": 0}}],
                 "uploads": [{{"mime": "text/plain", "name": "list.txt",
                              "dataBase64": {data!r}}}]}}}})
assert sent["status"] == "completed", sent
status = await store.query("search.status")
assert status["lagging"], status
lagging = await find(store, "tamarind")
json.dumps({{"late": late, "file": sent["response"]["nodeId"], "lagging": lagging}})
"""
)

_AFTER_THE_KILL = (
    _OPEN
    + """
await settled(store)
json.dumps({{"tamarind": await find(store, "tamarind late"), "file": await find(store, "sumac")}})
"""
)


def test_a_page_killed_before_its_batch_is_caught_up_at_the_next_start(
    own_context: BrowserContext, web_server: str
) -> None:
    name = f"kill-search-{uuid.uuid4().hex[:8]}"
    data = base64.b64encode(b"sumac, cumin and a little saffron\n").decode()
    page = open_web_page(own_context, web_server)
    before = run_py(page, _BEFORE_THE_KILL.format(name=name, late=LATE, data=data))
    assert before["lagging"]["total"] == 1, before["lagging"]  # the index holds none of them
    page.close()  # the context dies with its batch unwritten

    page = open_web_page(own_context, web_server)
    after = run_py(page, _AFTER_THE_KILL.format(name=name))
    page.close()
    found = [hit["nodeId"] for hit in after["tamarind"]["hits"]]
    assert sorted(found) == sorted(before["late"]), after["tamarind"]
    assert [hit["nodeId"] for hit in after["file"]["hits"]] == [before["file"]], after["file"]
