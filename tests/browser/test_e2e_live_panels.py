"""End-to-end: two side panels of one profile stay in step through live queries.

Panel A acts (clicks, or commands through its own ``panelot.send``); panel B, another
page of the same extension profile, must show the result without a reload: the thread
list, the open conversation (its messages and ``n/m`` version selectors), a thread
deleted under it, and the storage figures in Settings. Unchanged rows and messages keep
their DOM elements: a JS expando property set on one in B survives A's change to
something else. Each wait is for the state that proves its own action landed (a new
node id, a changed title, a row gone), never for one that may already hold.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from browser_harness import query
from e2e_support import tiny_png, wait_shown_last
from panelot.testing import (
    ExtensionContext,
    PageStore,
    attach,
    edit_message,
    last_id,
    new_thread,
    open_thread,
    send_message,
    to_list,
    wait_reply,
)

#: How long B may take to show what A committed (live results land in well under a
#: second; this leaves room for a loaded machine).
LIVE_MS = 5_000
#: How many live queries a page's runtime has running.
LIVE_COUNT = "() => window.panelot.py.pyimport('panelot.runtime').live_count()"


@pytest.fixture(scope="module")
def b(panelot_module_context: ExtensionContext, panel: Page) -> Iterator[Page]:
    """Panel B: another page of the profile, opened once A (``panel``) saved the provider."""
    page = panelot_module_context.open_panel()
    yield page
    page.close()


ROWS = "() => document.querySelectorAll('#thread-list .thread-item').length"


@pytest.fixture()
def pair(panel: Page, b: Page) -> tuple[Page, Page]:
    """Both panels on an empty list (every thread deleted), B's message box empty."""
    a = panel
    for page in (a, b):
        to_list(page)
        page.eval_on_selector("#input", "(el) => { el.value = ''; }")
    for thread in query(a, "thread.list", {"archived": None}):
        PageStore(a).send("thread.delete", {"threadId": thread["id"]})
    for page in (a, b):
        page.wait_for_function(f"() => ({ROWS})() === 0", timeout=LIVE_MS)
    return a, b


def row(page: Page, thread_id: str) -> str:
    return f"#thread-list [data-thread-id='{thread_id}']"


def mark(page: Page, selector: str, tag: str) -> None:
    """Set the expando ``__live`` on the element ``selector`` names."""
    page.eval_on_selector(selector, "(el, tag) => { el.__live = tag; }", tag)


def marked(page: Page, selector: str) -> str | None:
    """The expando ``__live`` of the element ``selector`` names (None: a new element)."""
    return page.eval_on_selector(selector, "(el) => el.__live ?? null")  # type: ignore[no-any-return]


def node(thread_id: str) -> str:
    return f"#messages [data-node-id='{thread_id}']"


def positions(page: Page) -> list[tuple[str, str]]:
    """The messages on screen: (node id, version position or "")."""
    rows = page.evaluate(
        """() => [...document.querySelectorAll('#messages .msg[data-node-id]')].map((el) =>
             [el.dataset.nodeId, el.querySelector('.branch-pos')?.textContent ?? ''])"""
    )
    return [(str(n), str(p)) for n, p in rows]


# ---- the thread list ----------------------------------------------------------------


def test_a_thread_created_renamed_and_imported_in_a_shows_in_b(pair: tuple[Page, Page]) -> None:
    a, b = pair
    created = new_thread(a)  # the + button
    expect(b.locator(row(b, created))).to_have_count(1, timeout=LIVE_MS)
    expect(b.locator(f"{row(b, created)} .thread-title")).to_have_text("New chat")

    a.click("#nav-back")
    a.click(f"{row(a, created)} [data-action=rename]")
    a.wait_for_selector("#dialog[open]")
    a.fill("#dialog input[name=title]", "Renamed in A")
    a.click("#dialog-ok")
    expect(b.locator(f"{row(b, created)} .thread-title")).to_have_text(
        "Renamed in A", timeout=LIVE_MS
    )

    data = query(a, "thread.export", {"threadId": created, "format": "json"})["data"]
    data["thread"]["title"] = "Imported in A"
    imported = PageStore(a).send("thread.import", {"data": data})["threadId"]
    expect(b.locator(f"{row(b, imported)} .thread-title")).to_have_text(
        "Imported in A", timeout=LIVE_MS
    )


