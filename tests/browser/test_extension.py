"""The built MV3 extension boots the runtime, in a tab and in the real side panel."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import BrowserContext

from browser_harness import EXTENSION_ID, TargetRuntime, open_real_side_panel, query, wait_ready

STORE_NAMES = {
    "threads",
    "nodes",
    "attachments",
    "skills",
    "memories",
    "runs",
    "commandReceipts",
    "approvals",
    "interactions",
    "plugins",
    "pluginAssets",
}

#: Resolves with the panel's state once it has settled (null while the module is still loading).
PANEL_STATE = (
    "window.panelot ? window.panelot.ready.then(() => window.__panelotState,"
    " (error) => 'error: ' + (error?.message ?? error)) : null"
)

NATIVE_SCHEMA = """async () => {
  const databases = await indexedDB.databases();
  return databases.find((db) => db.name === "panelot_v1") ?? null;
}"""


def test_extension_id_is_fixed(extension_context: tuple[BrowserContext, str]) -> None:
    _, extension_id = extension_context
    assert extension_id == EXTENSION_ID


def test_sidepanel_page_boots_and_describes_the_store(
    extension_context: tuple[BrowserContext, str],
) -> None:
    context, extension_id = extension_context
    page = context.new_page()
    page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
    wait_ready(page)
    timings: dict[str, Any] = page.evaluate("() => window.panelot.timings")
    assert set(timings) == {"runtime_ms", "package_ms", "database_ms", "total_ms"}
    assert page.locator("li.done").count() == 4

    described = query(page, "db.describe")
    assert described["name"] == "panelot_v1"
    assert {store["name"] for store in described["stores"]} == STORE_NAMES

    native = page.evaluate(NATIVE_SCHEMA)
    assert native == {"name": "panelot_v1", "version": 10}
    page.close()


def test_real_side_panel_boots(extension_context: tuple[BrowserContext, str]) -> None:
    context, extension_id = extension_context
    session, target_id = open_real_side_panel(context, extension_id)
    panel = TargetRuntime(session, target_id)
    assert panel.wait_for(PANEL_STATE) == "ready"
    assert panel.evaluate("window.__panelotState") == "ready"
