"""Shared pieces of the end-to-end tests of the side panel and the console."""

from __future__ import annotations

import json
import struct
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Dialog, Page

from browser_harness import READY_TIMEOUT_MS, ROOT, query, run_py

sys.path.insert(0, str(ROOT / "tools"))
from stub_provider import StubProvider  # noqa: E402

__all__ = [
    "API_KEY",
    "SHOTS",
    "StubProvider",
    "command",
    "configure_provider",
    "last_id",
    "count_nodes",
    "new_thread",
    "open_module_page",
    "open_panel",
    "raw_nodes",
    "reset_state",
    "send",
    "shot",
    "snapshot",
    "tiny_png",
    "wait_query",
    "wait_reply",
]

SHOTS = ROOT / "test-results"
API_KEY = "sk-e2e-secret-4f1c9a"


def shot(page: Page, name: str) -> Path:
    """Save a screenshot under test-results/ and return its path."""
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def open_panel(context: BrowserContext, extension_id: str) -> Page:
    """Open sidepanel.html in a tab at side-panel size and wait for the app."""
    page = context.new_page()
    page.set_viewport_size({"width": 400, "height": 720})
    # A test starts on the list, whatever conversation an earlier page of the profile
    # left open (the panel reopens the last one).
    page.add_init_script("localStorage.removeItem('panelot.lastThread')")
    page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
    page.wait_for_function(
        "() => document.body.dataset.ready === '1' || window.__panelotState === 'error'",
        timeout=READY_TIMEOUT_MS,
    )
    assert page.evaluate("() => window.__panelotState") == "ready"
    return page


def command(page: Page, kind: str, payload: dict[str, Any]) -> Any:
    """Run a bus command through ``panelot.send``; return its response (it must complete)."""
    envelope = page.evaluate(
        """([type, payload]) => window.panelot.send({
             type, clientId: "e2e-support", submissionId: crypto.randomUUID(), payload})""",
        [kind, payload],
    )
    assert envelope["status"] == "completed", envelope
    return envelope["response"]


def wait_query(
    page: Page,
    name: str,
    args: dict[str, Any],
    check: Callable[[Any], bool],
    timeout_s: float = 30.0,
) -> Any:
    """Run a query until ``check(result)`` holds; return that result.

    Polled from Python because ``page.wait_for_function`` does not await a predicate's
    promise (an async predicate is always truthy), and a query is asynchronous.
    """
    deadline = time.monotonic() + timeout_s
    while not check(result := query(page, name, args)):
        assert time.monotonic() < deadline, f"{name}({args}) never satisfied the check: {result}"
        page.wait_for_timeout(50)
    return result


def reset_state(page: Page) -> None:
    """Bring the store a panel page sees to a known state, and the page with it.

    The e2e modules that share the session's browser profile (``extension_context``)
    would otherwise start with what earlier modules left: threads (pinned, archived,
    in folders), a provider, a retention setting, credentials. This deletes every
    thread, resets every settings group, deletes every credential and forgets the open
    thread, through the same commands the panel uses, then checks that it is so.
    """
    for thread in query(page, "thread.list", {"archived": None}):
        command(page, "thread.delete", {"threadId": thread["id"]})
    groups = query(page, "settings.all")["groups"]
    for group in groups:
        command(page, "settings.reset", {"group": group})
    for credential in query(page, "credential.list"):
        command(page, "credential.delete", {"ref": credential["ref"]})
    page.evaluate(
        """async () => {
          const app = window.panelotApp;
          app.chat.close();
          await app.chat.loadProvider();
          app.show("threads");
          await app.refreshThreads();
        }"""
    )
    assert query(page, "thread.list", {"archived": None}) == []
    assert query(page, "settings.get", {"group": "providers"})["value"]["connections"] == []
    assert query(page, "settings.get", {"group": "retention"})["value"].get("days") is None
    assert query(page, "credential.list") == []
    assert page.evaluate("() => window.panelotApp.chat.provider") is None


def open_module_page(context: BrowserContext, extension_id: str) -> Page:
    """A light extension page (launcher.html, no runtime) for importing panel modules.

    Code evaluated there can ``await import("/panel_provider.mjs")`` and the like: the
    modules load from the built extension, under its CSP and origin.
    """
    page = context.new_page()
    page.goto(f"chrome-extension://{extension_id}/launcher.html")
    page.wait_for_load_state()
    return page


