"""End-to-end tests of side-panel features no other test drives, in the real extension.

* Boot failure: a 404 wheel manifest, then a corrupt wheel (Playwright routes, which do
  intercept ``chrome-extension://`` requests), each show the error and Retry; the third
  attempt loads normally and Retry brings up the app.
* Drag-and-drop and paste attach images; the stored attachments hold the exact bytes.
* Copy puts a message's exact source text on the (real) clipboard.
* The legacy (browsa) import button, twice; what it says of images it could not bring
  over, and how such an image shows; the attachment clean-up button, over budget and
  after an interrupted eviction.
* "Summarize and remove old messages…" asks first, saying how many conversations and
  messages it removes; it summarizes an old thread, sparing the open and pinned ones; the
  summarized thread shows its summary (and says its messages were removed), exports it,
  and keeps it when un-archived.
* Tool calls and results render as text, never as markup.

The module runs in its own browser profile (a fresh database and
``chrome.storage.local``), so counts shown by the panel can be asserted exactly.
"""

from __future__ import annotations

import base64
import importlib
import json
import re
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, Route

from behavior.legacy.browsa_fixture import DATED_KEYS, KEYS, dated_storage, png, storage
from browser_harness import (
    READY_TIMEOUT_MS,
    query,
    run_py,
)
from e2e_support import shot, tiny_png
from panelot.testing import (
    ExtensionContext,
    PageStore,
    StubProvider,
    error_class,
    new_thread,
    open_thread,
    send_message,
    to_list,
    wait_reply,
)

TIMEOUT = 60_000
#: The stub's reply to a message containing "markdown" (panelot/testing/stub_provider.py).
MARKDOWN_REPLY: str = importlib.import_module(StubProvider.__module__).MARKDOWN_REPLY
XSS = "<img src=x onerror=window.__pwned=1>"


@pytest.fixture(scope="module")
def panel(panel: Page) -> Page:
    """The module's configured panel (tests/browser/conftest.py), recording toasts."""
    panel.evaluate(RECORD_TOASTS)
    return panel


# ---- helpers ---------------------------------------------------------------------------

#: Keeps every toast text in window.__toasts (a toast hides itself after 2.6 s), and every
#: Content-Security-Policy violation (e.g. a blocked inline handler) in window.__violations.
RECORD_TOASTS = """() => {
  window.__violations = [];
  document.addEventListener("securitypolicyviolation", (e) =>
    window.__violations.push(`${e.violatedDirective}: ${e.sample}`));
  window.__toasts = [];
  const el = document.getElementById("toast");
  new MutationObserver(() => window.__toasts.push(el.textContent))
    .observe(el, {childList: true, characterData: true, subtree: true});
}"""


def wait_toast(page: Page, text: str) -> None:
    """Wait until a toast has said exactly ``text``."""
    page.wait_for_function("(text) => window.__toasts.includes(text)", arg=text)


def wipe(page: Page) -> None:
    """Delete every thread (and so every attachment), close the chat, show the list."""
    for thread in query(page, "thread.list", {"archived": None}):
        PageStore(page).send("thread.delete", {"threadId": thread["id"]})
    page.evaluate("() => window.panelotApp.chat.close()")
    to_list(page)
    page.evaluate("() => window.panelotApp.refreshThreads()")
    assert query(page, "attachment.usage")["count"] == 0


def open_settings(page: Page) -> None:
    """Open Settings and wait until the storage section has been filled."""
    page.click("#nav-settings")
    page.wait_for_selector("#attachment-usage")


def sidepanel_receipts(page: Page, kind: str) -> list[dict[str, Any]]:
    """The panel's own receipts of one command type, oldest first."""
    rows = query(page, "receipts.list", {"clientId": "sidepanel", "limit": 200})
    return [r for r in reversed(rows) if r["commandType"] == kind]


def get_attachment(page: Page, attachment_id: str) -> tuple[dict[str, Any], bytes]:
    """``attachment.get``: the metadata and the decoded bytes."""
    got = query(page, "attachment.get", {"attachmentId": attachment_id})
    return got, base64.b64decode(got["dataBase64"])


