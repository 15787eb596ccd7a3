"""The first paint: the stored conversation list, drawn before Python is ready.

* ``panel_firstpaint.mjs`` (run by ``sidepanel_paint.mjs``, a module script of its own) chooses and orders the rows as ``thread.list`` does: on the
  same stored records (made by commands, and written raw as other programs might:
  malformed ones, ties, archived, pinned, counts that hold or not) both give the same.
* With the snapshot's download held back (so the store provably is not ready), a panel
  on a profile with conversations shows them, marked as not yet live, with the rows and
  the buttons that act on them held back; once the download goes on, the live list
  takes over the same rows and everything acts.
* On a fresh profile it paints nothing and does not create the database (the store
  creates it, at its version).
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from held_routes import HeldRoutes
from panelot.testing import PageStore
from panelot.testing.panel import PANEL_VIEWPORT, ExtensionContext

#: Raw thread records as another program might write them (ids "raw-…"): a row for each
#: rule of tree/listing.py (`_listable`, `_candidates`) and tree/shown.py (`shown_of`).
RAW_THREADS = """async (records) => {
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open("panelot_v1");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const tx = db.transaction("threads", "readwrite");
  for (const record of records) tx.objectStore("threads").put(record);
  await new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}"""

BASE = {"createdAt": 1, "leafId": None, "tags": [], "stats": {"turns": 0}}


def _raw(id_: str, **fields: Any) -> dict[str, Any]:
    return {"id": f"raw-{id_}", "title": f"Raw {id_}", "updatedAt": 5_000, **BASE, **fields}


RAW = [
    _raw("plain"),
    _raw("tie", updatedAt=5_000),  # the same updatedAt: the index orders ties by id
    _raw("older", updatedAt=10),
    _raw("pinned-old", updatedAt=20, pinned=True),
    _raw("archived", archived=True),
    _raw("archived-null", archived=None),
    _raw("deleting", deleting=True),
    _raw("float-time", updatedAt=5_000.5),
    _raw("shown-holds", leafId=None, shown={"leafId": None, "turns": 2, "messages": 4}),
    _raw("shown-stale", leafId=None, shown={"leafId": "gone", "turns": 2, "messages": 4}),
    _raw("shown-negative", shown={"leafId": None, "turns": -1, "messages": 4}),
    _raw("shown-no-leaf", shown={"turns": 1, "messages": 2}),
    _raw("folder", folderId="work", tags=["a", "b"]),
    _raw("bad-title", title=5),
    _raw("bad-tags", tags=["a", 1]),
    _raw("bad-pinned", pinned="yes"),
    _raw("bad-folder", folderId=7),
    _raw("bad-stats", stats=[1]),
    _raw("string-time", updatedAt="5000"),
    {"id": "raw-no-time", "title": "No updatedAt", **BASE},
]

#: thread.list {} and the first paint's rows, on the page's own panelot_v1.
BOTH = """async () => {
  const { listedThreads, storedThreads } = await import("./panel_firstpaint.mjs");
  return {
    listed: await window.panelot.query("thread.list", {}),
    painted: listedThreads(await storedThreads()),
  };
}"""

TITLES = (
    "() => [...document.querySelectorAll('#thread-list .thread-title')].map((e) => e.textContent)"
)
HELD = """() => ["thread-list", "nav-new", "nav-settings"].map((id) => document.getElementById(id).inert)"""


def test_the_first_paint_lists_as_thread_list_does(
    panelot_panel: Page, panelot_store: PageStore
) -> None:
    store = panelot_store
    made = [store.send("thread.create", {"title": f"Made {i}"})["threadId"] for i in range(3)]
    store.send("thread.update", {"threadId": made[0], "patch": {"pinned": True}})
    store.send("thread.update", {"threadId": made[1], "patch": {"archived": True}})
    panelot_panel.evaluate(RAW_THREADS, RAW)
    both = panelot_panel.evaluate(BOTH)
    ids = [t["id"] for t in both["listed"]]
    # The rules were exercised: pinned first, archived and malformed left out, ties kept.
    assert ids[:2] == [made[0], "raw-pinned-old"]
    assert {"raw-archived", "raw-bad-title", "raw-string-time", made[1]}.isdisjoint(ids)
    assert {"raw-plain", "raw-tie", "raw-deleting", "raw-archived-null"} <= set(ids)
    assert both["painted"] == both["listed"]


def _open_held(ctx: ExtensionContext) -> tuple[Page, HeldRoutes]:
    """A side panel whose snapshot download waits until the test lets it go on."""
    page = ctx.context.new_page()
    page.set_viewport_size(PANEL_VIEWPORT)  # type: ignore[arg-type]
    held = HeldRoutes(page, "**/snapshot/panelot.snap")
    page.goto(ctx.url("sidepanel.html"), wait_until="commit")
    return page, held


def test_the_stored_list_shows_before_the_store_is_ready(
    panelot_context: ExtensionContext,
) -> None:
    first = panelot_context.open_panel()
    store = PageStore(first)
    ids = [store.send("thread.create", {"title": f"Trip {i}"})["threadId"] for i in range(3)]
    store.send("thread.update", {"threadId": ids[0], "patch": {"pinned": True}})
    store.send("thread.update", {"threadId": ids[1], "patch": {"archived": True}})
    expected = [t["title"] for t in store.query("thread.list", {})]
    assert expected == ["Trip 0", "Trip 2"]

    page, held = _open_held(panelot_context)
    page.wait_for_selector("body[data-first-paint='stored']")
    page.wait_for_function("() => window.__firstPaintAt !== undefined")
    assert page.evaluate("() => window.panelot.state") != "ready"  # its snapshot is held
    assert page.evaluate(TITLES) == expected
    assert page.evaluate("() => document.body.dataset.live") == "0"
    assert page.is_visible("#starting")
    assert page.evaluate(HELD) == [True, True, True]

    held.release()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    assert page.evaluate("() => document.body.dataset.live") is None
    assert page.evaluate(TITLES) == expected
    assert not page.is_visible("#starting")
    assert page.evaluate(HELD) == [False, False, False]
    marks = page.evaluate("() => window.panelot.marks")
    assert marks["first_paint"] < marks["runtime"] < marks["live"]
    page.click(f"[data-thread-id='{ids[2]}'] .thread-open")  # live: it opens
    page.wait_for_function(f"() => window.panelotApp.chat?.threadId === '{ids[2]}'")


def test_a_fresh_profile_paints_nothing_and_creates_no_database(
    panelot_context: ExtensionContext,
) -> None:
    page, held = _open_held(panelot_context)
    page.wait_for_selector("body[data-first-paint='none']")
    names = page.evaluate("async () => (await indexedDB.databases()).map((d) => d.name)")
    assert "panelot_v1" not in names
    assert page.is_visible("#boot") and not page.is_visible("#app")
    held.release()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    versions = page.evaluate(
        "async () => (await indexedDB.databases()).filter((d) => d.name === 'panelot_v1')"
    )
    assert [d["version"] for d in versions] == [10]  # Dexie's version 1, made by the store
