"""Crash consistency of the legacy (browsa) import and of attachment eviction.

Same method as test_crash_consistency.py: 20 kill points per operation from a fixed
seed, at random offsets across the operation (a first run, not killed, measures it;
:class:`crash_support.KillWindow` keeps the window across it). Every fifth kill SIGKILLs the whole browser, the others close
the page's renderer; the same profile directory is reopened each time.

* ``legacy.import`` runs in the real extension (``chrome.storage.local`` and IndexedDB
  both survive the kill). After the restart: the source keys are untouched; the
  session index is either the original one or fully migrated, and a migrated index
  never names a body that is missing; in IndexedDB the import is absent (no receipt)
  or complete with its receipt; nothing is orphaned. A rerun of the same submission
  completes it (or replays it), and a new submission imports nothing more.
* ``attachment.evict`` (two steps: marks, then deletes) runs on the harness origin.
  After the restart (whose start-up finishes an interrupted eviction) no record is left
  ``deleting``, no node references a missing attachment without ``evicted`` (nor marks
  an existing one evicted), the victims are all present or all gone, and the usage
  totals match the records.
"""

from __future__ import annotations

import copy
import json
import random
import tempfile
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, Playwright

from behavior.legacy.browsa_fixture import data_url, history, png, split_session
from browser_harness import run_py
from crash_support import (
    KICK,
    CrashableBrowser,
    KillWindow,
    extension_args,
    extension_url,
    kill,
)
from panelot.legacy.convert import plan_history
from panelot.legacy.importer import NAMESPACE
from panelot.legacy.layout import light_entry

KILL_POINTS = 20


def py(page: Page, code: str, **params: Any) -> Any:
    """Run ``code`` in the page's Pyodide with ``P`` bound to ``params``."""
    return run_py(page, f"import json\nP = json.loads({json.dumps(json.dumps(params))})\n{code}")


def timed_send(page: Page, command: dict[str, Any]) -> tuple[Any, float]:
    """Send ``command`` to its end; return the envelope and the seconds it took."""
    out = page.evaluate(
        """async (c) => { const t = performance.now(); const r = await window.panelot.send(c);
                          return [r, (performance.now() - t) / 1000]; }""",
        command,
    )
    return out[0], float(out[1])


def send_envelope(page: Page, command: dict[str, Any]) -> Any:
    """Send ``command`` and return its envelope."""
    return page.evaluate("(c) => window.panelot.send(c)", command)


def command(kind: str, sub: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A bus command of the crash tests' client."""
    return {"type": kind, "clientId": "crash", "submissionId": sub, "payload": payload}


@pytest.fixture()
def profile() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="panelot-crash2-") as path:
        yield path


# ---- attachment eviction -----------------------------------------------------------------

EVICT_THREADS, EVICT_PER_THREAD, EVICT_BYTES = 5, 20, 4096

EVICT_SEED = """
import os
from panelot.runtime import store
from panelot.attachments.records import AttachmentInput, put_attachment
s = store()
active = await s.create_thread("active-" + P["point"])
tids = [await s.create_thread(f"evict-{P['point']}-{i}") for i in range(P["threads"])]
data = os.urandom(P["size"])

async def body(tx):
    for tid in [active, *tids]:
        nodes = []
        for i in range(P["per"]):
            image = AttachmentInput(thread_id=tid, kind="image", mime="image/png", data=data)
            rec = await put_attachment(tx, image)
            block = {"type": "image", "attachmentId": rec["id"], "mime": "image/png"}
            nodes.append({"id": f"{tid}-{i}", "threadId": tid, "seq": i + 1, "ts": i,
                          "parentId": f"{tid}-{i - 1}" if i else None, "type": "user_message",
                          "payload": {"content": [{"type": "text", "text": f"img {i}"}, block]}})
        await tx.table("nodes").bulk_put(nodes)
        await tx.table("threads").update(tid, {"leafId": nodes[-1]["id"]})

await s.db.transaction("rw", ["threads", "nodes", "attachments"], body)
rows = await s.db.table("attachments").to_list()
json.dumps({"active": active,
            "victims": sorted(r["id"] for r in rows if r["threadId"] != active),
            "kept": sorted(r["id"] for r in rows if r["threadId"] == active)})
"""