def human(n: int) -> str:
    """The panel's ``bytes()`` for sizes under 1 KiB."""
    assert n < 1024
    return f"{n} B"


def set_budget(page: Page, budget: int | None) -> None:
    """Set the page's store's attachment budget, on its host (``None``: back to the default)."""
    value = "DEFAULT_BUDGET" if budget is None else str(budget)
    run_py(
        page,
        "import json\nfrom panelot.attachments.eviction import DEFAULT_BUDGET\n"
        "from panelot.runtime import store\n"
        f"store().host.storage.set_budget({value})\njson.dumps(1)",
    )


def backdate(page: Page, thread_id: str, days: int) -> None:
    """Move a thread's ``updatedAt`` ``days`` back (a raw write; no command can do it)."""
    run_py(
        page,
        f"""
import json, time
from panelot.runtime import store
stamp = int(time.time() * 1000) - {days} * 86_400_000
await store().db.table("threads").update({json.dumps(thread_id)}, {{"updatedAt": stamp}})
json.dumps(stamp)
""",
    )


# ---- boot failure and Retry ------------------------------------------------------------

FAILED = "() => !document.getElementById('failure').hidden"


def test_boot_failure_shows_the_error_and_retry_boots_the_app(
    panelot_module_context: ExtensionContext,
) -> None:
    context, extension_id = panelot_module_context.context, panelot_module_context.extension_id
    page = context.new_page()
    page.set_viewport_size({"width": 400, "height": 720})
    hits: list[str] = []

    def missing(route: Route) -> None:
        hits.append(route.request.url)
        route.fulfill(status=404, body="gone")

    def corrupt(route: Route) -> None:
        hits.append(route.request.url)
        route.fulfill(status=200, body=b"PK\x03\x04 this is not a wheel", content_type="x/y")

    def no_snapshot(route: Route) -> None:
        route.fulfill(status=404, body="gone")

    # The first two attempts load normally (no memory snapshot), and installing fails.
    # First attempt: the wheel manifest is missing.
    page.route("**/snapshot/manifest.json", no_snapshot, times=1)
    page.route("**/wheels/manifest.json", missing, times=1)
    page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
    page.wait_for_function(FAILED, timeout=READY_TIMEOUT_MS)
    assert hits == [f"chrome-extension://{extension_id}/wheels/manifest.json"]
    assert page.inner_text("#error") == "wheels/manifest.json: HTTP 404"
    assert page.is_visible("#retry") and page.is_visible("#boot") and page.is_hidden("#app")
    assert page.evaluate("() => window.__bootStages") == ["runtime", "package", "error"]
    assert page.locator("#stages li.failed").count() == 1
    assert page.get_attribute("#stages li.failed", "data-stage") == "package"
    assert page.locator("#stages li.done").count() == 1  # the runtime loaded
    shot(page, "panel-boot-failed")

    # Retry reloads the page; this time our wheel is corrupt.
    page.route("**/snapshot/manifest.json", no_snapshot, times=1)
    page.route("**/wheels/panelot-*.whl", corrupt, times=1)
    with page.expect_navigation():
        page.click("#retry")
    page.wait_for_function(FAILED, timeout=READY_TIMEOUT_MS)
    assert len(hits) == 2 and re.search(r"/wheels/panelot-[^/]+\.whl$", hits[1])
    error = page.inner_text("#error")
    assert error.startswith("installing wheels failed: ") and "is not a zip file" in error
    assert page.get_attribute("#stages li.failed", "data-stage") == "package"
    assert page.is_hidden("#app") and page.is_visible("#retry")
    assert page.evaluate("() => document.body.dataset.ready") is None

    # Retry again: nothing is intercepted any more, and the app comes up (restored from
    # the snapshot).
    with page.expect_navigation():
        page.click("#retry")
    page.wait_for_function("() => document.body.dataset.ready === '1'", timeout=READY_TIMEOUT_MS)
    assert len(hits) == 2
    assert page.evaluate("() => window.__bootStages") == ["runtime", "package", "database", "ready"]
    assert page.evaluate("() => window.panelot.snapshot") == "restored"
    assert page.is_hidden("#boot") and page.is_hidden("#failure")
    assert page.is_visible("#app") and page.is_visible("#thread-list")
    assert page.is_visible("#nav-new")
    # The store works: a thread made now is listed.
    thread_id = PageStore(page).send("thread.create", {"title": "after retry"})["threadId"]
    assert thread_id in [t["id"] for t in query(page, "thread.list", {})]
    PageStore(page).send("thread.delete", {"threadId": thread_id})
    page.close()


