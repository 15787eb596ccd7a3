"""End-to-end: the context-overflow rescue and what a request leaves out, in the real panel.

The stub provider (panelot/testing/stub_provider.py) refuses a streaming request whose
messages are over :attr:`StubProvider.overflow_above` characters with OpenAI's HTTP 400
``context_length_exceeded``, and answers queued errors (:attr:`StubProvider.errors`).

* A refused turn is rebuilt by Python (``thread.request {rescue}``) and retried exactly
  once; the reply is stored, the attachment's bytes and record are unchanged, and the next
  turn starts from the recorded cut (it is not refused first).
* A retry refused too: nothing stored changes, the message is plain, the composer holds
  the text again, and exactly two requests were made.
* A non-overflow 400 and a 500 are not retried.
* A long thread with a small "History per request" shows where the part sent begins.

Summaries are turned off for this module's connection, so each request is cut, never
summarized, and every provider call counted is the test's own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from browser_harness import query
from e2e_support import shot, show_thread, wait_shown_last
from panelot.testing import PageStore, StubProvider, new_thread, send_message, wait_reply
from panelot.testing.stub_provider import openai_error, overflow_error

#: The size (characters of the request's messages) above which the stub refuses a request.
WINDOW = 20_000
LOG = "".join(f"{i:05d} GET /api/items?page={i} 200 OK in {i % 97} ms\n" for i in range(900))
TOO_LONG = "This conversation is too long for stub-model"


def save_provider_form(page: Page, **fields: Any) -> None:
    """Change Settings → Provider's fields (``summaries``: bool, ``history``: str) and save.

    Waits until this save landed (the status line's save count).
    """
    page.click("#nav-settings")
    saves = int(page.get_attribute("#provider-status", "data-save-count") or "0")
    if "summaries" in fields:
        page.set_checked("#provider-summaries", bool(fields["summaries"]))
    if "history" in fields:
        page.set_checked("#provider-history-all", False)
        page.fill("#provider-history", str(fields["history"]))
    page.click("#provider-save")
    page.wait_for_selector(f"#provider-status[data-save-count='{saves + 1}']")
    assert "ok" in (page.get_attribute("#provider-status", "class") or "")
    page.click("#nav-back")


@pytest.fixture(scope="module")
def overflow_panel(panel: Page) -> Page:
    """The module's panel, its connection's summaries off."""
    save_provider_form(panel, summaries=False)
    conn = query(panel, "settings.get", {"group": "providers"})["value"]["connections"][0]
    assert conn["summaries"] is False
    return panel


@pytest.fixture()
def stub(panelot_stub: StubProvider) -> Iterator[StubProvider]:
    """The stub, its errors cleared after each test."""
    yield panelot_stub
    panelot_stub.overflow_above = None
    panelot_stub.errors.clear()


def seed_log(store: PageStore, thread_id: str) -> tuple[str, str]:
    """A user message with ``server.log`` (text, ~40 KB) and its reply.

    Returns the attachment's id and the reply's node id.
    """
    attachment_id = store.seed_attachment(
        thread_id, LOG.encode(), name="server.log", mime="text/plain", kind="file"
    )
    reply = store.send(
        "message.append",
        {
            "threadId": thread_id,
            "type": "assistant_message",
            "payload": {
                "content": [{"type": "text", "text": "I have read the log."}],
                "model": "stub-model",
                "connectionId": "default",
            },
        },
    )
    return attachment_id, str(reply["nodeId"])


def thread_rows(store: PageStore, table: str, thread_id: str) -> list[dict[str, Any]]:
    """The raw records (IndexedDB itself) of ``table`` that belong to ``thread_id``."""
    return [r for r in store.raw(table) if r.get("threadId") == thread_id]


def thread_record(store: PageStore, thread_id: str) -> dict[str, Any]:
    """The thread's raw record."""
    return next(r for r in store.raw("threads") if r["id"] == thread_id)


def thread_with_log(page: Page, store: PageStore) -> tuple[str, str]:
    """A new thread whose first message carries the large log and its reply: both ids.

    Waits until the panel shows the seeded reply as its last message. The chip alone is
    not enough: the reply may land in a later live update, and a send before it would
    go under the user message (and ``send_message`` would take the seeded reply, shown
    late, for its own).
    """
    thread_id = new_thread(page)
    attachment_id, reply_id = seed_log(store, thread_id)
    page.wait_for_selector(f".file-chip[data-attachment-id='{attachment_id}']")
    wait_shown_last(page, reply_id)
    return thread_id, attachment_id


def wait_banner(page: Page) -> str:
    """Wait until the open thread's banner shows; its text."""
    page.wait_for_selector("#chat-error:not([hidden])")
    return page.inner_text("#chat-error-text")


def test_a_refused_turn_is_cut_retried_once_and_the_next_turn_starts_from_the_cut(
    overflow_panel: Page, store: PageStore, stub: StubProvider
) -> None:
    page = overflow_panel
    thread_id, attachment_id = thread_with_log(page, store)
    before = thread_rows(store, "attachments", thread_id)
    assert [r["id"] for r in before] == [attachment_id]

    stub.overflow_above = WINDOW
    calls = len(stub.chat_calls())
    refused = len(stub.refused)
    reply_id = send_message(page, "Which pages answered 200?")

    chat = stub.chat_calls()[calls:]
    assert len(chat) == 2, [len(json.dumps(c["body"]["messages"])) for c in chat]
    assert len(stub.refused) == refused + 1  # the first one, refused...
    first = chat[0]["body"]["messages"]
    assert LOG in first[0]["content"]  # the whole log went first...
    retried = chat[1]["body"]["messages"]
    assert len(json.dumps(retried)) < WINDOW
    assert LOG[:1000] in retried[0]["content"] and LOG not in retried[0]["content"]
    assert "left out" in retried[0]["content"]  # ...then its head, tail and a note
    assert chat[1]["body"]["messages"][-1]["content"] == "Which pages answered 200?"

    # The reply is stored; the attachment is exactly as it was (bytes and record).
    nodes = store.query("thread.snapshot", {"threadId": thread_id})["nodes"]
    assert nodes[-1]["id"] == reply_id and nodes[-1]["type"] == "assistant_message"
    assert thread_rows(store, "attachments", thread_id) == before
    got = store.query("attachment.get", {"attachmentId": attachment_id})
    assert got["dataBase64"] == before[0]["bytes"]["$blob"]["base64"]
    # The cut is recorded, for this model.
    cut = thread_record(store, thread_id)["requestCut"]
    assert cut["model"] == "stub-model" and attachment_id in cut["itemKeys"]

    # The next turn starts from the cut: one request, not refused first.
    calls = len(stub.chat_calls())
    send_message(page, "And which took longest?")
    assert len(stub.chat_calls()) == calls + 1
    assert len(stub.refused) == refused + 1
    assert thread_rows(store, "attachments", thread_id) == before

    # The panel notes the cut attachment.
    note = f".sent-note[data-attachment-id='{attachment_id}']"
    page.wait_for_selector(note)
    assert page.inner_text(note) == "Cut for this model"
    shot(page, "panel-overflow-rescued")


def test_a_retry_refused_too_changes_nothing_and_gives_the_text_back(
    overflow_panel: Page, store: PageStore, stub: StubProvider
) -> None:
    page = overflow_panel
    thread_id, attachment_id = thread_with_log(page, store)
    attachments = thread_rows(store, "attachments", thread_id)
    nodes = store.raw_nodes(thread_id)

    stub.overflow_above = 100  # even the cut request is over it
    calls = len(stub.chat_calls())
    refused = len(stub.refused)
    typed = "Summarize the errors in this log, please."
    page.fill("#input", typed)
    page.press("#input", "Enter")
    text = wait_banner(page)

    assert len(stub.chat_calls()) == calls + 2  # exactly two requests
    assert len(stub.refused) == refused + 2
    assert text.startswith(TOO_LONG), text
    for remedy in ("larger context window", "History per request", "remove a large attachment"):
        assert remedy in text, text
    for technical in ("HTTP", "400", "context_length_exceeded", "tokens"):
        assert technical not in text, text
    assert page.is_hidden("#chat-error details")  # plain: no technical part
    # The composer holds the text again, and the banner says so.
    assert page.input_value("#input") == typed
    assert "What you typed is back in the message box." in text
    # Nothing stored changed but the message the send stored: no reply, no cut recorded.
    assert thread_rows(store, "attachments", thread_id) == attachments
    after = store.raw_nodes(thread_id)
    assert after[: len(nodes)] == nodes
    assert [n["type"] for n in after[len(nodes) :]] == ["user_message"]
    assert "requestCut" not in thread_record(store, thread_id)
    assert page.locator("[data-streaming]").count() == 0
    shot(page, "panel-overflow-too-long")

    # Sent again (the provider now takes it), the text goes as a new version of the refused
    # message: the reply comes, and the refused message is not in the request.
    stub.overflow_above = None
    calls = len(stub.chat_calls())
    before = page.evaluate(
        "() => document.querySelector('#messages .msg:last-child')?.dataset.nodeId"
    )
    page.press("#input", "Enter")
    wait_reply(page, before)
    sent = stub.chat_calls()[calls]["body"]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[-1]["content"] == typed
    assert page.input_value("#input") == ""


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (
            400,
            openai_error(
                "The model `gpt-9` does not exist", "invalid_request_error", "model_not_found"
            ),
        ),
        (500, openai_error("This model's maximum context length broke the server", "server_error")),
    ],
    ids=["bad-model-400", "server-500"],
)
def test_other_errors_are_not_retried_as_overflows(
    overflow_panel: Page, stub: StubProvider, status: int, error: dict[str, Any]
) -> None:
    page = overflow_panel
    new_thread(page)
    stub.errors.append((status, error))
    calls = len(stub.chat_calls())
    page.fill("#input", f"hello {status}")
    page.press("#input", "Enter")
    text = wait_banner(page)
    assert text.startswith("The reply failed."), text
    assert TOO_LONG not in text
    assert len(stub.chat_calls()) == calls + 1  # one request, not retried
    assert stub.errors == []


