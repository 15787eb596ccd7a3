"""Concurrent contexts: two pages of one origin share ``panelot_v1`` and write at once.

Each page runs its own Pyodide and its own connection; IndexedDB serializes their
overlapping read-write transactions, and the store must stay consistent through it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from behavior.runs.cases_runs import snapshot_body
from browser_harness import query, run_py, wait_ready
from panelot.testing import PageStore

N = 500
CLAIMS = 10
ASK = {"toolName": "click", "params": {"selector": "#buy"}, "origin": "https://shop.example"}

START_APPENDS = """([threadId, client, n]) => {
  window.__job = (async () => {
    const failures = [];
    for (let i = 0; i < n; i++) {
      const out = await window.panelot.send({ type: "message.append", clientId: client,
        submissionId: `${client}-${i}`,
        payload: { threadId, type: "user_message",
                   payload: { content: [{ type: "text", text: `${client} ${i}` }] } } });
      if (out.status !== "completed") failures.push(out.error);
    }
    return failures;
  })();
}"""

#: Claims every approval at once when the wall clock reaches ``at`` (both pages share it).
START_CLAIMS = """([ids, client, decision, at]) => {
  window.__job = new Promise((go) => setTimeout(go, Math.max(0, at - Date.now()))).then(() =>
    Promise.all(ids.map((approvalId) => window.panelot.send({
      type: "approval.claim", clientId: client, submissionId: `${client}-${approvalId}`,
      payload: { approvalId, decision } }))));
}"""

START_SAME_SUBMISSION = """([command]) => {
  window.__job = Promise.all([window.panelot.send(command), window.panelot.send(command)]);
}"""


@pytest.fixture(scope="module")
def two_pages(browser: Browser, web_server: str) -> Iterator[tuple[Page, Page]]:
    context = browser.new_context()
    pages = (context.new_page(), context.new_page())
    for page in pages:
        page.goto(f"{web_server}index.html")
    for page in pages:
        wait_ready(page)
    yield pages
    context.close()


def _finish(page: Page, timeout_ms: int = 240_000) -> Any:
    page.set_default_timeout(timeout_ms)
    return page.evaluate("async () => await window.__job")


def test_two_contexts_append_500_each_to_one_thread(two_pages: tuple[Page, Page]) -> None:
    a, b = two_pages
    tid = PageStore(a, client_id="setup").send("thread.create", {"title": "shared"})["threadId"]
    a.evaluate(START_APPENDS, [tid, "panel", N])
    b.evaluate(START_APPENDS, [tid, "console", N])
    assert _finish(a) == [] and _finish(b) == []
    data = query(a, "thread.export", {"threadId": tid})["data"]
    nodes = data["nodes"]
    assert len(nodes) == 2 * N
    seqs = [n["seq"] for n in nodes]
    assert seqs == list(range(1, 2 * N + 1))  # unique and strictly increasing
    texts = {n["payload"]["content"][0]["text"] for n in nodes}
    assert texts == {f"{c} {i}" for c in ("panel", "console") for i in range(N)}
    ids = {n["id"] for n in nodes}
    assert data["thread"]["leafId"] in ids
    # each append chained on the leaf it read: the thread is one intact path
    assert all(n["parentId"] is None or n["parentId"] in ids for n in nodes)
    assert query(b, "thread.check", {"threadId": tid}) == {"ok": True, "problems": []}
    path = query(b, "thread.context", {"threadId": tid})["path"]
    assert len(path) == 2 * N


def test_two_contexts_run_the_same_submission_once(two_pages: tuple[Page, Page]) -> None:
    a, b = two_pages
    tid = PageStore(a, client_id="setup").send("thread.create", {})["threadId"]
    command = {
        "type": "message.append",
        "clientId": "both",
        "submissionId": uuid.uuid4().hex,
        "payload": {"threadId": tid, "type": "user_message", "payload": {"content": []}},
    }
    a.evaluate(START_SAME_SUBMISSION, [command])
    b.evaluate(START_SAME_SUBMISSION, [command])
    results = _finish(a) + _finish(b)
    assert all(r["status"] == "completed" for r in results)
    assert len({r["response"]["nodeId"] for r in results}) == 1  # one execution
    assert len(query(a, "thread.export", {"threadId": tid})["data"]["nodes"]) == 1
    receipts = [r for r in query(b, "receipts.list", {"clientId": "both", "limit": 10})]
    assert len(receipts) == 1


def test_two_contexts_claim_the_same_approval_exactly_once(two_pages: tuple[Page, Page]) -> None:
    a, b = two_pages
    setup = PageStore(a, client_id="setup")
    tid = setup.send("thread.create", {"title": "approvals"})["threadId"]
    a.set_default_timeout(120_000)
    snapshot = snapshot_body()
    ids = []
    for i in range(CLAIMS):
        run = {"threadId": tid, "input": f"run {i}", "snapshot": snapshot}
        run_id = setup.send("run.start", run)["runId"]
        setup.send("run.transition", {"runId": run_id, "to": "preparing"})
        setup.send("run.transition", {"runId": run_id, "to": "running"})
        asked = setup.send("approval.request", {"threadId": tid, "runId": run_id, "request": ASK})
        ids.append(asked["approvalId"])
    assert len(set(ids)) == CLAIMS
    # both contexts claim every approval at once, in opposite orders, with opposite
    # decisions: the two queues meet in the middle, so each side wins some races
    at = a.evaluate("() => Date.now() + 500")
    a.evaluate(START_CLAIMS, [ids, "claimer-a", "approved", at])
    b.evaluate(START_CLAIMS, [ids[::-1], "claimer-b", "denied", at])
    by_a = dict(zip(ids, _finish(a), strict=True))
    by_b = dict(zip(ids[::-1], _finish(b), strict=True))
    winners: dict[str, str] = {}
    for approval_id in ids:
        pair = {"approved": by_a[approval_id], "denied": by_b[approval_id]}
        won = [d for d, r in pair.items() if r["status"] == "completed"]
        assert len(won) == 1, pair  # exactly one claim succeeds ...
        lost = pair["denied" if won == ["approved"] else "approved"]
        assert lost["status"] == "failed", pair
        assert lost["error"]["name"] == "AlreadyResolvedError"  # ... the other is told why
        assert lost["error"]["field"] == "payload.approvalId"
        winners[approval_id] = won[0]
        assert pair[won[0]]["response"]["runState"] == "running"
    data = query(b, "thread.export", {"threadId": tid})["data"]
    decisions = [n for n in data["nodes"] if n["type"] == "approval_decision"]
    assert sorted(n["payload"]["approvalId"] for n in decisions) == sorted(ids)  # one each
    assert {n["payload"]["approvalId"]: n["payload"]["decision"] for n in decisions} == winners
    assert len({n["seq"] for n in data["nodes"]}) == len(data["nodes"])
    assert query(a, "thread.check", {"threadId": tid}) == {"ok": True, "problems": []}
    assert query(a, "approvals.pending", {"threadId": tid}) == {"approvals": [], "interactions": []}
    stored = _approvals(a, ids)
    for approval_id in ids:
        record = stored[approval_id]
        assert record["status"] == "resolved" and record["decision"] == winners[approval_id]
        node = next(n for n in decisions if n["payload"]["approvalId"] == approval_id)
        assert record["nodeId"] == node["id"]
    print(
        f"approval races: {CLAIMS}, won by the first context: "
        f"{sum(w == 'approved' for w in winners.values())}, by the second: "
        f"{sum(w == 'denied' for w in winners.values())}"
    )
    for client, decision in (("claimer-a", "approved"), ("claimer-b", "denied")):
        receipts = query(a, "receipts.list", {"clientId": client, "limit": 100})
        assert len(receipts) == sum(w == decision for w in winners.values())  # losers: none


def _approvals(page: Page, ids: list[str]) -> dict[str, Any]:
    """The stored approval records, read straight from IndexedDB in the page."""
    code = (
        "import json\nfrom panelot.runtime import store\n"
        f"rows = await store().db.table('approvals').bulk_get({json.dumps(ids)})\n"
        "json.dumps({r['id']: r for r in rows if r})"
    )
    return dict(run_py(page, code))
