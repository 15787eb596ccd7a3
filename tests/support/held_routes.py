"""Requests held back until a test lets them go on (a download the boot waits for).

A request matching the pattern waits while the gate is closed; :meth:`HeldRoutes.release`
lets every held one go on, and any that comes later goes on at once; :meth:`HeldRoutes.fail`
answers them all with an HTTP error instead. A test uses it to look at a page while a
step of its start-up provably has not happened yet.
"""

from __future__ import annotations

from playwright.sync_api import Page, Route

__all__ = ["SNAPSHOT_MANIFEST", "HeldRoutes"]

SNAPSHOT_MANIFEST = "**/snapshot/manifest.json"
"""What a test holds to hold a page's start-up: the snapshot's manifest, fetched first on
every start. (Not the snapshot itself: from a build's second start on it is read from its
local copy in Cache Storage, web/local_copy.mjs, which no route sees.)"""


class HeldRoutes:
    """Hold ``pattern``'s requests on ``page`` until :meth:`release`."""

    def __init__(self, page: Page, pattern: str) -> None:
        self.held: list[Route] = []
        self.released = False
        self.status: int | None = None
        page.route(pattern, self._handle)

    def _handle(self, route: Route) -> None:
        if self.status is not None:
            route.fulfill(status=self.status, body="held back, then failed")
        elif self.released:
            route.continue_()
        else:
            self.held.append(route)

    def release(self) -> None:
        """Let every held request go on, and those still to come."""
        self.released = True
        while self.held:
            self.held.pop(0).continue_()

    def fail(self, status: int = 500) -> None:
        """Answer every held request, and those still to come, with HTTP ``status``."""
        self.status = status
        while self.held:
            self.held.pop(0).fulfill(status=status, body="held back, then failed")