# ---- drag-and-drop and paste -----------------------------------------------------------

DROP = """({bytes, name}) => {
  const file = new File([new Uint8Array(bytes)], name, {type: "image/png"});
  const data = new DataTransfer();
  data.items.add(file);
  const input = document.getElementById("input");
  const composer = document.getElementById("composer");
  const over = new DragEvent("dragover", {bubbles: true, cancelable: true, dataTransfer: data});
  input.dispatchEvent(over);
  const dragging = composer.classList.contains("dragging");
  const drop = new DragEvent("drop", {bubbles: true, cancelable: true, dataTransfer: data});
  input.dispatchEvent(drop);
  return {overPrevented: over.defaultPrevented, dragging, dropPrevented: drop.defaultPrevented,
          stillDragging: composer.classList.contains("dragging")};
}"""

PASTE = """({bytes, text}) => {
  const data = new DataTransfer();
  if (bytes) data.items.add(new File([new Uint8Array(bytes)], "", {type: "image/png"}));
  if (text) data.setData("text/plain", text);
  const paste = new ClipboardEvent("paste", {bubbles: true, cancelable: true, clipboardData: data});
  document.getElementById("input").dispatchEvent(paste);
  return paste.defaultPrevented;
}"""


def test_drop_and_paste_attach_images_stored_byte_for_byte(
    panel: Page, store: PageStore, panelot_stub: StubProvider
) -> None:
    page = panel
    thread_id = new_thread(page)
    dropped = png(20, 12, 5)
    pasted = tiny_png(8)
    assert dropped != pasted

    # A paste of plain text is left to the textarea: no attachment.
    assert page.evaluate(PASTE, {"bytes": None, "text": "just text"}) is False
    assert page.locator("#pending li").count() == 0

    out = page.evaluate(DROP, {"bytes": list(dropped), "name": "dropped.png"})
    assert out == {
        "overPrevented": True,
        "dragging": True,
        "dropPrevented": True,
        "stillDragging": False,
    }
    page.wait_for_selector("#pending li[data-name='dropped.png'] img")

    assert page.evaluate(PASTE, {"bytes": list(pasted), "text": None}) is True
    page.wait_for_selector("#pending li[data-name='pasted-image.png'] img")
    assert [li.get_attribute("data-name") for li in page.locator("#pending li").all()] == [
        "dropped.png",
        "pasted-image.png",
    ]
    assert page.input_value("#input") == ""  # the pasted file did not become text
    page.wait_for_function(
        "() => [...document.querySelectorAll('#pending img')].map(i => i.naturalWidth).join()"
        " === '20,8'"
    )
    shot(page, "panel-drop-paste")

    before = len(panelot_stub.requests)
    previous = page.evaluate(
        "() => document.querySelector('#messages .msg:last-child')?.dataset.nodeId ?? null"
    )
    page.fill("#input", "Two squares")
    page.press("#input", "Enter")
    wait_reply(page, previous)
    assert page.locator("#pending li").count() == 0

    user = store.query("thread.snapshot", {"threadId": thread_id})["nodes"][0]
    assert user["type"] == "user_message"
    content = user["payload"]["content"]
    assert content[0] == {"type": "text", "text": "Two squares"}
    assert [(b["type"], b["name"], b["mime"]) for b in content[1:]] == [
        ("image", "dropped.png", "image/png"),
        ("image", "pasted-image.png", "image/png"),
    ]
    for block, expected in zip(content[1:], (dropped, pasted), strict=True):
        meta, data = get_attachment(page, block["attachmentId"])
        assert data == expected
        assert (meta["kind"], meta["mime"], meta["size"]) == ("image", "image/png", len(expected))
        assert meta["threadId"] == thread_id
        assert user["id"] in meta["refs"]["nodeIds"]
    # Both images went to the provider with exactly those bytes.
    sent = panelot_stub.requests[before]["body"]["messages"][-1]["content"]
    urls = [part["image_url"]["url"] for part in sent if part.get("type") == "image_url"]
    assert urls == [
        f"data:image/png;base64,{base64.b64encode(b).decode()}" for b in (dropped, pasted)
    ]
    page.wait_for_function(
        "() => [...document.querySelectorAll('.msg.user .attachments img')]"
        ".map(i => i.naturalWidth).join() === '20,8'"
    )


