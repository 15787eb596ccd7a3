"""The native transactions really get the durability asked for (``IDBTransaction.durability``).

The page wraps ``IDBDatabase.prototype.transaction`` and records, for each read-write
transaction, its stores and the ``durability`` Chromium reports on the transaction
object: what the browser will honour, not what Python meant to ask.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from browser_harness import run_py
from panelot.testing import PageStore

RECORD = """() => {
  window.__durability = [];
  const original = IDBDatabase.prototype.transaction;
  window.__durabilityOff = () => { IDBDatabase.prototype.transaction = original; };
  IDBDatabase.prototype.transaction = function (stores, mode, options) {
    const tx = original.call(this, stores, mode, options);
    if (mode === "readwrite") {
      window.__durability.push({ db: this.name, stores: Array.from(tx.objectStoreNames).sort(),
                                 durability: tx.durability });
    }
    return tx;
  };
}"""


@pytest.fixture()
def recording(harness_page: Page) -> Iterator[Page]:
    """The (session's) harness page, recording read-write transactions until the test ends."""
    harness_page.evaluate(RECORD)
    yield harness_page
    harness_page.evaluate("() => window.__durabilityOff()")


def _recorded(page: Page) -> list[dict[str, Any]]:
    return page.evaluate("() => window.__durability.splice(0)")  # type: ignore[no-any-return]


def test_thread_delete_cascade_is_strict_and_others_default(recording: Page) -> None:
    store = PageStore(recording, client_id="durability-test")
    page = recording
    tid = store.send("thread.create", {"title": "strict"})["threadId"]
    text = {"content": [{"type": "text", "text": "hi"}]}
    _recorded(page)
    store.send("message.append", {"threadId": tid, "type": "user_message", "payload": text})
    assert [t["durability"] for t in _recorded(page)] == ["default"]
    store.send("thread.delete", {"threadId": tid})
    seen = _recorded(page)
    cascade = [t for t in seen if "nodes" in t["stores"] and "commandReceipts" in t["stores"]]
    assert [t["durability"] for t in cascade] == ["strict"], seen
    assert {t["durability"] for t in seen if t not in cascade} == {"default"}, seen


def test_database_option_and_override_reach_indexeddb(recording: Page, fresh_db: str) -> None:
    page = recording
    run_py(
        page,
        f"""
import json
from panelot.idb import Database, SchemaVersion
from panelot.idb.browser import BrowserFactory
db = Database({fresh_db!r}, [SchemaVersion(1, {{"items": "id"}})],
              chrome_transaction_durability="relaxed")
await db.open(BrowserFactory())
await db.table("items").put({{"id": "a"}})
async def body(tx):
    await tx.table("items").put({{"id": "b"}})
await db.transaction("rw", ["items"], body, durability="strict")
db.close()
json.dumps(True)
""",
    )
    seen = [t for t in _recorded(page) if t["db"] == fresh_db]
    assert [t["durability"] for t in seen] == ["relaxed", "strict"], seen
