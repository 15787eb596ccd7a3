"""A backup of 100 MiB of attachments is streamed: Python's heap does not grow with it.

A hundred 1 MiB attachments are written straight into ``panelot_v1`` with IndexedDB;
the store then backs everything up, twice (the first a warm-up). Each file (about 133
MiB of base64) is built from parts, the Blobs' base64 made by the browser, so the wasm
heap may grow by a small constant (the chunks of text in flight) but not by anything
near the data's size.

Why not 200: the test's browser context keeps its IndexedDB and Blobs in memory, and
Chromium refuses to read Blobs once they hold ~500 MB between them (measured here:
450 MB of Blobs read back, 600 MB fail with ``NotReadableError``). Two hundred
attachments and two 267 MiB files came to ~730 MB whenever the warm-up's file had not
been collected yet, and a clean-clone run failed on that. A hundred and two files of
133 MiB come to ~370 MB, whatever the garbage collector does.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from browser_harness import wait_ready

MIB = 1024 * 1024
ATTACHMENTS = 100
MAX_GROWTH = 16 * MIB

SEED = """async ([count, size]) => {
  const db = await new Promise((ok, fail) => {
    const r = indexedDB.open("panelot_v1");
    r.onsuccess = () => ok(r.result);
    r.onerror = () => fail(r.error);
  });
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
  const tx = db.transaction(["threads", "attachments"], "readwrite");
  tx.objectStore("threads").put({ id: "heavy", title: "Heavy", createdAt: 1, updatedAt: 1,
    leafId: null, tags: [], pinned: false, archived: false });
  for (let i = 0; i < count; i++) {
    bytes[0] = i % 256;  // each Blob its own contents
    tx.objectStore("attachments").put({ id: `a${String(i).padStart(4, "0")}`,
      threadId: "heavy", createdAt: i, kind: "file", mime: "application/octet-stream",
      bytes: new Blob([bytes]), size });
  }
  await new Promise((ok, fail) => { tx.oncomplete = ok; tx.onerror = () => fail(tx.error); });
  db.close();
}"""

EXPORT = """async () => {
  const heap = () => window.panelot.py._module.HEAP8.length;
  await window.panelot.backup.export();  // warm-up: the code paths' own allocations
  const before = heap();
  const backup = await window.panelot.backup.export();
  const tail = await backup.file.slice(backup.file.size - 64).text();
  const probe = await backup.file.slice(0, 4096).text();
  return { before, after: heap(), size: backup.file.size, rows: backup.tables,
           tail, head: probe.slice(0, 30) };
}"""


@pytest.fixture
def page(browser: Browser, web_server: str) -> Iterator[Page]:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{web_server}index.html")
        wait_ready(page)
        yield page
    finally:
        context.close()


def test_a_100_mib_backup_does_not_grow_the_wasm_heap(page: Page) -> None:
    page.evaluate(SEED, [ATTACHMENTS, MIB])
    out = page.evaluate(EXPORT)
    assert out["rows"]["attachments"] == ATTACHMENTS, out["rows"]
    assert out["head"].startswith('{"formatName":"dexie"'), out["head"]
    assert out["tail"].endswith("]}]}}"), out["tail"]
    base64_total = ATTACHMENTS * 4 * ((MIB + 2) // 3)
    assert base64_total < out["size"] < base64_total + 2 * MIB, out["size"]
    growth = out["after"] - out["before"]
    assert growth <= MAX_GROWTH, f"the wasm heap grew by {growth / MIB:.1f} MiB"