# ---- copy ------------------------------------------------------------------------------


def test_copy_puts_the_exact_message_text_on_the_clipboard(
    panel: Page, store: PageStore, panelot_module_context: ExtensionContext
) -> None:
    context = panelot_module_context.context
    # Chromium refuses a grant for the extension's (opaque) origin; a context-wide one
    # applies to it. This context is the module's own.
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = panel
    thread_id = new_thread(page)
    question = "Please answer in markdown:\n  keep *these* two lines"
    send_message(page, question)
    stored = [
        n["payload"]["content"][0]["text"]
        for n in store.query("thread.snapshot", {"threadId": thread_id})["nodes"]
    ]
    assert stored == [question, MARKDOWN_REPLY]
    # The reply is shown rendered (no Markdown syntax left) ...
    shown = page.inner_text(".msg.assistant .msg-body")
    assert "## Plan" not in shown and "**bold**" not in shown

    page.evaluate("() => navigator.clipboard.writeText('before')")
    assistant = page.locator(".msg.assistant").first
    assistant.hover()
    assistant.locator("[data-action=copy]").click()
    wait_toast(page, "Copied")
    # ... but Copy gives its source text, exactly.
    assert page.evaluate("() => navigator.clipboard.readText()") == MARKDOWN_REPLY

    user = page.locator(".msg.user").first
    user.hover()
    user.locator("[data-action=copy]").click()
    # wait_for_function would take the predicate's promise itself as truthy: poll in the page.
    page.evaluate(
        """async (want) => {
            for (const end = Date.now() + 10000; Date.now() < end; ) {
                if ((await navigator.clipboard.readText()) === want) return;
                await new Promise((ok) => setTimeout(ok, 20));
            }
            throw new Error(`the clipboard never held ${JSON.stringify(want)}`);
        }""",
        question,
    )
    assert page.evaluate("() => navigator.clipboard.readText()") == question


# ---- legacy import and clean-up --------------------------------------------------------


def test_legacy_import_button_imports_once(panel: Page, store: PageStore) -> None:
    page = panel
    wipe(page)
    page.evaluate("(keys) => chrome.storage.local.remove(keys)", KEYS)
    page.evaluate("(items) => chrome.storage.local.set(items)", storage())
    try:
        open_settings(page)
        page.click("#legacy-import")
        page.wait_for_selector("#data-status.ok")
        [first] = sidepanel_receipts(page, "legacy.import")
        r = first["response"]
        assert (r["threads"], r["sessions"], r["migrated"], r["images"]) == (3, 2, 1, 3)
        assert page.inner_text("#data-status") == (
            f"Legacy import: 3 conversations, {r['messages']} messages, 3 images."
        )
        ids = [r["threadIds"]["history"], *r["threadIds"]["sessions"].values()]
        assert r["messages"] == sum(len(store.raw_nodes(tid)) for tid in ids)

        # The thread list shows them, pinned first, with their titles and pin marks.
        to_list(page)
        page.wait_for_function("() => document.querySelectorAll('#thread-list li').length === 3")
        items = page.locator("#thread-list li").all()
        listed = [
            (
                li.get_attribute("data-thread-id"),
                li.locator(".thread-title").inner_text(),
                li.locator(".pin-mark").count(),
            )
            for li in items
        ]
        legacy_id = r["threadIds"]["sessions"]["s-legacy"]
        assert listed[0] == (legacy_id, "Old pinned chat", 1)
        assert sorted(listed[1:]) == sorted(
            [
                (r["threadIds"]["sessions"]["s-split"], "Split chat", 0),
                (r["threadIds"]["history"], "Summarize this paper", 0),
            ]
        )
        shot(page, "panel-legacy-import")
        page.click(f"[data-thread-id='{legacy_id}'] .thread-open")
        page.wait_for_selector(".msg.user >> text=two images")
        page.wait_for_function(
            "() => document.querySelectorAll('.msg.user .attachments img').length === 2"
        )
        assert page.is_visible("#chat-pin")

        # Again: every thread exists already, so nothing new is imported.
        open_settings(page)
        page.click("#legacy-import")
        page.wait_for_selector("#data-status.ok")
        assert page.inner_text("#data-status") == (
            "Legacy import: 0 conversations, 0 messages, 0 images"
            " (3 conversations already here, skipped)."
        )
        first_again, second = sidepanel_receipts(page, "legacy.import")
        assert first_again == first
        assert (second["response"]["threads"], second["response"]["skippedThreads"]) == (0, 3)
        assert sorted(t["id"] for t in query(page, "thread.list", {"archived": None})) == sorted(
            ids
        )
        assert query(page, "attachment.usage")["count"] == 3
    finally:
        page.evaluate("(keys) => chrome.storage.local.remove(keys)", KEYS)
        wipe(page)


