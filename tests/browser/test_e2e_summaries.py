"""End-to-end: attachment summaries made by the panel in the background, in Chromium.

The stub provider answers a request without streaming (the panel's summary call) with
``Summary <n> of <chars> characters.`` and counts them (:meth:`StubProvider.summary_calls`).

* A text file over the threshold gets one summary, once: across two panels and a reload,
  the provider is asked once; an image beside it gets none. The "Summary" chip opens the
  summary's text and the file's own chip still gives the original.
* A failed summary is not tried again by a reopen, only by "Summarize again".
* Turned off for the connection (Settings → Provider), no summary is made.

Each test waits for the state proving its action landed: the chip (from ``summary.list``,
live), or the panel's count of summary passes that asked for candidates.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from browser_harness import query
from e2e_support import shot, show_thread, tiny_png, wait_query
from panelot.testing import (
    ExtensionContext,
    PageStore,
    StubProvider,
    attach,
    last_id,
    new_thread,
    send_message,
    wait_reply,
)

# No spaces: the stub's reply echoes the message word by word, the file's text included.
NOTES = "".join(f"Note-{i}:the-meeting-moved-the-release-to-week-{i % 52}.\n" for i in range(300))
CHIP = ".summary-chip[data-action=open-summary]"


def asked(page: Page) -> int:
    """How many summary passes of this panel have asked for candidates."""
    return int(page.evaluate("() => window.panelotApp.chat.summaries.asked"))


def passes(page: Page) -> int:
    """How many summary passes of this panel have finished."""
    return int(page.evaluate("() => window.panelotApp.chat.summaries.passes"))


def wait_asked(page: Page, more_than: int) -> None:
    """Wait until a pass that asked for candidates after ``more_than`` has finished."""
    page.wait_for_function(
        "(n) => { const s = window.panelotApp.chat.summaries;"
        " return s.asked > n && s.running.size === 0; }",
        arg=more_than,
    )


def send_with_files(page: Page, text: str, files: list[tuple[str, bytes, str]]) -> str:
    """Attach ``files`` (name, bytes, MIME) in the composer and send ``text``; the reply's id."""
    for name, data, mime in files:
        attach(page, name, data, mime)
        page.wait_for_selector(f"#pending li[data-name='{name}']")
    before = last_id(page)
    page.fill("#input", text)
    page.press("#input", "Enter")
    return wait_reply(page, before)


def file_id(page: Page, name: str) -> str:
    """The attachment id of the file chip named ``name``."""
    chip = page.wait_for_selector(f".file-chip:has-text('{name}')")
    assert chip is not None
    return str(chip.get_attribute("data-attachment-id"))


@pytest.fixture()
def stub(panelot_stub: StubProvider) -> Iterator[StubProvider]:
    """The stub, summary failures off after each test."""
    yield panelot_stub
    panelot_stub.summary_fails = False


def test_a_large_text_file_is_summarized_once_across_panels_and_a_reload(
    panel: Page, store: PageStore, stub: StubProvider, panelot_module_context: ExtensionContext
) -> None:
    page = panel
    thread_id = new_thread(page)
    calls = len(stub.summary_calls())
    png = tiny_png()
    send_with_files(
        page,
        "What was decided?",
        [("notes.txt", NOTES.encode(), "text/plain"), ("chart.png", png, "image/png")],
    )
    notes_id = file_id(page, "notes.txt")
    page.wait_for_selector(f"{CHIP}[data-attachment-id='{notes_id}']")
    assert len(stub.summary_calls()) == calls + 1
    # The prompt carries the file's text (Python built it); the reply is the summary.
    assert "Note-0:the-meeting" in str(stub.summary_calls()[-1]["body"]["messages"])
    summaries = query(page, "summary.list", {"threadId": thread_id})["summaries"]
    assert [(s["attachmentId"], s["model"], s["state"]) for s in summaries] == [
        (notes_id, "stub-model", "done")
    ]  # none for the image
    assert page.locator(".msg.user .attachments img").count() == 1

    # The chip opens the summary's text; the file itself is unchanged.
    page.click(f"{CHIP}[data-attachment-id='{notes_id}']")
    page.wait_for_selector(".summary-text")
    assert page.inner_text(".summary-text").startswith("Summary ")
    original = query(page, "attachment.get", {"attachmentId": notes_id})
    assert base64.b64decode(original["dataBase64"]) == NOTES.encode()
    shot(page, "panel-summary-chip")

    # A second panel opens the thread: it asks for candidates and finds none.
    second = panelot_module_context.open_panel()
    try:
        seen = asked(second)
        show_thread(second, thread_id)
        wait_asked(second, seen)
        second.wait_for_selector(f"{CHIP}[data-attachment-id='{notes_id}']")
    finally:
        second.close()
    # The first panel reloads and opens it again: the same.
    page.reload()
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    show_thread(page, thread_id)
    wait_asked(page, 0)
    page.wait_for_selector(f"{CHIP}[data-attachment-id='{notes_id}']")
    assert len(stub.summary_calls()) == calls + 1  # once in all

    # Once the file is cold (three more questions, and a newer file), requests send its
    # summary, and the image beside it stays an image (a placeholder once seen).
    for i in range(2):
        send_message(page, f"question {i}")
    send_with_files(page, "question 2", [("ps.txt", b"one more small note", "text/plain")])
    sent = stub.chat_calls()[-1]["body"]["messages"][0]["content"]
    text = " ".join(p.get("text", "") for p in sent) if isinstance(sent, list) else sent
    assert "[Summary of notes.txt" in text and NOTES[:500] not in text, text[:300]
    assert "[Figure 1: chart.png]" in text
    summaries_sent = page.locator(f".sent-note[data-attachment-id='{notes_id}']")
    expect(summaries_sent).to_have_text("Sent as a summary")
    assert len(stub.summary_calls()) == calls + 1


