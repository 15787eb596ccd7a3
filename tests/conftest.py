"""Pytest set-up: hypothesis profiles, the ``fuzz`` marker and the shared fixtures.

The fixtures: a server for dist/web, a booted harness page, the session's extension
profile and the sync tests' CouchDB-compatible servers. The extension fixtures come from the plugin, panelot.testing (``pytest_plugins``).
"""

from __future__ import annotations

import importlib.metadata
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from behavior import discover
from behavior.sync import AUTH_ENV, AUTH_PASSWORD, AUTH_USER, OPEN_ENV
from browser_harness import DIST_WEB, install_behavior, require_dist, serve_directory
from couch_support import couch_server
from hypothesis_support import register_profiles, uses_hypothesis
from panelot.testing import Launcher, wait_ready
from panelot.testing.panel import CHROMIUM, CHROMIUM_ARGS

#: The project's own run loads the plugin here: py_src is on sys.path, not installed. An
#: installed panelot registers it through its pytest11 entry point, and once is enough.
_PLUGIN = "panelot.testing.plugin"
pytest_plugins = (
    []
    if any(ep.value == _PLUGIN for ep in importlib.metadata.entry_points(group="pytest11"))
    else [_PLUGIN]
)

# Before pytest_configure, where `--hypothesis-profile=NAME` loads one of them.
register_profiles()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every property or fuzz test ``fuzz``: exactly what ``build.py fuzz`` runs."""
    for item in items:
        if isinstance(item, pytest.Function) and uses_hypothesis(item.function):
            item.add_marker(pytest.mark.fuzz)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launch Debian's Chromium (Playwright cannot download its own build here)."""
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def web_server() -> Iterator[str]:
    """Serve dist/web on a free port; yield the base URL (ending in '/')."""
    with serve_directory(require_dist(DIST_WEB)) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def harness_page(browser: Browser, web_server: str) -> Iterator[Page]:
    """A page on dist/web/index.html whose ``window.panelot`` is ready."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{web_server}index.html")
    wait_ready(page)
    yield page
    context.close()


@pytest.fixture()
def fresh_db(harness_page: Page) -> Iterator[str]:
    """A new database name for one test on the harness page; the database is deleted after."""
    name = f"t-{uuid.uuid4().hex[:12]}"
    yield name
    harness_page.evaluate(
        "(n) => new Promise((ok) => { const r = indexedDB.deleteDatabase(n); "
        "r.onsuccess = r.onerror = r.onblocked = () => ok(); })",
        name,
    )


@pytest.fixture(scope="session")
def extension_context(panelot_launcher: Launcher) -> Iterator[tuple[BrowserContext, str]]:
    """The session's shared profile with dist/extension loaded (the plugin's launcher)."""
    with panelot_launcher.launch("panelot-session-") as ext:
        yield ext.context, ext.extension_id


@pytest.fixture(scope="session")
def behavior_page(harness_page: Page) -> Page:
    """The harness page with tests/behavior/ copied into Pyodide and importable."""
    assert install_behavior(harness_page) == len(discover())
    return harness_page


@pytest.fixture(scope="session")
def couch_servers() -> Iterator[dict[str, str]]:
    """Two CouchDB-compatible servers (express-pouchdb, in memory) for the session.

    ``{OPEN_ENV: url, AUTH_ENV: url}``: one open, one with Basic auth
    (``behavior.sync.AUTH_USER``/``AUTH_PASSWORD``). They are also set in ``os.environ``,
    where the sync behaviour cases read them (tests/behavior/sync/); every case makes
    its own database on them.
    """
    with couch_server() as open_url, couch_server(AUTH_USER, AUTH_PASSWORD) as auth_url:
        urls = {OPEN_ENV: open_url, AUTH_ENV: auth_url}
        saved = {name: os.environ.get(name) for name in urls}
        os.environ.update(urls)
        yield urls
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
