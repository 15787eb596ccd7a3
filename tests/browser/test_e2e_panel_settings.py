"""End-to-end tests of the panel's dialog, provider status, Test connection and errors.

The real extension in Chromium, driven by clicks and keys, against the stub provider
(panelot/testing/stub_provider.py) and its misbehaving modes. What a test asserts as stored is
read back with ``panelot.query``, never from the DOM.

* Enter in any field of the rename dialog saves (OK); Escape and Cancel save nothing.
* Settings says a provider is saved, not that it works; Test connection makes a real
  request with the stored key and reports success, an unreachable provider, an HTTP
  error with the provider's message, and a provider that never answers (whose request
  the stub then sees closed).
* A saved connection whose key is gone (a restore, another window) says the key is
  missing, not stored; typing it and saving stores it again under the same reference.
* Sending, regenerating or saving an edit while that key is gone says which
  connection's key to enter again, with a button to Settings; nothing is stored or
  requested and the typed text stays.
* A failure is shown as a plain sentence with the technical detail behind "Details".
"""

from __future__ import annotations

import socket

from playwright.sync_api import Page

from browser_harness import query
from e2e_support import shot, wait_query
from panelot.testing import (
    API_KEY,
    PageStore,
    StubProvider,
    configure_provider,
    new_thread,
    open_thread,
    wait_reply,
    wait_thread_shown,
)


def to_list(page: Page) -> None:
    """Back to the refreshed thread list."""
    while page.evaluate("() => window.panelotApp.view") != "threads":
        page.click("#nav-back")
    page.evaluate("() => window.panelotApp.refreshThreads()")


def to_provider_settings(page: Page) -> None:
    """Settings, freshly drawn (the form shows the saved provider)."""
    to_list(page)
    page.click("#nav-settings")
    page.wait_for_selector("#provider-status[data-test-count]")


def rename_dialog(page: Page, thread_id: str) -> None:
    """Open the rename dialog from the thread list's Rename button."""
    to_list(page)
    item = page.locator(f"[data-thread-id='{thread_id}']")
    item.hover()
    item.locator("[data-action=rename]").click()
    page.wait_for_selector("#dialog[open]")


def wait_stored(page: Page, thread_id: str, key: str, value: object) -> None:
    """Wait until ``thread.get`` returns ``value`` under ``key``."""
    wait_query(page, "thread.get", {"threadId": thread_id}, lambda t: t.get(key) == value)


def updates(page: Page) -> int:
    """How many ``thread.update`` commands the panel has run (its receipts)."""
    rows = query(page, "receipts.list", {"clientId": "sidepanel", "limit": 500})
    return sum(1 for r in rows if r["commandType"] == "thread.update")


def test_enter_in_a_dialog_field_saves_and_escape_or_cancel_do_not(panel: Page) -> None:
    page = panel
    thread_id = new_thread(page)
    rename_dialog(page, thread_id)
    page.fill("#dialog-fields input[name=title]", "Renamed with Enter")
    page.press("#dialog-fields input[name=title]", "Enter")
    wait_stored(page, thread_id, "title", "Renamed with Enter")
    assert page.is_hidden("#dialog")

    # Enter in another field (the last one) chooses OK as well.
    rename_dialog(page, thread_id)
    page.fill("#dialog-fields input[name=tags]", "alpha, beta")
    page.press("#dialog-fields input[name=tags]", "Enter")
    wait_stored(page, thread_id, "tags", ["alpha", "beta"])

    before = updates(page)
    rename_dialog(page, thread_id)
    page.fill("#dialog-fields input[name=title]", "Dropped by Escape")
    page.press("#dialog-fields input[name=title]", "Escape")
    page.wait_for_selector("#dialog:not([open])", state="attached")
    rename_dialog(page, thread_id)
    page.fill("#dialog-fields input[name=title]", "Dropped by Cancel")
    page.click("#dialog-cancel")
    page.wait_for_selector("#dialog:not([open])", state="attached")
    rename_dialog(page, thread_id)
    page.fill("#dialog-fields input[name=title]", "Kept")
    page.press("#dialog-fields input[name=folder]", "Enter")
    wait_stored(page, thread_id, "title", "Kept")
    # Escape and Cancel ran no command: the one update since is the last rename.
    assert updates(page) == before + 1


