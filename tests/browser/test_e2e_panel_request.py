"""End-to-end tests of three side-panel features, in the real extension in Chromium.

* Provider requests are built from ``thread.request`` (the slimmed context): an image
  the model has already answered goes as a ``[Figure N: ...]`` text placeholder, and
  the provider's history budget (Settings) keeps only the newest turns.
* An attached file the model cannot read (not text, or not UTF-8) is noted on its chip
  when attached ("The model will only see this file's name"), by the runtime's rule
  (``file.readable``); a file over the size limit is refused with what the limit is for.
* Settings -> Retention has a control for the ``retention`` setting group.
* Tool-result details stored as an attachment show "Details (N KiB) — Load"; Load reads
  them with ``node.details`` and shows the JSON as text.

The stub provider (panelot/testing/stub_provider.py) records every request it gets, so the tests
read exactly what the panel sent.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from playwright.sync_api import Page

from browser_harness import READY_TIMEOUT_MS, query
from e2e_support import shot, tiny_png
from panelot.request.history import DEFAULT_CONTEXT_BUDGET
from panelot.testing import (
    PageStore,
    StubProvider,
    attach,
    last_id,
    new_thread,
    open_thread,
    send_message,
    wait_reply,
)


def to_retention_settings(page: Page) -> None:
    """Open Settings and wait until the retention control has read the setting."""
    page.click("#nav-settings")
    page.wait_for_selector("#retention-auto-box[data-state=loaded]")


def stored_retention(page: Page) -> Any:
    """The raw ``settings.retention`` entry of ``chrome.storage.local`` (None if absent)."""
    return page.evaluate(
        "async () => (await chrome.storage.local.get('settings.retention'))['settings.retention']"
        " ?? null"
    )


def reload(page: Page) -> None:
    """Reload the panel page and wait for the app."""
    page.reload()
    page.wait_for_function(
        "() => document.body.dataset.ready === '1' || window.__panelotState === 'error'",
        timeout=READY_TIMEOUT_MS,
    )
    assert page.evaluate("() => window.__panelotState") == "ready"


# ---- 1. the provider request is the slimmed one -------------------------------------------


def test_a_seen_image_goes_as_a_figure_placeholder_in_the_next_request(
    panel: Page, store: PageStore, panelot_stub: StubProvider
) -> None:
    page = panel
    thread_id = new_thread(page)
    png = tiny_png()
    attach(page, "square.png", png, "image/png")
    page.wait_for_selector("#pending li[data-name='square.png'] img")
    page.fill("#input", "What colour is this square?")
    first = len(panelot_stub.requests)
    previous = last_id(page)
    page.press("#input", "Enter")
    wait_reply(page, previous)
    send_message(page, "And what shape was it?")
    assert len(panelot_stub.requests) == first + 2

    # The first request carries the image's pixels.
    one = panelot_stub.requests[first]["body"]["messages"]
    assert [m["role"] for m in one] == ["user"]
    assert one[0]["content"][0] == {"type": "text", "text": "What colour is this square?"}
    url = one[0]["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == png

    # The second: the model has answered that image, so it goes as text, not pixels.
    two = panelot_stub.requests[first + 1]["body"]["messages"]
    assert [m["role"] for m in two] == ["user", "assistant", "user"]
    assert two[0]["content"] == "What colour is this square?\n[Figure 1: square.png]"
    assert two[2]["content"] == "And what shape was it?"
    dumped = json.dumps(panelot_stub.requests[first + 1]["body"])
    assert "image_url" not in dumped and "base64" not in dumped

    # Only the request was slimmed: the stored message still holds the image block.
    user = store.query("thread.snapshot", {"threadId": thread_id})["nodes"][0]["payload"]["content"]
    assert user[1]["type"] == "image" and user[1]["name"] == "square.png"
    # And the panel still shows the picture.
    page.wait_for_function(
        "() => document.querySelector('.msg.user .attachments img')?.naturalWidth === 16"
    )


NAME_ONLY = "The model will only see this file's name"


def chip(page: Page, name: str) -> str:
    """Wait until the composer knows what the model gets of ``name``; return that."""
    page.wait_for_selector(f"#pending li[data-name='{name}']:not([data-sees='checking'])")
    return str(page.get_attribute(f"#pending li[data-name='{name}']", "data-sees"))


def test_a_file_the_model_cannot_read_is_noted_when_attached(
    panel: Page, panelot_stub: StubProvider
) -> None:
    page = panel
    new_thread(page)
    attach(page, "setup.exe", b"MZ\x90\x00\x03\x00\x00\x00", "application/x-msdownload")
    attach(page, "notes.txt", "plain words ✓".encode(), "text/plain")
    attach(page, "latin.txt", "caf\xe9".encode("latin-1"), "text/plain")  # not UTF-8
    assert [chip(page, n) for n in ("setup.exe", "notes.txt", "latin.txt")] == [
        "name",
        "text",
        "name",
    ]
    notes = page.eval_on_selector_all(
        "#pending li",
        "(lis) => lis.map((li) => [li.dataset.name, li.querySelector('.note')?.textContent ?? null])",
    )
    assert notes == [["setup.exe", NAME_ONLY], ["notes.txt", None], ["latin.txt", NAME_ONLY]]
    shot(page, "panel-file-name-only")

    # What the chips said is what the request carries.
    first = len(panelot_stub.requests)
    page.fill("#input", "What are these?")
    page.press("#input", "Enter")
    wait_reply(page, None)
    sent = json.dumps(panelot_stub.requests[first]["body"]["messages"][-1], ensure_ascii=False)
    assert "[file: setup.exe]" in sent and "[file: latin.txt]" in sent
    assert "[file: notes.txt]\\nplain words ✓" in sent

    # A file over the limit is refused, saying what the limit is for.
    page.evaluate(
        """() => {
          const input = document.getElementById('file-input');
          const moved = new DataTransfer();
          moved.items.add(new File([new Uint8Array(20 * 1024 * 1024 + 1)], 'disk.iso'));
          input.files = moved.files;
          input.dispatchEvent(new Event('change'));
        }"""
    )
    page.wait_for_selector("#toast:not([hidden]) >> text=disk.iso was not attached")
    assert page.inner_text("#toast") == (
        "disk.iso was not attached: a file sent with a message can be at most 20 MiB."
    )
    assert page.eval_on_selector_all("#pending li", "(lis) => lis.length") == 0


def stored_budget(page: Page) -> Any:
    """The default connection's stored ``contextBudget``."""
    return page.evaluate(
        """async () => {
          const raw = (await chrome.storage.local.get("settings.providers"))["settings.providers"];
          const conn = raw.value.connections.find((c) => c.id === raw.value.defaultConnectionId);
          return conn.contextBudget;
        }"""
    )


