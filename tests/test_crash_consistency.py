"""Crash consistency: kill the page, or the whole browser, in the middle of long operations.

For each operation, 20 kill points drawn from a fixed seed. After each kill the same
profile is opened again and the state must be either wholly before or wholly after the
operation's transaction: no orphan nodes, no receipt without its effect and no effect
without its receipt. Every fifth kill is a SIGKILL of the whole browser process; the
others close the page's renderer.
"""

from __future__ import annotations

import os
import random
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, Playwright

from browser_harness import CHROMIUM, CHROMIUM_ARGS, run_py, wait_ready

KILL_POINTS = 20
DELETE_NODES = 5_000
IMPORT_NODES = 10_000

SEED = """
import json
from panelot.runtime import store
s = store()
tid = await s.create_thread({title!r})
rows = [{{"id": f"{{tid}}-{{i}}", "threadId": tid, "parentId": f"{{tid}}-{{i-1}}" if i else None, "seq": i + 1,
          "ts": i, "type": "user_message", "payload": {{"content": [{{"type": "text", "text": "x" * 200}}]}}}}
        for i in range({n})]
await s.db.table("nodes").bulk_put(rows)
await s.db.table("threads").update(tid, {{"leafId": rows[-1]["id"]}})
await s.db.table("attachments").put({{"id": tid + "-a", "threadId": tid, "createdAt": 1, "kind": "file", "mime": "text/plain"}})
json.dumps(tid)
"""

STATE = """
import json
from panelot.runtime import store
from panelot.receipts import receipt_id
s = store()
threads = {{t["id"]: t for t in await s.db.table("threads").to_list()}}
thread_ids = set(threads)
orphans = 0
counts = {{}}
for n in await s.db.table("nodes").to_list():
    counts[n["threadId"]] = counts.get(n["threadId"], 0) + 1
    if n["threadId"] not in thread_ids:
        orphans += 1
receipt = await s.db.table("commandReceipts").get(receipt_id("crash", {sub!r}))
json.dumps({{"threads": {{k: {{"title": v["title"], "nodes": counts.get(k, 0)}} for k, v in threads.items()}},
            "orphans": orphans, "receipt": receipt}})
"""

KICK = "([command]) => { window.__job = window.panelot.send(command); }"


class Browser:
    """A persistent Chromium profile on the harness origin that can be killed and reopened."""

    def __init__(self, playwright: Playwright, profile: str, base: str) -> None:
        self.playwright, self.profile, self.base = playwright, profile, base
        self.context: BrowserContext | None = None

    def page(self) -> Page:
        if self.context is None:
            self.context = self.playwright.chromium.launch_persistent_context(
                self.profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
        page = self.context.new_page()
        page.goto(f"{self.base}index.html")
        wait_ready(page)
        return page

    def kill_process(self) -> None:
        """SIGKILL every process of this profile: a crash, not a shutdown."""
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if self.profile.encode() in cmdline:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            assert self.context is not None
            self.context.close()
        except Exception:  # noqa: BLE001 - the browser is gone; Playwright may complain
            pass
        self.context = None

    def close(self) -> None:
        if self.context is not None:
            self.context.close()
            self.context = None


@pytest.fixture()
def crashable(playwright: Playwright, web_server: str) -> Iterator[Browser]:
    with tempfile.TemporaryDirectory(prefix="panelot-crash-") as profile:
        browser = Browser(playwright, profile, web_server)
        yield browser
        browser.close()


def _kill(browser: Browser, page: Page, point: int, delay_s: float) -> None:
    time.sleep(delay_s)
    if point % 5 == 4:
        browser.kill_process()
    else:
        page.close()


def _state(page: Page, sub: str) -> Any:
    return run_py(page, STATE.format(sub=sub))


def test_thread_delete_survives_kills(crashable: Browser) -> None:
    rng = random.Random(20261130)
    page = crashable.page()
    outcomes = {"before": 0, "after": 0}
    for point in range(KILL_POINTS):
        title = f"delete-{point}"
        tid = run_py(page, SEED.format(title=title, n=DELETE_NODES))
        sub = f"delete-{point}"
        command = {
            "type": "thread.delete",
            "clientId": "crash",
            "submissionId": sub,
            "payload": {"threadId": tid},
        }
        page.evaluate(KICK, [command])
        _kill(crashable, page, point, rng.uniform(0.0, 2.5))
        page = crashable.page()
        state = _state(page, sub)
        assert state["orphans"] == 0, state
        if tid in state["threads"]:
            assert state["threads"][tid]["nodes"] == DELETE_NODES, (point, state["threads"][tid])
            assert state["receipt"] is None, point
            outcomes["before"] += 1
            done = page.evaluate(
                "(c) => window.panelot.send(c)", command
            )  # the replay completes it
            assert done["status"] == "completed", done
        else:
            assert state["receipt"] is not None and state["receipt"]["status"] == "acknowledged", (
                point
            )
            outcomes["after"] += 1
    print(f"thread.delete kill points: {outcomes}")
    assert sum(outcomes.values()) == KILL_POINTS


def _export(n: int) -> dict[str, Any]:
    tid = "source-thread"
    nodes = [
        {
            "id": f"s{i}",
            "threadId": tid,
            "parentId": f"s{i - 1}" if i else None,
            "seq": i + 1,
            "ts": i,
            "type": "user_message" if i % 2 == 0 else "assistant_message",
            "payload": {"content": [{"type": "text", "text": "y" * 150}]}
            if i % 2 == 0
            else {
                "content": [{"type": "text", "text": "z" * 150}],
                "model": "m",
                "connectionId": "c",
            },
        }
        for i in range(n)
    ]
    thread = {"id": tid, "title": "", "createdAt": 1, "updatedAt": 1, "leafId": nodes[-1]["id"]}
    return {
        "format": "panelot.thread",
        "version": 1,
        "exportedAt": 1,
        "thread": thread,
        "nodes": nodes,
    }


def test_thread_import_survives_kills(crashable: Browser) -> None:
    rng = random.Random(30111126)
    data = _export(IMPORT_NODES)
    page = crashable.page()
    outcomes = {"before": 0, "after": 0}
    for point in range(KILL_POINTS):
        sub = f"import-{point}"
        data["thread"]["title"] = f"import-{point}"
        command = {
            "type": "thread.import",
            "clientId": "crash",
            "submissionId": sub,
            "payload": {"data": data},
        }
        page.evaluate(KICK, [command])
        _kill(crashable, page, point, rng.uniform(0.0, 6.0))
        page = crashable.page()
        state = _state(page, sub)
        assert state["orphans"] == 0, state
        imported = [k for k, v in state["threads"].items() if v["title"] == f"import-{point}"]
        if state["receipt"] is None:
            assert imported == [], (point, imported)
            outcomes["before"] += 1
        else:
            assert imported == [state["receipt"]["response"]["threadId"]], point
            assert state["threads"][imported[0]]["nodes"] == IMPORT_NODES
            outcomes["after"] += 1
            page.evaluate(
                "(c) => window.panelot.send(c)",
                {
                    "type": "thread.delete",
                    "clientId": "crash",
                    "submissionId": f"cleanup-{point}",
                    "payload": {"threadId": imported[0]},
                },
            )
    print(f"thread.import kill points: {outcomes}")
    assert sum(outcomes.values()) == KILL_POINTS
