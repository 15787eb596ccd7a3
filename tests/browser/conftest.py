"""Fixtures the end-to-end tests share: the stub provider and a profile of their own.

A module that needs another stub (a slower one) or the session's shared profile
(``extension_context``, in ``tests/conftest.py``) defines its own fixture of that name.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import BrowserContext, Playwright

from browser_harness import extension_id_of, launch_extension
from e2e_support import StubProvider

#: Playwright's default timeout in the modules' own profiles.
TIMEOUT = 60_000


@pytest.fixture(scope="module")
def stub() -> Iterator[StubProvider]:
    """The stub OpenAI-compatible provider on 127.0.0.1, for one module."""
    with StubProvider(chunk_delay=0.01) as server:
        yield server


@pytest.fixture(scope="module")
def ext(
    playwright: Playwright, request: pytest.FixtureRequest
) -> Iterator[tuple[BrowserContext, str]]:
    """A persistent profile of the module's own with dist/extension loaded: (context, id).

    Its database and ``chrome.storage.local`` start empty, so counts are exact.
    """
    prefix = f"panelot-{request.module.__name__.removeprefix('test_')}-"
    with launch_extension(playwright, prefix) as (context, worker):
        context.set_default_timeout(TIMEOUT)
        yield context, extension_id_of(worker)
