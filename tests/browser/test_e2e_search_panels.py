"""End-to-end: what a second side panel writes is found in the first, live.

Two side panels of one extension profile, each with its own runtime, store and indexer.
Panel A has a search open in its list ("No results"); panel B appends a turn holding
the word, or sends a text file holding it, through its own ``panelot.send``. A's open
search (a live query) shows the hit without typing again (a file's hit at the message
that carries it), and A's ``search.messages`` finds it; when B deletes the message, A's
result goes away. Each wait is for the state that proves its own step landed.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from panelot.testing import ExtensionContext, PageStore, to_list

RESULTS = "#search-results li.search-result"

#: How long A may take to show what B committed (the index batches within ~50 ms of a
#: commit; this leaves room for a loaded machine).
LIVE_MS = 30_000


@pytest.fixture(scope="module")
def b(panelot_module_context: ExtensionContext, panel: Page) -> Iterator[Page]:
    """Panel B: another side panel of the profile, opened once A (``panel``) is ready."""
    page = panelot_module_context.open_panel()
    yield page
    page.close()


def hit(node_id: str) -> str:
    """The selector of a result on ``node_id``."""
    return f"{RESULTS}[data-node-id='{node_id}']"


def test_a_message_appended_in_another_panel_shows_in_an_open_search(panel: Page, b: Page) -> None:
    a = panel
    mine, theirs = PageStore(a, client_id="a"), PageStore(b, client_id="b")
    assert mine.query("search.messages", {"text": "fenugreek"})["hits"] == []
    to_list(a)
    a.fill("#thread-search", "fenugreek")
    a.wait_for_selector("#search-none:not([hidden])")

    thread = theirs.seed_thread("Plain curry", title="Spices")
    reply = theirs.seed_turn(thread, "And fenugreek?", reply="Fenugreek leaves, dried.")
    a.wait_for_selector(hit(reply), state="visible", timeout=LIVE_MS)  # no typing: live
    assert a.is_hidden("#search-none")
    assert "Spices" in a.inner_text(hit(reply))
    found = mine.query("search.messages", {"text": "fenugreek"})
    assert reply in [h["nodeId"] for h in found["hits"]], found

    theirs.send("message.delete", {"threadId": thread.thread_id, "nodeId": reply})
    a.wait_for_selector(hit(reply), state="detached", timeout=LIVE_MS)
    found = mine.query("search.messages", {"text": "fenugreek"})
    assert reply not in [h["nodeId"] for h in found["hits"]], found


def test_a_text_file_sent_from_another_panel_is_found_at_its_message(panel: Page, b: Page) -> None:
    a = panel
    theirs = PageStore(b, client_id="b")
    to_list(a)
    a.fill("#thread-search", "asafoetida")
    a.wait_for_selector("#search-none:not([hidden])")

    thread = theirs.seed_thread(title="Pantry")
    notes = base64.b64encode(b"Shelf two: asafoetida, cumin, cloves\n").decode()
    sent = theirs.send(
        "message.send",
        {
            "threadId": thread.thread_id,
            "content": [{"type": "text", "text": "my list"}, {"type": "file", "upload": 0}],
            "uploads": [{"mime": "text/plain", "name": "pantry.txt", "dataBase64": notes}],
        },
    )
    a.wait_for_selector(hit(sent["nodeId"]), state="visible", timeout=LIVE_MS)
    assert "asafoetida" in a.inner_text(f"{hit(sent['nodeId'])} mark").lower()