def configure_provider(
    page: Page, base_url: str, key: str = API_KEY, model: str = "stub-model"
) -> None:
    """Save the provider through the Settings form and wait until *this* save has landed.

    The status line counts finished saves (``data-save-count``), so the wait cannot
    be satisfied by a status an earlier save (or an earlier test module) left behind;
    then the stored ``providers`` setting must hold what was typed.
    """
    page.click("#nav-settings")
    status = page.wait_for_selector("#provider-status[data-save-count]")
    assert status is not None
    saves = int(status.get_attribute("data-save-count") or "0")
    page.fill("#provider-base-url", base_url)
    page.fill("#provider-model", model)
    page.fill("#provider-key", key)
    page.click("#provider-save")
    page.wait_for_selector(f"#provider-status[data-save-count='{saves + 1}']")
    shown = page.inner_text("#provider-status")
    assert "ok" in (page.get_attribute("#provider-status", "class") or ""), shown
    providers = query(page, "settings.get", {"group": "providers"})["value"]
    conn = next(c for c in providers["connections"] if c["id"] == providers["defaultConnectionId"])
    assert (conn["baseUrl"], conn["models"]) == (base_url, [model]), conn
    assert page.evaluate("() => window.panelotApp.chat.provider?.baseUrl") == base_url
    page.click("#nav-back")


def open_configured_panel(context: BrowserContext, extension_id: str, base_url: str) -> Page:
    """The side panel in a tab, from a known state, with the provider at ``base_url``.

    The store is reset first (``reset_state``). Dialogs are dismissed and their messages kept in ``page.dialogs``.
    """
    page = open_panel(context, extension_id)
    reset_state(page)
    configure_provider(page, base_url)
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.dialogs = dialogs  # type: ignore[attr-defined]
    return page


def new_thread(page: Page) -> str:
    """Open an empty conversation with the + button; return its id (from the store).

    Going back to the list closes the open conversation first, so the wait sees this
    click's thread arrive even when + reuses an empty "New chat".
    """
    if page.evaluate("() => window.panelotApp.view") != "threads":
        page.click("#nav-back")
    page.wait_for_function("() => window.panelotApp.chat.threadId === null")
    page.click("#nav-new")
    page.wait_for_function(
        "() => { const chat = window.panelotApp.chat;"
        " return chat.threadId !== null && chat.thread?.id === chat.threadId; }"
    )
    return str(page.evaluate("() => window.panelotApp.chat.threadId"))


def last_id(page: Page) -> str | None:
    """The node id of the last message shown (None if there is none)."""
    return page.evaluate(  # type: ignore[no-any-return]
        "() => document.querySelector('#messages .msg:last-child')?.dataset.nodeId ?? null"
    )


_NEW_REPLY = """(before) => {
  const last = document.querySelector('#messages .msg:last-child');
  return !document.querySelector('[data-streaming]') && last?.dataset.type === 'assistant_message'
    && last.dataset.nodeId !== before;
}"""


def wait_reply(page: Page, before: str | None, timeout: int = 30_000) -> None:
    """Wait until a stored assistant reply other than ``before`` is the last message."""
    page.wait_for_function(_NEW_REPLY, arg=before, timeout=timeout)


def send(page: Page, text: str) -> None:
    """Type a message, press Enter and wait for the stored reply."""
    before = last_id(page)
    page.fill("#input", text)
    page.press("#input", "Enter")
    wait_reply(page, before)


def snapshot(page: Page, thread_id: str) -> dict[str, Any]:
    """``thread.snapshot`` through panelot.query."""
    return dict(
        page.evaluate("(id) => window.panelot.query('thread.snapshot', {threadId: id})", thread_id)
    )


def raw_nodes(page: Page, thread_id: str) -> list[dict[str, Any]]:
    """Every stored node of a thread, read from IndexedDB in Python (tombstones included)."""
    code = f"""
import json
from panelot.runtime import store
rows = await store().db.table("nodes").where("threadId").equals({json.dumps(thread_id)}).to_list()
json.dumps([{{"id": r["id"], "type": r["type"], "seq": r["seq"], "parentId": r["parentId"],
             "payload": r["payload"]}} for r in sorted(rows, key=lambda r: r["seq"])], default=str)
"""
    return list(run_py(page, code))


def count_nodes(page: Page, thread_id: str) -> int:
    """How many nodes a thread has in IndexedDB."""
    return len(raw_nodes(page, thread_id))


def tiny_png(size: int = 16) -> bytes:
    """A valid ``size`` x ``size`` PNG (an indigo square), built with zlib."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes([70, 86, 214]) * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * size))
        + chunk(b"IEND", b"")
    )
