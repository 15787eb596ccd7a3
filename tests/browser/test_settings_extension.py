"""Settings on a real extension: chrome.storage.local, onChanged across pages, never get(null)."""

from __future__ import annotations

import io
import json
import re
import time
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from browser_harness import ROOT, query, run_py
from extension_pages import UI_KEY, envelope, open_page, storage_remove, storage_set

#: Wraps chrome.storage.local.get so that every call's arguments are recorded.
RECORD_GETS = """() => {
  if (window.__storageGets) return;
  window.__storageGets = [];
  const area = chrome.storage.local;
  const original = area.get.bind(area);
  area.get = (...args) => {
    window.__storageGets.push(JSON.stringify(args.map((a) => (a === undefined ? "<undefined>" : a))));
    return original(...args);
  };
}"""


@pytest.fixture
def panel(extension_context: tuple[BrowserContext, str]) -> Iterator[Page]:
    context, extension_id = extension_context
    page = open_page(context, extension_id)
    yield page
    storage_remove(page, ["settings.providers", "settings.permissions", UI_KEY])
    page.close()


def test_backend_is_chrome_storage_in_the_extension(panel: Page) -> None:
    out = run_py(
        panel,
        """
import json
from panelot.runtime import store
from panelot.settings import ChromeStorageBackend
from panelot.idb.errors import ValidationError
b = store().services.backend
await b.set({"t.a": {"x": [1, "two", None]}, "t.b": 3})
got = await b.get(["t.a", "t.b", "t.missing"])
await b.remove(["t.a", "t.b"])
gone = await b.get(["t.a", "t.b"])
refused = []
for bad in (None, [], "t.a"):
    try:
        await b.get(bad)
    except ValidationError as e:
        refused.append(e.field)
json.dumps([isinstance(b, ChromeStorageBackend), got, gone, refused])
""",
    )
    assert out == [True, {"t.a": {"x": [1, "two", None]}, "t.b": 3}, {}, ["keys"] * 3]


def test_defaults_migration_and_invalid_values_in_chrome_storage(panel: Page) -> None:
    storage_set(
        panel,
        {
            UI_KEY: {"version": 1, "value": {"theme": "dark", "fontSize": "huge"}},
            "settings.providers": {
                "version": 1,
                "value": {
                    "connections": [
                        {"id": "o", "kind": "openai", "url": "https://o.test", "model": "m"}
                    ]
                },
            },
        },
    )
    ui = query(panel, "settings.get", {"group": "ui"})
    assert ui["value"]["theme"] == "dark" and ui["value"]["fontSize"] == 14
    assert [p["field"] for p in ui["problems"]] == ["ui.fontSize"]
    providers = query(panel, "settings.get", {"group": "providers"})
    assert providers["version"] == 2 and providers["problems"] == []
    assert providers["value"]["connections"][0]["models"] == ["m"]
    assert providers["value"]["connections"][0]["baseUrl"] == "https://o.test"
    storage_set(panel, {UI_KEY: "garbage"})
    assert query(panel, "settings.get", {"group": "ui"})["value"]["theme"] == "system"


def test_no_code_path_calls_get_null(panel: Page) -> None:
    panel.evaluate(RECORD_GETS)
    from behavior.legacy.browsa_fixture import storage

    storage_set(panel, storage())
    query(panel, "settings.all")
    query(panel, "settings.get", {"group": "providers"})
    assert (
        envelope(panel, "settings.set", {"group": "ui", "value": {"theme": "light"}})["status"]
        == "completed"
    )
    assert (
        envelope(panel, "credential.set", {"secret": "sk-get-null-probe"})["status"] == "completed"
    )
    query(panel, "credential.list")
    assert envelope(panel, "legacy.import", {"includeHistory": False})["status"] == "completed"
    run_py(
        panel,
        """
import json
from panelot.runtime import store
s = store().services
stop = s.settings.subscribe("ui", lambda g, o, n: None)
stop()
for ref in [e["ref"] for e in await s.credentials.list()]:
    await s.credentials.delete(ref)
json.dumps(1)
""",
    )
    calls = [json.loads(c) for c in panel.evaluate("() => window.__storageGets")]
    assert calls, "the recorder saw no reads"
    for args in calls:
        assert len(args) >= 1 and isinstance(args[0], list) and args[0], args
        assert all(isinstance(k, str) and k for k in args[0]), args
    all_keys = ["settings.providers", "settings.permissions", UI_KEY, "settings.retention"]
    assert all_keys in [a[0] for a in calls]
    from behavior.legacy.browsa_fixture import KEYS

    storage_remove(panel, KEYS)


def _code_tokens(path: Path) -> str:
    """Source without comments and string literals (so docs may mention get(null))."""
    text = path.read_text()
    if path.suffix == ".py":
        kept = [
            t.string
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.COMMENT, tokenize.STRING)
        ]
        return " ".join(kept)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"(['\"`])(?:\\.|(?!\1).)*\1", '""', text)


