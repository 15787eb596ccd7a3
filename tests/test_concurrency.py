"""Concurrent contexts: two pages of one origin share ``panelot_v1`` and write at once.

Each page runs its own Pyodide and its own connection; IndexedDB serializes their
overlapping read-write transactions, and the store must stay consistent through it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from browser_harness import query, wait_ready

N = 500

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
    created = a.evaluate(
        "() => window.panelot.send({type: 'thread.create', clientId: 'setup', "
        "submissionId: crypto.randomUUID(), payload: {title: 'shared'}})"
    )
    tid = created["response"]["threadId"]
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
    tid = a.evaluate(
        "() => window.panelot.send({type: 'thread.create', clientId: 'setup', "
        "submissionId: crypto.randomUUID(), payload: {}})"
    )["response"]["threadId"]
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
