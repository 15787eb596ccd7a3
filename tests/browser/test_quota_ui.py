"""A full storage quota in the side panel: shown, nothing half-written, clean-up, Retry.

The extension holds ``unlimitedStorage``, and with it Chromium ignores a CDP
``Storage.overrideQuotaForOrigin`` (measured: 40 MiB of attachments written under a
6 MiB override), and in an on-disk profile deleted Blobs do not lower the usage at
once. So this test serves the built extension's own files (sidepanel.html and its
``panel_*.mjs``) over HTTP to an off-the-record context whose quota CDP shrinks;
settings then use the in-memory backend. Everything else is the real panel, driven by
clicks.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from browser_harness import DIST_EXTENSION, READY_TIMEOUT_MS, query, require_dist, serve_directory
from panelot.testing import (
    PageStore,
    StubProvider,
    attach,
    configure_provider,
    new_thread,
    wait_reply,
)
from quota_support import MIB, own_browser  # noqa: F401 - the shared fixture

QUOTA = 16 * MIB


@pytest.fixture(scope="module")
def panel_files() -> Iterator[str]:
    """dist/extension over HTTP on 127.0.0.1; yields its base URL."""
    with serve_directory(require_dist(DIST_EXTENSION)) as base:
        yield base


@pytest.fixture()
def small_panel(own_browser: Browser, panel_files: str) -> Iterator[Page]:  # noqa: F811
    """The side panel in a fresh off-the-record context whose quota is 16 MiB."""
    context = own_browser.new_context(viewport={"width": 400, "height": 720})
    page = context.new_page()
    page.goto(f"{panel_files}manifest.json")  # the origin, before any storage use
    cdp = context.new_cdp_session(page)
    origin = panel_files.rstrip("/")
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": QUOTA})
    page.goto(f"{panel_files}sidepanel.html")
    page.wait_for_function(
        "() => document.body.dataset.ready === '1' || window.__panelotState === 'error'",
        timeout=READY_TIMEOUT_MS,
    )
    assert page.evaluate("() => window.__panelotState") == "ready"
    yield page
    context.close()


def fill_storage(page: Page) -> int:
    """Put 1 MiB attachments in another thread until the quota refuses one; return how many."""
    store = PageStore(page, client_id="filler")
    tid = store.send("thread.create", {"title": "filler"}, "filler-thread")["threadId"]
    for i in range(QUOTA // MIB + 2):
        data = base64.b64encode(os.urandom(MIB)).decode()
        payload = {"threadId": tid, "kind": "file", "mime": "application/octet-stream"}
        out = store.envelope("attachment.put", {**payload, "dataBase64": data}, f"fill-{i}")
        if out["status"] == "failed":
            assert out["error"]["name"] == "QuotaExceededError", out
            return i
    raise AssertionError("the quota never refused a write")


def test_quota_error_reaches_the_panel_and_retry_after_clean_up_succeeds(
    small_panel: Page, panelot_stub: StubProvider
) -> None:
    page = small_panel
    configure_provider(page, panelot_stub.base_url)
    thread_id = new_thread(page)
    stored = fill_storage(page)
    assert stored >= 3
    receipts_before = len(query(page, "receipts.list", {"limit": 200}))

    photo = os.urandom(MIB + MIB // 2)
    attach(page, "photo.bin", photo, "application/octet-stream")
    page.fill("#input", "keep this message")
    page.press("#input", "Enter")
    page.wait_for_selector("#chat-error:not([hidden])")
    shown = page.text_content("#chat-error-text") or ""
    assert shown.startswith("Could not save your message.") and "Storage is full" in shown
    assert page.is_visible("#chat-retry")
    # nothing half-written: no message, no attachment in this thread, no receipt
    assert PageStore(page).raw_nodes(thread_id) == []
    assert query(page, "attachment.list", {"threadId": thread_id})["attachments"] == []
    assert query(page, "attachment.usage")["count"] == stored
    assert len(query(page, "receipts.list", {"limit": 200})) == receipts_before
    # and nothing the user typed or attached is lost
    assert page.input_value("#input") == "keep this message"
    assert page.locator("#pending li").count() == 1

    page.click("#nav-settings")  # the storage warning and the clean-up button
    page.wait_for_selector("#storage-warning")
    page.click("#attachment-cleanup")
    page.wait_for_function(
        "() => /^Removed [1-9]/.test(document.getElementById('toast').textContent)"
    )
    assert query(page, "attachment.usage")["count"] < stored
    page.click("#nav-back")  # back to the conversation, its error still showing
    assert page.is_visible("#chat-error")

    page.click("#chat-retry")
    wait_reply(page, None)
    assert page.is_hidden("#chat-error")
    nodes = PageStore(page).raw_nodes(thread_id)
    assert [n["type"] for n in nodes] == ["user_message", "assistant_message"]
    blocks = nodes[0]["payload"]["content"]
    assert blocks[0] == {"type": "text", "text": "keep this message"}
    (attachment,) = query(page, "attachment.list", {"threadId": thread_id})["attachments"]
    assert blocks[1]["type"] == "file" and blocks[1]["attachmentId"] == attachment["id"]
    got = query(page, "attachment.get", {"attachmentId": attachment["id"]})
    assert base64.b64decode(got["dataBase64"]) == photo  # every byte, once
    assert page.locator("#pending li").count() == 0
