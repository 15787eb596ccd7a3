"""Crash consistency of ``backup.restore``: the old data or the new, never a mix.

A profile of the built extension (real ``chrome.storage.local``, so the settings'
pending marker is real too) holds one of two states, X and Y, each with threads, nodes,
attachments and a theme setting; two backup files hold them. Each of 20 kill points
restores the other state's file and kills the page, or on every fifth point the whole
browser, at an offset within the restore's measured duration
(:class:`crash_support.KillWindow`). After the kill the profile opens again and must
hold exactly one of the two states, every table and the setting alike, with the
restore's receipt if and only if it holds the new one.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, Playwright

from browser_harness import BASE64_TO_FILE, BLOB_TO_BASE64, run_py
from crash_support import CrashableBrowser, KillWindow, extension_args, extension_url, kill

KILL_POINTS = 20

SEED = """
import base64, json
from panelot.runtime import store
s = store()
for old in await s.query("thread.list", {{"archived": None}}):
    await s.command("thread.delete", {{"threadId": old["id"]}})
for t in range({threads}):
    tid = await s.create_thread(f"{name}-{{t}}")
    rows = [{{"id": f"{name}-{{t}}-{{i}}", "threadId": tid, "parentId": f"{name}-{{t}}-{{i-1}}" if i else None,
              "seq": i + 1, "ts": i, "type": "user_message",
              "payload": {{"content": [{{"type": "text", "text": "{name}" * 40}}]}}}} for i in range({nodes})]
    await s.db.table("nodes").bulk_put(rows)
    await s.db.table("threads").update(tid, {{"leafId": rows[-1]["id"]}})
    data = base64.b64encode(bytes([t]) * {attachment}).decode()
    await s.command("attachment.put", {{"threadId": tid, "kind": "file", "mime": "x/y", "dataBase64": data}})
await s.command("settings.set", {{"group": "ui", "value": {{"theme": "{theme}"}}}})
json.dumps(True)
"""

#: The state of every table (Blobs by size) and of the theme setting, restores' receipts aside.
STATE = """
import hashlib, json
from panelot.runtime import store
from panelot.idb.blobs import blob_size, is_blob
s = store()
tables = {}
for name in s.db.core.tables:
    rows = await s.db.table(name).to_list()
    if name == "commandReceipts":
        rows = [r for r in rows if r.get("commandType") != "backup.restore"]
    rows = [{k: ("blob", blob_size(v)) if is_blob(v) else v for k, v in r.items()} for r in rows]
    tables[name] = [len(rows), hashlib.sha256(repr(rows).encode()).hexdigest()]
theme = (await s.services.settings.get("ui")).theme
receipt = await s.db.table("commandReceipts").get(json.dumps(["crash", SUB]))
json.dumps({"tables": tables, "theme": theme, "receipt": receipt is not None})
"""

EXPORT = f"""async () => {{
  const {{ file }} = await window.panelot.backup.export();
  return ({BLOB_TO_BASE64})(file);
}}"""

KICK = """(sub) => { window.__job = window.panelot.backup.restore(window.__file,
                   { clientId: "crash", submissionId: sub }); }"""

TIMED = """async (sub) => {
  const t = performance.now();
  const out = await window.panelot.backup.restore(window.__file,
                                                  { clientId: "crash", submissionId: sub });
  return [out, (performance.now() - t) / 1000];
}"""


@pytest.fixture()
def browser() -> Iterator[Any]:
    with tempfile.TemporaryDirectory(prefix="panelot-crash-restore-") as profile:
        yield profile


@pytest.fixture()
def crashable(playwright: Playwright, browser: str) -> Iterator[CrashableBrowser]:
    crashable = CrashableBrowser(playwright, browser, extension_url("index.html"), extension_args())
    yield crashable
    crashable.close()


def _state(page: Page, sub: str) -> dict[str, Any]:
    state: dict[str, Any] = run_py(page, f"SUB = {sub!r}\n{STATE}")
    return state


def _seed(page: Page, name: str, theme: str) -> str:
    code = SEED.format(name=name, threads=4, nodes=500, attachment=150_000, theme=theme)
    assert run_py(page, code) is True
    b64: str = page.evaluate(EXPORT)
    return b64


def test_a_restore_killed_anywhere_leaves_the_old_data_or_the_new(
    crashable: CrashableBrowser,
) -> None:
    rng = random.Random(20261202)
    page = crashable.page()
    files = {"x": _seed(page, "x", "light")}
    want = {"x": _state(page, "none")}
    files["y"] = _seed(page, "y", "dark")
    want["y"] = _state(page, "none")
    assert want["x"]["tables"] != want["y"]["tables"] and want["x"]["theme"] == "light"
    # A whole restore, not killed, measures the window: y -> x.
    page.evaluate(BASE64_TO_FILE, files["x"])
    out, took = page.evaluate(TIMED, "warm-up")
    assert out["status"] == "completed" and out["settingsApplied"], out
    assert _state(page, "warm-up") == {**want["x"], "receipt": True}
    window = KillWindow(rng, float(took))
    held = "x"
    outcomes = {"old": 0, "new": 0}
    for point in range(KILL_POINTS):
        target = "y" if held == "x" else "x"
        sub = f"restore-{point}"
        page.evaluate(BASE64_TO_FILE, files[target])
        page.evaluate(KICK, sub)
        kill(crashable, page, point, window.next())
        page = crashable.page()
        state = _state(page, sub)
        landed = state["receipt"]
        expected = want[target] if landed else want[held]
        assert state == {**expected, "receipt": landed}, (point, held, target, state)
        outcomes["new" if landed else "old"] += 1
        window.saw(landed)
        held = target if landed else held
    print(f"backup.restore kill points: {outcomes} (a whole restore {took:.2f} s)")
    assert sum(outcomes.values()) == KILL_POINTS
