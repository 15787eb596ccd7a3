"""Daily retention from the service worker (chrome.alarms + Pyodide), in real Chromium.

Alarms cannot be fired on demand, so the tests check that the alarm is registered and
call the worker's retention entry point, ``self.panelotRunRetention()``, through the
worker's ``evaluate``. The profile is this module's own: the pass archives threads of
the extension's ``panelot_v1`` and changes its settings.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import BrowserContext, Page, Worker

from browser_harness import run_py
from panelot.testing import Launcher, open_panel
from retention_support import archived, make_thread, run_retention, set_retention, threads

PASS_TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def extension(panelot_launcher: Launcher) -> Iterator[tuple[BrowserContext, Worker, str]]:
    """A fresh profile with dist/extension loaded: (context, service worker, extension id)."""
    with panelot_launcher.launch("panelot-sw-") as ext:
        yield ext.context, ext.context.service_workers[0], ext.extension_id


@pytest.fixture(scope="module")
def panel(extension: tuple[BrowserContext, Worker, str]) -> Page:
    """The side panel page, open in a tab."""
    context, _, extension_id = extension
    return open_panel(context, extension_id)


def open_thread_locked(page: Page, worker: Worker, thread_id: str) -> None:
    """Open a thread in the panel; wait until the worker sees the panel's lock on it."""
    page.evaluate("(id) => window.panelotApp.openThread(id)", thread_id)
    name = f"panelot-open:{thread_id}"
    held: list[str] = []
    for _ in range(300):  # the lock manager grants the panel's request on its own time
        held = worker.evaluate("async () => (await navigator.locks.query()).held.map(l => l.name)")
        if name in held:
            break
        time.sleep(0.1)
    assert name in held


def test_the_daily_alarm_is_registered(extension: tuple[BrowserContext, Worker, str]) -> None:
    _, worker, _ = extension
    alarm = None
    for _ in range(100):  # onInstalled may still be creating it
        alarm = worker.evaluate("() => chrome.alarms.get('panelot.retention')")
        if alarm:
            break
        time.sleep(0.1)
    assert alarm is not None, "no panelot.retention alarm"
    assert alarm["periodInMinutes"] == 1440
    assert alarm["scheduledTime"] > time.time() * 1000


def test_the_worker_pass_archives_old_threads_only(
    extension: tuple[BrowserContext, Worker, str], panel: Page
) -> None:
    _, worker, _ = extension
    old = make_thread(panel, "Old", age_days=40)
    active = make_thread(panel, "Old but open", age_days=40)
    pinned = make_thread(panel, "Old but pinned", age_days=40, pinned=True)
    recent = make_thread(panel, "Recent", age_days=5)
    open_thread_locked(panel, worker, active)

    # Off (the default): nothing happens, and Pyodide is not even loaded.
    assert run_retention(worker) == {"ran": False}
    assert archived(panel) == set()

    set_retention(panel, 30)
    stored = worker.evaluate("() => chrome.storage.local.get('settings.retention')")
    assert stored == {"settings.retention": {"version": 1, "value": {"days": 30}}}
    result = run_retention(worker)
    # The worker started Python from the build's memory snapshot.
    assert result == {
        "ran": True,
        "snapshot": "restored",
        "spared": [active],
        "days": 30,
        "archived": [old],
    }
    assert archived(panel) == {old}
    listed = threads(panel)
    assert {active, pinned, recent} <= set(listed)
    assert listed[old]["leafId"] is None
    nodes = run_py(
        panel,
        f"""
import json
from panelot.runtime import store
db = store().db
n = await db.table("nodes").where("threadId").equals({json.dumps(old)}).count()
atts = await db.table("attachments").where("threadId").equals({json.dumps(old)}).to_list()
json.dumps([n, [a["sourceRef"] for a in atts]])
""",
    )
    assert nodes == [0, ["retention:summary"]]

    # A second pass finds nothing more; turning the setting off stops the passes.
    assert run_retention(worker) == {
        "ran": True,
        "snapshot": "restored",
        "spared": [active],
        "days": 30,
        "archived": [],
    }
    set_retention(panel, None)
    assert run_retention(worker) == {"ran": False}


def test_panel_start_up_applies_the_setting_and_spares_the_open_thread(
    extension: tuple[BrowserContext, Worker, str], panel: Page
) -> None:
    context, worker, extension_id = extension
    stale = make_thread(panel, "Stale", age_days=400)
    open_one = make_thread(panel, "Stale but open", age_days=400)
    open_thread_locked(panel, worker, open_one)
    set_retention(panel, 365)
    second = open_panel(context, extension_id)
    try:
        state = second.evaluate("() => window.panelot.state")
        assert state == "ready"
        now_archived = archived(second)
        assert stale in now_archived and open_one not in now_archived
    finally:
        set_retention(panel, None)
        second.close()


def test_a_worker_pass_reaches_both_open_panels_thread_lists_live(
    extension: tuple[BrowserContext, Worker, str],
) -> None:
    """The worker's commit is heard by two panels already open: both lists drop the thread."""
    context, worker, extension_id = extension
    panels = [open_panel(context, extension_id) for _ in range(2)]  # each on the thread list
    a, b = panels
    try:
        old = make_thread(a, "Old, listed", age_days=40)
        item = f".thread-item[data-thread-id='{old}']"
        for page in panels:  # each list's own live query showed the new thread
            page.wait_for_selector(item)
        set_retention(a, 30)
        assert [page.locator(item).count() for page in panels] == [1, 1]  # not archived yet
        result = run_retention(worker)
        assert old in result["archived"], result
        # No reload and no query from the test: only the worker's change set, heard by
        # each panel's live list, can take the archived thread off it.
        for page in panels:
            page.wait_for_selector(item, state="detached", timeout=10_000)
        assert old in archived(b)
    finally:
        set_retention(a, None)
        for page in panels:
            page.close()
