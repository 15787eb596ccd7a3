"""The shared behavior cases on the browser core: Pyodide in Chromium, real IndexedDB.

The case files are copied into Pyodide's file system once per session (the
``behavior_page`` fixture in conftest.py); each pytest item runs one case in the page
and reports its traceback on failure. The sync cases get the test CouchDB servers'
URLs in the page's ``os.environ`` (the ``couch_servers`` fixture).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from behavior import discover
from browser_harness import run_py

CASES = discover("browser")  # memory_only cases are left out


@pytest.mark.parametrize(("module", "case"), CASES, ids=[f"{m}.{c}" for m, c in CASES])
def test_browser(
    request: pytest.FixtureRequest, behavior_page: Page, module: str, case: str
) -> None:
    servers = request.getfixturevalue("couch_servers") if module.startswith("sync.") else {}
    code = f"""
import json, os, behavior
os.environ.update({servers!r})
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
json.dumps(await behavior.run_case({module!r}, {case!r}, BrowserFactory(), "browser", browser_host()))
"""
    result = run_py(behavior_page, code)
    assert result["ok"], result.get("error")
