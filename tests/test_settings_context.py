"""Which settings backend a page gets, decided by what its ``js`` globals hold.

CPython has no ``js`` module; each case installs a stand-in for the page's globals
(the browser side is tests/browser/test_settings_extension.py, on a real extension page).
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from panelot.host.browser import settings_backend
from panelot.idb.errors import MissingAPIError
from panelot.settings import ChromeStorageBackend, MemoryStorageBackend, extension_context


def _page(monkeypatch: pytest.MonkeyPatch, chrome: Any) -> None:
    monkeypatch.setitem(sys.modules, "js", SimpleNamespace(chrome=chrome))


def test_without_js_globals_the_memory_backend_is_used() -> None:
    assert "js" not in sys.modules
    assert not extension_context()
    assert isinstance(settings_backend(), MemoryStorageBackend)


def test_a_plain_page_keeps_settings_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    # Chromium gives web pages a `chrome` object without `runtime` (or without its id).
    for chrome in (SimpleNamespace(), SimpleNamespace(runtime=SimpleNamespace(id=None)), None):
        _page(monkeypatch, chrome)
        assert not extension_context()
        assert isinstance(settings_backend(), MemoryStorageBackend)


def test_an_extension_page_uses_chrome_storage(monkeypatch: pytest.MonkeyPatch) -> None:
    storage = SimpleNamespace(local=object())
    _page(monkeypatch, SimpleNamespace(runtime=SimpleNamespace(id="abc"), storage=storage))
    assert extension_context()
    assert isinstance(settings_backend(), ChromeStorageBackend)
    assert isinstance(settings_backend(memory_settings=True), ChromeStorageBackend)


def test_an_extension_context_without_chrome_storage_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for chrome in (
        SimpleNamespace(runtime=SimpleNamespace(id="abc")),
        SimpleNamespace(runtime=SimpleNamespace(id="abc"), storage=SimpleNamespace(local=None)),
    ):
        _page(monkeypatch, chrome)
        with pytest.raises(MissingAPIError, match=r"no chrome\.storage\.local") as caught:
            settings_backend()
        assert caught.value.name == "MissingAPIError"
        assert isinstance(settings_backend(memory_settings=True), MemoryStorageBackend)
