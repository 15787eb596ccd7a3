"""Whole-database backups on real Chromium, both ways with Dexie's dexie-export-import 4.

A store with records in every ``panelot_v1`` table (branches, a tombstone, a run with an
approval and an interaction, skills, memories, a plugin with assets, receipts and 50
attachments of mixed kinds) is backed up; the file restores into a fresh profile, and
Dexie's addon imports it into another; the addon's own export of the store restores
here too. Every record and every Blob must come back identical (the restore's own
receipt aside).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from browser_harness import (
    BASE64_TO_FILE,
    BLOB_TO_BASE64,
    install_behavior,
    run_py,
    wait_ready,
)

ATTACHMENTS = 50

#: Per-table SHA-256 of the store's dump (behavior.backup.fill.dump): Blobs by bytes.
DIGESTS = """
import hashlib, json
from panelot.runtime import store
from behavior.backup.fill import dump
tables = await dump(store())
tables["commandReceipts"] = [r for r in tables["commandReceipts"]
                             if r.get("commandType") != "backup.restore"]
json.dumps({name: [len(rows), hashlib.sha256(repr(rows).encode()).hexdigest()]
            for name, rows in tables.items()})
"""

FILL = f"""
import json
from panelot.runtime import store
from behavior.backup.fill import fill_everything
await fill_everything(store(), attachments={ATTACHMENTS})
json.dumps(True)
"""


@pytest.fixture
def fresh_page(browser: Browser, web_server: str) -> Iterator[Callable[[], Page]]:
    """Pages on the harness, each in a new context: a fresh profile with an empty store."""
    contexts: list[BrowserContext] = []

    def make() -> Page:
        context = browser.new_context()
        contexts.append(context)
        page = context.new_page()
        page.goto(f"{web_server}index.html")
        wait_ready(page)
        install_behavior(page)
        return page

    yield make
    for context in contexts:
        context.close()


def _digests(page: Page) -> dict[str, Any]:
    digests: dict[str, Any] = run_py(page, DIGESTS)
    return digests


def _file(page: Page, make: str) -> str:
    """Make a file in the page (``make`` is an async JS body returning a Blob); its base64."""
    b64: str = page.evaluate(
        f"async () => {{ const blob = await ({make})(); return ({BLOB_TO_BASE64})(blob); }}"
    )
    return b64


def _restore(page: Page, b64: str) -> dict[str, Any]:
    page.evaluate(BASE64_TO_FILE, b64)
    out: dict[str, Any] = page.evaluate(
        "async () => window.panelot.backup.restore(window.__file, {submissionId: 'restore-1'})"
    )
    return out


def test_a_full_store_restores_into_a_fresh_profile_and_into_dexie(
    fresh_page: Callable[[], Page],
) -> None:
    source = fresh_page()
    assert run_py(source, FILL) is True
    want = _digests(source)
    assert all(want[t][0] > 0 for t in want), want  # every table holds something
    assert want["attachments"][0] == ATTACHMENTS
    b64 = _file(source, "async () => (await window.panelot.backup.export()).file")

    # 1. Restored here, in a fresh profile.
    target = fresh_page()
    out = _restore(target, b64)
    assert out["status"] == "completed", out
    assert out["response"]["restored"]["attachments"] == ATTACHMENTS
    assert _digests(target) == want

    # 2. Imported by Dexie's addon into a fresh profile's panelot_v1 (the store reads it).
    dexie = fresh_page()
    dexie.evaluate(BASE64_TO_FILE, b64)
    imported = dexie.evaluate(
        """async () => {
      const { importInto } = await import("/vendor/dexie-export-import.mjs");
      const { Dexie } = await import("/vendor/dexie.mjs");
      const db = new Dexie("panelot_v1");
      await db.open();
      await importInto(db, window.__file);
      const counts = {};
      for (const t of db.tables) counts[t.name] = await t.count();
      const att = await db.table("attachments").toCollection().first();
      db.close();
      return { counts, blob: att.bytes instanceof Blob, size: att.bytes.size === att.size };
    }"""
    )
    assert imported["blob"] and imported["size"], imported
    assert imported["counts"] == {t: n for t, (n, _) in want.items()}, imported
    assert _digests(dexie) == want


def test_the_addons_export_of_a_store_restores_here(fresh_page: Callable[[], Page]) -> None:
    source = fresh_page()
    assert run_py(source, FILL) is True
    want = _digests(source)
    b64 = _file(
        source,
        """async () => {
      const { exportDB } = await import("/vendor/dexie-export-import.mjs");
      const { Dexie } = await import("/vendor/dexie.mjs");
      const db = new Dexie("panelot_v1");
      await db.open();
      try { return await exportDB(db); } finally { db.close(); }
    }""",
    )
    target = fresh_page()
    target.evaluate(BASE64_TO_FILE, b64)
    peek = target.evaluate("() => window.panelot.backup.peek(window.__file)")
    assert peek["databaseName"] == "panelot_v1" and peek["settings"] is False, peek
    assert peek["tables"]["attachments"] == ATTACHMENTS, peek
    out = _restore(target, b64)
    assert out["status"] == "completed", out
    assert out["response"]["settings"] is False, out
    assert _digests(target) == want