def test_settings_says_the_provider_is_saved_not_that_it_works(
    panel: Page, panelot_stub: StubProvider
) -> None:
    to_provider_settings(panel)
    shown = panel.inner_text("#provider-status")
    assert shown == (
        f"Saved: stub-model at {panelot_stub.base_url} (API key stored). Not tested yet: Test connection"
        " checks that it answers."
    )
    assert panel.get_attribute("#provider-status", "class") == "status saved"


def test_settings_says_a_missing_key_is_missing_and_saving_a_key_stores_it_again(
    panel: Page, panelot_stub: StubProvider
) -> None:
    # A restored backup holds no keys, and another window may remove one: the connection
    # still names its credential, which is gone. "API key stored" would be untrue.
    store = PageStore(panel, client_id="e2e-settings")
    providers = store.query("settings.get", {"group": "providers"})["value"]
    ref = next(c for c in providers["connections"] if c["id"] == "default")["credentialRef"]
    assert store.query("credential.status", {"ref": ref})["exists"] is True
    store.send("credential.delete", {"ref": ref})
    to_provider_settings(panel)
    panel.wait_for_function(
        "() => document.querySelector('#provider-status').textContent.includes('API key missing')"
    )
    assert panel.inner_text("#provider-status") == (
        f"Saved: stub-model at {panelot_stub.base_url} (API key missing: enter it again and save)."
        " Not tested yet: Test connection checks that it answers."
    )
    assert panel.get_attribute("#provider-status", "class") == "status warn"
    assert panel.get_attribute("#provider-key", "placeholder") == "sk-…"
    shot(panel, "panel-provider-key-missing")
    # Typing the key and saving stores it under the same reference; a test then uses it.
    to_list(panel)
    configure_provider(panel, panelot_stub.base_url)
    assert store.query("credential.status", {"ref": ref})["exists"] is True
    to_provider_settings(panel)
    before = len(panelot_stub.requests)
    press_test(panel)
    assert (
        status_text(panel) == f"Connection works: stub-model at {panelot_stub.base_url} answered."
    )
    assert panelot_stub.requests[before]["headers"]["Authorization"] == f"Bearer {API_KEY}"


def test_sending_without_the_stored_key_names_the_connection_and_keeps_the_text(
    panel: Page, panelot_stub: StubProvider
) -> None:
    # As after restoring a backup into a fresh profile: the connection names a key that
    # is not stored. Sending must not store the message nor ask the provider.
    store = PageStore(panel, client_id="e2e-settings")
    forget_key(store)
    thread_id = new_thread(panel)
    requests = len(panelot_stub.requests)
    panel.fill("#input", "Hello after the restore")
    panel.press("#input", "Enter")
    panel.wait_for_selector("#chat-error:not([hidden])")
    assert panel.inner_text("#chat-error-text") == (
        f"The API key for OpenAI-compatible ({panelot_stub.base_url}) is missing:"
        " enter it again in Settings."
    )
    assert panel.inner_text("#chat-retry") == "Open Settings"
    assert panel.is_visible("#chat-retry")
    assert panel.input_value("#input") == "Hello after the restore"
    assert store.raw_nodes(thread_id) == []
    shot(panel, "panel-send-key-missing")
    # The button opens Settings, which says the same of the key.
    panel.click("#chat-retry")
    panel.wait_for_function(
        "() => document.querySelector('#provider-status')?.textContent.includes('API key missing')"
    )
    # Back in the conversation, once the key is entered again (Settings, saved, back),
    # the kept text is sent: the provider's first request since the key went missing.
    panel.click("#nav-back")
    wait_thread_shown(panel, thread_id)
    configure_provider(panel, panelot_stub.base_url)
    wait_thread_shown(panel, thread_id)
    assert panel.input_value("#input") == "Hello after the restore"
    panel.press("#input", "Enter")
    wait_reply(panel, None)
    assert len(panelot_stub.requests) == requests + 1
    sent = panelot_stub.requests[requests]
    assert sent["headers"]["Authorization"] == f"Bearer {API_KEY}"
    assert sent["body"]["messages"][-1]["content"] == "Hello after the restore"


