"""Helpers for driving the built runtime in Chromium with Playwright.

The harness page (dist/web) and CDP access to the real side panel; the extension's
launch recipe and panel fixtures are the plugin's, panelot.testing.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, CDPSession, Page

# The launch recipe and the boot wait live in the plugin (panelot.testing); re-exported
# for the modules that use them without its fixtures.
from panelot.testing.panel import (
    CHROMIUM,
    CHROMIUM_ARGS,
    EXTENSION_ID,
    READY_TIMEOUT_MS,
    wait_ready,
)
from panelot.testing.store import PageStore

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "DIST_EXTENSION",
    "DIST_WEB",
    "EXTENSION_ID",
    "READY_TIMEOUT_MS",
    "ROOT",
    "TargetRuntime",
    "extension_id_from_key",
    "open_real_side_panel",
    "query",
    "require_dist",
    "run_py",
    "serve_directory",
    "wait_ready",
]

ROOT = Path(__file__).resolve().parents[2]
DIST_WEB = ROOT / "dist" / "web"
DIST_EXTENSION = ROOT / "dist" / "extension"

_RUN_PY = """async (code) => {
  let value;
  try {
    value = await window.panelot.py.runPythonAsync(code);
  } catch (error) {
    return { ok: false, error: String(error.message ?? error) };
  }
  if (typeof value === "string") {
    return { ok: true, json: value };
  }
  value?.destroy?.();
  return { ok: false, error: `expected a JSON string as the last expression, got ${typeof value}` };
}"""


class _DistHandler(http.server.SimpleHTTPRequestHandler):
    """Static handler with the MIME types Pyodide needs; quiet in test output."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".wasm": "application/wasm",
    }

    def log_message(self, format: str, *args: Any) -> None:
        """Drop per-request logging."""


def require_dist(path: Path) -> Path:
    """Return ``path``, failing the test run if the build output is missing."""
    if not path.is_dir():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: run `python3 build.py build` first")
    return path


def extension_id_from_key(key: str) -> str:
    """Compute a Chrome extension id from the manifest's base64 public key."""
    digest = hashlib.sha256(base64.b64decode(key)).hexdigest()[:32]
    return "".join(chr(ord("a") + int(digit, 16)) for digit in digest)


@contextmanager
def serve_directory(directory: Path) -> Iterator[str]:
    """Serve ``directory`` over HTTP on a free 127.0.0.1 port; yield its base URL."""
    handler = partial(_DistHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def query(page: Page, name: str, args: dict[str, Any] | None = None) -> Any:
    """``panelot.query(name, args)`` in the page (:meth:`panelot.testing.PageStore.query`).

    Returns the result, or raises the domain error by name (a ``StoreError``).
    """
    return PageStore(page).query(name, args)


#: JS: a Blob's bytes as base64 (in pieces: String.fromCharCode takes a bounded list).
BLOB_TO_BASE64 = """async (blob) => {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}"""

#: JS: base64 back into a Blob, kept as ``window.__file``; returns its size.
BASE64_TO_FILE = """(b64) => {
  const text = atob(b64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  window.__file = new Blob([bytes], { type: "text/json" });
  return window.__file.size;
}"""

BEHAVIOR_DIR = Path(__file__).resolve().parent.parent / "behavior"


def install_behavior(page: Page) -> int:
    """Copy tests/behavior/ into the page's Pyodide, importable as ``behavior``.

    Returns how many behavior cases the page finds. Cases and their helpers (such as
    ``behavior.backup.fill``) then run in the page on the browser core.
    """
    files = {
        p.relative_to(BEHAVIOR_DIR).as_posix(): p.read_text() for p in BEHAVIOR_DIR.rglob("*.py")
    }
    code = f"""
import json, os, sys
files = json.loads({json.dumps(json.dumps(files))})
for name, text in files.items():
    path = "/home/pyodide/bt/behavior/" + name
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
if "/home/pyodide/bt" not in sys.path:
    sys.path.insert(0, "/home/pyodide/bt")
import behavior
json.dumps(len(behavior.discover()))
"""
    count: int = run_py(page, code)
    return count


def run_py(page: Page, code: str) -> Any:
    """Run Python in the page's Pyodide; the code must end with a JSON string expression.

    Returns the decoded JSON. Raises AssertionError carrying the Python traceback on failure.
    """
    outcome = page.evaluate(_RUN_PY, code)
    if not outcome["ok"]:
        raise AssertionError(f"Python code failed:\n{outcome['error']}")
    return json.loads(outcome["json"])


def open_real_side_panel(context: BrowserContext, extension_id: str) -> tuple[CDPSession, str]:
    """Open the real side panel from launcher.html with a click (a user gesture).

    Returns a CDP session of the launcher page and the side panel's target id.
    """
    page = context.new_page()
    page.goto(f"chrome-extension://{extension_id}/launcher.html")
    page.wait_for_load_state()
    page.click("#open")
    page.wait_for_function("() => document.getElementById('status').textContent !== ''")
    status = page.text_content("#status")
    assert status == "opened", f"chrome.sidePanel.open: {status}"
    session = context.new_cdp_session(page)
    panel_url = f"chrome-extension://{extension_id}/sidepanel.html"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for target in session.send("Target.getTargets")["targetInfos"]:
            if target["type"] == "page" and target["url"] == panel_url:
                return session, target["targetId"]
        page.wait_for_timeout(100)
    raise AssertionError("no side panel target appeared after chrome.sidePanel.open")


class TargetRuntime:
    """Runtime.evaluate in a CDP target that Playwright does not expose as a page.

    Uses non-flattened ``Target.attachToTarget`` and ``Target.sendMessageToTarget``,
    because Playwright's CDPSession cannot address a child session id directly.
    """

    def __init__(self, session: CDPSession, target_id: str) -> None:
        self._session = session
        self._replies: dict[int, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        session.on("Target.receivedMessageFromTarget", self._on_message)
        attached = session.send("Target.attachToTarget", {"targetId": target_id, "flatten": False})
        self._session_id: str = attached["sessionId"]

    def _on_message(self, event: dict[str, Any]) -> None:
        if event.get("sessionId") == self._session_id:
            message = json.loads(event["message"])
            if "id" in message:
                self._replies[message["id"]] = message

    def evaluate(self, expression: str, timeout_s: float = 30) -> Any:
        """Evaluate ``expression`` (awaiting a returned promise) and return its value."""
        request_id = next(self._ids)
        params = {"expression": expression, "awaitPromise": True, "returnByValue": True}
        message = {"id": request_id, "method": "Runtime.evaluate", "params": params}
        self._session.send(
            "Target.sendMessageToTarget",
            {"sessionId": self._session_id, "message": json.dumps(message)},
        )
        deadline = time.monotonic() + timeout_s
        while request_id not in self._replies:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no reply to Runtime.evaluate({expression!r})")
            # Any CDP round trip lets Playwright dispatch pending events.
            self._session.send("Target.getTargets")
            time.sleep(0.05)
        reply = self._replies.pop(request_id)
        if "error" in reply or "exceptionDetails" in reply["result"]:
            raise AssertionError(f"Runtime.evaluate({expression!r}) failed: {reply}")
        return reply["result"]["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = READY_TIMEOUT_MS / 1000) -> Any:
        """Evaluate ``expression`` repeatedly until it yields a non-null value; return it."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = self.evaluate(expression, timeout_s=max(deadline - time.monotonic(), 1))
            if value is not None:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"{expression!r} stayed null for {timeout_s} s")
