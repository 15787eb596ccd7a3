"""Open the built extension's side panel page in Chromium (run by `build.py run`).

With a display ($DISPLAY), a headed window shows the side panel page and the debugging
console, with a local stub provider already configured, until the user closes it.
Without one, Chromium runs headless and takes a scripted tour against the stub
provider (create a thread, send, edit, regenerate, switch branch), saves screenshots
of the panel in light and dark and of the console, and prints their paths.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import BrowserContext, Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py_src"))
from panelot.testing.panel import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    PANEL_VIEWPORT,
    READY_TIMEOUT_MS,
    BootError,
    configure_provider,
    edit_message,
    last_id,
    send_message,
    wait_ready,
    wait_reply,
)
from panelot.testing.stub_provider import StubProvider  # noqa: E402

#: The key the local stub provider is saved with (it accepts any).
STUB_KEY = "sk-local-stub"


def wait_panel(page: Page) -> str:
    """Wait until the panel booted (or failed); return the runtime state."""
    try:
        wait_ready(page, panel=True)
    except BootError as err:
        print(f"[run] {err}", flush=True)
    return str(page.evaluate("() => window.__panelotState"))


def tour(
    page: Page, context: BrowserContext, extension_id: str, out: Path, stub: str
) -> list[Path]:
    """The scripted headless tour; returns the screenshot paths."""
    shots: list[Path] = []

    def shot(name: str, target: Page | None = None) -> None:
        path = out / f"{name}.png"
        (target or page).screenshot(path=str(path))
        shots.append(path)

    configure_provider(page, stub, key=STUB_KEY)
    page.click("#nav-settings")
    shot("settings")
    page.click("#nav-back")
    page.click("#nav-new")
    send_message(page, "Plan a weekend in Lisbon for two")
    send_message(page, "Can you format it as markdown?")
    # Edit the first question and resend: a new sibling with its own reply.
    edit_message(page, "Plan a long weekend in Porto for two")
    # Regenerate the last reply: a new assistant branch.
    before = last_id(page)
    page.locator(".msg.assistant").last.locator("[data-action=regenerate]").click()
    wait_reply(page, before)
    send_message(page, "Which markdown tricks do you know?")
    shot("panel-light")
    page.emulate_media(color_scheme="dark")
    shot("panel-dark")
    page.emulate_media(color_scheme="light")
    # Switch back to the first version of the first question.
    page.locator(".msg.user").first.locator("[data-action=prev]").click()
    page.wait_for_selector(".msg.user .branch-pos >> text=1/2")
    shot("panel-branch")
    page.click("#nav-back")
    page.wait_for_selector(".thread-item")
    shot("threads")

    console = context.new_page()
    console.set_viewport_size({"width": 1000, "height": 640})
    console.goto(f"chrome-extension://{extension_id}/console.html")
    console.wait_for_function("() => document.body.dataset.ready === '1'", timeout=READY_TIMEOUT_MS)
    console.evaluate("() => window.panelotConsole.run('threads()')")
    console.evaluate("() => window.panelotConsole.run('tree(threads()[0][\"id\"])')")
    console.evaluate('() => window.panelotConsole.run(\'settings()["groups"]["providers"]\')')
    shot("console", console)
    return shots


def main() -> int:
    """Launch Chromium with the extension; return a process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extension", type=Path, required=True, help="built extension dir")
    parser.add_argument(
        "--screenshot",
        type=Path,
        required=True,
        help="where the headless run saves its main screenshot (others go next to it)",
    )
    args = parser.parse_args()
    extension = args.extension.resolve()
    headed = bool(os.environ.get("DISPLAY"))

    with (
        sync_playwright() as pw,
        tempfile.TemporaryDirectory(prefix="panelot-run-") as profile,
        StubProvider() as stub,
    ):
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=not headed,
            **({"no_viewport": True} if headed else {"viewport": PANEL_VIEWPORT}),
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
        print(f"[run] stub provider at {stub.base_url} (model stub-model)", flush=True)

        state = wait_panel(page)
        if headed:
            if state == "ready":
                configure_provider(page, stub.base_url, key=STUB_KEY)
            console = context.new_page()
            console.goto(f"chrome-extension://{extension_id}/console.html")
            page.bring_to_front()
            print("[run] close the browser window to finish", flush=True)
            context.wait_for_event("close", timeout=0)
            return 0

        out = args.screenshot.parent
        out.mkdir(parents=True, exist_ok=True)
        if state != "ready":
            page.screenshot(path=str(args.screenshot))
            print(f"[run] state: {state}; screenshot: {args.screenshot.resolve()}", flush=True)
            context.close()
            return 1
        page.screenshot(path=str(args.screenshot))
        shots = [args.screenshot, *tour(page, context, extension_id, out, stub.base_url)]
        print(f"[run] state: {state}; screenshots:", flush=True)
        for path in shots:
            print(f"[run]   {path.resolve()}", flush=True)
        context.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
