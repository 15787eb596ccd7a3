"""Crash consistency: kill the page, or the whole browser, in the middle of long operations.

For each operation, 20 kill points drawn from a fixed seed, within a window that follows
the operation's measured duration (:class:`crash_support.KillWindow`: a kill long after
the operation ended proves little and costs a wait). After each kill the same
profile is opened again and the state must be either wholly before or wholly after the
operation's transaction: no orphan nodes, no receipt without its effect and no effect
without its receipt. Every fifth kill is a SIGKILL of the whole browser process; the
others close the page's renderer.
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
from panelot.bus.receipts import receipt_id
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


@pytest.fixture()
def crashable(playwright: Playwright, web_server: str) -> Iterator[CrashableBrowser]:
    with tempfile.TemporaryDirectory(prefix="panelot-crash-") as profile:
        browser = CrashableBrowser(playwright, profile, f"{web_server}index.html")
        yield browser
        browser.close()


def _state(page: Page, sub: str) -> Any:
    return run_py(page, STATE.format(sub=sub))


TIMED = """async (c) => { const t = performance.now(); const r = await window.panelot.send(c);
                            return [r, (performance.now() - t) / 1000]; }"""


def _timed(page: Page, command: dict[str, Any]) -> float:
    """Run ``command`` to the end (a warm-up, not killed); return how long it took."""
    out = page.evaluate(TIMED, command)
    assert out[0]["status"] == "completed", out[0]
    return float(out[1])


def test_thread_delete_survives_kills(crashable: CrashableBrowser) -> None:
    rng = random.Random(20261130)
    page = crashable.page()
    warm = run_py(page, SEED.format(title="warm-up", n=DELETE_NODES))
    took = _timed(page, {"type": "thread.delete", "clientId": "crash", "submissionId": "warm",
                         "payload": {"threadId": warm}})  # fmt: skip
    window = KillWindow(rng, took)
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
        kill(crashable, page, point, window.next())
        page = crashable.page()
        state = _state(page, sub)
        assert state["orphans"] == 0, state
        window.saw(tid not in state["threads"])
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
    print(f"thread.delete kill points: {outcomes} (warm-up {took:.2f} s)")
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


#: The import command, built in the page from the export's JSON text: Playwright takes
#: seconds to carry 10,000 nodes as an object, and milliseconds as one string.
IMPORT = """([text, title, sub, timed]) => {
  const data = JSON.parse(text);
  data.thread.title = title;
  const command = { type: "thread.import", clientId: "crash", submissionId: sub,
                    payload: { data } };
  if (!timed) { window.__job = window.panelot.send(command); return null; }
  const t = performance.now();
  return window.panelot.send(command).then((r) => [r, (performance.now() - t) / 1000]);
}"""


def test_thread_import_survives_kills(crashable: CrashableBrowser) -> None:
    rng = random.Random(30111126)
    text = json.dumps(_export(IMPORT_NODES))
    page = crashable.page()
    out, took = page.evaluate(IMPORT, [text, "warm-up", "warm", True])
    assert out["status"] == "completed", out
    window = KillWindow(rng, took)
    outcomes = {"before": 0, "after": 0}
    for point in range(KILL_POINTS):
        sub = f"import-{point}"
        page.evaluate(IMPORT, [text, f"import-{point}", sub, False])
        kill(crashable, page, point, window.next())
        page = crashable.page()
        state = _state(page, sub)
        assert state["orphans"] == 0, state
        window.saw(state["receipt"] is not None)
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
    print(f"thread.import kill points: {outcomes} (warm-up {took:.2f} s)")
    assert sum(outcomes.values()) == KILL_POINTS