def test_unchanged_rows_keep_their_elements_in_b(pair: tuple[Page, Page]) -> None:
    a, b = pair
    changed = PageStore(a).send("thread.create", {"title": "To be renamed"})["threadId"]
    kept = PageStore(a).send("thread.create", {"title": "Left alone"})["threadId"]
    expect(b.locator(row(b, changed))).to_have_count(1, timeout=LIVE_MS)
    expect(b.locator(row(b, kept))).to_have_count(1, timeout=LIVE_MS)
    mark(b, row(b, kept), "kept")
    mark(b, row(b, changed), "changed")
    PageStore(a).send(
        "thread.update",
        {"threadId": changed, "patch": {"title": "Renamed meanwhile", "pinned": True}},
    )
    expect(b.locator(f"{row(b, changed)} .thread-title")).to_have_text(
        "Renamed meanwhile", timeout=LIVE_MS
    )
    assert marked(b, row(b, kept)) == "kept"  # the same element: not redrawn
    assert marked(b, row(b, changed)) is None  # its own row was redrawn
    # Pinned first: the changed row moved above the newer kept one, which stayed itself.
    order = b.eval_on_selector_all(
        "#thread-list .thread-item", "(els) => els.map((el) => el.dataset.threadId)"
    )
    assert order == [changed, kept]

    PageStore(a).send("thread.delete", {"threadId": changed})
    expect(b.locator(row(b, changed))).to_have_count(0, timeout=LIVE_MS)
    assert marked(b, row(b, kept)) == "kept"


# ---- the open conversation ------------------------------------------------------------


def test_an_append_in_a_shows_in_b_and_keeps_bs_draft(pair: tuple[Page, Page]) -> None:
    a, b = pair
    thread_id = new_thread(a)
    send_message(a, "First question")
    open_thread(b, thread_id)
    first_user = b.locator("#messages .msg.user").first.get_attribute("data-node-id")
    assert first_user is not None
    mark(b, node(first_user), "first")
    b.fill("#input", "a draft B is still typing")
    b.eval_on_selector("#input", "(el) => el.setSelectionRange(2, 7)")

    send_message(a, "Second question")
    reply = last_id(a)
    assert reply is not None
    expect(b.locator(node(reply))).to_have_count(1, timeout=LIVE_MS)
    assert [p[0] for p in positions(b)] == [p[0] for p in positions(a)]
    assert "Second question" in b.inner_text("#messages")
    assert b.input_value("#input") == "a draft B is still typing"
    assert marked(b, node(first_user)) == "first"  # unchanged message, same element
    # The title A's first message gave the thread shows in B too.
    assert b.inner_text("#view-title") == "First question"


def test_a_regenerate_and_a_branch_switch_in_a_show_in_b(pair: tuple[Page, Page]) -> None:
    a, b = pair
    thread_id = new_thread(a)
    send_message(a, "Tell me something")
    first = last_id(a)
    assert first is not None
    open_thread(b, thread_id)
    expect(b.locator(node(first))).to_have_count(1)
    user = b.locator("#messages .msg.user").first.get_attribute("data-node-id")
    assert user is not None
    mark(b, node(user), "user")

    a.locator(".msg.assistant").first.locator("[data-action=regenerate]").click()
    wait_reply(a, first)
    second = last_id(a)
    assert second is not None and second != first
    expect(b.locator(f"{node(second)} .branch-pos")).to_have_text("2/2", timeout=LIVE_MS)
    assert positions(b) == [(user, ""), (second, "2/2")]
    assert marked(b, node(user)) == "user"

    a.locator(f"{node(second)} [data-action=prev]").click()
    expect(b.locator(f"{node(first)} .branch-pos")).to_have_text("1/2", timeout=LIVE_MS)
    assert positions(b) == [(user, ""), (first, "1/2")]
    assert marked(b, node(user)) == "user"
    assert query(b, "thread.get", {"threadId": thread_id})["leafId"] == first


def test_an_edit_in_a_shows_in_b(pair: tuple[Page, Page]) -> None:
    a, b = pair
    thread_id = new_thread(a)
    send_message(a, "Version one")
    open_thread(b, thread_id)
    original = [p[0] for p in positions(b)]
    edited = edit_message(a, "Version two")
    assert edited not in original
    # The edit and its reply are two writes: B may show the edited message (2/2) in one
    # live update and the reply in a later one, so wait for the last one, the reply.
    reply = last_id(a)
    assert reply is not None
    wait_shown_last(b, reply, timeout_ms=LIVE_MS)
    expect(b.locator(f"{node(edited)} .branch-pos")).to_have_text("2/2")
    assert [p[0] for p in positions(b)] == [p[0] for p in positions(a)]