MISSING = "image (not available: it was not in the imported data)"
"""How the chat shows an image an import brought without its bytes."""


def test_legacy_import_says_which_images_it_could_not_bring_over(
    panel: Page, store: PageStore
) -> None:
    """Images the old data did not hold are counted in the status line and shown as such.

    Not as "removed to save space", which is what eviction says of what it removed.
    """
    page = panel
    wipe(page)
    page.evaluate("(keys) => chrome.storage.local.remove(keys)", DATED_KEYS)
    page.evaluate("(items) => chrome.storage.local.set(items)", dated_storage())
    try:
        before = len(sidepanel_receipts(page, "legacy.import"))
        open_settings(page)
        page.click("#legacy-import")
        page.wait_for_selector("#data-status.ok")  # a fresh Settings: this import's status
        receipts = sidepanel_receipts(page, "legacy.import")
        assert len(receipts) == before + 1
        r = receipts[-1]["response"]
        assert (r["images"], r["imagesWithoutBytes"], r["externalImages"]) == (5, 5, 1)
        assert page.inner_text("#data-status") == (
            f"Legacy import: {r['threads']} conversations, {r['messages']} messages, 5 images."
            " 5 images could not be imported: the old data did not hold them."
            " 1 web image is kept as a link."
        )
        open_thread(page, r["threadIds"]["sessions"]["s-images"])
        page.wait_for_function(
            "() => document.querySelectorAll('.msg.user .attachments img').length === 5"
            " && document.querySelectorAll('.msg.user .evicted').length === 5"
        )
        shown = page.eval_on_selector_all(
            ".msg.user .evicted", "(es) => es.map(e => e.textContent)"
        )
        assert shown == [MISSING] * 5
        shot(page, "panel-legacy-images-missing")
    finally:
        page.evaluate("(keys) => chrome.storage.local.remove(keys)", DATED_KEYS)
        wipe(page)


