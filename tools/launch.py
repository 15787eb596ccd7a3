"""Open the built extension's side panel page in Chromium (run by `build.py run`).

With a display ($DISPLAY), a headed window shows the page until the user closes it.
Without one, Chromium runs headless, waits for the runtime to be ready and saves a
screenshot.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
READY_TIMEOUT_MS = 120_000


def main() -> int:
    """Launch Chromium with the extension; return a process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extension", type=Path, required=True, help="built extension dir")
    parser.add_argument(
        "--screenshot",
        type=Path,
        required=True,
        help="where the headless run saves its screenshot",
    )
    args = parser.parse_args()
    extension = args.extension.resolve()
    headed = bool(os.environ.get("DISPLAY"))

    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="panelot-run-") as profile:
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=not headed,
            **({"no_viewport": True} if headed else {"viewport": {"width": 420, "height": 640}}),
            args=[
                f"--disable-extensions-except={extension}",
                f"--load-extension={extension}",
                *CHROMIUM_ARGS,
            ],
        )
        workers = context.service_workers
        worker = workers[0] if workers else context.wait_for_event("serviceworker")
        extension_id = worker.url.split("/")[2]
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
        print(f"[run] extension {extension_id}: {page.url}", flush=True)

        if headed:
            print("[run] close the browser window to finish", flush=True)
            context.wait_for_event("close", timeout=0)
            return 0

        page.wait_for_function(
            "() => ['ready', 'error'].includes(window.__panelotState)", timeout=READY_TIMEOUT_MS
        )
        state = page.evaluate("() => window.__panelotState")
        args.screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(args.screenshot))
        print(f"[run] state: {state}; screenshot: {args.screenshot.resolve()}", flush=True)
        context.close()
        return 0 if state == "ready" else 1


if __name__ == "__main__":
    sys.exit(main())