def save_history(page: Page, typed: str, whole: bool) -> None:
    """Set the provider's history budget in Settings and save; wait until this save landed."""
    page.click("#nav-settings")
    saves = int(page.get_attribute("#provider-status", "data-save-count") or "0")
    page.set_checked("#provider-history-all", whole)
    if not whole:
        page.fill("#provider-history", typed)
    page.click("#provider-save")
    page.wait_for_selector(f"#provider-status[data-save-count='{saves + 1}']")
    page.click("#nav-back")


def test_the_history_budget_sends_only_the_newest_turns(
    panel: Page, panelot_stub: StubProvider
) -> None:
    page = panel
    assert stored_budget(page) == DEFAULT_CONTEXT_BUDGET  # the fixture saved the default
    thread_id = new_thread(page)
    for i in range(4):
        send_message(page, f"question {i}: " + "words " * 50)
    first = len(panelot_stub.requests)
    send_message(page, "the whole conversation")
    whole = panelot_stub.requests[first]["body"]["messages"]
    assert [m["role"] for m in whole] == ["user", "assistant"] * 4 + ["user"]

    try:
        page.click("#nav-settings")
        for bad in ("-3", "1.5"):
            # The line counts finished saves: the second refusal shows the same words
            # and class as the first, so only the count tells that this press landed.
            saves = int(page.get_attribute("#provider-status", "data-save-count") or "0")
            page.fill("#provider-history", bad)
            page.click("#provider-save")
            page.wait_for_selector(f"#provider-status.error[data-save-count='{saves + 1}']")
            assert "whole number of characters" in page.inner_text("#provider-status")
        assert stored_budget(page) == DEFAULT_CONTEXT_BUDGET  # nothing was stored
        page.click("#nav-back")
        save_history(page, "2000", whole=False)
        assert stored_budget(page) == 2000
        page.click("#nav-settings")
        assert page.input_value("#provider-history") == "2000"
        text = page.inner_text("#settings-provider")
        assert f"{DEFAULT_CONTEXT_BUDGET:,}" in text, text
        page.click("#nav-back")
        open_thread(page, thread_id)
        send_message(page, "only the newest turns")
        cut = panelot_stub.requests[first + 1]["body"]["messages"]
        assert 1 < len(cut) < len(whole), [m["role"] for m in cut]
        assert cut[0]["role"] == "user" and cut[-1]["content"] == "only the newest turns"
        assert sum(len(m["content"]) + 16 for m in cut) <= 2000

        save_history(page, "", whole=True)
        assert stored_budget(page) is None
        open_thread(page, thread_id)
        send_message(page, "everything again")
        again = panelot_stub.requests[first + 2]["body"]["messages"]
        assert len(again) == len(whole) + 4 and again[0] == whole[0]
        # What the budget kept is the conversation's tail, unchanged.
        before_cut = again[: len(whole) + 1]  # up to the reply to "the whole conversation"
        assert cut[:-1] == before_cut[-(len(cut) - 1) :]
    finally:
        save_history(page, "", whole=False)
    assert stored_budget(page) == DEFAULT_CONTEXT_BUDGET


