"""Defect 11: after "Clean up attachments now" the storage figure moves, and once only.

Chromium's storage estimate lags a deletion (in an on-disk profile, deleted Blobs stay
counted for minutes), so the panel showed the same usage after a clean-up that freed
40 MB, and a second click, deciding on that stale figure, evicted again. The test
freezes ``navigator.storage.estimate`` in the panel (the lag, made certain): the first
click frees down to 70% and the panel says what it freed and shows the usage less it;
the second click finds nothing more to free. Sizes are powers of 1024: "MiB".
"""

from __future__ import annotations

import base64
import os

from playwright.sync_api import Page

from browser_harness import query
from panelot.testing import PageStore, new_thread

MIB = 1024 * 1024

#: The browser's estimate, frozen: it never counts what a clean-up frees.
LAGGING_ESTIMATE = """([usage, quota]) => {
  navigator.storage.estimate = async () => ({ usage, quota });
}"""


def test_cleanup_shows_what_it_freed_and_a_second_click_evicts_nothing(
    panelot_panel: Page,
) -> None:
    page = panelot_panel
    store = PageStore(page, client_id="filler")
    filler = store.send("thread.create", {"title": "filler"}, "filler-thread")["threadId"]
    for i in range(10):
        data = base64.b64encode(os.urandom(MIB)).decode()
        payload = {"threadId": filler, "kind": "file", "mime": "application/octet-stream"}
        store.send("attachment.put", {**payload, "dataBase64": data}, f"fill-{i}")
    new_thread(page)  # the open conversation is another one: the filler's files may go
    page.evaluate(LAGGING_ESTIMATE, [11 * MIB, 12 * MIB])  # 91.67% full, and it stays so

    page.click("#nav-settings")
    page.wait_for_selector("#storage-warning")
    assert page.text_content("#storage-usage") == "11 MiB used of 12 MiB (91.67%)"
    page.click("#attachment-cleanup")
    page.wait_for_selector("#storage-freed:not([hidden])")
    # down to 70% of 12 MiB (8.4 MiB): 2.6 MiB at least, three 1 MiB files
    assert page.text_content("#storage-freed") == "Freed 3.0 MiB (3 attachments removed)"
    page.wait_for_function(
        "() => document.getElementById('storage-usage')?.textContent"
        " === '8.0 MiB used of 12 MiB (66.67%)'"
    )  # the browser still says 11 MiB; the panel shows what was freed
    assert page.is_hidden("#storage-warning")
    assert query(page, "attachment.usage")["count"] == 7

    page.evaluate("() => { document.getElementById('storage-freed').textContent = ''; }")
    page.click("#attachment-cleanup")  # again, on the same stale browser figure
    page.wait_for_function("() => document.getElementById('storage-freed').textContent !== ''")
    assert page.text_content("#storage-freed") == "Freed 0 B (0 attachments removed)"
    assert query(page, "attachment.usage")["count"] == 7  # nothing evicted twice
    assert page.text_content("#storage-usage") == "8.0 MiB used of 12 MiB (66.67%)"
