"""End-to-end: deleted versions, two panels of one profile, and replies that outlive the view.

The real extension in a browser profile of its own, driven by clicks, against the stub
provider. Each test waits for the state that proves its own action landed (a new node
id, a changed title, a stored reply) and then reads IndexedDB, so what is asserted is
what is stored, not only what is drawn.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from browser_harness import query
from e2e_support import confirm, tiny_png
from panelot.testing import (
    ExtensionContext,
    PageStore,
    StubProvider,
    attach,
    configure_provider,
    edit_message,
    last_id,
    new_thread,
    open_panel,
    open_thread,
    send_message,
    to_list,
    wait_reply,
)

TIMEOUT = 60_000


@pytest.fixture()
def second(panelot_module_context: ExtensionContext) -> Iterator[Page]:
    """Another side panel of the same profile (the provider is already saved)."""
    context, extension_id = panelot_module_context.context, panelot_module_context.extension_id
    page = open_panel(context, extension_id)
    page.on("dialog", lambda dialog: dialog.dismiss())
    yield page
    page.close()


def shown(page: Page) -> list[tuple[str, str]]:
    """The messages on screen: (node id, version position or "")."""
    rows = page.evaluate(
        """() => [...document.querySelectorAll('#messages .msg[data-node-id]')].map((el) =>
             [el.dataset.nodeId, el.querySelector('.branch-pos')?.textContent ?? ''])"""
    )
    return [(str(node), str(pos)) for node, pos in rows]


def stored_replies(page: Page, thread_id: str) -> list[dict[str, Any]]:
    return [n for n in PageStore(page).raw_nodes(thread_id) if n["type"] == "assistant_message"]


def wait_stored_reply(page: Page, thread_id: str, before: int) -> None:
    """Wait until the thread holds more than ``before`` stored replies (read from storage)."""
    deadline = time.monotonic() + TIMEOUT / 1000
    while len(stored_replies(page, thread_id)) <= before:
        assert time.monotonic() < deadline, f"no new reply was stored in {thread_id}"
        page.wait_for_timeout(100)


# ---- versions ------------------------------------------------------------------------


def test_deleting_a_regenerated_reply_shows_the_first_one(panel: Page) -> None:
    page = panel
    thread_id = new_thread(page)
    send_message(page, "Tell me something")
    first = last_id(page)
    page.locator(".msg.assistant").first.locator("[data-action=regenerate]").click()
    wait_reply(page, first)
    regenerated = last_id(page)
    assert shown(page)[1] == (regenerated, "2/2")
    page.locator(f"[data-node-id='{regenerated}'] [data-action=delete]").click()
    confirm(page)
    page.wait_for_function(
        "(id) => !document.querySelector(`[data-node-id='${id}']`)", arg=regenerated
    )
    assert shown(page)[1] == (first, "")  # 1/1: no selector
    assert query(page, "thread.get", {"threadId": thread_id})["leafId"] == first
    page.reload()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    open_thread(page, thread_id)
    assert [s[0] for s in shown(page)][1] == first


def test_deleting_an_edited_message_keeps_the_original_branch(panel: Page) -> None:
    page = panel
    thread_id = new_thread(page)
    send_message(page, "Version one")
    send_message(page, "Follow up one")
    original = [s[0] for s in shown(page)]
    edited = edit_message(page, "Version two")
    assert shown(page)[0] == (edited, "2/2")
    page.locator(f"[data-node-id='{edited}'] [data-action=delete]").click()
    confirm(page)
    page.wait_for_function("(id) => !document.querySelector(`[data-node-id='${id}']`)", arg=edited)
    # The edited branch's reply now stands beside "Version one", and ‹ reaches it.
    assert shown(page)[0][1] == "2/2"
    page.locator(".msg .branch [data-action=prev]").first.click()
    page.wait_for_function(
        "(id) => document.querySelector(`[data-node-id='${id}']`)", arg=original[0]
    )
    assert [s[0] for s in shown(page)] == original
    assert shown(page)[0][1] == "1/2"
    assert query(page, "thread.get", {"threadId": thread_id})["leafId"] == original[-1]


# ---- two panels of one profile ---------------------------------------------------------


def test_a_follow_up_goes_under_the_branch_its_panel_shows(
    panel: Page, second: Page, panelot_stub: StubProvider
) -> None:
    thread_id = new_thread(panel)
    send_message(panel, "Question one")
    open_thread(second, thread_id)
    seen_by_b = [s[0] for s in shown(second)]
    # B's view is live and would show A's edit within a second; pausing it holds open
    # the window in which B still shows branch 1 (B sends before it hears of A's edit).
    second.evaluate("() => window.panelotApp.chat.watching.stop()")
    # Panel A edits the first message: the stored leaf moves to A's new branch.
    edit_message(panel, "Question two")
    a_branch = query(panel, "thread.get", {"threadId": thread_id})["leafId"]
    assert a_branch not in seen_by_b
    # Panel B, still showing branch 1, sends a follow-up.
    requests = len(panelot_stub.requests)
    second.fill("#input", "Follow-up from B")
    second.press("#input", "Enter")

    def follow_up() -> dict[str, Any] | None:
        nodes = PageStore(second).raw_nodes(thread_id)
        follow = next((n for n in nodes if n["type"] == "user_message"
                       and n["payload"]["content"][0]["text"] == "Follow-up from B"), None)  # fmt: skip
        replied = follow and any(n["parentId"] == follow["id"] for n in nodes)
        return follow if replied else None

    deadline = time.monotonic() + TIMEOUT / 1000
    while (follow := follow_up()) is None:  # its reply stored, B's view resumes
        assert time.monotonic() < deadline, "B's follow-up or its reply was never stored"
        second.wait_for_timeout(100)
    second.evaluate("() => window.panelotApp.chat.reload()")
    wait_reply(second, seen_by_b[-1])
    assert follow["parentId"] == seen_by_b[-1]
    sent = panelot_stub.requests[requests]["body"]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        "Question one",
        "Follow-up from B",
    ]  # the model saw what B saw, not A's branch


def test_the_auto_title_keeps_a_rename_made_in_another_panel(panel: Page, second: Page) -> None:
    thread_id = new_thread(panel)
    assert query(panel, "thread.get", {"threadId": thread_id})["title"] == "New chat"
    open_thread(second, thread_id)
    PageStore(second, client_id="b").envelope(
        "thread.update", {"threadId": thread_id, "patch": {"title": "Named in B"}}
    )
    assert query(panel, "thread.get", {"threadId": thread_id})["title"] == "Named in B"
    send_message(panel, "my very first words")  # panel A still holds the placeholder title
    assert query(panel, "thread.get", {"threadId": thread_id})["title"] == "Named in B"


def test_a_rename_on_a_stale_view_is_refused_not_lost(panel: Page, second: Page) -> None:
    thread_id = new_thread(panel)
    send_message(panel, "something to talk about")
    open_thread(second, thread_id)
    # Panel B opens its rename dialog first: it holds the old title (B's view is live,
    # so a dialog opened after A's rename would show A's title).
    second.locator("#chat-menu summary").click()
    second.click("#chat-menu [data-action=rename]")
    second.wait_for_selector("#dialog[open]")
    assert second.input_value("#dialog input[name=title]") == "something to talk about"
    panel.locator("#chat-menu summary").click()
    panel.click("#chat-menu [data-action=rename]")
    panel.wait_for_selector("#dialog[open]")
    panel.fill("#dialog input[name=title]", "Renamed in A")
    panel.click("#dialog-ok")
    panel.wait_for_function(
        "(id) => window.panelotApp.chat.thread?.title === 'Renamed in A'", arg=thread_id
    )
    # B renames from the title its dialog was opened on: refused, A's rename stays.
    second.wait_for_function("() => window.panelotApp.chat.thread?.title === 'Renamed in A'")
    second.fill("#dialog input[name=title]", "Renamed in B")
    second.click("#dialog-ok")
    # The refusal's own proof is its notice (the title held before the click, too).
    second.wait_for_function(
        "() => document.querySelector('#toast')?.innerText.includes('changed in another window')"
    )
    assert second.evaluate("() => window.panelotApp.chat.thread?.title") == "Renamed in A"
    assert query(second, "thread.get", {"threadId": thread_id})["title"] == "Renamed in A"


# ---- replies outlive the view ------------------------------------------------------------


def test_a_reply_keeps_streaming_into_its_thread_while_another_is_open(panel: Page) -> None:
    page = panel
    other = new_thread(page)
    send_message(page, "the other conversation")
    slow = new_thread(page)
    page.fill("#input", "please be slow")
    page.press("#input", "Enter")
    page.wait_for_selector("[data-streaming] .msg-body >> text=word1")
    open_thread(page, other)  # the reply goes on in the background
    assert page.locator("[data-streaming]").count() == 0
    open_thread(page, slow)  # and is still there when the conversation is reopened
    page.wait_for_selector("[data-streaming] .msg-body >> text=word")
    open_thread(page, other)
    wait_stored_reply(page, slow, 0)
    (reply,) = stored_replies(page, slow)
    assert reply["payload"]["content"][0]["text"].split() == [f"word{i}" for i in range(40)]
    assert page.is_hidden("#chat-error")  # no banner in the conversation on screen
    assert len(stored_replies(page, other)) == 1
    open_thread(page, slow)
    assert [s[0] for s in shown(page)][-1] == reply["id"]


def test_a_failed_reply_keeps_its_banner_in_its_own_thread(panel: Page) -> None:
    page = panel
    failing = new_thread(page)
    page.fill("#input", "this will fail")
    page.press("#input", "Enter")
    page.wait_for_selector("#chat-error:not([hidden])")
    fine = new_thread(page)
    assert fine != failing and page.is_hidden("#chat-error")
    open_thread(page, failing)
    assert page.is_visible("#chat-error") and page.is_visible("#chat-retry")


# ---- the panel's small promises ------------------------------------------------------------


def test_plus_reuses_the_empty_new_chat(panel: Page) -> None:
    first = new_thread(panel)
    again = new_thread(panel)
    assert again == first
    empty = [t for t in query(panel, "thread.list", {}) if t["leafId"] is None]
    assert [t["id"] for t in empty] == [first]


def test_a_reload_reopens_the_last_conversation(
    panelot_module_context: ExtensionContext, panel: Page
) -> None:
    thread_id = new_thread(panel)
    send_message(panel, "remember me")
    context, extension_id = panelot_module_context.context, panelot_module_context.extension_id
    page = context.new_page()  # a page without the tests' clean start
    page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    open_thread(page, thread_id)
    page.reload()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    assert page.evaluate("() => [window.panelotApp.view, window.panelotApp.chat.threadId]") == [
        "chat",
        thread_id,
    ]
    page.click("#nav-back")  # back on the list: the next reload opens the list
    page.reload()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    assert page.evaluate("() => window.panelotApp.view") == "threads"
    page.close()


def test_an_image_only_message_has_no_empty_text_bubble(panel: Page, store: PageStore) -> None:
    page = panel
    thread_id = new_thread(page)
    attach(page, "dot.png", tiny_png(), "image/png")
    before = last_id(page)
    page.press("#input", "Enter")
    wait_reply(page, before)
    user = page.locator(".msg.user").first
    assert user.locator(".msg-body").count() == 0
    assert user.locator("img").count() == 1
    (node,) = [
        n
        for n in store.query("thread.snapshot", {"threadId": thread_id})["nodes"]
        if n["type"] == "user_message"
    ]
    assert [b["type"] for b in node["payload"]["content"]] == ["image"]


def test_the_list_header_stays_after_a_rename_from_the_list(panel: Page) -> None:
    page = panel
    thread_id = new_thread(page)
    send_message(page, "to be renamed")
    page.click("#nav-back")
    page.wait_for_selector("#view-threads:not([hidden])")
    page.click(f"[data-thread-id='{thread_id}'] [data-action=rename]")
    page.wait_for_selector("#dialog[open]")
    page.fill("#dialog input[name=title]", "Renamed from the list")
    page.click("#dialog-ok")
    page.wait_for_selector(f"[data-thread-id='{thread_id}'] >> text=Renamed from the list")
    assert page.inner_text("#view-title") == "Conversations"


def test_an_attached_text_file_reaches_the_model_as_its_text(
    panel: Page, store: PageStore, panelot_stub: StubProvider
) -> None:
    page = panel
    thread_id = new_thread(page)
    notes = "alpha line\nbeta line ✓\n"
    attach(page, "notes.txt", notes.encode(), "text/plain")
    page.fill("#input", "summarise the file")
    requests = len(panelot_stub.requests)
    before = last_id(page)
    page.press("#input", "Enter")
    wait_reply(page, before)
    content = panelot_stub.requests[requests]["body"]["messages"][-1]["content"]
    assert content == f"summarise the file\n[file: notes.txt]\n{notes}"
    (node,) = [n for n in store.raw_nodes(thread_id) if n["type"] == "user_message"]
    assert node["payload"]["content"][1]["type"] == "file"  # stored as a reference


def test_a_provider_that_never_answers_ends_with_a_message_and_retry(
    panel: Page, store: PageStore, panelot_stub: StubProvider
) -> None:
    page = panel
    configure_provider(page, panelot_stub.url("never"))
    try:
        page.evaluate(
            "() => { window.panelotApp.chat.replies.timeouts = {firstByteTimeoutMs: 800}; }"
        )
        thread_id = new_thread(page)
        page.fill("#input", "anyone there?")
        page.press("#input", "Enter")
        page.wait_for_selector("#chat-error:not([hidden])")
        banner = page.inner_text("#chat-error-text")
        assert "did not answer within" in banner and page.is_visible("#chat-retry")
        assert page.locator("[data-streaming]").count() == 0  # no endless "Thinking…"
        assert [n["type"] for n in store.raw_nodes(thread_id)] == ["user_message"]
    finally:
        page.evaluate("() => { window.panelotApp.chat.replies.timeouts = {}; }")
        configure_provider(page, panelot_stub.base_url)


def test_a_bundle_with_one_bad_thread_imports_nothing(panel: Page, tmp_path: Any) -> None:
    page = panel
    thread_id = new_thread(page)
    send_message(page, "worth keeping")
    good = query(page, "thread.export", {"threadId": thread_id, "format": "json"})["data"]
    bad = json.loads(json.dumps(good))
    bad["thread"]["title"] = "Broken one"
    bad["nodes"][0]["payload"]["content"] = "not a list"
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps({"format": "panelot.all", "version": 1, "threads": [good, bad]}))
    before = len(query(page, "thread.list", {"archived": None}))
    page.click("#nav-settings")
    page.set_input_files("#import-file", str(path))
    page.wait_for_selector("#data-status.error")
    status = page.inner_text("#data-status .error-text")
    assert status.startswith("Import failed:") and "Nothing was imported" in status
    page.click("#data-status summary")
    detail = page.inner_text("#data-status .error-detail pre")
    assert "threads[1].nodes[0].payload.content" in detail and "Broken one" in detail
    assert len(query(page, "thread.list", {"archived": None})) == before


HOUR_MS = 3_600_000


def _dated_export(store: PageStore, title: str, age_ms: int) -> dict[str, Any]:
    """A thread export as made elsewhere ``age_ms`` ago: its record and nodes dated then."""
    seeded = store.seed_thread(f"question for {title}", title=title)
    data: dict[str, Any] = store.query("thread.export", {"threadId": seeded.thread_id})["data"]
    then = int(time.time() * 1000) - age_ms
    data["thread"]["createdAt"] = then - 60_000
    data["thread"]["updatedAt"] = then
    for i, node in enumerate(data["nodes"]):
        node["ts"] = then - 1_000 * (len(data["nodes"]) - 1 - i)
    store.send("thread.delete", {"threadId": seeded.thread_id})
    return data


def test_an_imported_bundle_lists_as_it_was_exported(
    panel: Page, store: PageStore, tmp_path: Any
) -> None:
    """Settings -> Import of a bundle keeps each thread's time: the list order and "ago"."""
    page = panel
    tag = uuid.uuid4().hex[:6]
    ages = {"hours": 2 * HOUR_MS, "days": 3 * 24 * HOUR_MS, "weeks": 40 * 24 * HOUR_MS}
    made = {name: _dated_export(store, f"{name} {tag}", age) for name, age in ages.items()}
    path = tmp_path / "bundle.json"
    threads = [made["days"], made["weeks"], made["hours"]]  # not in time order
    path.write_text(json.dumps({"format": "panelot.all", "version": 1, "threads": threads}))
    page.click("#nav-settings")
    page.set_input_files("#import-file", str(path))
    page.wait_for_selector("#data-status.ok")
    assert page.inner_text("#data-status") == "Imported 3 conversations."
    ids = {t["title"]: t["id"] for t in query(page, "thread.list", {}) if tag in t["title"]}
    assert len(ids) == 3
    to_list(page)
    page.wait_for_function(
        "(ids) => ids.every((id) => document.querySelector(`#thread-list [data-thread-id='${id}']`))",
        arg=list(ids.values()),
    )
    rows = page.evaluate(
        """(ids) => [...document.querySelectorAll('#thread-list [data-thread-id]')]
             .filter((el) => ids.includes(el.dataset.threadId))
             .map((el) => [el.querySelector('.thread-title').textContent,
                           el.querySelector('.thread-sub > span').textContent])""",
        list(ids.values()),
    )
    weeks_date = page.evaluate(
        "(ms) => new Date(ms).toLocaleDateString()", made["weeks"]["thread"]["updatedAt"]
    )
    assert rows == [
        [f"hours {tag}", "2h"],
        [f"days {tag}", "3d"],
        [f"weeks {tag}", weeks_date],
    ]
    for name, data in made.items():
        stored = store.query("thread.get", {"threadId": ids[f"{name} {tag}"]})
        assert stored["updatedAt"] == data["thread"]["updatedAt"]
        assert stored["createdAt"] == data["thread"]["createdAt"]