def test_static_no_get_null_or_keyless_get() -> None:
    pattern = re.compile(r"\.get\s*\(\s*(null|None|undefined)?\s*\)")
    files = [*ROOT.glob("py_src/**/*.py"), *ROOT.glob("web/*.mjs"), *ROOT.glob("extension/*.mjs")]
    files += list(ROOT.glob("extension/*.js"))
    assert len(files) > 20
    offenders = [
        f"{p.relative_to(ROOT)}: {m.group(0)}"
        for p in files
        for m in pattern.finditer(_code_tokens(p))
    ]
    assert offenders == []
    # and the only storage reads in the Python package go through the key-checked backends
    direct = [
        str(p.relative_to(ROOT))
        for p in ROOT.glob("py_src/**/*.py")
        if re.search(
            r"storage\s*\.\s*local\s*\.\s*get\b|_local\s*\(\s*\)\s*\.\s*get\b", _code_tokens(p)
        )
    ]
    assert direct == ["py_src/panelot/settings/chrome.py"]


WATCH = """
import json
from panelot.runtime import store
events = []
def on_ui(group, old, new):
    events.append([group, old.theme, new.theme, new.font_size])
stop = store().services.settings.subscribe("ui", on_ui)
import builtins
builtins._ui_events, builtins._ui_stop = events, stop
json.dumps(store().services.backend.active_listeners)
"""


def test_change_in_one_page_reaches_the_other(
    extension_context: tuple[BrowserContext, str], panel: Page
) -> None:
    context, extension_id = extension_context
    other = open_page(context, extension_id)
    try:
        assert run_py(panel, WATCH) == 1
        assert panel.evaluate("() => chrome.storage.onChanged.hasListeners()") is True
        out = envelope(
            other, "settings.set", {"group": "ui", "value": {"theme": "dark", "fontSize": 20}}
        )
        assert out == {"status": "completed", "response": {"group": "ui", "version": 1}}
        events: list[Any] = []
        deadline = time.monotonic() + 10
        while not events and time.monotonic() < deadline:
            events = run_py(panel, "import json, builtins\njson.dumps(builtins._ui_events)")
            time.sleep(0.05)
        assert events == [["ui", "system", "dark", 20]]
        # unsubscribe: the listener is removed and its proxy destroyed
        left = run_py(
            panel,
            "import json, builtins\nfrom panelot.runtime import store\n"
            "builtins._ui_stop()\njson.dumps(store().services.backend.active_listeners)",
        )
        assert left == 0
        assert panel.evaluate("() => chrome.storage.onChanged.hasListeners()") is False
        envelope(other, "settings.set", {"group": "ui", "value": {"theme": "light"}})
        time.sleep(0.3)
        assert run_py(panel, "import json, builtins\njson.dumps(builtins._ui_events)") == events
    finally:
        other.close()


def test_plain_page_falls_back_to_the_memory_backend(harness_page: Page) -> None:
    out = run_py(
        harness_page,
        """
import json
from panelot.host import browser_host
from panelot.settings import MemoryStorageBackend, chrome_storage_available
s = browser_host().services  # what a fresh page picks
r = await s.credentials.set("sk-harness-secret", "cred:h")
json.dumps([
    chrome_storage_available(),
    isinstance(s.backend, MemoryStorageBackend),
    type(s.credentials.keystore).__name__,
    await s.credentials.reveal(r),
])
""",
    )
    assert out == [False, True, "WebCryptoKeyStore", "sk-harness-secret"]


#: Hides chrome.storage from an extension page before its scripts run (what an offscreen
#: document or a worker of the extension lacks), keeping chrome.runtime.
HIDE_CHROME_STORAGE = """
Object.defineProperty(globalThis.chrome, "storage", { value: undefined, configurable: true });
"""


def test_an_extension_context_without_chrome_storage_refuses_memory_settings(
    extension_context: tuple[BrowserContext, str], panel: Page
) -> None:
    context, extension_id = extension_context
    thread = envelope(panel, "thread.create", {"title": "before the refused start"})
    assert thread["status"] == "completed"
    page = context.new_page()
    try:
        page.add_init_script(HIDE_CHROME_STORAGE)
        page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
        page.wait_for_function("() => window.__panelotState === 'error'")
        assert page.evaluate("() => [typeof chrome.runtime.id, chrome.storage]") == [
            "string",
            None,
        ]
        # The panel shows the store's error, not Python's traceback (kept beside it).
        shown = page.inner_text("#error")
        assert shown.startswith("settings: this extension context has no chrome.storage.local")
        error = page.evaluate(
            "() => [window.panelot.error.name, window.panelot.error.message,"
            " window.panelot.error.traceback]"
        )
        assert error[:2] == ["MissingAPIError", shown]
        assert error[2].startswith("Traceback (most recent call last):")
        assert error[2].endswith(f"panelot.idb.errors.MissingAPIError: {shown}")
        # The decision itself, in this page's Pyodide: refused, unless memory is accepted.
        out = run_py(
            page,
            """
import json
from panelot.host.browser import settings_backend
from panelot.idb.errors import MissingAPIError
from panelot.settings import MemoryStorageBackend, extension_context
try:
    settings_backend()
    refused = None
except MissingAPIError as e:
    refused = e.name
json.dumps([
    extension_context(),
    refused,
    isinstance(settings_backend(memory_settings=True), MemoryStorageBackend),
])
""",
        )
        assert out == [True, "MissingAPIError", True]
    finally:
        page.close()
    # The other panel's store is untouched by the refused start.
    listed = query(panel, "thread.list", {})
    assert thread["response"]["threadId"] in [t["id"] for t in listed]
