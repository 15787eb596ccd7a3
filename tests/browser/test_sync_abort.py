"""Stopping the sync loop ends its long-poll at once, in real Chromium.

The loop waits for remote changes with a long-poll on ``_changes`` that the server holds
up to :attr:`~panelot.sync.section.Syncer.poll_seconds` (20 s). ``sync.stop`` cancels the
task awaiting it, and the page's ``fetch`` must be aborted with it: otherwise a stopped
loop (a closed Settings, a forgotten server) keeps a connection to the server open, and
the ``fetch`` keeps running, until the poll's timeout. The test server counts the
long-polls it holds per database (``GET /_panelot_polls``, tests/support/couch_server.cjs),
so the test sees this store's poll arrive and then end, well before its 20 s.
"""

from __future__ import annotations

import json
import time
import urllib.request
import uuid

from playwright.sync_api import Page

from behavior.sync import OPEN_ENV
from browser_harness import run_py

START = """
import json
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore

abort_store = await PanelotStore.open(BrowserFactory(), browser_host(), name={name!r}, search=False)
await abort_store.command("sync.configure", {{"server": {server!r}, "database": {database!r}}})
json.dumps(await abort_store.command("sync.start", {{}}))
"""

STOP = """
import json
await abort_store.command("sync.stop", {})
status = await abort_store.query("sync.status", {})
json.dumps({"running": status.get("running"), "syncing": status.get("syncing")})
"""

CLOSE = """
abort_store.close()
del abort_store
"null"
"""

#: Seconds the long-poll is given to end after the stop: far under the 20 s it is held.
ENDED_WITHIN = 5.0


def _polls(server: str, database: str) -> int:
    with urllib.request.urlopen(f"{server}/_panelot_polls", timeout=10) as answer:
        return int(json.loads(answer.read())["open"].get(database, 0))


def _wait_polls(server: str, database: str, want: int, within: float) -> float:
    """Wait until the server holds ``want`` long-polls of ``database``; seconds it took."""
    start = time.monotonic()
    while (seen := _polls(server, database)) != want:
        if time.monotonic() - start > within:
            raise AssertionError(f"{seen} long-polls of {database} open after {within:g} s")
        time.sleep(0.05)
    return time.monotonic() - start


def test_stopping_the_loop_aborts_its_long_poll(
    harness_page: Page, couch_servers: dict[str, str], fresh_db: str
) -> None:
    server = couch_servers[OPEN_ENV]
    database = f"abort-{uuid.uuid4().hex[:12]}"
    urllib.request.urlopen(
        urllib.request.Request(f"{server}/{database}", method="PUT"), timeout=10
    ).close()
    assert _polls(server, database) == 0
    started = run_py(harness_page, START.format(name=fresh_db, server=server, database=database))
    assert started["running"] is True
    try:
        # The loop pulls, pushes, then holds a long-poll (20 s) for remote changes.
        _wait_polls(server, database, 1, within=30.0)
        stopped = run_py(harness_page, STOP)
        assert stopped == {"running": False, "syncing": False}
        _wait_polls(server, database, 0, within=ENDED_WITHIN)
    finally:
        run_py(harness_page, CLOSE)
