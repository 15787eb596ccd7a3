"""End-to-end: what the conversation list and a conversation's header say, and how they sit.

* The list counts the turns the current branch shows (``shown``, counted in Python), not
  every reply ever written: a chat regenerated twice still shows "1 turn". The time and
  the count read "now · 1 turn"; the header says how many messages the branch holds, all
  of them, also on a thread longer than the panel's window of 50.
* A thread record without ``shown`` (written before it existed, or by Dexie code) gets
  its count after the panel opens: the panel counts such threads in the background
  (``thread.count_shown``) and the row follows through its live query.
* With every conversation archived, the list says so, and "Show archived" shows them;
  the message sits under the filters, not at the bottom of the panel.
* The thread-actions menu closes with Escape.
* Layout, measured: a title uses the row's full width (the actions float over it on
  hover); the model and usage line is never cut beside the version arrows; a toast does
  not cover the composer's attachment chips.

The module runs in its own browser profile, so the list holds only its threads.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import FilePayload, Page

from panelot.testing import (
    PageStore,
    new_thread,
    open_thread,
    send_message,
    to_list,
    wait_ready,
    wait_reply,
)
from panelot.testing.store import DB_NAME

ROW = "#thread-list [data-thread-id='{}']"


def archive_all(store: PageStore) -> None:
    for thread in store.query("thread.list", {"archived": False}):
        store.send("thread.update", {"threadId": thread["id"], "patch": {"archived": True}})


def unarchive_all(store: PageStore) -> None:
    for thread in store.query("thread.list", {"archived": True}):
        store.send("thread.update", {"threadId": thread["id"], "patch": {"archived": False}})


def show_active(page: Page) -> None:
    """The list with its default filter (active conversations)."""
    to_list(page)
    page.select_option("#filter-archived", "active")


def test_the_list_counts_the_turns_the_branch_shows(panel: Page, store: PageStore) -> None:
    page = panel
    show_active(page)
    thread_id = new_thread(page)
    send_message(page, "How do I prune roses?")
    for _ in range(2):  # two more versions of the reply, as the user makes them
        before = page.locator(".msg.assistant").last.get_attribute("data-node-id")
        page.locator(".msg.assistant").last.locator("[data-action=regenerate]").click()
        last = wait_reply(page, before)
    page.wait_for_selector(".msg.assistant [data-branch='3/3']")
    stats = store.query("thread.get", {"threadId": thread_id})["stats"]
    assert stats["turns"] == 3  # the stored statistics count every reply written
    # The header counts the two messages shown, once the chat's thread record is the one
    # the last regenerate wrote (before the regenerates it said "2 messages" too).
    page.wait_for_function(
        "(leaf) => window.panelotApp.chat.thread?.leafId === leaf"
        " && document.getElementById('chat-meta').textContent.startsWith('2 messages ·')",
        arg=last,
    )
    to_list(page)
    sub = f"{ROW.format(thread_id)} .thread-sub"
    # Likewise the row said "1 turn" before the regenerates: wait until the list holds
    # the record they left (three replies written), then the row must still say 1 turn.
    page.wait_for_function(
        """([id, sel]) => {
          const listed = (window.panelotApp.threads ?? []).find((t) => t.id === id);
          return listed?.stats?.turns === 3
            && document.querySelector(sel)?.textContent === 'now · 1 turn';
        }""",
        arg=[thread_id, sub],
    )
    # One more turn: the list follows.
    open_thread(page, thread_id)
    send_message(page, "And in winter?")
    to_list(page)
    page.wait_for_function(
        "(sel) => document.querySelector(sel)?.textContent === 'now · 2 turns'", arg=sub
    )


#: Rewrites a thread record without ``shown`` with IndexedDB itself, as a record written
#: before the field existed: no change is announced, so no live query sees it.
_STRIP_SHOWN = """async ([dbName, id]) => {
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open(dbName);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction("threads", "readwrite");
      const threads = tx.objectStore("threads");
      const get = threads.get(id);
      get.onsuccess = () => {
        const { shown, ...record } = get.result;
        threads.put(record);
      };
      tx.oncomplete = () => resolve(true);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}"""


def test_a_thread_without_shown_gets_its_count_after_the_panel_opens(
    panel: Page, store: PageStore
) -> None:
    page = panel
    show_active(page)
    seeded = store.seed_thread("Where do owls sleep?", "And bats?", title="Owls")
    store.seed_regenerate(seeded.thread_id, seeded.user_ids[1], "Bats hang in caves.")
    shown = store.query("thread.get", {"threadId": seeded.thread_id})["shown"]
    assert (shown["turns"], shown["messages"]) == (2, 4)
    page.evaluate(_STRIP_SHOWN, [DB_NAME, seeded.thread_id])
    assert "shown" not in store.query("thread.get", {"threadId": seeded.thread_id})
    page.reload()  # as after an upgrade: the list starts from the stored records
    wait_ready(page, panel=True)
    sub = f"{ROW.format(seeded.thread_id)} .thread-sub"
    page.wait_for_function(
        "(sel) => document.querySelector(sel)?.textContent.endsWith(' · 2 turns')", arg=sub
    )
    assert store.query("thread.get", {"threadId": seeded.thread_id})["shown"] == shown


def seed_long(store: PageStore, count: int) -> str:
    """A thread of ``count`` alternating user and assistant messages, appended."""
    tid = str(store.send("thread.create", {"title": f"{count} messages"})["threadId"])
    for i in range(count // 2):
        store.seed_turn(tid, f"question {i}", f"answer {i}")
    return tid


def test_the_header_counts_every_message_of_a_long_branch(panel: Page, store: PageStore) -> None:
    page = panel
    tid = seed_long(store, 120)
    open_thread(page, tid)
    assert page.evaluate("() => window.panelotApp.chat.snapshot.hasMore") is True
    page.wait_for_function(
        "() => document.getElementById('chat-meta').textContent.startsWith('120 messages ·')"
    )


def test_every_conversation_archived_says_so_and_shows_them(panel: Page, store: PageStore) -> None:
    page = panel
    show_active(page)
    kept = store.seed_thread("Kept for later", title="Archived one").thread_id
    page.wait_for_selector(ROW.format(kept))
    archive_all(store)
    total = len(store.query("thread.list", {"archived": True}))
    try:
        page.wait_for_function(
            "(n) => { const el = document.getElementById('thread-empty');"
            " return !el.hidden && el.textContent.startsWith(`All ${n} conversations are"
            " archived.`); }",
            arg=total,
        )
        # The message sits right under the filters, not at the bottom of the panel.
        tools = page.locator(".list-tools").bounding_box()
        empty = page.locator("#thread-empty").bounding_box()
        assert tools and empty
        assert empty["y"] - (tools["y"] + tools["height"]) < 24, (tools, empty)
        page.click("#show-archived")
        page.wait_for_selector(f"{ROW.format(kept)} .thread-open")
        assert page.input_value("#filter-archived") == "archived"
    finally:
        unarchive_all(store)
        show_active(page)


def test_the_thread_menu_closes_with_escape(panel: Page, store: PageStore) -> None:
    page = panel
    tid = store.seed_thread("Menu", title="Menu").thread_id
    open_thread(page, tid)
    page.click("#chat-menu summary")
    page.wait_for_function("() => document.getElementById('chat-menu').open")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.getElementById('chat-menu').open")
    assert page.evaluate("() => document.activeElement?.closest('#chat-menu') !== null")


def test_a_title_uses_the_row_full_width(panel: Page, store: PageStore) -> None:
    page = panel
    show_active(page)
    title = "A long title that does not fit in one line of the side panel at all " * 2
    tid = store.seed_thread("Long", title=title.strip()).thread_id
    row = ROW.format(tid)
    page.wait_for_selector(row)
    page.mouse.move(0, 0)  # nothing hovered: the actions are hidden
    page.evaluate("() => document.activeElement?.blur()")
    box: dict[str, Any] = page.evaluate(
        """(sel) => {
          const row = document.querySelector(sel);
          const title = row.querySelector('.thread-title');
          const r = row.getBoundingClientRect(), t = title.getBoundingClientRect();
          return {rowRight: r.right, pad: parseFloat(getComputedStyle(row).paddingRight),
                  titleRight: t.right, clipped: title.scrollWidth > title.clientWidth};
        }""",
        row,
    )
    assert box["clipped"]  # the title is long enough to need the whole width
    assert box["titleRight"] >= box["rowRight"] - box["pad"] - 1, box


def test_the_usage_line_is_not_cut_beside_the_version_arrows(panel: Page, store: PageStore) -> None:
    page = panel
    tid = str(store.send("thread.create", {"title": "Usage"})["threadId"])
    user = store.send(
        "message.append",
        {
            "threadId": tid,
            "type": "user_message",
            "payload": {"content": [{"type": "text", "text": "Count the tokens"}]},
        },
    )["nodeId"]
    reply = {
        "content": [{"type": "text", "text": "Counted."}],
        "model": "gpt-4o-mini-2024-07-18",
        "connectionId": "c",
        "usage": {"inputTokens": 123456, "outputTokens": 78901},
    }
    store.send("message.append", {"threadId": tid, "type": "assistant_message", "payload": reply})
    payload = {"threadId": tid, "userNodeId": user, "payload": reply}
    store.send("message.regenerate", payload)
    open_thread(page, tid)
    page.wait_for_selector(".msg.assistant [data-branch='2/2']")
    info: dict[str, Any] = page.evaluate(
        """() => {
          const msg = document.querySelector('.msg.assistant');
          const el = msg.querySelector('.msg-info');
          const m = msg.getBoundingClientRect(), r = el.getBoundingClientRect();
          return {text: el.textContent, scroll: el.scrollWidth, client: el.clientWidth,
                  inside: r.left >= m.left - 1 && r.right <= m.right + 1};
        }"""
    )
    assert info["text"] == "gpt-4o-mini-2024-07-18 · 123456→78901 tok", info
    assert info["scroll"] <= info["client"] and info["inside"], info


# Resolves, while the toast says `text`, to the boxes of the toast and of the chips.
_TOAST_AND_CHIPS = """(text) => {
  const toast = document.getElementById('toast');
  if (toast.hidden || toast.textContent !== text) return false;
  const box = (el) => { const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  return {toast: box(toast), composer: box(document.getElementById('composer')),
          chips: [...document.querySelectorAll('#pending li')].map(box)};
}"""


def test_a_toast_does_not_cover_the_attachment_chips(panel: Page, store: PageStore) -> None:
    page = panel
    tid = store.seed_thread("Chips", title="Chips").thread_id
    open_thread(page, tid)
    files: list[FilePayload] = [
        {"name": f"notes-{i}.txt", "mimeType": "text/plain", "buffer": b"notes"} for i in range(6)
    ]
    page.set_input_files("#file-input", files=files)
    page.wait_for_function("() => document.querySelectorAll('#pending li').length === 6")
    try:
        page.click("#chat-menu summary")
        page.click("#chat-menu [data-action=pin]")
        found = page.wait_for_function(_TOAST_AND_CHIPS, arg="Pinned").json_value()
        toast = found["toast"]
        # It stands just above the composer, whatever the chips make its height.
        assert 0 <= found["composer"]["top"] - toast["bottom"] < 24, found
        for chip in found["chips"]:
            apart = (
                chip["right"] <= toast["left"]
                or chip["left"] >= toast["right"]
                or chip["bottom"] <= toast["top"]
                or chip["top"] >= toast["bottom"]
            )
            assert apart, (toast, chip)
    finally:
        page.evaluate("() => window.panelotApp.chat.composer.clear()")
        store.send("thread.update", {"threadId": tid, "patch": {"pinned": False}})
