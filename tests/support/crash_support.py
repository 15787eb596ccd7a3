"""Shared pieces of the crash-consistency tests: a killable persistent browser.

A :class:`CrashableBrowser` keeps one profile directory across kills, so what a kill
leaves on disk is what the next start finds. :func:`kill` closes the page's renderer,
or on every fifth kill point SIGKILLs every process of the profile (a crash, not a
shutdown).
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Sequence
from pathlib import Path

from playwright.sync_api import BrowserContext, Page, Playwright

from browser_harness import CHROMIUM, CHROMIUM_ARGS, DIST_EXTENSION, EXTENSION_ID, wait_ready

#: Starts ``window.__job`` without waiting for it: the test kills while it runs.
KICK = "([command]) => { window.__job = window.panelot.send(command); }"


def extension_args() -> list[str]:
    """Chromium arguments that load dist/extension."""
    return [f"--disable-extensions-except={DIST_EXTENSION}", f"--load-extension={DIST_EXTENSION}"]


def extension_url(path: str = "index.html") -> str:
    """A page of the built extension (``index.html`` is the harness page, with chrome.*)."""
    return f"chrome-extension://{EXTENSION_ID}/{path}"


class CrashableBrowser:
    """A persistent Chromium profile that can be killed and reopened on ``url``."""

    def __init__(
        self, playwright: Playwright, profile: str, url: str, extra_args: Sequence[str] = ()
    ) -> None:
        self.playwright, self.profile, self.url = playwright, profile, url
        self.args = [*extra_args, *CHROMIUM_ARGS]
        self.context: BrowserContext | None = None

    def page(self) -> Page:
        """A new page on ``url`` with ``window.panelot`` booted (relaunching if needed)."""
        if self.context is None:
            self.context = self.playwright.chromium.launch_persistent_context(
                self.profile, executable_path=CHROMIUM, headless=True, args=self.args
            )
        page = self.context.new_page()
        page.goto(self.url)
        wait_ready(page)
        return page

    def kill_process(self) -> None:
        """SIGKILL every process of this profile: a crash, not a shutdown."""
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if self.profile.encode() in cmdline:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            assert self.context is not None
            self.context.close()
        except Exception:  # noqa: BLE001 - the browser is gone; Playwright may complain
            pass
        self.context = None

    def close(self) -> None:
        """Close the browser normally."""
        if self.context is not None:
            self.context.close()
            self.context = None


def is_process_kill(point: int) -> bool:
    """Whether kill point ``point`` kills the whole browser (every fifth one)."""
    return point % 5 == 4


def kill(browser: CrashableBrowser, page: Page, point: int, delay_s: float) -> None:
    """After ``delay_s``, close the page's renderer, or SIGKILL the whole browser."""
    time.sleep(delay_s)
    if is_process_kill(point):
        browser.kill_process()
    else:
        page.close()


class KillWindow:
    """Random kill offsets from ``[0, hi)``, with ``hi`` following the operation's speed.

    ``hi`` starts at 1.25 x the measured duration of a run that was not killed. A kill
    that finds the operation already done tells little, so ``hi`` shrinks by 0.6 after
    one and grows by 1.2 after a kill that found it unfinished: on a slow or a fast
    machine alike the window settles across the operation, with about a quarter of the
    kills landing after it.
    """

    def __init__(self, rng: random.Random, measured_s: float) -> None:
        self.rng, self.hi = rng, max(measured_s, 0.05) * 1.25

    def next(self) -> float:
        """The next kill offset in seconds."""
        return self.rng.uniform(0.0, self.hi)

    def saw(self, finished: bool) -> None:
        """Record whether the last kill found the operation finished."""
        self.hi *= 0.6 if finished else 1.2
