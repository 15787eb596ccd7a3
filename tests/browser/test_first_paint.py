"""The first paint, drawn before Python is ready: the list, or the reopened conversation.

* ``panel_firstpaint.mjs`` (run by ``sidepanel_paint.mjs``, a module script of its own) chooses and orders the rows as ``thread.list`` does: on the
  same stored records (made by commands, and written raw as other programs might:
  malformed ones, ties, archived, pinned, counts that hold or not) both give the same.
* With the start-up held back (the snapshot's manifest; so the store provably is not ready), a panel
  on a profile with conversations shows them, marked as not yet live, with the rows and
  the buttons that act on them held back; once the download goes on, the live list
  takes over the same rows and everything acts.
* On a fresh profile it paints nothing and does not create the database (the store
  creates it, at its version).
* The live list keeps the painted element of every thread unchanged meanwhile (not even
  moving it) and redraws one changed directly in IndexedDB while the store started.
* A start-up that fails takes the painted list away and shows the error.
* A panel reopening a conversation paints it (its stored title, the composer): a message
  typed and sent (twice) before the store is ready waits, nothing written, and is stored
  and shown once when the store is ready.
* The reopened conversation's last messages are painted from ``nodes`` read directly, by
  the rules of ``thread.snapshot``'s window (a version's place, a tombstone left out);
  the live view then shows the same messages.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, Route

from e2e_support import wait_query
from held_routes import SNAPSHOT_MANIFEST, HeldRoutes
from panelot.testing import PageStore, StubProvider, configure_provider
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
#: What acts on the painted list (held back until it is live), then "New chat" (never).
HELD = """() => ["thread-list", "nav-settings", "nav-new"].map((id) => document.getElementById(id).inert)"""


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
    """A side panel whose start-up (the snapshot's manifest) waits until the test lets it go on."""
    page = ctx.context.new_page()
    page.set_viewport_size(PANEL_VIEWPORT)  # type: ignore[arg-type]
    held = HeldRoutes(page, SNAPSHOT_MANIFEST)
    page.goto(ctx.url("sidepanel.html"), wait_until="commit")
    return page, held


def _sent_once(page: Page, store: PageStore, thread_id: str, text: str) -> None:
    """After the start is released: ``text`` is stored in the thread once, and replied to."""
    stored = wait_query(
        page,
        "thread.snapshot",
        {"threadId": thread_id},
        lambda s: [n["type"] for n in s["nodes"]] == ["user_message", "assistant_message"],
    )
    assert stored["nodes"][0]["payload"]["content"] == [{"type": "text", "text": text}]
    users = [n for n in store.raw_nodes(thread_id) if n["type"] == "user_message"]
    assert len(users) == 1  # once, however often Send was pressed
    page.wait_for_selector(".msg.assistant")


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
    assert page.evaluate("() => window.panelot?.state") != "ready"  # its snapshot is held
    assert page.evaluate(TITLES) == expected
    assert page.evaluate("() => document.body.dataset.live") == "0"
    assert page.is_visible("#starting")
    assert page.evaluate(HELD) == [True, True, False]  # a new conversation can start

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


#: Tag the painted rows (a JS property on each element) and record every row element
#: taken out of the list from now on.
TAG_ROWS = """() => {
  const list = document.getElementById("thread-list");
  for (const li of list.children) li.__painted = li.dataset.threadId;
  window.__rowsRemoved = [];
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.removedNodes) window.__rowsRemoved.push(n.__painted ?? "new");
  }).observe(list, { childList: true });
}"""

#: Each row shown: its thread id, the painted element's tag (null: a new element), title.
ROWS = """() => [...document.querySelectorAll("#thread-list > li")].map((li) =>
  [li.dataset.threadId, li.__painted ?? null, li.querySelector(".thread-title").textContent])"""


def _threads_directly(change: str) -> str:
    """A page function that changes ``panelot_v1``'s threads with IndexedDB itself.

    As Dexie code or another program would: it opens the database, runs ``change`` on its
    ``threads`` store (``store``; the page function's argument is ``arg``) in one
    read-write transaction, and closes it.
    """
    return (
        """async (arg) => {
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open("panelot_v1");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const tx = db.transaction("threads", "readwrite");
  const store = tx.objectStore("threads");
  """
        + change
        + """
  await new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}"""
    )


#: Change a thread's title directly (``[id, title]``), the rest of its record kept.
RETITLE = _threads_directly(
    "const [id, title] = arg;\n"
    "  store.get(id).onsuccess = (event) => store.put({ ...event.target.result, title });"
)


def test_a_list_longer_than_the_first_screen_is_painted_whole_and_kept(
    panelot_context: ExtensionContext,
) -> None:
    # The first rows are drawn before the first frame and the rest right after it
    # (sidepanel_paint.mjs FIRST_ROWS): all of them are painted, in thread.list's order,
    # before the store is ready, and the live list keeps every one of their elements.
    first = panelot_context.open_panel()
    # Their counts hold (no leaf, nothing shown), so the live panel has none to count
    # and write (which would change every row: sidepanel.mjs countShown).
    shown = {"leafId": None, "turns": 0, "messages": 0}
    many = [_raw(f"long-{i:03}", updatedAt=10_000 + i, shown=shown) for i in range(130)]
    first.evaluate(RAW_THREADS, many)
    listed = [(t["id"], t["title"]) for t in PageStore(first).query("thread.list", {})]
    expected = [title for _, title in listed]
    assert len(expected) == 130 and expected[0] == "Raw long-129"

    page, held = _open_held(panelot_context)
    page.wait_for_selector("body[data-first-paint='stored']")
    assert page.evaluate("() => window.panelot?.state") != "ready"  # its snapshot is held
    assert page.evaluate(TITLES) == expected
    page.evaluate(TAG_ROWS)

    held.release()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    assert page.evaluate(TITLES) == expected
    assert page.evaluate(ROWS) == [[i, i, title] for i, title in listed]
    assert page.evaluate("() => window.__rowsRemoved") == []


def test_the_live_list_takes_over_keeping_the_unchanged_rows(
    panelot_context: ExtensionContext,
) -> None:
    first = panelot_context.open_panel()
    store = PageStore(first)
    ids = [store.send("thread.create", {"title": f"Keep {i}"})["threadId"] for i in range(4)]
    listed = [t["id"] for t in store.query("thread.list", {})]
    assert listed == ids[::-1]

    page, held = _open_held(panelot_context)
    page.wait_for_selector("body[data-first-paint='stored']")
    assert page.evaluate("() => window.panelot?.state") != "ready"  # its snapshot is held
    page.evaluate(TAG_ROWS)
    # Changed while the store starts: the painted row is stale, the live list shows it anew.
    page.evaluate(RETITLE, [ids[1], "Renamed meanwhile"])
    painted = page.evaluate(ROWS)
    assert painted == [[i, i, f"Keep {ids.index(i)}"] for i in listed]

    held.release()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    assert page.evaluate("() => document.body.dataset.live") is None
    expected = [
        [i, None, "Renamed meanwhile"] if i == ids[1] else [i, i, f"Keep {ids.index(i)}"]
        for i in listed
    ]
    assert page.evaluate(ROWS) == expected
    # Only the changed row's element left the list: the others were not even moved.
    assert page.evaluate("() => window.__rowsRemoved") == [ids[1]]
    page.click(f"[data-thread-id='{ids[3]}'] .thread-open")  # a kept row acts: it opens
    page.wait_for_function(f"() => window.panelotApp.chat?.threadId === '{ids[3]}'")


def test_a_start_up_that_fails_shows_the_error_instead_of_the_painted_list(
    panelot_context: ExtensionContext,
) -> None:
    first = panelot_context.open_panel()
    PageStore(first).send("thread.create", {"title": "Painted, then failed"})

    page = panelot_context.context.new_page()
    page.set_viewport_size(PANEL_VIEWPORT)  # type: ignore[arg-type]
    held = HeldRoutes(page, SNAPSHOT_MANIFEST)

    def wheels(route: Route) -> None:
        # Served while the start-up is held (the staleness check reads it); once the
        # snapshot has failed, the start without it fails too: the store cannot start.
        if held.status is None:
            route.continue_()
        else:
            route.fulfill(status=404, body="gone")

    page.route("**/wheels/manifest.json", wheels)
    page.goto(panelot_context.url("sidepanel.html"), wait_until="commit")
    page.wait_for_selector("body[data-first-paint='stored']")
    assert page.evaluate(TITLES) == ["Painted, then failed"]

    held.fail(500)
    page.wait_for_function("() => !document.getElementById('failure').hidden")
    assert page.inner_text("#error") == "wheels/manifest.json: HTTP 404"
    assert page.is_visible("#boot") and page.is_visible("#retry")
    assert page.is_hidden("#app") and page.is_hidden("#starting")
    assert page.evaluate(TITLES) == []  # the stale list is gone, not only hidden
    assert page.evaluate("() => document.body.dataset.live") == "failed"
    assert page.evaluate("() => document.body.dataset.ready") is None


#: Make ``id`` the conversation the next panel reopens (what showing it records).
REOPEN = """async (id) => {
  const { setReopen } = await import("./presence.mjs");
  await setReopen(id);
}"""


def test_a_message_sent_before_the_store_is_ready_is_sent_once_when_it_is(
    panelot_context: ExtensionContext, panelot_stub: StubProvider
) -> None:
    first = panelot_context.open_panel()
    configure_provider(first, panelot_stub.base_url)
    store = PageStore(first)
    thread_id = store.send("thread.create", {"title": "Reopened"})["threadId"]
    store.send("thread.create", {"title": "Another"})
    first.evaluate(REOPEN, thread_id)

    page, held = _open_held(panelot_context)
    page.wait_for_selector("body[data-first-paint='thread']")
    assert page.evaluate("() => window.panelot?.state") != "ready"  # its snapshot is held
    assert page.inner_text("#view-title") == "Reopened"  # its stored title
    assert page.is_visible("#starting") and page.is_hidden("#view-threads")
    page.fill("#input", "Typed before ready")
    page.press("#input", "Enter")
    page.click("#send")  # pressed twice: it is sent once
    page.wait_for_selector("body[data-send-waiting='1']")
    assert page.inner_text("#composer-hint") == "Sends when ready: the local store is starting."
    assert page.input_value("#input") == "Typed before ready"  # kept, shown as waiting
    assert store.raw_nodes(thread_id) == []  # nothing is written before the store is ready

    held.release()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    _sent_once(page, store, thread_id, "Typed before ready")
    shown = [t.strip() for t in page.locator(".msg.user .msg-body").all_inner_texts()]
    assert shown == ["Typed before ready"]
    assert page.input_value("#input") == "" and page.is_hidden("#composer-hint")
    assert page.evaluate("() => document.body.dataset.sendWaiting") is None
    assert page.evaluate("() => window.panelotApp.chat.threadId") == thread_id


#: What each message of the conversation view shows: node id, type, text, version place.
MESSAGES = """(painted) => [...document.querySelectorAll("#messages .msg[data-node-id]")]
  .filter((el) => (el.dataset.painted === "1") === painted)
  .map((el) => [el.dataset.nodeId, el.dataset.type,
    el.querySelector(".msg-body")?.textContent.trim() ?? null,
    el.querySelector(".branch-pos")?.textContent ?? null])"""

#: The first paint's window of a thread, read directly.
WINDOW = """async ([id, limit]) => {
  const { storedWindow } = await import("./panel_paint_thread.mjs");
  return storedWindow(id, limit);
}"""


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def test_the_reopened_conversation_is_painted_as_the_live_view_shows_it(
    panelot_context: ExtensionContext,
) -> None:
    first = panelot_context.open_panel()
    store = PageStore(first)
    thread_id = store.send("thread.create", {"title": "Painted talk"})["threadId"]

    def send(text: str, parent: str | None) -> str:
        payload = {"threadId": thread_id, "parentId": parent, **_text(text)}
        node_id: str = store.send("message.send", payload)["nodeId"]
        return node_id

    def reply(text: str, parent: str) -> str:
        payload = {"threadId": thread_id, "type": "assistant_message", "parentId": parent}
        usage = {"inputTokens": 1, "outputTokens": 1, "costUsd": 0.0}
        said = {**_text(text), "model": "m1", "connectionId": "c1", "usage": usage}
        node_id: str = store.send("message.append", {**payload, "payload": said})["nodeId"]
        return node_id

    first_question = send("First question", None)
    # A second version of the first message: the branch goes through it (2/2).
    asked = store.send(
        "message.edit",
        {"threadId": thread_id, "nodeId": first_question, "payload": _text("First, asked again")},
    )["nodeId"]
    answer = reply("First answer", asked)
    deleted = send("Deleted question", answer)
    reply("Second answer", deleted)
    store.send("message.delete", {"threadId": thread_id, "nodeId": deleted})  # a tombstone
    snapshot = store.query("thread.snapshot", {"threadId": thread_id, "limit": 50})
    assert [n["payload"]["content"][0]["text"] for n in snapshot["nodes"]] == [
        "First, asked again",
        "First answer",
        "Second answer",
    ]
    first.evaluate(REOPEN, thread_id)

    page, held = _open_held(panelot_context)
    page.wait_for_selector("body[data-first-paint='thread']")
    assert page.evaluate("() => window.panelot?.state") != "ready"  # its snapshot is held
    # The window's rules, read directly: the first paint's (50), and shorter ones.
    assert page.evaluate(WINDOW, [thread_id, 50]) == snapshot
    for limit in (0, 1, 2):
        window = store.query("thread.snapshot", {"threadId": thread_id, "limit": limit})
        assert window["hasMore"] and page.evaluate(WINDOW, [thread_id, limit]) == window
    painted = page.evaluate(MESSAGES, True)
    assert painted == [
        [asked, "user_message", "First, asked again", "2/2"],
        [answer, "assistant_message", "First answer", None],
        [snapshot["nodes"][2]["id"], "assistant_message", "Second answer", None],
    ]

    held.release()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    assert page.evaluate(MESSAGES, True) == []  # the live view replaced every painted one
    assert page.evaluate(MESSAGES, False) == painted
    pages = """async () => [(await import("./panel_chat.mjs")).PAGE,
      (await import("./panel_paint_thread.mjs")).PAINT_PAGE]"""
    assert page.evaluate(pages) == [50, 50]  # the painted window is the live view's first


def test_a_message_sent_before_ready_without_a_provider_stays_in_the_box(
    panelot_context: ExtensionContext,
) -> None:
    first = panelot_context.open_panel()
    store = PageStore(first)
    thread_id = store.send("thread.create", {"title": "No provider"})["threadId"]
    first.evaluate(REOPEN, thread_id)

    page, held = _open_held(panelot_context)
    page.wait_for_selector("body[data-first-paint='thread']")
    page.fill("#input", "Kept for later")
    page.press("#input", "Enter")
    page.wait_for_selector("body[data-send-waiting='1']")
    held.release()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    page.wait_for_selector("body:not([data-send-waiting])")  # handed over, and refused
    page.wait_for_selector("#toast >> text=Configure a provider in Settings first")
    assert page.is_visible(
        "#composer-hint"
    )  # the live composer's hint, not hidden by the hand-over
    assert page.inner_text("#composer-hint").startswith("No provider configured")
    assert page.input_value("#input") == "Kept for later"  # nothing sent, nothing lost
    assert not page.evaluate("() => document.getElementById('input').readOnly")
    assert store.raw_nodes(thread_id) == []


#: Delete a thread's record directly (``id``), as another program might.
DROP_THREAD = _threads_directly("store.delete(arg);")


def test_a_painted_conversation_gone_meanwhile_gives_way_to_the_list(
    panelot_context: ExtensionContext,
) -> None:
    first = panelot_context.open_panel()
    store = PageStore(first)
    gone = store.send("thread.create", {"title": "Gone soon"})["threadId"]
    store.send("message.send", {"threadId": gone, "parentId": None, **_text("Hello")})
    store.send("thread.create", {"title": "Stays"})
    first.evaluate(REOPEN, gone)

    page, held = _open_held(panelot_context)
    page.wait_for_selector("body[data-first-paint='thread']")
    assert [m[2] for m in page.evaluate(MESSAGES, True)] == ["Hello"]
    page.fill("#input", "Never sent")
    page.press("#input", "Enter")
    page.wait_for_selector("body[data-send-waiting='1']")
    page.evaluate(DROP_THREAD, gone)  # deleted while the store starts

    held.release()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    page.wait_for_selector("#toast >> text=Your message was not sent")
    assert page.evaluate("() => document.body.dataset.view") == "threads"
    assert page.evaluate(TITLES) == ["Stays"]
    assert page.evaluate(MESSAGES, True) == []  # the painted messages went with it
    assert page.input_value("#input") == "Never sent"
    assert page.evaluate("() => window.panelotApp.chat.threadId") is None


def test_a_new_conversation_started_before_ready_is_made_once_with_its_message(
    panelot_context: ExtensionContext, panelot_stub: StubProvider
) -> None:
    first = panelot_context.open_panel()
    configure_provider(first, panelot_stub.base_url)
    store = PageStore(first)
    store.send("thread.create", {"title": "Already there"})
    first.evaluate(REOPEN, None)  # the panel opens on the list
    before = {t["id"] for t in store.raw("threads")}

    page, held = _open_held(panelot_context)
    page.wait_for_selector("body[data-first-paint='stored']")
    page.click("#nav-new")
    page.wait_for_selector("body[data-view='chat']")
    assert page.inner_text("#view-title") == "New chat"
    assert page.evaluate("() => window.panelot?.state") != "ready"  # its start is held
    page.fill("#input", "A new question before ready")
    page.press("#input", "Enter")
    page.click("#send")  # pressed twice: it is sent once
    page.wait_for_selector("body[data-send-waiting='1']")
    assert page.inner_text("#composer-hint") == "Sends when ready: the local store is starting."
    page.click("#nav-new", force=True)  # a second press makes no second conversation
    assert {t["id"] for t in store.raw("threads")} == before  # nothing written before ready

    held.release()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    thread_id = page.evaluate("() => window.panelotApp.chat.threadId")
    assert isinstance(thread_id, str) and thread_id not in before
    _sent_once(page, store, thread_id, "A new question before ready")
    made = {t["id"] for t in store.raw("threads")} - before
    assert made == {thread_id}  # one new conversation
    assert page.evaluate("() => document.body.dataset.view") == "chat"
    assert page.evaluate("() => document.getElementById('nav-new').inert") is False