def test_a_retry_failing_otherwise_is_an_ordinary_failure_and_records_nothing(
    overflow_panel: Page, store: PageStore, stub: StubProvider
) -> None:
    page = overflow_panel
    thread_id = new_thread(page)
    stub.errors.extend([(400, overflow_error(90_000)), (500, openai_error("boom", "server_error"))])
    calls = len(stub.chat_calls())
    page.fill("#input", "hello again")
    page.press("#input", "Enter")
    text = wait_banner(page)
    assert text.startswith("The reply failed."), text
    assert len(stub.chat_calls()) == calls + 2  # the refused one and its one retry
    assert stub.errors == []
    assert "requestCut" not in thread_record(store, thread_id)
    assert [n["type"] for n in store.raw_nodes(thread_id)] == ["user_message"]


def test_an_overflow_sent_as_an_error_event_in_the_stream_is_rescued_too(
    overflow_panel: Page, store: PageStore, stub: StubProvider
) -> None:
    """A gateway that opens the stream and then sends Anthropic's refusal as an event."""
    page = overflow_panel
    thread_id = new_thread(page)
    refusal = openai_error(
        "prompt is too long: 219898 tokens > 200000 maximum", "invalid_request_error"
    )
    stub.errors.append((200, refusal))
    calls = len(stub.chat_calls())
    reply_id = send_message(page, "hello through a gateway")
    assert len(stub.chat_calls()) == calls + 2  # the refused one and its one retry
    assert stub.errors == []
    nodes = store.query("thread.snapshot", {"threadId": thread_id})["nodes"]
    assert [n["type"] for n in nodes] == ["user_message", "assistant_message"]
    assert nodes[-1]["id"] == reply_id
    assert thread_record(store, thread_id)["requestCut"]["model"] == "stub-model"