EVICT_STATE = """
from panelot.runtime import store
from panelot.attachments.records import record_size
from panelot.bus.receipts import receipt_id
s = store()
rows = await s.db.table("attachments").to_list()
ids = {r["id"] for r in rows}
dangling = stale = 0
for n in await s.db.table("nodes").to_list():
    payload = n.get("payload") if isinstance(n.get("payload"), dict) else {}
    for b in payload.get("content") or []:
        if isinstance(b, dict) and b.get("type") in ("image", "file"):
            gone = b.get("attachmentId") not in ids
            dangling += gone and b.get("evicted") is not True
            stale += (not gone) and b.get("evicted") is True
json.dumps({"ids": sorted(ids), "deleting": sum(1 for r in rows if r.get("deleting")),
            "dangling": dangling, "stale": stale, "sizes": sum(record_size(r) for r in rows),
            "usage": await s.query("attachment.usage", {}), "startup": s.startup,
            "receipt": await s.db.table("commandReceipts").get(receipt_id("crash", P["sub"]))})
"""


def _seed_eviction(page: Page, point: str) -> dict[str, Any]:
    params = {"point": point, "threads": EVICT_THREADS, "per": EVICT_PER_THREAD}
    seed: dict[str, Any] = py(page, EVICT_SEED, size=EVICT_BYTES, **params)
    assert len(seed["kept"]) == EVICT_PER_THREAD
    assert len(seed["victims"]) >= EVICT_THREADS * EVICT_PER_THREAD
    return seed


def _check_eviction(state: dict[str, Any]) -> None:
    """The invariants that hold after any restart."""
    assert state["deleting"] == 0, state["startup"]  # start-up finished every mark
    assert state["dangling"] == 0 and state["stale"] == 0, state
    assert state["usage"]["total"] == state["sizes"]
    assert state["usage"]["count"] == len(state["ids"])


@pytest.fixture()
def harness_browser(
    playwright: Playwright, web_server: str, profile: str
) -> Iterator[CrashableBrowser]:
    browser = CrashableBrowser(playwright, profile, f"{web_server}index.html")
    yield browser
    browser.close()


def test_attachment_eviction_survives_kills(harness_browser: CrashableBrowser) -> None:
    rng = random.Random(20261201)
    page = harness_browser.page()
    seed = _seed_eviction(page, "warmup")
    payload = {"budget": 0, "activeThreadId": seed["active"]}
    out, took = timed_send(page, command("attachment.evict", "evict-warmup", payload))
    assert out["status"] == "completed" and out["response"]["evicted"] == len(seed["victims"])
    outcomes = {"before": 0, "between": 0, "after": 0}
    window = KillWindow(rng, took)
    for point in range(KILL_POINTS):
        seed = _seed_eviction(page, str(point))
        sub = f"evict-{point}"
        evict = command("attachment.evict", sub, {"budget": 0, "activeThreadId": seed["active"]})
        page.evaluate(KICK, [evict])
        kill(harness_browser, page, point, window.next())
        page = harness_browser.page()
        state = py(page, EVICT_STATE, sub=sub)
        _check_eviction(state)
        present, victims = set(state["ids"]), set(seed["victims"])
        assert set(seed["kept"]) <= present, point  # the active thread is never evicted
        if victims <= present:
            assert state["receipt"] is None and state["startup"]["finished"] == 0, point
            outcomes["before"] += 1
        else:
            assert not victims & present, (point, len(victims & present))  # all or nothing
            if state["receipt"] is None:  # killed between the steps: start-up finished it
                assert state["startup"]["finished"] == len(victims), (point, state["startup"])
                outcomes["between"] += 1
            else:
                assert state["receipt"]["response"]["evicted"] == len(victims)
                outcomes["after"] += 1
        window.saw(state["receipt"] is not None)
        again = send_envelope(page, evict)  # the retry completes, or replays the receipt
        assert again["status"] == "completed", again
        if state["receipt"] is not None:
            assert again["response"] == state["receipt"]["response"]
        else:
            expected = len(victims) if victims <= present else 0
            assert again["response"]["evicted"] == expected, (point, again)
        after = py(page, EVICT_STATE, sub=sub)
        _check_eviction(after)
        assert sorted(after["ids"]) == seed["kept"]
        assert after["usage"]["total"] == EVICT_PER_THREAD * EVICT_BYTES
    print(f"attachment.evict kill points: {outcomes} (warm-up run {took:.2f} s)")
    assert sum(outcomes.values()) == KILL_POINTS


