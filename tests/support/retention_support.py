"""Driving the service worker's retention pass from a test.

Threads of a chosen age (their ``updatedAt`` moved into the past in the page's Python),
the retention setting, the worker's pass (``self.panelotRunRetention()``) and what it
archived. Commands and queries go through :class:`panelot.testing.PageStore`.
"""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Page, Worker

from browser_harness import run_py
from panelot.testing import PageStore

__all__ = ["DAY_MS", "archived", "make_thread", "run_retention", "set_retention", "threads"]

DAY_MS = 24 * 3600 * 1000


def _page_store(page: Page) -> PageStore:
    return PageStore(page, client_id="test")


def make_thread(page: Page, title: str, age_days: int = 0, pinned: bool = False) -> str:
    """A thread with one message, its ``updatedAt`` moved ``age_days`` into the past."""
    store = _page_store(page)
    tid = str(store.send("thread.create", {"title": title})["threadId"])
    message = {"content": [{"type": "text", "text": f"hello from {title}"}]}
    store.send("message.append", {"threadId": tid, "type": "user_message", "payload": message})
    if pinned:
        store.send("thread.update", {"threadId": tid, "patch": {"pinned": True}})
    if age_days:
        code = f"""
import json, time
from panelot.runtime import store
old = int(time.time() * 1000) - {age_days} * {DAY_MS}
await store().db.table("threads").update({json.dumps(tid)}, {{"updatedAt": old}})
json.dumps(old)
"""
        run_py(page, code)
    return tid


def threads(page: Page) -> dict[str, dict[str, Any]]:
    """Every thread by id, archived ones included."""
    return {r["id"]: r for r in _page_store(page).query("thread.list", {"archived": None})}


def archived(page: Page) -> set[str]:
    """The ids of the archived threads."""
    return {tid for tid, t in threads(page).items() if t["archived"]}


def set_retention(page: Page, days: int | None) -> None:
    """Set the retention setting (``None``: off)."""
    _page_store(page).send("settings.set", {"group": "retention", "value": {"days": days}})


def run_retention(worker: Worker) -> dict[str, Any]:
    """Call the worker's retention entry point and return its result."""
    return dict(worker.evaluate("() => self.panelotRunRetention()"))