def test_cleanup_button_evicts_down_to_the_budget_and_finishes_leftovers(
    panel: Page, store: PageStore
) -> None:
    page = panel
    wipe(page)
    open_id = store.send("thread.create", {"title": "Open chat"})["threadId"]
    old_id = store.send("thread.create", {"title": "Old pictures"})["threadId"]
    mid_id = store.send("thread.create", {"title": "Newer pictures"})["threadId"]
    images = {name: png(6 + i, 5, i) for i, name in enumerate("dabc")}
    # Oldest first: d (in the open thread), a and b (old thread), c (newer thread).
    ids = {
        "d": store.seed_attachment(open_id, images["d"], "d.png", text="look at d.png"),
        "a": store.seed_attachment(old_id, images["a"], "a.png", text="look at a.png"),
        "b": store.seed_attachment(old_id, images["b"], "b.png", text="look at b.png"),
        "c": store.seed_attachment(mid_id, images["c"], "c.png", text="look at c.png"),
    }
    created = {a["id"]: a["createdAt"] for a in query(page, "attachment.list", {})["attachments"]}
    order = [created[ids[k]] for k in "dabc"]
    assert order == sorted(order) and len(set(order)) == 4, "precondition: distinct ages"
    size = {k: len(v) for k, v in images.items()}
    budget = size["d"] + size["c"]
    set_budget(page, budget)
    try:
        open_thread(page, open_id)
        open_settings(page)
        assert page.inner_text("#attachment-usage") == (
            f"Attachments: 4 files, {human(sum(size.values()))} of a {human(budget)} budget"
        )
        page.click("#attachment-cleanup")
        # The open thread's attachment is the oldest but spared; a and b go, c fits.
        wait_toast(page, f"Removed 2 attachments, freed {human(size['a'] + size['b'])}")
        page.wait_for_selector(
            f"#attachment-usage >> text=Attachments: 2 files, {human(budget)} of a"
        )
        left = {a["id"] for a in query(page, "attachment.list", {})["attachments"]}
        assert left == {ids["d"], ids["c"]}
        for key in "ab":
            with pytest.raises(error_class("NotFoundError")):
                store.query("attachment.get", {"attachmentId": ids[key]})
        blocks = [
            n["payload"]["content"][1]
            for n in store.query("thread.snapshot", {"threadId": old_id})["nodes"]
        ]
        assert [(b["attachmentId"], b.get("evicted")) for b in blocks] == [
            (ids["a"], True),
            (ids["b"], True),
        ]
        assert get_attachment(page, ids["d"])[1] == images["d"]
        assert get_attachment(page, ids["c"])[1] == images["c"]
        [receipt] = sidepanel_receipts(page, "attachment.evict")
        assert receipt["response"]["evicted"] == 2
        # The old thread shows placeholders where its images were.
        open_thread(page, old_id)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.msg.user .evicted')].map(e => e.textContent)"
            ".join('|') === 'a.png (removed to save space)|b.png (removed to save space)'"
        )

        # An eviction interrupted between its two steps leaves c marked `deleting`;
        # the button finishes it (with the budget now met, it only cleans up).
        run_py(
            page,
            'import json\nfrom panelot.faults import FAULTS\nFAULTS.arm("attachment.evict.between")'
            "\njson.dumps(1)",
        )
        failed = PageStore(page, client_id="e2e-more").envelope(
            "attachment.evict", {"budget": 0, "activeThreadId": open_id}
        )
        assert failed["status"] == "failed" and failed["error"]["name"] == "InjectedFault"
        marked = run_py(
            page,
            "import json\nfrom panelot.runtime import store\n"
            'rows = await store().db.table("attachments").to_list()\n'
            'json.dumps(sorted(r["id"] for r in rows if r.get("deleting")))',
        )
        assert marked == [ids["c"]]
        open_settings(page)
        page.click("#attachment-cleanup")
        wait_toast(page, f"Removed 1 attachment, freed {human(size['c'])}")
        page.wait_for_selector("#attachment-usage >> text=Attachments: 1 file,")
        assert {a["id"] for a in query(page, "attachment.list", {})["attachments"]} == {ids["d"]}
        assert (
            run_py(
                page,
                "import json\nfrom panelot.runtime import store\n"
                'json.dumps(len(await store().db.table("attachments").to_list()))',
            )
            == 1
        )
        assert (
            store.query("thread.snapshot", {"threadId": mid_id})["nodes"][0]["payload"]["content"][
                1
            ]["evicted"]
            is True
        )
    finally:
        set_budget(page, None)
        wipe(page)


# ---- archive old conversations -----------------------------------------------------------


