"""Start-up from the build's memory snapshot, and the normal load it falls back to.

The pages restore ``snapshot/panelot.snap`` (made by tools/make_snapshot.py) instead of
booting Pyodide and importing the package. Every other browser test therefore runs on a
restored runtime; these tests pin that down and drive each guarded failure: a missing,
stale, corrupt, truncated or foreign snapshot must give a normal, working load.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route

from browser_harness import DIST_WEB, run_py, wait_ready
from panelot.testing import PageStore
from snapshot_packing import pack, unpack

SNAPSHOT = DIST_WEB / "snapshot" / "panelot.snap"
MANIFEST = DIST_WEB / "snapshot" / "manifest.json"


def _boot(page: Page, base: str) -> str:
    page.goto(f"{base}index.html")
    wait_ready(page)
    outcome = page.evaluate("() => window.panelot.snapshot")
    assert isinstance(outcome, str)
    return outcome


@pytest.fixture
def fresh(browser: Browser, web_server: str) -> Iterator[tuple[BrowserContext, Page, str]]:
    """A new context and page on the dist/web harness (routes are per context)."""
    context = browser.new_context()
    try:
        yield context, context.new_page(), web_server
    finally:
        context.close()


def _serve(body: bytes, status: int = 200) -> Callable[[Route], None]:
    return lambda route: route.fulfill(status=status, body=body)


def _works(page: Page) -> None:
    """The store answers queries and commits writes after this start."""
    store = PageStore(page, client_id="snap")
    thread_id = store.send("thread.create", {"title": "restored"})["threadId"]
    for text in ("one", "two"):
        payload = {"content": [{"type": "text", "text": text}]}
        store.send(
            "message.append", {"threadId": thread_id, "type": "user_message", "payload": payload}
        )
    context = store.query("thread.context", {"threadId": thread_id})
    assert [m["content"][0]["text"] for m in context["messages"]] == ["one", "two"]
    assert store.query("db.describe")["name"] == "panelot_v1"


def test_harness_starts_from_the_snapshot(harness_page: Page) -> None:
    # The shared harness page runs the whole behavior suite: it is a restored runtime.
    assert harness_page.evaluate("() => window.panelot.snapshot") == "restored"


def test_restored_runtime_works_and_is_not_shared(
    fresh: tuple[BrowserContext, Page, str],
) -> None:
    context, page, base = fresh
    assert _boot(page, base) == "restored"
    _works(page)
    # Modules come from the snapshot's heap (their files were never unpacked here).
    status = run_py(
        page,
        "import json, os, sys, random\n"
        "import panelot.runtime as r\n"
        "json.dumps([os.path.exists(r.__file__), 'panelot.idb.browser.core' in sys.modules,"
        " random.random()])",
    )
    assert status[:2] == [False, True]
    # Every restore reseeds `random`: two pages must not share one sequence.
    other = context.new_page()
    assert _boot(other, base) == "restored"
    again = run_py(other, "import json, random\njson.dumps(random.random())")
    assert again != status[2]


STACK_SWITCHING = """() => [
  "Suspending" in WebAssembly, "promising" in WebAssembly,
  window.panelot.py._module.jspiSupported,
  window.panelot.py.runPython(
    "from pyodide.ffi import can_run_sync; can_run_sync()"),
]"""


@pytest.mark.parametrize("snapshot", [True, False], ids=["restored", "loaded"])
def test_the_runtime_runs_without_stack_switching(
    fresh: tuple[BrowserContext, Page, str], snapshot: bool
) -> None:
    # Chromium's renderer crashed on the stacks JSPI runs calls on (docs/platform.md), so
    # every page hides it before Pyodide starts; the snapshot is made without it too, and
    # a restored runtime and a normally loaded one must agree (a mismatch crashes).
    context, page, base = fresh
    if not snapshot:
        context.route("**/snapshot/manifest.json", _serve(b"", 404))
    assert _boot(page, base) == ("restored" if snapshot else "absent")
    assert page.evaluate(STACK_SWITCHING) == [False, False, False, False]
    _works(page)


def test_panel_starts_from_the_snapshot(extension_context: tuple[BrowserContext, str]) -> None:
    context, extension_id = extension_context
    page = context.new_page()
    try:
        page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
        wait_ready(page)
        assert page.evaluate("() => window.panelot.snapshot") == "restored"
        _works(page)
    finally:
        page.close()


def _manifest(**changes: Any) -> bytes:
    manifest = json.loads(MANIFEST.read_text())
    manifest.update(changes)
    return json.dumps(manifest).encode()


def _foreign_build() -> bytes:
    data = unpack(SNAPSHOT.read_bytes())
    data[16:48] = bytes(32)  # the Pyodide build id the snapshot was made with
    return pack(bytes(data))


def test_packing_round_trips() -> None:
    packed = SNAPSHOT.read_bytes()
    assert pack(bytes(unpack(packed))) == packed


@pytest.mark.parametrize(
    ("pattern", "handler", "expected"),
    [
        ("**/snapshot/manifest.json", lambda: _serve(b"", 404), "absent"),
        (
            "**/snapshot/manifest.json",
            lambda: _serve(_manifest(pyodide="0.0.1")),
            "stale: made for Pyodide 0.0.1, this is ",
        ),
        (
            "**/snapshot/manifest.json",
            lambda: _serve(_manifest(wheels={"panelot-0.0.0-py3-none-any.whl": "0" * 64})),
            "stale: made from other wheels than the bundled ones",
        ),
        ("**/snapshot/panelot.snap", lambda: _serve(b"", 404), "failed: panelot.snap: HTTP 404"),
        ("**/snapshot/panelot.snap", lambda: _serve(b"\0" * 4096), "failed: not a packed"),
        ("**/snapshot/panelot.snap", lambda: _serve(_foreign_build()), "failed: Snapshot build id"),
        (
            "**/snapshot/panelot.snap",
            lambda: _serve(SNAPSHOT.read_bytes()[: SNAPSHOT.stat().st_size // 2]),
            "failed: the packed snapshot is cut short",
        ),
        (
            "**/snapshot/panelot.snap",
            lambda: _serve(pack(bytes(4096))),
            "failed: Snapshot has invalid magic number",
        ),
    ],
    ids=[
        "absent",
        "other-pyodide",
        "other-wheels",
        "file-missing",
        "garbage",
        "foreign",
        "cut",
        "not-pyodide",
    ],
)
def test_a_bad_snapshot_falls_back_to_a_normal_load(
    fresh: tuple[BrowserContext, Page, str],
    pattern: str,
    handler: Callable[[], Callable[[Route], None]],
    expected: str,
) -> None:
    context, page, base = fresh
    context.route(pattern, handler())
    outcome = _boot(page, base)
    assert outcome.startswith(expected), outcome
    _works(page)
    # The normal load installed the package's files.
    assert run_py(page, "import json, os, panelot\njson.dumps(os.path.exists(panelot.__file__))")


GROWN_BY = 8 * 1024 * 1024


@pytest.mark.parametrize("declared", [True, False], ids=["memory-declared", "memory-absent"])
def test_a_snapshot_larger_than_the_initial_heap(
    fresh: tuple[BrowserContext, Page, str], declared: bool
) -> None:
    """A snapshot taken after the heap grew restores when its manifest gives its length.

    Pyodide copies a snapshot into its heap without growing it (pyodide#6254); the page
    grows it first to the manifest's ``memory``. The build's snapshot with 8 MiB of zero
    pages added above its heap stands for one whose heap grew while importing. Without
    ``memory`` (a manifest of an older build), Pyodide refuses it and the page falls back
    to a normal load, as the platform fact says.
    """
    context, page, base = fresh
    grown = bytes(unpack(SNAPSHOT.read_bytes())) + bytes(GROWN_BY)
    manifest = json.loads(MANIFEST.read_text())
    needed = manifest.pop("memory") + GROWN_BY  # the heap a restore of ``grown`` needs
    if declared:
        manifest["memory"] = needed
    context.route("**/snapshot/panelot.snap", _serve(pack(grown)))
    context.route("**/snapshot/manifest.json", _serve(json.dumps(manifest).encode()))
    outcome = _boot(page, base)
    if declared:
        assert outcome == "restored", outcome
        heap = page.evaluate("() => window.panelot.py._module.HEAP8.length")
        assert heap >= needed, (heap, needed)
    else:
        assert outcome.startswith("failed: "), outcome
    _works(page)


# --- the local copy (web/local_copy.mjs) ----------------------------------------------------

COPY_CACHE = "panelot-runtime"


def _copy_key(sha256: str, name: str = "panelot.snap") -> str:
    return f"https://panelot.invalid/runtime/{sha256}/{name}"


def _kept() -> dict[str, int]:
    """The copies a first start keeps: the snapshot and the wasm, under their hashes."""
    wasm = json.loads(MANIFEST.read_text())["wasm"]
    wasm_file = DIST_WEB / wasm["file"]
    return {
        _copy_key(_sha256()): SNAPSHOT.stat().st_size,
        _copy_key(wasm["sha256"], wasm_file.name): wasm_file.stat().st_size,
    }


def _sha256() -> str:
    sha = json.loads(MANIFEST.read_text())["sha256"]
    assert isinstance(sha, str) and len(sha) == 64
    return sha


def _put_copy(page: Page, base: str, key: str, body: bytes) -> None:
    """Store ``body`` under ``key`` in the origin's copy cache (before any start)."""
    page.goto(f"{base}snapshot/manifest.json")  # a page of the origin that starts nothing
    page.evaluate(
        """async ([name, key, bytes]) => {
          const cache = await caches.open(name);
          await cache.put(key, new Response(new Uint8Array(bytes)));
        }""",
        [COPY_CACHE, key, list(body)],
    )


def _copies(page: Page) -> dict[str, int]:
    """The copy cache's entries: key → size in bytes."""
    found: dict[str, int] = page.evaluate(
        """async (name) => {
          const cache = await caches.open(name);
          const out = {};
          for (const request of await cache.keys()) {
            out[request.url] = (await (await cache.match(request)).arrayBuffer()).byteLength;
          }
          return out;
        }""",
        COPY_CACHE,
    )
    return found


def _source(page: Page) -> str:
    return str(page.evaluate("() => window.panelot.snapshotSource"))


def test_the_first_start_keeps_a_local_copy_and_the_next_start_reads_it(
    fresh: tuple[BrowserContext, Page, str],
) -> None:
    context, page, base = fresh
    assert _boot(page, base) == "restored"
    assert _source(page) == "file"
    # wait_ready waited for the copies to be kept: they are there, whole, under their hashes.
    assert _copies(page) == _kept()
    again = context.new_page()
    assert _boot(again, base) == "restored"
    assert _source(again) == "copy"
    assert again.evaluate("() => window.panelot.wasmSource") == "copy"
    _works(again)


def test_a_copy_of_another_build_is_never_read_and_is_replaced(
    fresh: tuple[BrowserContext, Page, str],
) -> None:
    _, page, base = fresh
    _put_copy(page, base, _copy_key("0" * 64), b"another build's snapshot")
    assert _boot(page, base) == "restored"
    assert _source(page) == "file"
    assert _copies(page) == _kept()
    _works(page)


@pytest.mark.parametrize(
    "body",
    [b"\0" * 4096, SNAPSHOT.read_bytes()[:4096]],
    ids=["garbage", "cut"],
)
def test_a_broken_copy_is_removed_and_the_file_read(
    fresh: tuple[BrowserContext, Page, str], body: bytes
) -> None:
    _, page, base = fresh
    _put_copy(page, base, _copy_key(_sha256()), body)
    assert _boot(page, base) == "restored"
    assert _source(page) == "file"
    assert _copies(page) == _kept()
    _works(page)


def test_a_wasm_copy_that_does_not_compile_is_replaced_and_the_file_compiled(
    fresh: tuple[BrowserContext, Page, str],
) -> None:
    _, page, base = fresh
    wasm = json.loads(MANIFEST.read_text())["wasm"]
    _put_copy(page, base, _copy_key(wasm["sha256"], "pyodide.asm.wasm"), b"\0asm broken")
    assert _boot(page, base) == "restored"
    assert page.evaluate("() => window.panelot.wasmSource") == "file"
    assert _copies(page) == _kept()
    _works(page)


def test_a_copy_pyodide_cannot_restore_is_removed_after_a_normal_load(
    fresh: tuple[BrowserContext, Page, str],
) -> None:
    context, page, base = fresh
    _put_copy(page, base, _copy_key(_sha256()), pack(bytes(4096)))  # unpacks, is no heap
    outcome = _boot(page, base)
    assert outcome.startswith("failed: Snapshot has invalid magic number"), outcome
    _works(page)
    assert _copies(page) == {}
    again = context.new_page()
    assert _boot(again, base) == "restored"
    assert _source(again) == "file"
