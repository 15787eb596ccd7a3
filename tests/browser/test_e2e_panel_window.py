"""End-to-end: the side panel shows a long conversation a window at a time.

The open thread's live query asks for the last 50 shown messages (``thread.snapshot``
with ``limit``); scrolling to the top asks for 50 more, the messages on screen staying
where they were; a turn on a long thread renders its reply like any other.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from e2e_support import show_thread
from panelot.testing import PageStore, send_message

PAGE = 50
MSGS = "() => document.querySelectorAll('#messages .msg[data-node-id]').length"


def seed(store: PageStore, count: int) -> str:
    """A thread of ``count`` alternating user and assistant messages, by import."""
    tid = store.send("thread.create", {"title": "seed"})["threadId"]
    store.send("message.append", {
        "threadId": tid, "type": "user_message", "payload": {"content": [{"type": "text", "text": "q"}]},
    })  # fmt: skip
    store.send("message.append", {
        "threadId": tid, "type": "assistant_message",
        "payload": {"content": [{"type": "text", "text": "a"}], "model": "m", "connectionId": "c"},
    })  # fmt: skip
    data: dict[str, Any] = store.query("thread.export", {"threadId": tid})["data"]
    user, reply = data["nodes"]
    nodes, parent = [], None
    for i in range(count):
        base = reply if i % 2 else user
        text = f"message {i}\n" * 3
        payload = {**base["payload"], "content": [{"type": "text", "text": text}]}
        nodes.append({**base, "id": f"n{i}", "parentId": parent, "seq": i + 1, "payload": payload})
        parent = f"n{i}"
    data["thread"] = {**data["thread"], "title": f"{count} messages", "leafId": parent}
    data["nodes"] = nodes
    out = store.send("thread.import", {"data": data})
    store.send("thread.delete", {"threadId": tid})
    return str(out["threadId"])


def shown_ids(page: Page) -> list[str]:
    return page.evaluate(  # type: ignore[no-any-return]
        "() => [...document.querySelectorAll('#messages .msg[data-node-id]')]"
        ".map((el) => el.dataset.nodeId)"
    )


def top_of(page: Page, node_id: str) -> float:
    """Where the message's element is on the screen (px from the top of the viewport)."""
    return float(
        page.eval_on_selector(
            f"#messages [data-node-id='{node_id}']", "(el) => el.getBoundingClientRect().top"
        )
    )


def scroll_to_top(page: Page, expected: int) -> None:
    page.eval_on_selector("#messages", "(el) => { el.scrollTop = 0; }")
    page.wait_for_function(f"() => ({MSGS})() === {expected}")


def test_a_long_thread_shows_its_last_page_and_loads_earlier_ones_on_scroll(
    panel: Page, store: PageStore
) -> None:
    tid = seed(store, 130)
    full = [n["id"] for n in store.query("thread.snapshot", {"threadId": tid})["nodes"]]
    assert len(full) == 130
    show_thread(panel, tid)
    ids = shown_ids(panel)
    assert ids == full[-PAGE:]
    assert panel.is_visible("#messages > .earlier")
    # The header counts the whole branch (the thread's `shown`), not the window loaded.
    assert panel.inner_text("#chat-meta").startswith("130 messages")
    assert panel.evaluate("() => window.panelotApp.chat.snapshot.hasMore") is True
    first = ids[0]
    scrolled = float(panel.eval_on_selector("#messages", "(el) => el.scrollTop"))
    assert scrolled > 0  # opened at the bottom
    before = top_of(panel, first) + scrolled  # where it is once scrolled to the top
    panel.eval_on_selector("#messages", "(el) => { el.scrollTop = 0; }")
    panel.wait_for_function(f"() => ({MSGS})() === {2 * PAGE}")
    assert abs(top_of(panel, first) - before) < 2  # the message stayed where it was
    assert shown_ids(panel) == full[-2 * PAGE :]
    scroll_to_top(panel, 130)
    assert shown_ids(panel) == full
    assert not panel.is_visible("#messages > .earlier")
    assert panel.inner_text("#chat-meta").startswith("130 messages")


def test_a_turn_on_a_long_thread_renders_its_reply_in_the_window(
    panel: Page, store: PageStore
) -> None:
    tid = seed(store, 300)
    show_thread(panel, tid)
    send_message(panel, "one more question")
    ids = shown_ids(panel)
    assert len(ids) == PAGE
    stored = store.query("thread.snapshot", {"threadId": tid, "limit": 2})["nodes"]
    assert ids[-2:] == [n["id"] for n in stored]
    assert [n["type"] for n in stored] == ["user_message", "assistant_message"]
