"""Make the start-up memory snapshot in headless Chromium.

    .venv/bin/python tools/make_snapshot.py OUT WHEEL...

Serves the bundled Pyodide (node_modules/pyodide), the wheels and
``tools/snapshot_page.mjs`` on a local port, opens the page in Debian's Chromium, and
writes the packed snapshot the page POSTs back to OUT. Prints the page's figures (bytes,
packed bytes, heap, modules imported) as one JSON line; exits non-zero with the page's
error otherwise. build.py runs it; web/snapshot.mjs restores the result.
"""

from __future__ import annotations

import http.server
import json
import shutil
import sys
import tempfile
import threading
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py_src"))
from panelot.testing.panel import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

PYODIDE = ROOT / "node_modules" / "pyodide"
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
TIMEOUT_S = 120
PAGE = '<!doctype html><script type="module" src="snapshot_page.mjs"></script>'
MIME = {".mjs": "text/javascript", ".wasm": "application/wasm"}


class _Outcome:
    """What the page sent back: the packed snapshot and its figures, or an error."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.data: bytes | None = None
        self.stats: dict[str, Any] = {}
        self.error: str | None = None


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME}

    def __init__(self, *args: Any, outcome: _Outcome, **kwargs: Any) -> None:
        self.outcome = outcome
        super().__init__(*args, **kwargs)

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        url = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if url.path == "/snapshot":
            self.outcome.data = body
            self.outcome.stats = json.loads(parse_qs(url.query)["stats"][0])
        else:
            self.outcome.error = body.decode(errors="replace")
        self.send_response(204)
        self.end_headers()
        self.outcome.done.set()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet: the build prints its own progress."""


def make(out: Path, wheels: list[Path]) -> dict[str, Any]:
    """Make the snapshot of ``wheels`` into ``out``; return the page's figures."""
    outcome = _Outcome()
    log: list[str] = []
    with tempfile.TemporaryDirectory(prefix="panelot-snapshot-") as scratch:
        root = Path(scratch)
        (root / "pyodide").mkdir()
        for name in PYODIDE_FILES:
            shutil.copy2(PYODIDE / name, root / "pyodide" / name)
        for wheel in wheels:
            shutil.copy2(wheel, root / wheel.name)
        shutil.copy2(ROOT / "tools" / "snapshot_page.mjs", root / "snapshot_page.mjs")
        shutil.copy2(ROOT / "web" / "stack_switching.mjs", root / "stack_switching.mjs")
        (root / "index.html").write_text(PAGE)
        handler = partial(_Handler, directory=str(root), outcome=outcome)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
                )
                page = browser.new_page()
                page.on("console", lambda message: log.append(message.text))
                page.on("pageerror", lambda error: log.append(str(error)))
                wheel_names = ",".join(w.name for w in wheels)
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/?wheels={wheel_names}")
                outcome.done.wait(TIMEOUT_S)
                browser.close()
        finally:
            server.shutdown()
            server.server_close()
    if outcome.data is None:
        reason = outcome.error or f"no answer in {TIMEOUT_S} s"
        console = "\n".join(log[-20:])
        raise RuntimeError(f"making the snapshot failed: {reason}\npage console:\n{console}")
    out.write_bytes(outcome.data)
    return outcome.stats


def main(argv: list[str]) -> None:
    """Command-line entry point: ``OUT WHEEL...``."""
    if len(argv) < 2:
        sys.exit("usage: tools/make_snapshot.py OUT WHEEL...")
    try:
        stats = make(Path(argv[0]), [Path(w) for w in argv[1:]])
    except RuntimeError as error:
        sys.exit(f"[make_snapshot] {error}")
    print(json.dumps(stats))


if __name__ == "__main__":
    main(sys.argv[1:])