def test_summarize_old_messages_asks_first_and_the_thread_shows_its_summary(
    panel: Page, store: PageStore, tmp_path: Any
) -> None:
    page = panel
    wipe(page)
    threads = {}
    for name in ("old", "pinned", "active", "recent"):
        threads[name] = store.send("thread.create", {"title": f"{name} thread"})["threadId"]
        store.seed_turn(threads[name], f"the {name} question")
    store.send("thread.update", {"threadId": threads["pinned"], "patch": {"pinned": True}})
    for name in ("old", "pinned", "active"):
        backdate(page, threads[name], 40)
    backdate(page, threads["recent"], 10)
    open_thread(page, threads["active"])
    open_settings(page)
    state = page.locator("#settings-retention > p.status")
    run = page.locator("#retention-run")
    assert run.inner_text() == "Summarize and remove old messages…"

    for bad in ("0", "1.5"):
        page.fill("#retention-days", bad)
        run.click()
        page.wait_for_selector("#settings-retention > p.status.error")
        assert state.inner_text() == "Enter a whole number of days."
        page.evaluate(
            "() => document.querySelector('#settings-retention > p.status').className = ''"
        )
    assert sidepanel_receipts(page, "thread.archive_old") == []

    # It asks first, with what it will delete; Cancel deletes nothing.
    page.fill("#retention-days", "30")
    run.click()
    page.wait_for_selector("#dialog[open][data-kind=retention-confirm]")
    asked = page.inner_text("#dialog-text")
    assert asked.startswith("1 conversation untouched for more than 30 days: 2 messages will")
    assert "cannot be undone" in asked
    assert page.inner_text("#dialog-ok") == "Remove 2 messages"
    page.click("#dialog-cancel")
    page.wait_for_function(
        "() => document.querySelector('#settings-retention > p.status')"
        "?.textContent === 'Nothing was removed.'"
    )
    assert sidepanel_receipts(page, "thread.archive_old") == []
    assert len(store.raw_nodes(threads["old"])) == 2

    run.click()
    page.wait_for_selector("#dialog[open][data-kind=retention-confirm]")
    page.click("#dialog-ok")
    page.wait_for_selector("#settings-retention > p.status.ok")
    assert state.inner_text() == "Summarized 1 conversation and removed its messages."
    [receipt] = sidepanel_receipts(page, "thread.archive_old")
    [archived] = receipt["response"]["archived"]
    assert archived["threadId"] == threads["old"]

    meta = {name: query(page, "thread.get", {"threadId": tid}) for name, tid in threads.items()}
    assert {name: m["archived"] for name, m in meta.items()} == {
        "old": True,
        "pinned": False,
        "active": False,
        "recent": False,
    }
    assert store.raw_nodes(threads["old"]) == []
    for name in ("pinned", "active", "recent"):
        assert len(store.raw_nodes(threads[name])) == 2
    [kept] = query(page, "attachment.list", {"threadId": threads["old"]})["attachments"]
    assert (kept["id"], kept["kind"], kept["sourceRef"]) == (
        archived["summaryId"],
        "page_text",
        "retention:summary",
    )
    assert "the old question" in get_attachment(page, kept["id"])[1].decode()

    # The list (live) no longer shows it among the active ones; among the archived ones
    # it says "summarized", not its old turn count.
    to_list(page)
    page.wait_for_selector(f"[data-thread-id='{threads['active']}']")
    assert page.locator(f"[data-thread-id='{threads['old']}']").count() == 0
    page.select_option("#filter-archived", "archived")
    row = page.locator(f"[data-thread-id='{threads['old']}']")
    row.locator("text=archived").wait_for()
    assert page.locator("#thread-list li").count() == 1
    assert "summarized" in row.inner_text() and "turn" not in row.inner_text()

    # Opened: the summary, and a plain statement that retention removed the messages.
    open_thread(page, threads["old"])
    page.wait_for_selector("#messages .retention-summary")
    box = page.locator("#messages .retention-summary")
    assert "Retention removed this conversation's messages on" in box.inner_text()
    assert "the old question" in box.locator(".msg-body").inner_text()
    assert page.inner_text("#chat-meta").startswith("Messages removed by retention")
    assert page.locator("#messages .welcome").count() == 0
    shot(page, "panel-retention-summary")

    # Its Markdown export has the summary.
    page.click("#chat-menu summary")
    with page.expect_download() as md_info:
        page.click("#chat-menu [data-action=export-md]")
    path = tmp_path / "summarized.md"
    md_info.value.save_as(path)
    exported = path.read_text()
    assert exported.startswith("# old thread\n\n> Retention removed")
    assert "the old question" in exported

    # The menu's "Unarchive" only clears the flag: the summary is still shown.
    page.click("#chat-menu summary")
    assert page.inner_text("#chat-menu [data-action=archive]") == "Unarchive"
    page.click("#chat-menu [data-action=archive]")
    page.wait_for_selector("#chat-archived", state="hidden")
    assert page.locator("#messages .retention-summary").count() == 1
    to_list(page)
    page.select_option("#filter-archived", "active")
    wipe(page)


