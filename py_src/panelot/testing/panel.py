"""Launching Chromium with the built extension and opening its side panel, for tests.

Plain functions over Playwright's sync API; :mod:`panelot.testing.plugin` wraps them in
fixtures. Every wait that can time out fails with what the page shows (the boot stage,
the boot error), never with a bare timeout.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, FilePayload, Page, Playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

__all__ = [
    "API_KEY",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "EXTENSION_ID",
    "PANEL_VIEWPORT",
    "READY_TIMEOUT_MS",
    "DEFAULT_TIMEOUT_MS",
    "BootError",
    "ExtensionContext",
    "Launcher",
    "attach",
    "configure_provider",
    "edit_message",
    "last_id",
    "launch_extension",
    "new_thread",
    "open_panel",
    "open_thread",
    "send_message",
    "to_list",
    "wait_ready",
    "wait_reply",
    "wait_thread_shown",
]

#: Debian's Chromium (Playwright's own build cannot be downloaded everywhere).
CHROMIUM = "/usr/bin/chromium"
#: Flags for a headless run in a container.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)
#: Fixed by the "key" in extension/manifest.json.
EXTENSION_ID = "maakonipenibfpopjnlikofcidnnglfl"
#: How long a panel may take to boot (Pyodide, the wheels, the database).
READY_TIMEOUT_MS = 120_000
#: The side panel's size, for a panel opened in a tab.
PANEL_VIEWPORT = {"width": 400, "height": 720}
#: Playwright's default timeout in the contexts :class:`Launcher` opens (slow machines).
DEFAULT_TIMEOUT_MS = 60_000
#: The API key :func:`configure_provider` saves unless told otherwise.
API_KEY = "sk-e2e-secret-4f1c9a"

#: Forgets the thread the panel reopens (web/presence.mjs, REOPEN_KEY): chrome.storage's
#: calls of one page run in order, so this runs before the panel's read after its boot.
_FORGET_LAST_THREAD = """
globalThis.chrome?.storage?.local?.remove('panelot.reopenThreadId');
try { localStorage.removeItem('panelot.reopenThreadId'); } catch {}
"""
_SETTLED = "() => document.body?.dataset.ready === '1' || window.__panelotState === 'error'"
_STORE_SETTLED = "() => ['ready', 'error'].includes(window.__panelotState)"
_COPY_SETTLED = "() => window.panelot?.copySettled !== false"
_BOOT_STATE = """() => ({
  state: window.__panelotState ?? null,
  error: window.panelot?.error ? String(window.panelot.error.message ?? window.panelot.error)
    : null,
  shown: document.getElementById('error')?.textContent ?? '',
})"""


class BootError(AssertionError):
    """The panel (or a page's ``window.panelot``) did not boot; the message says why."""


@contextmanager
def launch_extension(
    playwright: Playwright,
    extension: Path,
    chromium: str = CHROMIUM,
    *,
    prefix: str = "panelot-profile-",
    headless: bool = True,
    timeout_ms: float | None = None,
    args: Sequence[str] = CHROMIUM_ARGS,
) -> Iterator[tuple[BrowserContext, str]]:
    """A persistent context in a fresh profile with ``extension`` loaded: (context, id).

    The profile is a temporary directory, removed when the context closes. ``args``:
    Chromium's flags besides the two that load the extension.
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as profile:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=chromium,
            headless=headless,
            args=[
                f"--disable-extensions-except={extension}",
                f"--load-extension={extension}",
                *args,
            ],
        )
        try:
            if timeout_ms is not None:
                context.set_default_timeout(timeout_ms)
            workers = context.service_workers
            worker = workers[0] if workers else context.wait_for_event("serviceworker")
            yield context, worker.url.split("/")[2]
        finally:
            context.close()


@dataclass(frozen=True)
class ExtensionContext:
    """A Chromium context with the extension loaded, and the extension's id."""

    context: BrowserContext
    extension_id: str

    def open_panel(self, *, forget_last_thread: bool = True) -> Page:
        """Open another side-panel page (a tab at panel size) and wait until it is ready."""
        return open_panel(self.context, self.extension_id, forget_last_thread=forget_last_thread)

    def url(self, page: str) -> str:
        """``chrome-extension://<id>/<page>``."""
        return f"chrome-extension://{self.extension_id}/{page}"


@dataclass(frozen=True)
class Launcher:
    """Launches fresh profiles with the extension: for a scope of one's own."""

    playwright: Playwright
    extension: Path
    chromium: str
    headless: bool = True

    def launch(
        self, prefix: str = "panelot-profile-", timeout_ms: float = DEFAULT_TIMEOUT_MS
    ) -> AbstractContextManager[ExtensionContext]:
        """A persistent context in a new temporary profile, closed on exit."""
        return self._launch(prefix, timeout_ms)

    @contextmanager
    def _launch(self, prefix: str, timeout_ms: float) -> Iterator[ExtensionContext]:
        with launch_extension(
            self.playwright,
            self.extension,
            self.chromium,
            prefix=prefix,
            headless=self.headless,
            timeout_ms=timeout_ms,
        ) as (context, extension_id):
            yield ExtensionContext(context, extension_id)


def wait_ready(page: Page, timeout_ms: float = READY_TIMEOUT_MS, *, panel: bool = False) -> None:
    """Wait until the page's ``window.panelot`` is ready (and, for a panel, the app).

    Raises :class:`BootError` with the boot error, or with the stage reached on a timeout.
    """
    try:
        page.wait_for_function(_SETTLED if panel else _STORE_SETTLED, timeout=timeout_ms)
    except PlaywrightTimeoutError:
        boot = page.evaluate(_BOOT_STATE)
        raise BootError(
            f"{page.url} did not boot in {timeout_ms / 1000:g} s: it stopped at stage "
            f"{boot['state']!r}" + (f" ({boot['error']})" if boot["error"] else "")
        ) from None
    boot = page.evaluate(_BOOT_STATE)
    if boot["state"] != "ready":
        raise BootError(f"{page.url} failed to boot: {boot['error'] or boot['shown']}")
    # A start that read the snapshot or the wasm from its file keeps it as a local copy
    # after it is ready (web/local_copy.mjs, up to ~30 MB written): a test starts once
    # nothing is left running.
    page.wait_for_function(_COPY_SETTLED, timeout=timeout_ms)


def open_panel(
    context: BrowserContext,
    extension_id: str,
    *,
    forget_last_thread: bool = True,
    timeout_ms: float = READY_TIMEOUT_MS,
) -> Page:
    """Open sidepanel.html in a tab at side-panel size and wait until the app is shown.

    ``forget_last_thread``: start on the thread list, whatever conversation an earlier
    page of the profile left open (the panel reopens the last one).
    """
    page = context.new_page()
    page.set_viewport_size(PANEL_VIEWPORT)  # type: ignore[arg-type]
    if forget_last_thread:
        page.add_init_script(_FORGET_LAST_THREAD)
    page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
    wait_ready(page, timeout_ms, panel=True)
    return page


def configure_provider(
    page: Page, base_url: str, key: str = API_KEY, model: str = "stub-model"
) -> None:
    """Save a provider through the panel's Settings form; wait until *this* save landed.

    The status line counts finished saves (``data-save-count``), so a status an earlier
    save left cannot satisfy the wait; then the stored ``providers`` setting must hold
    what was typed, and the chat must use it.
    """
    page.click("#nav-settings")
    status = page.wait_for_selector("#provider-status[data-save-count]")
    assert status is not None
    saves = int(status.get_attribute("data-save-count") or "0")
    page.fill("#provider-base-url", base_url)
    page.fill("#provider-model", model)
    page.fill("#provider-key", key)
    page.set_checked("#provider-history-all", False)
    page.fill("#provider-history", "")  # the default history budget
    page.click("#provider-save")
    page.wait_for_selector(f"#provider-status[data-save-count='{saves + 1}']")
    shown = page.inner_text("#provider-status")
    assert "ok" in (page.get_attribute("#provider-status", "class") or ""), shown
    providers: dict[str, Any] = page.evaluate(
        "() => window.panelot.query('settings.get', {group: 'providers'})"
    )["value"]
    conn = next(c for c in providers["connections"] if c["id"] == providers["defaultConnectionId"])
    assert (conn["baseUrl"], conn["models"]) == (base_url, [model]), conn
    assert page.evaluate("() => window.panelotApp.chat.provider?.baseUrl") == base_url
    page.click("#nav-back")


_THREAD_SHOWN = """(id) => {
  const app = window.panelotApp;
  return app.view === 'chat' && app.chat.thread?.id === id && app.chat.snapshot?.threadId === id;
}"""


def to_list(page: Page) -> None:
    """Go back to the thread list (from a conversation, or from settings in two steps)."""
    while page.evaluate("() => window.panelotApp.view") != "threads":
        page.click("#nav-back")
    page.wait_for_selector("#view-threads:not([hidden])")


def wait_thread_shown(page: Page, thread_id: str, timeout_ms: float = 30_000) -> None:
    """Wait until the chat shows ``thread_id``: its meta *and* its own snapshot's messages.

    The meta (``thread.get``) and the messages (``thread.snapshot``) arrive separately;
    until the second has, the chat still holds the previous thread's snapshot and shows
    nothing of this one.
    """
    page.wait_for_function(_THREAD_SHOWN, arg=thread_id, timeout=timeout_ms)


def open_thread(page: Page, thread_id: str) -> None:
    """Open ``thread_id`` with a click in the (live) thread list; wait until it is shown."""
    to_list(page)
    page.click(f"#thread-list [data-thread-id='{thread_id}'] .thread-open")
    wait_thread_shown(page, thread_id)


def new_thread(page: Page) -> str:
    """Open an empty conversation with the panel's + button; return its id (from the app).

    Going back to the list (from Settings too) closes the open conversation first, so
    the wait sees this click's thread arrive even when + reuses an empty "New chat".
    """
    # Settings opened from a conversation goes back to it first, then to the list.
    for _ in range(3):
        view = page.evaluate("() => window.panelotApp.view")
        if view == "threads":
            break
        page.click("#nav-back")
        page.wait_for_function("(was) => window.panelotApp.view !== was", arg=view)
    page.wait_for_function("() => window.panelotApp.chat.threadId === null")
    page.click("#nav-new")
    page.wait_for_function(
        "() => { const chat = window.panelotApp.chat;"
        " return chat.threadId !== null && chat.thread?.id === chat.threadId; }"
    )
    return str(page.evaluate("() => window.panelotApp.chat.threadId"))


def last_id(page: Page) -> str | None:
    """The node id of the last message the panel shows (None if there is none)."""
    found = page.evaluate(
        "() => document.querySelector('#messages .msg:last-child')?.dataset.nodeId ?? null"
    )
    return None if found is None else str(found)


# The reply counts once the panel's live snapshot holds it: until then the panel shows
# the element the stream left ("landed"), without its version selector (n/m).
_NEW_REPLY = """(before) => {
  const last = document.querySelector('#messages .msg:last-child');
  const id = last?.dataset.nodeId;
  const shown = window.panelotApp?.chat?.snapshot?.nodes ?? [];
  return !document.querySelector('[data-streaming]') && last?.dataset.type === 'assistant_message'
    && id !== before && shown.some((node) => node.id === id);
}"""


def wait_reply(page: Page, before: str | None, timeout_ms: float = 30_000) -> str:
    """Wait until a stored assistant reply other than ``before`` is the last message; its id.

    Stored means shown from the panel's live snapshot (with its version selector), not
    only the element the stream left while the snapshot catches up.
    """
    try:
        page.wait_for_function(_NEW_REPLY, arg=before, timeout=timeout_ms)
    except PlaywrightTimeoutError:
        shown = page.evaluate(
            "() => document.querySelector('#messages .msg:last-child')?.innerText ?? '(none)'"
        )
        raise AssertionError(
            f"no new stored reply after {timeout_ms / 1000:g} s; the last message shown: {shown!r}"
        ) from None
    return str(last_id(page))


def send_message(page: Page, text: str, *, wait: bool = True) -> str | None:
    """Type ``text`` into the composer and press Enter.

    With ``wait``, wait for the stored reply and return its node id.
    """
    before = last_id(page)
    page.fill("#input", text)
    page.press("#input", "Enter")
    return wait_reply(page, before) if wait else None


def attach(page: Page, name: str, data: bytes, mime: str = "application/octet-stream") -> None:
    """Choose a file ``name`` holding ``data`` in the composer's file picker, as a user would.

    The composer shows it as a chip; the next send carries it.
    """
    payload: FilePayload = {"name": name, "mimeType": mime, "buffer": data}
    page.set_input_files("#file-input", files=[payload])


def edit_message(page: Page, text: str, *, index: int = 0) -> str:
    """Edit the ``index``-th shown user message to ``text`` and resend it.

    Waits for the new branch's stored reply; returns the id of the edited message (a new
    sibling of the one edited, now shown in its place).
    """
    page.locator(".msg.user").nth(index).locator("[data-action=edit]").click()
    page.fill(".edit-box textarea", text)
    before = last_id(page)
    page.click("[data-action=save-edit]")
    wait_reply(page, before)
    edited = page.locator(".msg.user").nth(index).get_attribute("data-node-id")
    assert edited is not None, "the edited message has no data-node-id"
    return edited
