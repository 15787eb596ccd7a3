"""Crash consistency of a summary's writes: ``summary.claim`` and ``summary.store``.

Same method as test_crash_message_send.py: kill points from a fixed seed, at random
offsets across the command (a first run, not killed, measures it; the kill window
follows the command's speed), every fifth one a SIGKILL of the whole browser, the
others closing the page's renderer; the same profile directory is reopened each time.
Even points kill a ``summary.claim``, odd ones a ``summary.store`` after a claim.

After each restart the thread's summary is either as before the command or as after
it, never half: no summary record and no receipt, or one pending, empty record and the
claim's receipt naming it; a pending, empty record and no store receipt, or a done
record whose size and bytes are the summary's text, with the store's receipt. A retry
of the same submission then completes it, or replays the receipt.
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
ORIGINAL_BYTES = 512 * 1024
SUMMARY = "A dense summary line.\n" * 4_000  # 88,000 characters, the longest kind

#: Setup that must survive a SIGKILL: written again in a ``strict`` transaction (as in
#: test_crash_message_send.py), the claim too when the point kills a store.
SETUP = """
import json, base64
from panelot.runtime import store
s = store()
tid = await s.create_thread({title!r})
data = ("original text\\n" * {lines}).encode()
put = await s.command("attachment.put", {{"threadId": tid, "kind": "file", "mime": "text/plain",
    "dataBase64": base64.b64encode(data).decode(), "meta": {{"title": "notes.txt"}}}})
aid = put["attachmentId"]
if {claimed!r}:
    await s.command("summary.claim", {{"attachmentId": aid, "model": "m1"}})
async def again(tx):
    await tx.table("threads").put(await tx.table("threads").get(tid))
    for row in await tx.table("attachments").where("threadId").equals(tid).to_list():
        await tx.table("attachments").put(row)
await s.db.transaction("rw", ["threads", "attachments"], again, durability="strict")
json.dumps([tid, aid])
"""

STATE = """
import json
from panelot.runtime import store
from panelot.bus.receipts import receipt_id
from panelot.idb.blobs import blob_bytes
s = store()
rows = await s.db.table("attachments").where("threadId").equals({tid!r}).to_list()
summaries = []
for r in rows:
    if str(r.get("sourceRef", "")).startswith("summary:"):
        data = await blob_bytes(r["bytes"])
        summaries.append({{"id": r["id"], "size": r["size"], "meta": r["meta"],
                          "text": data.decode(), "createdAt": r["createdAt"]}})
original = [r for r in rows if r["id"] == {aid!r}][0]
receipt = await s.db.table("commandReceipts").get(receipt_id("crash", {sub!r}))
json.dumps({{"summaries": summaries, "receipt": receipt, "original": original["size"],
            "createdAt": original["createdAt"]}})
"""


@pytest.fixture()
def crashable(playwright: Playwright, web_server: str) -> Iterator[CrashableBrowser]:
    with tempfile.TemporaryDirectory(prefix="panelot-crash-summary-") as profile:
        browser = CrashableBrowser(playwright, profile, f"{web_server}index.html")
        yield browser
        browser.close()


def _setup(page: Page, title: str, claimed: bool) -> tuple[str, str]:
    lines = ORIGINAL_BYTES // len("original text\n")
    tid, aid = run_py(page, SETUP.format(title=title, lines=lines, claimed=claimed))
    return str(tid), str(aid)


def _command(kind: str, aid: str, sub: str) -> dict[str, Any]:
    payload: dict[str, Any] = {"attachmentId": aid, "model": "m1"}
    if kind == "summary.store":
        payload["text"] = SUMMARY
    return {"type": kind, "clientId": "crash", "submissionId": sub, "payload": payload}


def _check(state: dict[str, Any], kind: str, point: int) -> bool:
    """Assert the old state or the new; return whether the command landed."""
    summaries, receipt = state["summaries"], state["receipt"]
    assert state["original"] == ORIGINAL_BYTES // 14 * 14, point  # the original untouched
    if kind == "summary.claim" and receipt is None:
        assert summaries == [], (point, summaries)
        return False
    (summary,) = summaries
    assert summary["createdAt"] == state["createdAt"], point
    if kind == "summary.claim" or receipt is None:
        assert summary["meta"]["state"] == "pending", (point, summary["meta"])
        assert summary["size"] == 0 and summary["text"] == "", point
        if kind == "summary.claim":
            assert receipt["response"]["summaryId"] == summary["id"], point
        return receipt is not None
    assert summary["meta"]["state"] == "done", (point, summary["meta"])
    assert summary["text"] == SUMMARY and summary["size"] == len(SUMMARY.encode()), point
    assert receipt["response"] == {"summaryId": summary["id"], "size": summary["size"]}, point
    return True


def _timed(page: Page, command: dict[str, Any]) -> float:
    out = page.evaluate(
        """async (c) => { const t = performance.now(); const r = await window.panelot.send(c);
                          return [r, (performance.now() - t) / 1000]; }""",
        command,
    )
    assert out[0]["status"] == "completed", out[0]
    return float(out[1])


def test_summary_writes_survive_kills(crashable: CrashableBrowser) -> None:
    rng = random.Random(20261204)
    page = crashable.page()
    windows = {}
    for kind in ("summary.claim", "summary.store"):
        _, aid = _setup(page, f"warm-up {kind}", kind == "summary.store")
        windows[kind] = KillWindow(rng, _timed(page, _command(kind, aid, f"warm-{kind}")))
    outcomes = {"before": 0, "after": 0}
    for point in range(KILL_POINTS):
        kind = "summary.claim" if point % 2 == 0 else "summary.store"
        sub = f"summary-{point}"
        tid, aid = _setup(page, f"summary-{point}", kind == "summary.store")
        command = _command(kind, aid, sub)
        page.evaluate(KICK, [command])
        kill(crashable, page, point, windows[kind].next())
        page = crashable.page()
        landed = _check(run_py(page, STATE.format(tid=tid, aid=aid, sub=sub)), kind, point)
        outcomes["after" if landed else "before"] += 1
        windows[kind].saw(landed)
        again = page.evaluate("(c) => window.panelot.send(c)", command)
        assert again["status"] == "completed", again
        assert _check(run_py(page, STATE.format(tid=tid, aid=aid, sub=sub)), kind, point)
        cleanup = {"type": "thread.delete", "clientId": "crash", "submissionId": f"rm-{point}",
                   "payload": {"threadId": tid}}  # fmt: skip
        assert page.evaluate("(c) => window.panelot.send(c)", cleanup)["status"] == "completed"
    print(f"summary kill points: {json.dumps(outcomes)}")
    assert sum(outcomes.values()) == KILL_POINTS