# ---- tool calls ------------------------------------------------------------------------


def summary(el: Locator) -> str:
    """A tool node's summary line as text, whitespace collapsed."""
    return " ".join((el.locator("summary").text_content() or "").split())


def test_tool_calls_and_results_render_as_text(panel: Page, store: PageStore) -> None:
    page = panel
    thread_id = store.send("thread.create", {"title": "Tools " + XSS})["threadId"]
    store.seed_turn(thread_id, "use a tool")
    params = {"url": XSS, "nested": {"html": "<script>window.__pwned=2</script>", "n": [1, 2]}}
    calls = [
        ("call-1", "fetch_page", params),
        ("call-2", XSS, {"q": XSS}),
    ]
    for item, tool, args in calls:
        PageStore(page).send(
            "message.append",
            {
                "threadId": thread_id,
                "type": "tool_call",
                "payload": {"itemId": item, "toolName": tool, "params": args, "level": "builtin"},
            },
        )
    PageStore(page).send(
        "message.append",
        {
            "threadId": thread_id,
            "type": "tool_result",
            "payload": {
                "itemId": "call-1",
                "ok": True,
                "contentForLlm": [{"type": "text", "text": f"Fetched: {XSS}\n**not bold**"}],
            },
        },
    )
    PageStore(page).send(
        "message.append",
        {
            "threadId": thread_id,
            "type": "tool_result",
            "payload": {
                "itemId": "call-2",
                "ok": False,
                "contentForLlm": [],
                "details": {"error": XSS},
            },
        },
    )
    open_thread(page, thread_id)
    page.wait_for_selector(".msg.tool.result.failed")

    rendered = page.locator(".msg.tool")
    assert [
        (el.get_attribute("data-type"), el.get_attribute("class")) for el in rendered.all()
    ] == [
        ("tool_call", "msg tool call"),
        ("tool_call", "msg tool call"),
        ("tool_result", "msg tool result"),
        ("tool_result", "msg tool result failed"),
    ]
    for el in rendered.all():
        el.locator("summary").click()
        assert el.get_attribute("open") == ""
    call_1, call_2, result_1, result_2 = rendered.all()
    assert call_1.locator("summary strong").inner_text() == "fetch_page"
    assert summary(call_1) == "Tool call fetch_page · builtin"
    assert json.loads(call_1.locator("pre").inner_text()) == params
    assert call_1.locator("pre").inner_text() == json.dumps(params, indent=2)
    assert call_2.locator("summary strong").inner_text() == XSS
    assert json.loads(call_2.locator("pre").inner_text()) == {"q": XSS}
    assert summary(result_1) == "↳ Tool result call-1"
    assert result_1.locator("pre").inner_text() == f"Fetched: {XSS}\n**not bold**"
    assert summary(result_2) == "↳ Tool error call-2"
    assert json.loads(result_2.locator("pre").inner_text()) == {"error": XSS}
    shot(page, "panel-tool-calls")

    # A broken image of our own fires its error event: by then an injected one would have.
    # The extension's CSP blocks inline handlers anyway (so __pwned alone proves little):
    # an injected handler would show up as a CSP violation, and as an element below.
    page.evaluate(
        """() => { const probe = new Image();
             probe.addEventListener('error', () => { window.__probe = 1; });
             probe.src = 'x'; }"""
    )
    page.wait_for_function("() => window.__probe === 1")
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert page.evaluate("() => window.__violations") == []
    inert = page.evaluate(
        """() => ({
        imgs: document.querySelectorAll('#messages img, #view-title img').length,
        scripts: document.querySelectorAll('#messages script').length,
        handlers: [...document.querySelectorAll('#app *')].filter(e =>
          [...e.attributes].some(a => a.name.startsWith('on'))).length,
      })"""
    )
    assert inert == {"imgs": 0, "scripts": 0, "handlers": 0}
    assert page.inner_text("#view-title") == "Tools " + XSS
    store.send("thread.delete", {"threadId": thread_id})
