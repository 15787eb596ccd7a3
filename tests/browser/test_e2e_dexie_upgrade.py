"""End-to-end: a Dexie app upgrades ``panelot_v1`` to its version 2 under an open side panel.

JavaScript in another page of the extension (real Dexie 4.4.7, loaded there from its
bundle) declares ``version(2)`` with a new table and a new index, and an upgrader that
writes into the new table. The open panel's
connection gets ``versionchange`` and closes, so Dexie's upgrade is not blocked; the
panel's next send reopens the database at native version 20 and its reply lands; the
panel says it runs on a newer database. A side panel opened afterwards starts on that
database and says so too. Each wait is for the state the action produces (a new reply
id, the notice naming version 2), and what is stored is read back from storage.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from browser_harness import query
from panelot.schema import DB_NAME, PANELOT_V1_STORES
from panelot.testing import ExtensionContext, new_thread, send_message

DEXIE_JS = Path(__file__).resolve().parents[2] / "node_modules" / "dexie" / "dist" / "dexie.js"

V2_STORES = {
    "threads": PANELOT_V1_STORES["threads"] + ", title",
    "notes": "++id, threadId",
}

# Dexie's upgrade, as a Dexie app would write it; returns what Dexie saw.
UPGRADE = """async ([name, v1, v2]) => {
  const db = new Dexie(name);
  db.version(1).stores(v1);
  db.version(2).stores(v2).upgrade(async (tx) => {
    const ids = await tx.table("threads").toCollection().primaryKeys();
    await tx.table("notes").bulkAdd(ids.map((threadId) => ({ threadId, text: "upgraded" })));
  });
  let blocked = false;
  db.on("blocked", () => { blocked = true; });
  await db.open();
  await db.table("notes").add({ threadId: "x", text: "a note of the Dexie app" });
  const out = { nativeVersion: db.backendDB().version, blocked,
                threads: await db.table("threads").count() };
  db.close();
  return out;
}"""

# What Dexie's version 2 reads back of thread `tid`.
READ = """async ([name, v1, v2, tid]) => {
  const db = new Dexie(name);
  db.version(1).stores(v1);
  db.version(2).stores(v2);
  await db.open();
  const out = { nativeVersion: db.backendDB().version,
                notes: await db.table("notes").where("threadId").equals(tid).count(),
                nodes: await db.table("nodes").where("threadId").equals(tid).count() };
  db.close();
  return out;
}"""

REOPENED = "() => window.panelot.py.pyimport('panelot.runtime').store().db.reopened"


@pytest.fixture(scope="module")
def dexie_page(panelot_module_context: ExtensionContext, panel: Page) -> Page:
    """Another page of the extension, with Dexie loaded.

    Its bundle is evaluated there: the extension pages' CSP admits no other script.
    """
    page = panelot_module_context.context.new_page()
    page.goto(panelot_module_context.url("launcher.html"))
    page.evaluate(DEXIE_JS.read_text() + "\n;undefined")
    assert page.evaluate("() => typeof Dexie") == "function"
    return page


def test_open_panel_keeps_working_after_a_dexie_upgrade(panel: Page, dexie_page: Page) -> None:
    tid = new_thread(panel)
    first = send_message(panel, "before the upgrade")
    assert panel.locator("#db-notice").is_hidden()
    assert panel.evaluate(REOPENED) == 0
    seen = dexie_page.evaluate(UPGRADE, [DB_NAME, PANELOT_V1_STORES, V2_STORES])
    assert seen == {"nativeVersion": 20, "blocked": False, "threads": 1}, seen
    # the panel's next send reopens the database at 20, and its reply lands
    reply = send_message(panel, "after the upgrade")
    assert reply != first
    assert panel.evaluate(REOPENED) == 1
    notice = panel.locator("#db-notice")
    expect(notice).to_be_visible(timeout=5_000)
    expect(notice).to_contain_text("upgraded it to version 2")
    expect(notice).to_contain_text("notes, threads.title")
    # stored: both turns, on a database at 20 where Dexie's upgrader noted the thread
    nodes = query(panel, "thread.export", {"threadId": tid})["data"]["nodes"]
    texts = [n["payload"]["content"][0]["text"] for n in nodes if n["type"] == "user_message"]
    assert texts == ["before the upgrade", "after the upgrade"], texts
    assert reply in [n["id"] for n in nodes]
    back = dexie_page.evaluate(READ, [DB_NAME, PANELOT_V1_STORES, V2_STORES, tid])
    assert back == {"nativeVersion": 20, "notes": 1, "nodes": 4}, back
    described = query(panel, "db.describe")
    assert described["version"] == 20
    assert described["schemaDiff"]["newer"] is True
    assert described["schemaDiff"]["extraTables"] == ["notes"]


def test_a_panel_started_on_the_upgraded_database_says_so(
    panelot_module_context: ExtensionContext, panel: Page, dexie_page: Page
) -> None:
    if query(panel, "db.describe")["version"] != 20:
        dexie_page.evaluate(UPGRADE, [DB_NAME, PANELOT_V1_STORES, V2_STORES])
    fresh = panelot_module_context.open_panel()  # waits until the app is shown
    try:
        notice = fresh.locator("#db-notice")
        expect(notice).to_be_visible(timeout=5_000)
        expect(notice).to_contain_text("Running on a newer database")
        assert fresh.evaluate("() => document.getElementById('db-notice').dataset.version") == "20"
        assert fresh.locator("#thread-list .thread-item").count() >= 1
    finally:
        fresh.close()