def test_regenerating_or_editing_without_the_stored_key_asks_nothing(
    panel: Page, panelot_stub: StubProvider
) -> None:
    store = PageStore(panel, client_id="e2e-settings")
    thread = store.seed_thread("Seeded question", title="seeded for the missing key")
    forget_key(store)
    to_list(panel)
    open_thread(panel, thread.thread_id)
    nodes = len(store.raw_nodes(thread.thread_id))
    requests = len(panelot_stub.requests)
    missing = (
        f"The API key for OpenAI-compatible ({panelot_stub.base_url}) is missing:"
        " enter it again in Settings."
    )
    panel.locator(".msg.assistant").first.locator("[data-action=regenerate]").click()
    panel.wait_for_selector("#chat-error:not([hidden])")
    assert panel.inner_text("#chat-error-text") == missing
    panel.click("#chat-error-close")
    panel.wait_for_selector("#chat-error", state="hidden")
    # Saving an edit: the edit box stays open with its text.
    panel.locator(".msg.user").first.locator("[data-action=edit]").click()
    panel.fill(".edit-box textarea", "Edited without a key")
    panel.click("[data-action=save-edit]")
    panel.wait_for_selector("#chat-error:not([hidden])")
    assert panel.inner_text("#chat-error-text") == missing
    assert panel.input_value(".edit-box textarea") == "Edited without a key"
    assert len(store.raw_nodes(thread.thread_id)) == nodes
    assert len(panelot_stub.requests) == requests
    panel.click("[data-action=cancel-edit]")
    configure_provider(panel, panelot_stub.base_url)  # the key again, for the next tests


def forget_key(store: PageStore) -> None:
    """Delete the default connection's stored key, as a restore into a fresh profile does.

    A test that failed before saving the key again may have left it deleted already.
    """
    providers = store.query("settings.get", {"group": "providers"})["value"]
    ref = next(c for c in providers["connections"] if c["id"] == "default")["credentialRef"]
    if store.query("credential.status", {"ref": ref})["exists"]:
        store.send("credential.delete", {"ref": ref})
    assert store.query("credential.status", {"ref": ref})["exists"] is False


def press_test(page: Page) -> None:
    """Press Test connection and wait until this test has finished (its count is on the line)."""
    tests = int(page.get_attribute("#provider-status", "data-test-count") or "0")
    page.click("#provider-test")
    page.wait_for_selector(f"#provider-status[data-test-count='{tests + 1}']")
    assert page.is_enabled("#provider-test")


def status_text(page: Page) -> str:
    """The status line's sentence: the plain text of an error, else the whole line."""
    error = page.locator("#provider-status .error-text")
    return error.inner_text() if error.count() else page.inner_text("#provider-status")


def test_connection_test_against_the_stub_uses_the_stored_key(
    panel: Page, panelot_stub: StubProvider
) -> None:
    to_provider_settings(panel)
    before = len(panelot_stub.requests)
    press_test(panel)
    assert (
        status_text(panel) == f"Connection works: stub-model at {panelot_stub.base_url} answered."
    )
    assert panel.get_attribute("#provider-status", "class") == "status ok"
    request = panelot_stub.requests[before]
    # The key field was empty: the stored credential was decrypted, as for a send.
    assert request["headers"]["Authorization"] == f"Bearer {API_KEY}"
    assert request["body"]["model"] == "stub-model" and request["body"]["stream"] is True
    assert len(panelot_stub.requests) == before + 1
    shot(panel, "panel-connection-ok")


