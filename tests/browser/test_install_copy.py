"""The snapshot's local copy stored ahead of the first start (web/local_copy.mjs).

The service worker stores the build's memory snapshot in the origin's Cache Storage when
the extension is installed or updated (``prepareSnapshotCopy``), so the first panel of a
build reads the copy instead of the extension's slower file. ``prepareCopy`` itself is
driven on the dist/web harness origin, where no worker stores anything on its own.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from browser_harness import DIST_WEB, wait_ready
from panelot.testing import ExtensionContext, Launcher
from quota_support import own_browser  # noqa: F401 - the shared fixture

SNAPSHOT = DIST_WEB / "snapshot" / "panelot.snap"
MANIFEST = json.loads((DIST_WEB / "snapshot" / "manifest.json").read_text())
COPY_CACHE = "panelot-runtime"
KEY_ROOT = "https://panelot.invalid/runtime/"
WAIT_MS = 60_000

#: The copy cache's entries (key → byte length and SHA-256 of the body), in a page.
COPIES = """async (name) => {
  const cache = await caches.open(name);
  const out = {};
  for (const request of await cache.keys()) {
    const body = await (await cache.match(request)).arrayBuffer();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
    out[request.url] = [body.byteLength, Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")];
  }
  return out;
}"""


#: The copy cache's keys (cheap: no body is read).
KEYS = "async (name) => (await (await caches.open(name)).keys()).map((request) => request.url)"


def _key(sha256: str) -> str:
    return f"{KEY_ROOT}{sha256}/panelot.snap"


WASM = DIST_WEB / MANIFEST["wasm"]["file"]


def _entry(path: Path) -> list[Any]:
    data = path.read_bytes()
    return [len(data), hashlib.sha256(data).hexdigest()]


def _file_entry() -> list[Any]:
    return _entry(SNAPSHOT)


# --- the extension: the service worker stores it at install --------------------------------


@pytest.fixture
def installed(panelot_launcher: Launcher) -> Iterator[ExtensionContext]:
    """A new profile: the extension just installed, no page opened yet."""
    with panelot_launcher.launch("panelot-install-copy-") as ext:
        yield ext


def test_the_worker_stores_the_copy_at_install_and_the_first_panel_reads_it(
    installed: ExtensionContext,
) -> None:
    want = {
        _key(MANIFEST["sha256"]): _file_entry(),
        f"{KEY_ROOT}{MANIFEST['wasm']['sha256']}/pyodide.asm.wasm": _entry(WASM),
    }
    worker = installed.context.service_workers[0]
    deadline = time.monotonic() + WAIT_MS / 1000
    while sorted(worker.evaluate(KEYS, COPY_CACHE)) != sorted(want):  # no page opened yet
        assert time.monotonic() < deadline, "the worker stored no copies at install"
        time.sleep(0.05)
    panel = installed.open_panel()
    assert panel.evaluate("() => window.panelot.snapshotSource") == "copy"
    assert panel.evaluate("() => window.panelot.wasmSource") == "copy"
    assert panel.evaluate("() => window.panelot.snapshot") == "restored"
    again = {"snapshot": "present", "wasm": "present"}
    assert worker.evaluate("() => self.panelotPrepareCopy()") == again
    assert panel.evaluate(COPIES, COPY_CACHE) == want  # whole, and the files' bytes


# --- prepareCopy, on the harness origin ------------------------------------------------------

PREPARE = """async ([url, name, sha256]) => {
  const { prepareCopy } = await import(new URL("../local_copy.mjs", location.href).href);
  return prepareCopy(url, name, sha256);
}"""


@pytest.fixture
def origin(browser: Browser, web_server: str) -> Iterator[tuple[BrowserContext, Page, str]]:
    """A new context (its own Cache Storage) on the harness origin, nothing started."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{web_server}snapshot/manifest.json")
    try:
        yield context, page, web_server
    finally:
        context.close()


def _prepare(page: Page, base: str, sha256: str | None) -> str:
    outcome = page.evaluate(PREPARE, [f"{base}snapshot/panelot.snap", "panelot.snap", sha256])
    assert isinstance(outcome, str)
    return outcome


def test_prepare_keeps_the_file_once_and_replaces_other_builds_copies(
    origin: tuple[BrowserContext, Page, str],
) -> None:
    _, page, base = origin
    page.evaluate(
        "async ([name, key]) => (await caches.open(name)).put(key, new Response('old build'))",
        [COPY_CACHE, _key("0" * 64)],
    )
    sha = MANIFEST["sha256"]
    assert _prepare(page, base, sha) == "kept"
    assert page.evaluate(COPIES, COPY_CACHE) == {_key(sha): _file_entry()}
    assert _prepare(page, base, sha) == "present"
    assert page.evaluate(COPIES, COPY_CACHE) == {_key(sha): _file_entry()}


def test_prepare_stores_nothing_whose_digest_is_not_the_manifests(
    origin: tuple[BrowserContext, Page, str],
) -> None:
    _, page, base = origin
    assert _prepare(page, base, "f" * 64) == "mismatch"
    assert page.evaluate(COPIES, COPY_CACHE) == {}


def test_prepare_without_a_hash_or_a_file_stores_nothing(
    origin: tuple[BrowserContext, Page, str],
) -> None:
    _, page, base = origin
    assert _prepare(page, base, None) == "no cache"
    missing = page.evaluate(PREPARE, [f"{base}snapshot/absent.snap", "absent.snap", "a" * 64])
    assert missing == "failed: absent.snap: HTTP 404"
    assert page.evaluate(COPIES, COPY_CACHE) == {}


def test_a_harness_start_after_prepare_reads_the_copy(
    origin: tuple[BrowserContext, Page, str],
) -> None:
    context, page, base = origin
    assert _prepare(page, base, MANIFEST["sha256"]) == "kept"
    start = context.new_page()
    start.goto(f"{base}index.html")
    wait_ready(start)
    assert start.evaluate("() => window.panelot.snapshotSource") == "copy"
    assert start.evaluate("() => window.panelot.wasmSource") == "file"  # not prepared here


def test_prepare_keeps_no_copy_where_it_would_take_the_datas_room(
    own_browser: Browser,  # noqa: F811 - its estimate reports the quota set below
    web_server: str,
) -> None:
    context = own_browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{web_server}snapshot/manifest.json")  # the origin, before any storage use
        cdp = context.new_cdp_session(page)
        origin = web_server.rstrip("/")
        quota = 3 * SNAPSHOT.stat().st_size  # room for the copy, but not ROOM (4) times over
        cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": quota})
        assert _prepare(page, web_server, MANIFEST["sha256"]) == "no room"
        assert page.evaluate(COPIES, COPY_CACHE) == {}
        cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": 5 * quota})
        assert _prepare(page, web_server, MANIFEST["sha256"]) == "kept"
    finally:
        context.close()
