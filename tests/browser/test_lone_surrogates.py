"""Lone surrogates in CPython helpers and, on real Chromium, chrome.storage.local.

The memory settings backend stores U+FFFD for a lone surrogate because
``chrome.storage.local`` does (pinned below in the real extension); the settings and
credential commands therefore refuse such strings instead of storing something else.
The console's renderers and the runtime's JSON replies take them without raising, and
a title and tag holding one cross ``panelot.send``/``panelot.query`` unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from playwright.sync_api import BrowserContext

from browser_harness import run_py, wait_ready
from loops import run_async
from panelot.console import Rows, render_tree
from panelot.settings import MemoryStorageBackend
from panelot.surrogates import (
    check_well_formed_data,
    first_lone_surrogate,
    join_pairs,
    replace_lone_surrogates,
    utf8_size,
    well_formed,
)
from panelot.testing import Launcher

lone = st.characters(categories=["Cs"])
texts = st.text(st.characters() | lone, max_size=20)


@given(texts)
def test_helpers_agree_with_a_browser_utf8_encoder(text: str) -> None:
    replaced = replace_lone_surrogates(text)
    assert well_formed(replaced) and len(replaced) <= len(text)
    assert utf8_size(text) == len(replaced.encode("utf-8"))
    assert well_formed(text) == (replaced == text == join_pairs(text))


def test_helpers_on_examples() -> None:
    assert replace_lone_surrogates("a\ud800b\udc00") == "a\ufffdb\ufffd"
    assert replace_lone_surrogates("\ud83d\ude00") == "😀"  # two halves held apart: a pair
    assert utf8_size("\ud800") == len("\ufffd".encode()) == 3
    value = {"a": ["ok", {"b": "x\udfff"}], "c": "fine"}
    assert first_lone_surrogate(value, "v") == "v.a[1].b"
    assert first_lone_surrogate({"k\ud800": 1}, "v") == "v.k\ud800"
    assert first_lone_surrogate({"a": ["ok"]}, "v") is None
    try:
        check_well_formed_data(value, "ui")
    except Exception as exc:
        assert getattr(exc, "field", None) == "ui.a[1].b"
    else:
        raise AssertionError("not refused")


def test_memory_backend_stores_u_fffd_as_chrome_does() -> None:
    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        backend = MemoryStorageBackend()
        await backend.set({"k\ud800": "v\udc00w", "plain": {"a": "\ud800", "😀": "ok"}})
        return await backend.get(["k\ud800", "k\ufffd", "plain"]), backend.dump()

    got, stored = run_async(run())  # Playwright's sync API may own this thread's loop
    assert got == {"k\ufffd": "v\ufffdw", "plain": {"a": "\ufffd", "😀": "ok"}}
    assert set(stored) == {"k\ufffd", "plain"}


def test_console_renders_lone_surrogates() -> None:
    nodes = [
        {"id": "n1", "seq": 1, "type": "user_message", "parentId": None, "payload": {}},
        {"id": "n2", "seq": 2, "type": "system_notice", "parentId": "n1", "payload": {}},
    ]
    nodes[0]["payload"] = {"content": [{"type": "text", "text": "q\ud800" * 30}]}
    nodes[1]["payload"] = {"text": "\udfff notice"}
    tree = render_tree(nodes, "n2")
    assert "q\ud800q" in tree and "\udfff notice" in tree
    table = repr(Rows([{"id": "t", "title": "a\udc00b", "tags": ["\ud800"]}], ["id", "title"]))
    assert "a\udc00b" in table
    json.dumps({"value": tree + table})  # the console's reply: escaped, never raising


CHROME_STORAGE = """async () => {
  const codes = (s) => Array.from(s, (c) => c.codePointAt(0).toString(16)).join(",");
  await chrome.storage.local.set({ "lone\\ud800": "v\\udc00w" });
  const all = await chrome.storage.local.get(null);
  const found = await chrome.storage.local.get(["lone\\ud800"]);
  const key = Object.keys(all).find((k) => k.startsWith("lone"));
  await chrome.storage.local.remove([key]);
  return { key: codes(key), value: codes(all[key]), foundByLoneKey: Object.keys(found).length };
}"""

#: Through panelot.send / panelot.query: JS string → JSON → Python → IndexedDB and back.
THROUGH_THE_BRIDGE = """async () => {
  const units = (s) => Array.from({ length: s.length }, (_, i) => s.charCodeAt(i).toString(16));
  const created = await window.panelot.send({ type: "thread.create", clientId: "lone",
    submissionId: "bridge-1", payload: { title: "a\ud800b", tags: ["\udc00"] } });
  const meta = await window.panelot.query("thread.get",
    { threadId: created.response.threadId });
  const listed = await window.panelot.query("thread.list", { tag: "\udc00" });
  return { title: units(meta.title), tag: units(meta.tags[0]),
           listed: listed.map((t) => t.id).includes(meta.id) };
}"""


def test_chrome_storage_local_writes_u_fffd_and_settings_refuse_lone_surrogates(
    panelot_launcher: Launcher,
) -> None:
    with panelot_launcher.launch("panelot-lone-") as ext:
        _check_extension(ext.context, ext.extension_id)


def _check_extension(context: BrowserContext, extension_id: str) -> None:
    page = context.new_page()
    page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
    wait_ready(page)
    bridged = page.evaluate(THROUGH_THE_BRIDGE)
    assert bridged == {"title": ["61", "d800", "62"], "tag": ["dc00"], "listed": True}
    stored = page.evaluate(CHROME_STORAGE)
    assert stored == {"key": "6c,6f,6e,65,fffd", "value": "76,fffd,77", "foundByLoneKey": 0}
    out = run_py(
        page,
        """
import json
from panelot.runtime import store
s = store()
bad = await s.send({"type": "settings.set", "clientId": "lone", "submissionId": "s1",
                    "payload": {"group": "ui", "value": {"language": "de\\ud800"}}})
tid = await s.create_thread("a\\ud800b")
title = (await s.query("thread.get", {"threadId": tid}))["title"]
after = await s.query("settings.get", {"group": "ui"})
json.dumps({"bad": bad, "title": title, "language": after["value"].get("language")})
""",
    )
    assert out["bad"]["status"] == "failed", out
    assert out["bad"]["error"]["field"] == "payload.value.language", out
    assert out["title"] == "a\ud800b" and out["language"] is None, out
