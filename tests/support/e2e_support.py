"""Shared pieces of the end-to-end tests of the side panel and the console.

The panel itself (launch, boot, the composer, the store handle) is the plugin's,
panelot.testing; what is here is particular to this project's tests.
"""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page

from browser_harness import ROOT, query
from panelot.testing import wait_thread_shown

__all__ = [
    "to_sync_settings",
    "SHOTS",
    "confirm",
    "open_module_page",
    "shot",
    "show_thread",
    "tiny_png",
    "wait_query",
    "wait_shown_last",
]

SHOTS = ROOT / "test-results"


def shot(page: Page, name: str) -> Path:
    """Save a screenshot under test-results/ and return its path."""
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def confirm(page: Page) -> None:
    """Press OK in the panel's confirmation dialog; wait until it has closed."""
    page.wait_for_selector("#dialog[open]")
    page.click("#dialog-ok")
    page.wait_for_selector("#dialog:not([open])", state="attached")


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


def open_module_page(context: BrowserContext, extension_id: str) -> Page:
    """A light extension page (launcher.html, no runtime) for importing panel modules.

    Code evaluated there can ``await import("/panel_provider.mjs")`` and the like: the
    modules load from the built extension, under its CSP and origin.
    """
    page = context.new_page()
    page.goto(f"chrome-extension://{extension_id}/launcher.html")
    page.wait_for_load_state()
    return page


def show_thread(page: Page, thread_id: str) -> None:
    """Open ``thread_id`` through the app (``panelotApp.openThread``, no click); wait until shown.

    :func:`panelot.testing.open_thread` opens it with a click in the thread list instead.
    """
    page.evaluate("(id) => window.panelotApp.openThread(id)", thread_id)
    wait_thread_shown(page, thread_id)


#: True once the panel shows the node ``id`` as its last message, from its live snapshot.
_SHOWN_LAST = """(id) => {
  const last = document.querySelector('#messages .msg:last-child');
  const shown = window.panelotApp?.chat?.snapshot?.nodes ?? [];
  return last?.dataset.nodeId === id && shown.some((node) => node.id === id);
}"""


def wait_shown_last(page: Page, node_id: str, timeout_ms: float = 30_000) -> None:
    """Wait until the panel shows ``node_id`` as its last message, from its live snapshot.

    For nodes written from outside the panel (the store, another panel): the open
    thread's live view may show them over several updates, so a test waits for the last
    one written before it acts in the panel (sends, edits, reads ``last_id``) or compares
    what is shown.
    """
    page.wait_for_function(_SHOWN_LAST, arg=node_id, timeout=timeout_ms)


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


def to_sync_settings(page: Page) -> int:
    """Settings, freshly drawn; the Sync status line's count of finished actions.

    Waits until the status line is drawn from ``sync.status``.
    """
    while page.evaluate("() => window.panelotApp.view") != "threads":
        page.click("#nav-back")
    page.click("#nav-settings")
    status = page.wait_for_selector("#sync-status[data-action-count]")
    assert status is not None
    page.wait_for_selector("#sync-status .status-part")
    return int(status.get_attribute("data-action-count") or "0")
