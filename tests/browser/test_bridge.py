"""The JS bridge: ``panelot.send`` and ``panelot.query`` in the page, on real IndexedDB.

Also checks the receipt fingerprint against an independent JavaScript RFC 8785
canonicalizer (the npm ``canonicalize`` package) hashed with WebCrypto.
"""

from __future__ import annotations

import uuid
from typing import Any

from playwright.sync_api import Browser, Page

from behavior.payloads import text
from browser_harness import query, run_py, wait_ready


def send(page: Page, command: dict[str, Any]) -> Any:
    return page.evaluate("(c) => window.panelot.send(c)", command)


def cmd(kind: str, payload: dict[str, Any], sub: str | None = None) -> dict[str, Any]:
    return {
        "type": kind,
        "clientId": "bridge-test",
        "submissionId": sub or uuid.uuid4().hex,
        "payload": payload,
    }


def test_every_command_and_query_through_the_bridge(harness_page: Page) -> None:
    p = harness_page
    created = send(p, cmd("thread.create", {"title": "bridge", "tags": ["a"]}))
    assert created["status"] == "completed"
    tid = created["response"]["threadId"]
    u = send(
        p, cmd("message.append", {"threadId": tid, "type": "user_message", "payload": text("hi")})
    )["response"]
    a = send(
        p,
        cmd(
            "message.append",
            {
                "threadId": tid,
                "type": "assistant_message",
                "payload": {**text("yo"), "model": "m", "connectionId": "c"},
            },
        ),
    )["response"]
    assert u["seq"] == 1 and a["seq"] == 2 and a["leafId"] == a["nodeId"]
    e = send(
        p, cmd("message.edit", {"threadId": tid, "nodeId": u["nodeId"], "payload": text("hi!")})
    )["response"]
    r = send(
        p,
        cmd(
            "message.regenerate",
            {
                "threadId": tid,
                "userNodeId": e["nodeId"],
                "payload": {**text("again"), "model": "m", "connectionId": "c"},
            },
        ),
    )["response"]
    assert send(p, cmd("branch.switch", {"threadId": tid, "nodeId": u["nodeId"]}))["response"] == {
        "leafId": a["nodeId"]
    }
    deleted = send(p, cmd("message.delete", {"threadId": tid, "nodeId": r["nodeId"]}))
    assert deleted["response"]["deleted"] == [r["nodeId"]]
    updated = send(p, cmd("thread.update", {"threadId": tid, "patch": {"pinned": True}}))[
        "response"
    ]["thread"]
    assert updated["pinned"] is True and updated["id"] == tid

    listed = query(p, "thread.list", {"limit": 50})
    assert listed[0]["id"] == tid
    assert query(p, "thread.get", {"threadId": tid})["leafId"] == a["nodeId"]
    context = query(p, "thread.context", {"threadId": tid})
    assert [m["role"] for m in context["messages"]] == ["user", "assistant"]
    assert context["path"] == [u["nodeId"], a["nodeId"]]
    snap = query(p, "thread.snapshot", {"threadId": tid})
    assert [(n["siblingIndex"], n["siblingCount"]) for n in snap["nodes"]] == [(1, 2), (1, 1)]
    assert [s["id"] for s in query(p, "thread.siblings", {"nodeId": u["nodeId"]})] == [
        u["nodeId"],
        e["nodeId"],
    ]
    assert query(p, "thread.check", {"threadId": tid}) == {"ok": True, "problems": []}
    md = query(p, "thread.export", {"threadId": tid, "format": "markdown"})["markdown"]
    assert md.startswith("# bridge")
    data = query(p, "thread.export", {"threadId": tid, "format": "json"})["data"]
    assert len(data["nodes"]) == 4
    imported = send(p, cmd("thread.import", {"data": data}))["response"]
    assert imported["nodes"] == 4 and imported["threadId"] != tid

    # the stored records are what the UI was told
    stored = run_py(
        p,
        f"""
import json
from panelot.runtime import store
nodes = await store().db.table("nodes").where("threadId").equals({tid!r}).to_list()
json.dumps(sorted((n["seq"], n["id"], n["payload"].get("deleted", False)) for n in nodes))
""",
    )
    assert [s[1] for s in stored] == [u["nodeId"], a["nodeId"], e["nodeId"], r["nodeId"]]
    assert stored[3][2] is True


