"""A Chromium whose storage quota CDP can shrink, for the quota tests.

Shared by ``test_attachments_browser.py`` and ``test_quota_ui.py``: import
``own_browser`` into the module (it is a module-scoped fixture).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Playwright

from browser_harness import CHROMIUM, CHROMIUM_ARGS

__all__ = ["MIB", "own_browser"]

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def own_browser(playwright: Playwright) -> Iterator[Browser]:
    """Chromium with ``StaticStorageQuota`` off, closed after this module.

    That feature makes ``navigator.storage.estimate()`` report a fixed quota (usage +
    10 GiB) whatever the real one; without it the estimate shows the quota set with
    CDP ``Storage.overrideQuotaForOrigin``.
    """
    args = [*CHROMIUM_ARGS, "--disable-features=StaticStorageQuota"]
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
    yield browser
    browser.close()
