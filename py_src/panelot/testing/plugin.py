"""The pytest plugin: fixtures that drive the built extension in Chromium end to end.

Registered through the ``pytest11`` entry point ``panelot`` (pyproject.toml), so an
installed ``panelot`` makes the fixtures available to any pytest run; a checkout that
puts ``py_src`` on ``sys.path`` instead names it in ``pytest_plugins``. It builds on
pytest-playwright: its ``playwright`` fixture drives the browser and its
``browser_type_launch_args`` (``--headed``, ``--slowmo``) apply to the extension's
context too. See docs/testing.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Playwright

from panelot.testing.panel import CHROMIUM, ExtensionContext, Launcher, configure_provider
from panelot.testing.store import PageStore
from panelot.testing.stub_provider import StubProvider

__all__ = ["pytest_addoption"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--panelot-extension`` and ``--panelot-chromium`` (also as ini settings)."""
    group = parser.getgroup("panelot", "Panelot extension end-to-end tests")
    group.addoption(
        "--panelot-extension",
        default=None,
        help="the built extension folder to load (default: dist/extension under rootdir)",
    )
    group.addoption(
        "--panelot-chromium",
        default=None,
        help=f"the Chromium executable (default: {CHROMIUM})",
    )
    parser.addini("panelot_extension", "the built extension folder (see --panelot-extension)")
    parser.addini("panelot_chromium", "the Chromium executable (see --panelot-chromium)")


def _setting(config: pytest.Config, name: str) -> str | None:
    value = config.getoption(f"--panelot-{name}") or config.getini(f"panelot_{name}")
    return str(value) if value else None


@pytest.fixture(scope="session")
def panelot_extension(pytestconfig: pytest.Config) -> Path:
    """The built extension folder: ``--panelot-extension``, else ``dist/extension``."""
    given = _setting(pytestconfig, "extension")
    path = Path(given) if given else Path(pytestconfig.rootpath) / "dist" / "extension"
    path = path.resolve()
    if not (path / "manifest.json").is_file():
        pytest.fail(
            f"no built extension at {path} (no manifest.json): build it "
            "(`python3 build.py build`) or pass --panelot-extension"
        )
    return path


@pytest.fixture(scope="session")
def panelot_chromium(pytestconfig: pytest.Config) -> str:
    """The Chromium executable: ``--panelot-chromium``, else Debian's /usr/bin/chromium."""
    chromium = _setting(pytestconfig, "chromium") or CHROMIUM
    if not Path(chromium).is_file():
        pytest.fail(f"no Chromium at {chromium}: install it or pass --panelot-chromium")
    return chromium


@pytest.fixture(scope="session")
def panelot_launcher(
    playwright: Playwright,
    panelot_extension: Path,
    panelot_chromium: str,
    browser_type_launch_args: dict[str, Any],
) -> Launcher:
    """Launches profiles with the extension (``--headed`` is honoured)."""
    headless = bool(browser_type_launch_args.get("headless", True))
    return Launcher(playwright, panelot_extension, panelot_chromium, headless)


def _prefix(request: pytest.FixtureRequest) -> str:
    return f"panelot-{request.node.name.removeprefix('test_')[:40]}-"


@pytest.fixture()
def panelot_context(
    panelot_launcher: Launcher, request: pytest.FixtureRequest
) -> Iterator[ExtensionContext]:
    """A fresh profile for the test (empty database and ``chrome.storage.local``)."""
    with panelot_launcher.launch(_prefix(request)) as context:
        yield context


@pytest.fixture(scope="module")
def panelot_module_context(
    panelot_launcher: Launcher, request: pytest.FixtureRequest
) -> Iterator[ExtensionContext]:
    """One profile for the whole module (faster; tests see each other's data)."""
    with panelot_launcher.launch(f"panelot-{request.module.__name__}-") as context:
        yield context


@pytest.fixture()
def panelot_panel(panelot_context: ExtensionContext) -> Iterator[Page]:
    """The side panel (sidepanel.html in a tab at panel size), booted and ready.

    Fails with the boot error the panel shows, or the stage it stopped at.
    """
    page = panelot_context.open_panel()
    yield page
    page.close()


@pytest.fixture(scope="module")
def panelot_module_panel(panelot_module_context: ExtensionContext) -> Iterator[Page]:
    """A side panel on the module's profile, shared by the module's tests."""
    page = panelot_module_context.open_panel()
    yield page
    page.close()


@pytest.fixture()
def panelot_store(panelot_panel: Page) -> PageStore:
    """A :class:`~panelot.testing.PageStore` over ``panelot_panel``."""
    return PageStore(panelot_panel)


@pytest.fixture()
def panelot_second_panel(panelot_context: ExtensionContext, panelot_panel: Page) -> Iterator[Page]:
    """Another side-panel page of the same profile, opened after ``panelot_panel``."""
    page = panelot_context.open_panel()
    yield page
    page.close()


@pytest.fixture(scope="module")
def panelot_stub() -> Iterator[StubProvider]:
    """A local OpenAI-compatible provider streaming SSE (:mod:`panelot.testing.stub_provider`)."""
    with StubProvider(chunk_delay=0.01) as server:
        yield server


@pytest.fixture()
def panelot_provider(panelot_panel: Page, panelot_stub: StubProvider) -> StubProvider:
    """``panelot_panel`` with ``panelot_stub`` saved as its provider (Settings form)."""
    configure_provider(panelot_panel, panelot_stub.base_url)
    return panelot_stub