# ---- 2. the retention setting -------------------------------------------------------------


def test_the_retention_setting_is_saved_shown_again_and_switched_off(
    panel: Page, store: PageStore
) -> None:
    page = panel
    store.send("settings.reset", {"group": "retention"})
    try:
        to_retention_settings(page)
        assert not page.is_checked("#retention-auto")
        assert page.is_disabled("#retention-auto-days")
        assert page.inner_text("#retention-auto-status").startswith("Off")

        # Invalid numbers are refused in the form, and nothing is stored.
        page.check("#retention-auto")
        assert page.is_enabled("#retention-auto-days")
        for bad in ("0", "36501", "2.5", ""):
            page.fill("#retention-auto-days", bad)
            page.click("#retention-auto-save")
            page.wait_for_selector("#retention-auto-status.error")
            assert "whole number of days from 1 to 36500" in page.inner_text(
                "#retention-auto-status"
            )
            assert (stored_retention(page) or {}).get("value", {}).get("days") is None
            page.evaluate(
                "() => { document.querySelector('#retention-auto-status').className = ''; }"
            )

        page.fill("#retention-auto-days", "30")
        page.click("#retention-auto-save")
        page.wait_for_selector("#retention-auto-status.ok")
        assert stored_retention(page) == {"version": 1, "value": {"days": 30}}
        assert query(page, "settings.get", {"group": "retention"})["value"] == {"days": 30}
        shot(page, "panel-retention-setting")

        reload(page)
        to_retention_settings(page)
        assert page.is_checked("#retention-auto")
        assert page.input_value("#retention-auto-days") == "30"
        assert "30 days" in page.inner_text("#retention-auto-status")

        page.uncheck("#retention-auto")
        assert page.is_disabled("#retention-auto-days")
        page.click("#retention-auto-save")
        page.wait_for_selector("#retention-auto-status.ok")
        off = stored_retention(page)  # the settings layer leaves a null field out
        assert off["version"] == 1 and off["value"].get("days") is None
        assert query(page, "settings.get", {"group": "retention"})["value"].get("days") is None

        reload(page)
        to_retention_settings(page)
        assert not page.is_checked("#retention-auto")
        assert page.inner_text("#retention-auto-status").startswith("Off")
    finally:
        store.send("settings.reset", {"group": "retention"})
        page.click("#nav-back")


