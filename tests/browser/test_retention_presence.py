"""Retention spares what any panel shows and what a panel will reopen, in real Chromium.

The registry (web/presence.mjs): each page holds a shared Web Lock
``panelot-open:<threadId>`` on the thread it shows, and the thread the panel reopens is
kept in ``chrome.storage.local``. The service worker's pass reads both
(``navigator.locks.query()`` lists every context's locks) and hands the ids to Python.

* Two panels open on two old threads: a worker pass spares both (the old code spared
  only the thread opened last, its one ``chrome.storage.session`` key).
* A browser restart (the same profile launched again: Chrome clears
  ``chrome.storage.session``): the worker's pass spares the thread the panel will
  reopen, and the panel reopens it with its messages (the old code archived it, and the
  panel reopened "Archived · 0 messages").
* A page that goes away, or shows another thread, releases its entry.

Each test has a profile of its own.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import BrowserContext, Worker

from e2e_support import show_thread
from panelot.testing import Launcher, open_panel, wait_ready, wait_thread_shown
from panelot.testing.panel import CHROMIUM_ARGS
from retention_support import archived, make_thread, run_retention, set_retention

TIMEOUT_MS = 60_000
OPEN_LOCK = "panelot-open:"
REOPEN_KEY = "panelot.reopenThreadId"


@contextmanager
def profile_launch(launcher: Launcher, profile: str) -> Iterator[tuple[BrowserContext, Worker]]:
    """Chromium with the extension on ``profile`` (kept after it closes): (context, worker)."""
    context = launcher.playwright.chromium.launch_persistent_context(
        profile,
        executable_path=launcher.chromium,
        headless=launcher.headless,
        args=[
            f"--disable-extensions-except={launcher.extension}",
            f"--load-extension={launcher.extension}",
            *CHROMIUM_ARGS,
        ],
    )
    try:
        context.set_default_timeout(TIMEOUT_MS)
        workers = context.service_workers
        worker = workers[0] if workers else context.wait_for_event("serviceworker")
        yield context, worker
    finally:
        context.close()


def extension_id(worker: Worker) -> str:
    return worker.url.split("/")[2]


def open_locks(worker: Worker) -> set[str]:
    """The threads whose open-thread lock some context holds, as the worker sees them."""
    names = worker.evaluate(
        "async () => (await navigator.locks.query()).held.map((lock) => lock.name)"
    )
    return {n.removeprefix(OPEN_LOCK) for n in names if n.startswith(OPEN_LOCK)}


def wait_locks(worker: Worker, expected: set[str], timeout_s: float = 30) -> None:
    """Wait until the open-thread locks are exactly ``expected`` (the worker's view)."""
    deadline = time.monotonic() + timeout_s
    seen = open_locks(worker)
    while seen != expected and time.monotonic() < deadline:
        time.sleep(0.05)  # polling the worker's lock manager: no event to wait for
        seen = open_locks(worker)
    assert seen == expected


def stored_reopen(worker: Worker) -> str | None:
    got = worker.evaluate("(k) => chrome.storage.local.get(k)", REOPEN_KEY)
    return got.get(REOPEN_KEY)


def test_two_panels_on_two_old_threads_are_both_spared(panelot_launcher: Launcher) -> None:
    with panelot_launcher.launch("panelot-presence-two-") as ext:
        worker = ext.context.service_workers[0]
        a = ext.open_panel()
        b = ext.open_panel()
        x, y, z = (
            make_thread(a, name, age_days=60)
            for name in ("shown in A", "shown in B", "shown nowhere")
        )
        show_thread(a, x)
        show_thread(b, y)
        wait_locks(worker, {x, y})
        set_retention(a, 30)
        result = run_retention(worker)
        assert result["archived"] == [z], result
        assert result["spared"] == sorted({x, y}), result
        assert archived(a) == {z}
        for page, tid in ((a, x), (b, y)):  # each panel still shows its messages
            assert page.locator("#messages .msg.user").count() == 1
            assert page.evaluate("() => window.panelotApp.chat.threadId") == tid


def test_the_thread_a_panel_reopens_is_spared_after_a_browser_restart(
    panelot_launcher: Launcher,
) -> None:
    with tempfile.TemporaryDirectory(prefix="panelot-presence-restart-") as profile:
        with profile_launch(panelot_launcher, profile) as (context, worker):
            page = open_panel(context, extension_id(worker))
            reopen = make_thread(page, "Reopened after the restart", age_days=60)
            other = make_thread(page, "Not reopened", age_days=60)
            show_thread(page, reopen)
            deadline = time.monotonic() + 30
            while stored_reopen(worker) != reopen and time.monotonic() < deadline:
                time.sleep(0.05)  # the panel's chrome.storage.local write lands
            assert stored_reopen(worker) == reopen
            set_retention(page, 30)
        # The browser restarts on the same profile: no page is open, and
        # chrome.storage.session is empty, as after a real restart.
        with profile_launch(panelot_launcher, profile) as (context, worker):
            assert worker.evaluate("() => chrome.storage.session.get(null)") == {}
            assert open_locks(worker) == set()
            result = run_retention(worker)
            assert result["ran"] is True and result["spared"] == [reopen], result
            assert result["archived"] == [other], result
            # The panel opens where it was, on the conversation with its message.
            page = context.new_page()
            page.goto(f"chrome-extension://{extension_id(worker)}/sidepanel.html")
            wait_ready(page, panel=True)
            assert page.evaluate("() => window.panelotApp.chat.threadId") == reopen
            wait_thread_shown(page, reopen)
            page.wait_for_selector("#messages .msg.user >> text=hello from Reopened")
            assert page.is_hidden("#chat-archived")
            assert page.inner_text("#chat-meta").startswith("1 message ·")


def test_a_page_that_goes_away_or_moves_on_releases_its_entry(
    panelot_launcher: Launcher,
) -> None:
    with panelot_launcher.launch("panelot-presence-gone-") as ext:
        worker = ext.context.service_workers[0]
        a = ext.open_panel()
        b = ext.open_panel()
        x, y, w = (make_thread(a, name, age_days=60) for name in ("A's", "B's", "A's next"))
        show_thread(a, x)
        show_thread(b, y)
        wait_locks(worker, {x, y})
        show_thread(a, w)  # A shows another thread: its lock moves
        wait_locks(worker, {w, y})
        a.close()  # A goes away: its lock goes with it
        wait_locks(worker, {y})
        assert stored_reopen(worker) == w  # the last thread shown, in any panel
        set_retention(b, 30)
        result = run_retention(worker)
        assert result["spared"] == sorted({w, y}), result
        assert result["archived"] == [x], result
        b.click("#nav-back")  # B back on the list: nothing open, nothing to reopen
        wait_locks(worker, set())
        deadline = time.monotonic() + 30
        while stored_reopen(worker) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stored_reopen(worker) is None
        result = run_retention(worker)
        assert result["spared"] == [] and sorted(result["archived"]) == sorted([w, y])