# ---- legacy import -------------------------------------------------------------------------

LEGACY_SESSIONS, LEGACY_TURNS = 5, 30
NO_HISTORY = {"includeHistory": False}
"""The kill points import the sessions only (the warm-up imported the history once)."""


def _legacy_history(k: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in range(LEGACY_TURNS):
        question: Any = f"question {k}.{t} " + "q" * 300
        if t % 8 == 0:
            image = {"type": "image_url", "image_url": {"url": data_url(png(40, 30, k * 100 + t))}}
            question = [{"type": "text", "text": question}, image]
        out.append({"role": "user", "content": question})
        out.append({"role": "assistant", "content": f"answer {k}.{t} " + "a" * 600, "model": "m"})
    return out


def _legacy_layout(point: str, with_history: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A browsa layout with unique session ids, and what importing it must give."""
    legacy = [
        {
            "id": f"{point}-s{k}",
            "name": f"Session {k}",
            "createdAt": 1_690_000_000_000 + k,
            "pinned": k % 2 == 0,
            "history": _legacy_history(k),
        }
        for k in range(LEGACY_SESSIONS)
    ]
    light, body = split_session(f"{point}-split")
    items = {
        "history": history(),
        "savedSessions": [*legacy, light],
        f"session_{light['id']}": body,
        "activeProvider": "hermes",
    }
    sources = [("browsa:history", items["history"])] if with_history else []
    sources += [(f"browsa:session:{e['id']}", e["history"]) for e in legacy]
    sources.append((f"browsa:session:{light['id']}", body["history"]))
    threads = {}
    for key, hist in sources:
        _, counts = plan_history(copy.deepcopy(hist))
        threads[str(uuid.uuid5(NAMESPACE, key))] = [True, counts["messages"], counts["images"]]
    expect = {
        "threads": threads,
        "legacy": {e["id"]: e for e in legacy},
        "light": [light_entry(e) for e in items["savedSessions"]],
        "keys": [*items, *(f"session_{e['id']}" for e in legacy)],
    }
    return items, expect


LEGACY_STATE = """
from panelot.runtime import store
from panelot.bus.receipts import receipt_id
s = store()
threads = {}
for tid in P["threads"]:  # whether it exists, its nodes and attachments (orphans if it does not)
    threads[tid] = [await s.db.table("threads").get(tid) is not None,
                    await s.db.table("nodes").where("threadId").equals(tid).count(),
                    await s.db.table("attachments").where("threadId").equals(tid).count()]
json.dumps({"keys": await s.services.backend.get(P["keys"]), "threads": threads,
            "receipt": await s.db.table("commandReceipts").get(receipt_id("crash", P["sub"]))})
"""

MIGRATE = """
import time
from panelot.legacy.layout import read_session_index
from panelot.runtime import store
t = time.perf_counter()
entries, inline, migrated, _ = await read_session_index(store().services.backend, True)
json.dumps([migrated, time.perf_counter() - t])
"""


def _legacy_state(page: Page, expect: dict[str, Any], sub: str) -> Any:
    return py(page, LEGACY_STATE, threads=list(expect["threads"]), keys=expect["keys"], sub=sub)


def _check_sources(state: dict[str, Any], items: dict[str, Any], expect: dict[str, Any]) -> bool:
    """The source keys are intact and the migration is all-or-nothing; True if migrated."""
    keys = state["keys"]
    for key in ("history", "activeProvider", *(k for k in items if k.startswith("session_"))):
        assert keys[key] == items[key], key  # read, never changed
    migrated = keys["savedSessions"] != items["savedSessions"]
    if migrated:
        assert keys["savedSessions"] == expect["light"]  # the whole index, in one write
    for sid, entry in expect["legacy"].items():
        body = keys.get(f"session_{sid}")
        if migrated:  # bodies first: a light entry never names a missing body
            assert body == entry, sid
        else:
            assert body in (None, entry), sid
    return migrated


def _check_import(state: dict[str, Any], expect: dict[str, Any]) -> None:
    if state["receipt"] is None:  # one transaction: nothing of it, no orphans
        assert all(v == [False, 0, 0] for v in state["threads"].values()), state["threads"]
    else:
        assert state["threads"] == expect["threads"]
        assert state["receipt"]["response"]["threads"] == len(expect["threads"])


def _import_once(page: Page, expect: dict[str, Any], point: str) -> None:
    """A new submission imports nothing more: every thread is skipped."""
    again = send_envelope(page, command("legacy.import", f"legacy-{point}-again", NO_HISTORY))
    assert again["status"] == "completed", again
    assert (again["response"]["threads"], again["response"]["skippedThreads"]) == (
        0,
        len(expect["threads"]),
    )


@pytest.fixture()
def extension_browser(playwright: Playwright, profile: str) -> Iterator[CrashableBrowser]:
    browser = CrashableBrowser(playwright, profile, extension_url("index.html"), extension_args())
    yield browser
    browser.close()


def test_legacy_import_survives_kills(extension_browser: CrashableBrowser) -> None:
    rng = random.Random(20261202)
    page = extension_browser.page()
    items, expect = _legacy_layout("warmup", with_history=True)
    page.evaluate("(items) => chrome.storage.local.set(items)", items)
    migrated, migrate_took = py(page, MIGRATE)  # the migration alone, timed ...
    assert migrated == LEGACY_SESSIONS
    out, took = timed_send(page, command("legacy.import", "legacy-warmup", {}))  # ... the import
    assert out["status"] == "completed" and out["response"]["migrated"] == 0, out  # idempotent
    _check_import(_legacy_state(page, expect, "legacy-warmup"), expect)
    page.evaluate("(keys) => chrome.storage.local.remove(keys)", expect["keys"])
    outcomes = {"before": 0, "bodies": 0, "migrated": 0, "after": 0}
    window = KillWindow(rng, took)
    for point in map(str, range(KILL_POINTS)):
        items, expect = _legacy_layout(point, with_history=False)
        page.evaluate("(items) => chrome.storage.local.set(items)", items)
        sub = f"legacy-{point}"
        run = command("legacy.import", sub, NO_HISTORY)
        page.evaluate(KICK, [run])
        # every other kill aims at the migration (two chrome.storage writes), the rest
        # anywhere across the whole command
        early = int(point) % 2 == 0
        offset = rng.uniform(0.0, 3 * migrate_took) if early else window.next()
        kill(extension_browser, page, int(point), offset)
        page = extension_browser.page()
        state = _legacy_state(page, expect, sub)
        migrated = _check_sources(state, items, expect)
        _check_import(state, expect)
        if state["receipt"] is not None:
            assert migrated
            outcomes["after"] += 1
        elif migrated:
            outcomes["migrated"] += 1
        elif any(f"session_{sid}" in state["keys"] for sid in expect["legacy"]):
            outcomes["bodies"] += 1
        else:
            outcomes["before"] += 1
        if not early:
            window.saw(state["receipt"] is not None)
        done = send_envelope(page, run)  # the rerun finishes the migration and the import
        assert done["status"] == "completed", done
        if state["receipt"] is not None:
            assert done["response"] == state["receipt"]["response"]  # replayed, not redone
        else:
            assert done["response"]["threads"] == len(expect["threads"])
            assert done["response"]["migrated"] == (0 if migrated else LEGACY_SESSIONS)
        final = _legacy_state(page, expect, sub)
        assert _check_sources(final, items, expect)
        _check_import(final, expect)
        assert final["receipt"] is not None
        _import_once(page, expect, point)
        page.evaluate("(keys) => chrome.storage.local.remove(keys)", expect["keys"])
    print(
        f"legacy.import kill points: {outcomes} "
        f"(warm-up: migration {migrate_took:.3f} s, import {took:.2f} s)"
    )
    assert sum(outcomes.values()) == KILL_POINTS
