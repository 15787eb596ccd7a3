"""The side panel's rename dialog offers no more than the domain accepts.

Its inputs carry ``maxlength`` set to the limits of ``records.check_thread_bounds``,
so typing past them is cut by the browser: a title of 300 characters is saved, the
301st keystroke is dropped.
"""

from __future__ import annotations

from playwright.sync_api import Page

from browser_harness import query
from panelot.testing import new_thread
from panelot.tree.records import MAX_FOLDER_CHARS, MAX_TAG_CHARS, MAX_TAGS, MAX_TITLE_CHARS


def test_rename_dialog_inputs_are_bounded(panelot_panel: Page) -> None:
    page = panelot_panel
    thread_id = new_thread(page)
    page.click("#chat-menu summary")
    page.click("#chat-menu [data-action=rename]")
    page.wait_for_selector("#dialog[open]")
    limits = page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#dialog-fields input')]"
        ".map((i) => [i.name, i.maxLength]))"
    )
    assert limits == {
        "title": MAX_TITLE_CHARS,
        "folder": MAX_FOLDER_CHARS,
        "tags": MAX_TAGS * (MAX_TAG_CHARS + 2),
    }
    title = page.locator("#dialog-fields input[name=title]")
    title.fill("")
    title.press_sequentially("t" * (MAX_TITLE_CHARS + 1))  # typed: the browser cuts it
    page.click("#dialog-ok")
    page.wait_for_function(
        "(n) => window.panelotApp.chat.thread?.title?.length === n", arg=MAX_TITLE_CHARS
    )
    assert query(page, "thread.get", {"threadId": thread_id})["title"] == "t" * MAX_TITLE_CHARS