def test_connection_test_reports_an_unreachable_provider(
    panel: Page, panelot_stub: StubProvider
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    to_provider_settings(panel)
    panel.fill("#provider-base-url", f"http://127.0.0.1:{port}/v1")
    press_test(panel)
    assert status_text(panel) == (
        f"Connection failed: Cannot reach the provider at http://127.0.0.1:{port}. Check the base"
        " URL in Settings and the network connection."
    )
    # A test saves nothing: the stored provider is still the stub.
    providers = query(panel, "settings.get", {"group": "providers"})["value"]
    assert providers["connections"][0]["baseUrl"] == panelot_stub.base_url


def test_an_http_error_shows_the_status_the_providers_words_and_details_on_a_click(
    panel: Page, panelot_stub: StubProvider
) -> None:
    to_provider_settings(panel)
    panel.fill("#provider-base-url", panelot_stub.url("status-401"))
    panel.fill("#provider-key", "sk-wrong-key")
    before = len(panelot_stub.requests)
    press_test(panel)
    assert status_text(panel) == (
        "Connection failed: The provider refused the request (HTTP 401): check the API key in"
        " Settings. It said: “Incorrect API key provided.”"
    )
    assert panelot_stub.requests[before]["headers"]["Authorization"] == "Bearer sk-wrong-key"
    detail = panel.locator("#provider-status details.error-detail")
    assert detail.get_attribute("open") is None and panel.is_hidden("#provider-status pre")
    panel.click("#provider-status details.error-detail summary")
    panel.wait_for_selector("#provider-status pre", state="visible")
    technical = panel.inner_text("#provider-status pre")
    assert technical.startswith("ProviderError (http 401): POST ")
    assert f"{panelot_stub.url('status-401')}/chat/completions → HTTP 401" in technical
    shot(panel, "panel-connection-http-error")


def test_a_provider_that_never_answers_times_out_and_is_aborted(
    panel: Page, panelot_stub: StubProvider
) -> None:
    to_provider_settings(panel)
    panel.evaluate(
        "async () => { (await import('/panel_provider.mjs')).TIMEOUTS.connectionTestMs = 1500; }"
    )
    try:
        panel.fill("#provider-base-url", panelot_stub.url("never"))
        before = len(panelot_stub.requests)
        press_test(panel)
    finally:
        panel.evaluate(
            "async () => { (await import('/panel_provider.mjs')).TIMEOUTS.connectionTestMs = 15000; }"
        )
    assert status_text(panel) == (
        "Connection failed: The provider did not answer within 1.5 s. Check the provider in"
        " Settings, or try again later."
    )
    assert len(panelot_stub.requests) == before + 1
    assert panelot_stub.wait_closed(before + 1), "the timed-out test request was not aborted"


def test_a_store_failure_toast_is_a_sentence_with_the_detail_behind_a_click(panel: Page) -> None:
    page = panel
    thread_id = new_thread(page)
    to_list(page)
    page.wait_for_selector(f"[data-thread-id='{thread_id}']")
    # The list is live: the row goes within a second of the delete. A press on its Pin
    # button in that second acts on the gone thread; the button is held to press it then.
    page.evaluate(
        """async (id) => {
          const pin = document.querySelector(`[data-thread-id='${id}'] [data-action=pin]`);
          const gone = await window.panelot.send({type: "thread.delete", clientId: "e2e",
            submissionId: crypto.randomUUID(), payload: {threadId: id}});
          if (gone.status !== "completed") throw new Error(JSON.stringify(gone));
          pin.click();
        }""",
        thread_id,
    )
    page.wait_for_selector("#toast:not([hidden]) .error-text")
    assert page.inner_text("#toast .error-text") == (
        "Update failed: This conversation no longer exists."
    )
    assert page.is_hidden("#toast pre")
    page.click("#toast details summary")
    page.wait_for_selector("#toast pre", state="visible")
    technical = page.inner_text("#toast pre")
    assert technical.startswith("NotFoundError [payload.threadId]: ") and thread_id in technical
    shot(page, "panel-error-toast")