# ---- 3. tool-result details stored as an attachment ---------------------------------------

MARKER = "<img src=x onerror=\"window.__xss='details'\"> needle-7f3a"


def test_tool_result_details_load_on_demand_as_text(panel: Page, store: PageStore) -> None:
    page = panel
    thread_id = new_thread(page)
    details = {"marker": MARKER, "rows": [{"i": i, "text": "x" * 60} for i in range(600)]}
    size = len(json.dumps(details, separators=(",", ":")).encode())
    assert size > 32 * 1024
    user = store.send(
        "message.append",
        {
            "threadId": thread_id,
            "type": "user_message",
            "payload": {"content": [{"type": "text", "text": "Read the page"}]},
        },
    )
    store.send(
        "message.append",
        {
            "threadId": thread_id,
            "type": "tool_call",
            "parentId": user["nodeId"],
            "payload": {
                "itemId": "call-1",
                "toolName": "read_page",
                "params": {},
                "level": "builtin",
            },
        },
    )
    result = store.send(
        "message.append",
        {
            "threadId": thread_id,
            "type": "tool_result",
            "payload": {
                "itemId": "call-1",
                "ok": True,
                "contentForLlm": [{"type": "text", "text": "read 600 rows"}],
                "details": details,
            },
        },
    )
    node_id = result["nodeId"]
    ref = store.query("thread.snapshot", {"threadId": thread_id})["nodes"][-1]["payload"]["details"]
    assert ref["storedAs"] == "attachment" and ref["size"] == size

    # Open the thread from the list.
    page.click("#nav-back")
    page.click(f"[data-thread-id='{thread_id}'] .thread-open")
    tool = page.locator(f".msg.tool.result[data-node-id='{node_id}']")
    tool.locator("summary").click()
    head = tool.locator(".tool-details")
    kib = int(size / 1024 + 0.5)  # as the panel rounds it
    assert head.inner_text().replace("\n", " ").strip() == f"Details ({kib} KiB) — Load"
    assert "needle-7f3a" not in tool.inner_text()  # nothing loaded yet
    tool.locator("[data-action=load-details]").click()
    page.wait_for_selector(f".msg[data-node-id='{node_id}'] .tool-details[data-state=loaded]")
    shot(page, "panel-tool-details")

    body = tool.locator(".tool-details-body")
    assert json.loads(body.text_content() or "") == details
    assert json.dumps(MARKER) in body.inner_text()  # shown as text...
    inert = page.evaluate(
        """() => ({
          imgs: document.querySelectorAll('#messages .tool-details img').length,
          children: document.querySelector('#messages .tool-details-body').children.length,
          xss: window.__xss ?? null,
        })"""
    )
    assert inert == {"imgs": 0, "children": 0, "xss": None}  # ...never as markup

    # Once the attachment is evicted, the reference says so and there is nothing to load.
    store.send("attachment.evict", {"budget": 0})
    got = query(page, "node.details", {"nodeId": node_id})
    assert got["details"] is None and got["evicted"] is True
    page.click("#nav-back")
    page.click(f"[data-thread-id='{thread_id}'] .thread-open")
    tool.locator("summary").click()
    page.wait_for_selector(f".msg[data-node-id='{node_id}'] .tool-details[data-state=evicted]")
    assert "evicted" in tool.locator(".tool-details").inner_text()
    assert tool.locator("[data-action=load-details]").count() == 0