def test_a_long_thread_shows_where_the_part_sent_begins(
    overflow_panel: Page, store: PageStore, stub: StubProvider
) -> None:
    page = overflow_panel
    seeded = store.seed_thread(*[f"question {i}: " + "words " * 60 for i in range(6)])
    try:
        save_provider_form(page, history="2000")
        show_thread(page, seeded.thread_id)
        divider = page.wait_for_selector("[data-testid=sent-divider]")
        assert divider is not None
        sent = query(
            page,
            "thread.sent",
            {"threadId": seeded.thread_id, "model": "stub-model", "contextBudget": 2000},
        )
        assert sent["droppedNodes"] > 0
        assert divider.get_attribute("data-first-node-id") == sent["firstNodeId"]
        assert divider.get_attribute("data-dropped-nodes") == str(sent["droppedNodes"])
        assert "Earlier messages are not sent to the model" in divider.inner_text()
        # It stands right before the first message sent.
        after = page.evaluate(
            "() => document.querySelector('[data-testid=sent-divider]')"
            ".nextElementSibling?.dataset.nodeId"
        )
        assert after == sent["firstNodeId"]
        divider.scroll_into_view_if_needed()
        shot(page, "panel-sent-divider")

        # The setting is one click away.
        page.click("[data-testid=sent-divider] [data-action=history-setting]")
        page.wait_for_selector("#view-settings:not([hidden])")
        assert page.evaluate("() => document.activeElement?.id") == "provider-history"
        page.click("#nav-back")
    finally:
        save_provider_form(page, history="")
    page.wait_for_selector("[data-testid=sent-divider]", state="detached")