def test_send_never_rejects_for_domain_errors_and_query_rejects_with_plain_error(
    harness_page: Page,
) -> None:
    out = send(
        harness_page,
        {"type": "message.append", "clientId": "c", "submissionId": "s", "payload": {}},
    )
    assert out["status"] == "failed" and out["error"]["field"] == "payload.threadId"
    out = send(harness_page, {"type": "bogus"})
    assert out["status"] == "failed" and out["error"]["name"] == "UnknownCommandError"
    err = harness_page.evaluate(
        "async () => { try { await window.panelot.query('thread.get', {threadId: 'missing'}); return null; }"
        " catch (e) { return {proto: Object.getPrototypeOf(e) === Object.prototype, ...e}; } }"
    )
    assert err == {
        "proto": True,
        "name": "NotFoundError",
        "message": "thread 'missing' does not exist",
        "field": "threadId",
    }


FINGERPRINT_JS = """async (commands) => {
  const { default: canonicalize } = await import("/vendor/canonicalize.mjs");
  const out = [];
  for (const c of commands) {
    const { type, clientId, submissionId, ...rest } = c;
    const bytes = new TextEncoder().encode(canonicalize(rest));
    const digest = await crypto.subtle.digest("SHA-256", bytes);
    out.push(Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join(""));
  }
  return out;
}"""


def test_fingerprint_matches_a_javascript_rfc8785_canonicalizer(harness_page: Page) -> None:
    commands = [
        cmd(
            "message.append",
            {"threadId": "t", "type": "user_message", "payload": text('héllo ✓ \u2028 "q"')},
        ),
        cmd(
            "thread.update",
            {
                "threadId": "t",
                "patch": {
                    "tags": ["z", "a"],
                    "pinned": False,
                    "n": 1e21,
                    "f": 0.1 + 0.2,
                    "neg": -0.0,
                    "big": 9007199254740991,
                },
            },
        ),
        cmd(
            "thread.create",
            {"title": "\U0001f600 emoji", "b": {"y": 1, "x": [None, True, {"é": 2, "e": 1}]}},
        ),
        {"type": "x", "clientId": "c", "submissionId": "s", "payload": {}, "extra": 5.5e-7},
    ]
    js = harness_page.evaluate(FINGERPRINT_JS, commands)
    import json

    py = run_py(
        harness_page,
        f"""
import json
from panelot.bus.receipts import fingerprint
json.dumps([fingerprint(c) for c in json.loads({json.dumps(json.dumps(commands))})])
""",
    )
    assert py == js
    from panelot.bus.receipts import fingerprint

    assert [fingerprint(c) for c in commands] == js  # CPython agrees too


def test_package_bytecode_is_used_in_pyodide(browser: Browser, web_server: str) -> None:
    """A normal load imports every panelot module from build.py's bytecode.

    (Without the memory snapshot.) No page load compiles the package.
    """
    context = browser.new_context()
    context.route("**/snapshot/manifest.json", lambda route: route.fulfill(status=404))
    page = context.new_page()
    page.goto(f"{web_server}index.html")
    wait_ready(page)
    assert page.evaluate("() => window.panelot.snapshot") == "absent"
    out = run_py(
        page,
        """
import json, os, sys, importlib.util
import panelot.runtime, panelot.store
rows = []
for name, mod in sorted(sys.modules.items()):
    if name != "panelot" and not name.startswith("panelot."):
        continue
    cached = getattr(mod, "__cached__", None)
    data = open(cached, "rb").read(16) if cached and os.path.exists(cached) else b""
    rows.append([name, bool(data), data[:4] == importlib.util.MAGIC_NUMBER,
                 int.from_bytes(data[4:8], "little") if data else -1])
json.dumps(rows)
""",
    )
    assert len(out) > 30
    missing = [name for name, present, _, _ in out if not present]
    assert missing == []
    assert all(magic for _, _, magic, _ in out)  # compiled by this very interpreter
    assert {flags for _, _, _, flags in out} == {1}  # hash-based, source not checked
    context.close()
