"""Crash consistency of ``message.send``: a message and its files land together or not at all.

Same method as test_crash_consistency.py: 20 kill points from a fixed seed, at random
offsets across the command (a first run, not killed, measures it; the kill window
follows the command's speed). Every fifth kill SIGKILLs the whole browser, the others
close the page's renderer; the same profile directory is reopened each time. After
each restart the thread holds either nothing of the message (no node, no attachment,
no receipt) or all of it: the node, every file with its reference to the node and the
node's blocks naming every file, and the receipt. A retry of the same submission then
completes it, or replays the receipt.
"""

from __future__ import annotations

import base64
import json
import os
import random
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, Playwright

from browser_harness import run_py
from crash_support import KICK, CrashableBrowser, KillWindow, kill

KILL_POINTS = 20
FILES, FILE_BYTES = 5, 512 * 1024

STATE = """
import json
from panelot.runtime import store
from panelot.bus.receipts import receipt_id
s = store()
tid = {tid!r}
nodes = await s.db.table("nodes").where("threadId").equals(tid).to_list()
files = await s.db.table("attachments").where("threadId").equals(tid).omit("bytes").to_list()
receipt = await s.db.table("commandReceipts").get(receipt_id("crash", {sub!r}))
json.dumps({{"nodes": nodes, "files": files, "receipt": receipt}})
"""


@pytest.fixture()
def crashable(playwright: Playwright, web_server: str) -> Iterator[CrashableBrowser]:
    with tempfile.TemporaryDirectory(prefix="panelot-crash-send-") as profile:
        browser = CrashableBrowser(playwright, profile, f"{web_server}index.html")
        yield browser
        browser.close()


def _command(tid: str, sub: str, files: list[bytes]) -> dict[str, Any]:
    return {
        "type": "message.send",
        "clientId": "crash",
        "submissionId": sub,
        "payload": {
            "threadId": tid,
            "parentId": None,
            "content": [
                {"type": "text", "text": f"message {sub}"},
                *({"type": "file", "upload": i} for i in range(len(files))),
            ],
            "uploads": [
                {
                    "mime": "application/octet-stream",
                    "name": f"f{i}.bin",
                    "dataBase64": base64.b64encode(data).decode(),
                }
                for i, data in enumerate(files)
            ],  # fmt: skip
        },
    }


#: The thread is written again in a ``strict`` transaction before the kill. Chromium
#: commits with relaxed durability by default, and a SIGKILL of the whole browser can lose
#: a commit it already acknowledged (seen once in a clean-clone run: the thread made just
#: before the kill was gone after the restart). The setup must survive; the command under
#: test is judged all or nothing.
NEW_THREAD = """
import json
from panelot.runtime import store
s = store()
tid = await s.create_thread({title!r})
async def again(tx):
    t = tx.table("threads")
    await t.put(await t.get(tid))
await s.db.transaction("rw", ["threads"], again, durability="strict")
json.dumps(tid)
"""


def _new_thread(page: Page, title: str) -> str:
    return str(run_py(page, NEW_THREAD.format(title=title)))


def _check(state: dict[str, Any], point: int) -> bool:
    """Assert all or nothing; return whether the message landed."""
    nodes, files, receipt = state["nodes"], state["files"], state["receipt"]
    if receipt is None:
        assert nodes == [] and files == [], (point, len(nodes), len(files))
        return False
    (node,) = nodes
    assert receipt["response"]["nodeId"] == node["id"], point
    named = [b["attachmentId"] for b in node["payload"]["content"] if b["type"] == "file"]
    assert sorted(named) == sorted(f["id"] for f in files) and len(files) == FILES, point
    assert all(f["refs"]["nodeIds"] == [node["id"]] for f in files), point
    assert all(not f.get("deleting") and f["size"] == FILE_BYTES for f in files), point
    return True


def test_message_send_survives_kills(crashable: CrashableBrowser) -> None:
    rng = random.Random(20261203)
    files = [os.urandom(FILE_BYTES) for _ in range(FILES)]
    page = crashable.page()
    warm = _command(_new_thread(page, "warm-up"), "send-warmup", files)
    out = page.evaluate(
        """async (c) => { const t = performance.now(); const r = await window.panelot.send(c);
                          return [r, (performance.now() - t) / 1000]; }""",
        warm,
    )
    assert out[0]["status"] == "completed", out[0]
    window = KillWindow(rng, float(out[1]))
    outcomes = {"before": 0, "after": 0}
    for point in range(KILL_POINTS):
        tid, sub = _new_thread(page, f"send-{point}"), f"send-{point}"
        command = _command(tid, sub, files)
        page.evaluate(KICK, [command])
        kill(crashable, page, point, window.next())
        page = crashable.page()
        landed = _check(run_py(page, STATE.format(tid=tid, sub=sub)), point)
        outcomes["after" if landed else "before"] += 1
        window.saw(landed)
        again = page.evaluate("(c) => window.panelot.send(c)", command)
        assert again["status"] == "completed", again
        assert _check(run_py(page, STATE.format(tid=tid, sub=sub)), point)
        cleanup = {"type": "thread.delete", "clientId": "crash", "submissionId": f"rm-{point}",
                   "payload": {"threadId": tid}}  # fmt: skip
        assert page.evaluate("(c) => window.panelot.send(c)", cleanup)["status"] == "completed"
    print(f"message.send kill points: {json.dumps(outcomes)} (warm-up {out[1]:.2f} s)")
    assert sum(outcomes.values()) == KILL_POINTS
