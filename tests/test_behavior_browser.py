"""The shared behavior cases on the browser core: Pyodide in Chromium, real IndexedDB.

The case files are copied into Pyodide's file system once per session; each pytest
item then runs one case in the page and reports its traceback on failure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page

from behavior import discover
from browser_harness import run_py

CASES = discover()
BEHAVIOR_DIR = Path(__file__).parent / "behavior"


@pytest.fixture(scope="session")
def behavior_page(harness_page: Page) -> Page:
    files = {p.name: p.read_text() for p in BEHAVIOR_DIR.glob("*.py")}
    code = f"""
import json, os, sys
files = json.loads({json.dumps(json.dumps(files))})
os.makedirs("/home/pyodide/bt/behavior", exist_ok=True)
for name, text in files.items():
    with open("/home/pyodide/bt/behavior/" + name, "w") as f:
        f.write(text)
if "/home/pyodide/bt" not in sys.path:
    sys.path.insert(0, "/home/pyodide/bt")
import behavior
json.dumps(len(behavior.discover()))
"""
    assert run_py(harness_page, code) == len(CASES)
    return harness_page


@pytest.mark.parametrize(("module", "case"), CASES, ids=[f"{m}.{c}" for m, c in CASES])
def test_browser(behavior_page: Page, module: str, case: str) -> None:
    code = f"""
import json, behavior
from panelot.idb.browser import BrowserFactory
json.dumps(await behavior.run_case({module!r}, {case!r}, BrowserFactory(), "browser"))
"""
    result = run_py(behavior_page, code)
    assert result["ok"], result.get("error")