def test_a_failed_summary_is_tried_again_only_when_asked(
    panel: Page, store: PageStore, stub: StubProvider
) -> None:
    page = panel
    thread_id = new_thread(page)
    stub.summary_fails = True
    calls = len(stub.summary_calls())
    send_with_files(page, "Read this", [("minutes.txt", NOTES.encode(), "text/plain")])
    minutes_id = file_id(page, "minutes.txt")
    again = f".summary-chip[data-action=summarize-again][data-attachment-id='{minutes_id}']"
    page.wait_for_selector(again)
    assert len(stub.summary_calls()) == calls + 1

    # Opened again, the thread does not retry it by itself.
    seen = asked(page)
    page.click("#nav-back")
    show_thread(page, thread_id)
    wait_asked(page, seen)
    assert len(stub.summary_calls()) == calls + 1

    # "Summarize again" does.
    stub.summary_fails = False
    page.click(again)
    page.wait_for_selector(f"{CHIP}[data-attachment-id='{minutes_id}']")
    assert len(stub.summary_calls()) == calls + 2


def test_summaries_turned_off_for_the_connection_are_not_made(
    panel: Page, store: PageStore, stub: StubProvider
) -> None:
    page = panel

    def set_summaries(on: bool) -> None:
        page.click("#nav-settings")
        saves = int(page.get_attribute("#provider-status", "data-save-count") or "0")
        page.set_checked("#provider-summaries", on)
        assert page.is_disabled("#provider-summary-threshold") is not on
        page.click("#provider-save")
        page.wait_for_selector(f"#provider-status[data-save-count='{saves + 1}']")
        page.click("#nav-back")

    set_summaries(False)
    try:
        conn = query(page, "settings.get", {"group": "providers"})["value"]["connections"][0]
        assert conn["summaries"] is False
        thread_id = new_thread(page)
        calls = len(stub.summary_calls())
        done = passes(page)
        send_with_files(page, "Read this too", [("agenda.txt", NOTES.encode(), "text/plain")])
        page.wait_for_function(
            "(n) => { const s = window.panelotApp.chat.summaries;"
            " return s.passes > n && s.running.size === 0; }",
            arg=done,
        )
        assert len(stub.summary_calls()) == calls
        assert query(page, "summary.list", {"threadId": thread_id})["summaries"] == []
        assert page.locator(".summary-chip").count() == 0
    finally:
        set_summaries(True)
    # Back on, the thread's file gets its summary.
    wait_query(
        page,
        "summary.list",
        {"threadId": thread_id},
        lambda r: [s["state"] for s in r["summaries"]] == ["done"],
    )
    assert len(stub.summary_calls()) == calls + 1


def test_the_threshold_is_a_setting_of_the_connection(panel: Page) -> None:
    page = panel
    page.click("#nav-settings")
    try:
        saves = int(page.get_attribute("#provider-status", "data-save-count") or "0")
        page.fill("#provider-summary-threshold", "500")
        page.click("#provider-save")
        page.wait_for_selector(f"#provider-status[data-save-count='{saves + 1}'].error")
        assert "at least 1000" in page.inner_text("#provider-status")
        page.fill("#provider-summary-threshold", "20000")
        page.click("#provider-save")
        page.wait_for_selector(f"#provider-status[data-save-count='{saves + 2}'].ok")
        conn = query(page, "settings.get", {"group": "providers"})["value"]["connections"][0]
        assert conn["summaryThreshold"] == 20000
        assert page.evaluate("() => window.panelotApp.chat.provider.summaryThreshold") == 20000
    finally:
        saves = int(page.get_attribute("#provider-status", "data-save-count") or "0")
        page.fill("#provider-summary-threshold", "")
        page.click("#provider-save")
        page.wait_for_selector(f"#provider-status[data-save-count='{saves + 1}'].ok")
        page.click("#nav-back")
