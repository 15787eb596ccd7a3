"""Crash consistency of ``thread.rescued``: the thread record is the old one or the new, never half.

Same method as test_crash_message_send.py: 20 kill points from a fixed seed, at random
offsets across the command (a first run, not killed, measures it; the kill window
follows the command's speed). Every fifth kill SIGKILLs the whole browser, the others
close the page's renderer; the same profile directory is reopened each time. Each thread
already holds a recorded cut for the model (the old state); the command merges new item
keys and a smaller budget into it. After each restart the thread record is exactly the
old one (and there is no receipt) or exactly the old one with the new ``requestCut``
(and the receipt names it); a retry of the same submission completes it, or replays.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, Playwright

from browser_harness import run_py
from crash_support import KICK, CrashableBrowser, KillWindow, kill

KILL_POINTS = 20
OLD_KEYS = [f"n{i}#c0" for i in range(50)]
NEW_KEYS = [f"att-{i}" for i in range(50)]

STATE = """
import json
from panelot.runtime import store
from panelot.bus.receipts import receipt_id
s = store()
thread = await s.db.table("threads").get({tid!r})
receipt = await s.db.table("commandReceipts").get(receipt_id("crash", {sub!r}))
json.dumps({{"thread": thread, "receipt": receipt}})
"""

#: The thread and its first cut are written again in a ``strict`` transaction before the
#: kill (see test_crash_message_send.py: a SIGKILL may lose a relaxed commit it
#: acknowledged). The setup must survive; the command under test is judged.
NEW_THREAD = """
import json
from panelot.runtime import store
s = store()
tid = await s.create_thread({title!r})
await s.append(tid, "user_message", {{"content": [{{"type": "text", "text": "hello"}}]}})
await s.command("thread.rescued", {{"threadId": tid, "model": "m",
                                    "record": {{"itemKeys": {old!r}, "contextBudget": 9000}}}})
async def again(tx):
    t = tx.table("threads")
    await t.put(await t.get(tid))
await s.db.transaction("rw", ["threads"], again, durability="strict")
json.dumps([tid, await s.db.table("threads").get(tid)])
"""


@pytest.fixture()
def crashable(playwright: Playwright, web_server: str) -> Iterator[CrashableBrowser]:
    with tempfile.TemporaryDirectory(prefix="panelot-crash-rescue-") as profile:
        browser = CrashableBrowser(playwright, profile, f"{web_server}index.html")
        yield browser
        browser.close()


def _new_thread(page: Page, title: str) -> tuple[str, dict[str, Any]]:
    tid, record = run_py(page, NEW_THREAD.format(title=title, old=OLD_KEYS))
    return str(tid), record


def _command(tid: str, sub: str) -> dict[str, Any]:
    return {
        "type": "thread.rescued",
        "clientId": "crash",
        "submissionId": sub,
        "payload": {
            "threadId": tid,
            "model": "m",
            "record": {"itemKeys": NEW_KEYS, "contextBudget": 4000},
        },
    }


def _check(state: dict[str, Any], old: dict[str, Any], point: int) -> bool:
    """Assert the old record or the new, whole; return whether the command landed."""
    thread, receipt = state["thread"], state["receipt"]
    assert thread is not None, point
    if receipt is None:
        assert thread == old, point
        return False
    cut = thread["requestCut"]
    assert receipt["response"]["requestCut"] == cut, point
    assert cut["model"] == "m" and cut["itemKeys"] == OLD_KEYS + NEW_KEYS, point
    assert cut["contextBudget"] == 4000, point
    rest = {k: v for k, v in thread.items() if k != "requestCut"}
    assert rest == {k: v for k, v in old.items() if k != "requestCut"}, point
    return True


def test_thread_rescued_survives_kills(crashable: CrashableBrowser) -> None:
    rng = random.Random(20261204)
    page = crashable.page()
    warm_tid, _ = _new_thread(page, "warm-up")
    out = page.evaluate(
        """async (c) => { const t = performance.now(); const r = await window.panelot.send(c);
                          return [r, (performance.now() - t) / 1000]; }""",
        _command(warm_tid, "rescued-warmup"),
    )
    assert out[0]["status"] == "completed", out[0]
    window = KillWindow(rng, float(out[1]))
    outcomes = {"before": 0, "after": 0}
    for point in range(KILL_POINTS):
        sub = f"rescued-{point}"
        tid, old = _new_thread(page, sub)
        command = _command(tid, sub)
        page.evaluate(KICK, [command])
        kill(crashable, page, point, window.next())
        page = crashable.page()
        landed = _check(run_py(page, STATE.format(tid=tid, sub=sub)), old, point)
        outcomes["after" if landed else "before"] += 1
        window.saw(landed)
        again = page.evaluate("(c) => window.panelot.send(c)", command)
        assert again["status"] == "completed", again
        assert _check(run_py(page, STATE.format(tid=tid, sub=sub)), old, point)
    print(f"thread.rescued kill points: {json.dumps(outcomes)} (warm-up {out[1]:.2f} s)")
    assert sum(outcomes.values()) == KILL_POINTS