def test_bs_scroll_position_survives_an_append_in_a(pair: tuple[Page, Page]) -> None:
    a, b = pair
    thread_id = PageStore(a).send("thread.create", {"title": "Long one"})["threadId"]
    for i in range(12):
        PageStore(a).send("message.append", {
            "threadId": thread_id, "type": "user_message",
            "payload": {"content": [{"type": "text", "text": f"line {i}\n" * 6}]},
        })  # fmt: skip
    open_thread(b, thread_id)
    b.eval_on_selector("#messages", "(el) => { el.scrollTop = 40; }")
    top = b.eval_on_selector("#messages", "(el) => el.scrollTop")
    assert top > 0
    appended = PageStore(a).send("message.append", {
        "threadId": thread_id, "type": "user_message",
        "payload": {"content": [{"type": "text", "text": "one more"}]},
    })["nodeId"]  # fmt: skip
    expect(b.locator(node(appended))).to_have_count(1, timeout=LIVE_MS)
    assert b.eval_on_selector("#messages", "(el) => el.scrollTop") == top


def test_switching_threads_stops_the_old_threads_live_queries(
    pair: tuple[Page, Page],
) -> None:
    a, b = pair
    one = PageStore(a).send("thread.create", {"title": "One"})["threadId"]
    two = PageStore(a).send("thread.create", {"title": "Two"})["threadId"]
    count = LIVE_COUNT
    open_thread(b, one)
    watching = b.evaluate(count)
    for _ in range(3):
        open_thread(b, two)
        open_thread(b, one)
    assert b.evaluate(count) == watching  # no live query left behind
    to_list(b)
    # thread.get, thread.summary (what retention kept) and thread.snapshot stopped
    assert b.evaluate(count) == watching - 3


# ---- deleted elsewhere ------------------------------------------------------------------


def test_a_thread_deleted_in_a_closes_in_b_with_a_notice(pair: tuple[Page, Page]) -> None:
    a, b = pair
    thread_id = new_thread(a)
    send_message(a, "soon gone")
    open_thread(b, thread_id)
    b.fill("#input", "words B has not sent")
    a.click("#nav-back")
    a.click(f"{row(a, thread_id)} [data-action=delete]")
    a.wait_for_selector("#dialog[open]")
    a.click("#dialog-ok")
    b.wait_for_function(
        "(id) => window.panelotApp.view === 'threads' && window.panelotApp.chat.threadId === null"
        " && !document.querySelector(`[data-thread-id='${id}']`)",
        arg=thread_id,
        timeout=LIVE_MS,
    )
    expect(b.locator("#toast")).to_contain_text("deleted in another window")
    expect(b.locator("#toast")).to_contain_text("still in the message box")
    assert b.input_value("#input") == "words B has not sent"
    # A, which deleted it, says so its own way.
    expect(a.locator("#toast")).to_contain_text("Deleted (2 messages)")


def test_a_message_sent_into_a_thread_deleted_elsewhere_is_refused_and_kept(
    pair: tuple[Page, Page],
) -> None:
    a, b = pair
    thread_id = new_thread(a)
    send_message(a, "here for now")
    open_thread(b, thread_id)
    # B sends before it hears of the delete: its live view is paused to hold that window
    # open (otherwise the view closes first, well within a second).
    b.evaluate("() => window.panelotApp.chat.watching.stop()")
    PageStore(a).send("thread.delete", {"threadId": thread_id})
    b.fill("#input", "this cannot be stored")
    b.press("#input", "Enter")
    expect(b.locator("#toast")).to_contain_text("deleted in another window", timeout=LIVE_MS)
    expect(b.locator("#toast")).to_contain_text("not sent")
    b.wait_for_function("() => window.panelotApp.view === 'threads'")
    assert b.input_value("#input") == "this cannot be stored"
    assert query(b, "thread.list", {"archived": None}) == []


# ---- settings ---------------------------------------------------------------------------


def test_bs_storage_figures_follow_an_attachment_sent_in_a(pair: tuple[Page, Page]) -> None:
    a, b = pair
    watching = b.evaluate(LIVE_COUNT)
    b.click("#nav-settings")
    expect(b.locator("#attachment-usage")).to_contain_text("Attachments: 0 files,")
    expect(b.locator("#storage-usage")).to_be_visible()
    thread_id = new_thread(a)
    attach(a, "dot.png", tiny_png(), "image/png")
    before = last_id(a)
    a.fill("#input", "a picture")
    a.press("#input", "Enter")
    wait_reply(a, before)
    expect(b.locator("#attachment-usage")).to_contain_text("Attachments: 1 file,", timeout=LIVE_MS)
    PageStore(a).send("thread.delete", {"threadId": thread_id})
    expect(b.locator("#attachment-usage")).to_contain_text("Attachments: 0 files,", timeout=LIVE_MS)
    to_list(b)  # leaving Settings stops its live queries
    assert b.evaluate(LIVE_COUNT) == watching
