"""End-to-end tests of Settings → Back up & restore (extension/panel_backup.mjs).

The real extension in Chromium, driven by clicks and the file picker. What a test asserts
as stored is read back with IndexedDB itself (``PageStore.raw``), never from the DOM.

* "Back up everything" shows the file's size and what it holds before anything is
  downloaded; "Download" saves it as ``panelot-backup-<date>.json``; restoring that file
  through the file picker, after a thread was deleted, another created, one renamed, a
  setting changed and the API key deleted, asks first (what is stored now, what the
  backup holds, settings, API keys), shows its progress reading then writing, and brings
  every record back exactly (attachment bytes included), the settings too, names the
  connection whose key must be entered again, and the thread list shows the restored
  threads without a reload.
* A file that is not a backup, a damaged backup and a cancelled confirmation each change
  nothing, and say so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from panelot.schema import PANELOT_V1_STORES
from panelot.testing import (
    API_KEY,
    PageStore,
    StubProvider,
    attach,
    configure_provider,
    new_thread,
    open_thread,
    raw_bytes,
    send_message,
    to_list,
)

#: Every table but the command receipts (a restore's own receipt is added to them).
TABLES = tuple(t for t in PANELOT_V1_STORES if t != "commandReceipts")
#: How the panel names a table's rows; the rest are "other records".
NOUNS = {"threads": "conversation", "nodes": "message", "attachments": "attachment"}
NOTES = "Sow the peas in March.\nTomatoes after the frost. ✓\n".encode()

#: Records, for the running test, every text the progress label and line were given.
_WATCH_PROGRESS = """() => {
  const seen = (window.__backupProgress = []);
  const box = document.getElementById("backup-progress-box");
  new MutationObserver((records) => {
    for (const r of records) {
      for (const node of r.addedNodes) {
        if (node.nodeType === Node.TEXT_NODE) seen.push([r.target.id, node.data]);
      }
    }
  }).observe(box, { subtree: true, childList: true });
}"""


def stored(store: PageStore) -> dict[str, list[dict[str, Any]]]:
    """Every record of :data:`TABLES`, read with IndexedDB itself, by id."""
    return {table: sorted(store.raw(table), key=lambda r: r["id"]) for table in TABLES}


def restore_receipts(store: PageStore) -> dict[str, dict[str, Any]]:
    """The panel's ``backup.restore`` receipts, by submission id."""
    rows = store.query("receipts.list", {"clientId": "sidepanel", "limit": 500})
    return {r["submissionId"]: r for r in rows if r["commandType"] == "backup.restore"}


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def contents_sentence(rows: dict[str, int]) -> str:
    """What the panel says ``{table: rows}`` holds (panel_backup.mjs ``contents``)."""
    parts = [plural(rows.get(table, 0), noun) for table, noun in NOUNS.items()]
    others = sum(n for t, n in rows.items() if t not in NOUNS and t != "commandReceipts")
    if others:
        parts.append(plural(others, "other record"))
    return f"{', '.join(parts[:-1])} and {parts[-1]}"


def file_size(n: int) -> str:
    """panel_dom.mjs ``fileSize``: one decimal from KiB up."""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    value, i = float(n), 0
    while value >= 1024 and i < len(units) - 1:
        value /= 1024
        i += 1
    return f"{n} B" if i == 0 else f"{value:.1f} {units[i]}"


def to_backup_settings(page: Page) -> None:
    """Settings, from wherever the panel is."""
    if page.evaluate("() => window.panelotApp.view") != "settings":
        page.click("#nav-settings")
    page.wait_for_selector("#view-settings:not([hidden]) #settings-backup")


def count(page: Page, name: str) -> int:
    """The backup part's count of finished exports or restores (``data-<name>-count``)."""
    return int(page.get_attribute("#settings-backup", f"data-{name}-count") or "0")


def back_up(page: Page, path: Path) -> str:
    """Press "Back up everything", wait for *this* backup, download it to ``path``.

    Returns the summary the panel showed; checks that it gave the size before the
    download, and that the file saved is that size.
    """
    to_backup_settings(page)
    exports = count(page, "export")
    page.click("#backup-export")
    page.wait_for_selector(f"#settings-backup[data-export-count='{exports + 1}']")
    state = page.get_attribute("#settings-backup", "data-state")
    assert state == "ready", page.inner_text("#backup-status")
    summary = page.inner_text("#backup-summary")
    size = int(page.get_attribute("#backup-summary", "data-bytes") or "-1")
    assert summary.startswith(f"Backup ready: {file_size(size)}, with "), summary
    # The progress bar ended full, after at least one report of the export itself.
    value, maximum, reports = page.evaluate(
        "() => { const bar = document.getElementById('backup-progress');"
        " return [bar.value, bar.max, Number(bar.dataset.reports)]; }"
    )
    assert value == maximum and reports >= 2
    with page.expect_download() as info:
        page.click("#backup-download")
    download = info.value
    assert re.fullmatch(r"panelot-backup-\d{4}-\d{2}-\d{2}\.json", download.suggested_filename)
    download.save_as(path)
    assert path.stat().st_size == size
    return summary


def restore(page: Page, path: Path) -> None:
    """Choose ``path`` in the restore file picker (the confirmation may follow)."""
    to_backup_settings(page)
    page.set_input_files("#backup-file", str(path))


def wait_restore(page: Page, before: int) -> str:
    """Wait until restore attempt number ``before + 1`` has ended; its outcome."""
    page.wait_for_selector(f"#settings-backup[data-restore-count='{before + 1}']")
    return str(page.get_attribute("#settings-backup", "data-outcome"))


def test_a_backup_restored_through_the_panel_brings_everything_back(
    panel: Page, store: PageStore, panelot_stub: StubProvider, tmp_path: Path
) -> None:
    page = panel
    # Two conversations made in the panel: messages, and a file attached in the composer.
    first = new_thread(page)
    send_message(page, "Plan the garden")
    attach(page, "notes.txt", NOTES, "text/plain")
    page.wait_for_selector("#pending li[data-name='notes.txt']")
    send_message(page, "Here are my notes")
    second = new_thread(page)
    send_message(page, "A second conversation")
    store.send("thread.update", {"threadId": second, "patch": {"title": "Second", "pinned": True}})
    retention = store.query("settings.get", {"group": "retention"})["value"]
    before = stored(store)
    [attachment] = before["attachments"]
    assert attachment["threadId"] == first and raw_bytes(attachment["bytes"]) == NOTES

    path = tmp_path / "backup.json"
    summary = back_up(page, path)
    text = path.read_text()
    rows = {t["name"]: t["rowCount"] for t in json.loads(text)["data"]["tables"]}
    assert {t: rows[t] for t in TABLES} == {t: len(before[t]) for t in TABLES}
    counts = contents_sentence(rows)
    assert f"with {counts}, and your settings (no API keys)." in summary
    assert API_KEY not in text

    # Change everything after the backup: a thread deleted (with its attachment), another
    # made and opened, one renamed, a setting changed, the API key deleted.
    store.send("thread.delete", {"threadId": first})
    intruder = store.seed_thread("not in the backup", title="Intruder").thread_id
    store.send("thread.update", {"threadId": second, "patch": {"title": "Renamed later"}})
    store.send("settings.set", {"group": "retention", "value": {"days": 7}})
    [credential] = store.query("credential.list")
    store.send("credential.delete", {"ref": credential["ref"]})
    open_thread(page, intruder)
    now = store.query("db.counts")
    receipts = restore_receipts(store)

    try:
        to_backup_settings(page)
        restores = count(page, "restore")
        restore(page, path)
        page.wait_for_selector("#dialog[open][data-kind=restore]")
        assert page.inner_text("#dialog-title") == "Replace everything with this backup?"
        stored_now = page.inner_text("#restore-now")
        assert stored_now.splitlines()[0] == contents_sentence(now), stored_now
        assert page.inner_text("#restore-backup") == counts
        assert "replaced by the backup's" in page.inner_text("#restore-settings")
        assert "API keys are never in a backup" in page.inner_text("#restore-keys-note")
        assert page.inner_text("#dialog-ok") == "Replace everything"
        page.evaluate(_WATCH_PROGRESS)
        page.click("#dialog-ok")
        assert wait_restore(page, restores) == "completed", page.inner_text("#backup-status")

        status = page.inner_text("#backup-status")
        assert status.startswith(f"Restored {counts} from the backup of "), status
        assert status.endswith("Settings restored."), status
        keys = page.inner_text("#backup-keys")
        assert "enter the key again" in keys and panelot_stub.base_url in keys, keys
        # The progress bar showed the reading, then the writing.
        labels = [
            text
            for where, text in page.evaluate("() => window.__backupProgress")
            if where == "backup-progress-label"
        ]
        assert labels[0] == "Reading and checking the backup…" and labels[-1] == (
            "Writing the backup…"
        ), labels

        # Everything is back exactly: every record, the attachment's bytes, the setting.
        assert stored(store) == before
        [back] = stored(store)["attachments"]
        assert raw_bytes(back["bytes"]) == NOTES
        assert store.query("settings.get", {"group": "retention"})["value"] == retention
        # One new receipt, of the panel's client, under a fresh submission id (a UUID).
        new = [r for sid, r in restore_receipts(store).items() if sid not in receipts]
        assert len(new) == 1 and re.fullmatch(r"[0-9a-f-]{36}", new[0]["submissionId"]), new

        # The open conversation was not in the backup: closed quietly, not "deleted elsewhere".
        assert page.evaluate("() => window.panelotApp.chat.threadId") is None
        assert "another window" not in (page.text_content("#toast") or "")

        # The thread list shows the restored threads, live, without a reload.
        to_list(page)
        expected = sorted(t["id"] for t in before["threads"])
        page.wait_for_function(
            "(ids) => JSON.stringify([...document.querySelectorAll('#thread-list [data-thread-id]')]"
            ".map((el) => el.dataset.threadId).sort()) === JSON.stringify(ids)",
            arg=expected,
        )
        for thread in before["threads"]:
            title = page.inner_text(f"[data-thread-id='{thread['id']}'] .thread-title")
            assert title == thread["title"]
        assert page.inner_text(f"[data-thread-id='{second}'] .thread-title") == "Second"
    finally:
        configure_provider(page, panelot_stub.base_url)  # the key the restore could not bring


def test_a_file_that_is_not_a_backup_is_refused_and_changes_nothing(
    panel: Page, store: PageStore, tmp_path: Path
) -> None:
    page = panel
    store.seed_thread("kept as it is", title="Kept")
    before = stored(store)
    receipts = len(restore_receipts(store))
    path = tmp_path / "not-a-backup.json"
    path.write_text(json.dumps({"threads": [{"title": "Kept"}], "hello": "world"}))
    to_backup_settings(page)
    restores = count(page, "restore")
    restore(page, path)
    assert wait_restore(page, restores) == "refused"
    assert page.locator("#dialog[open]").count() == 0  # nothing to confirm
    assert page.get_attribute("#backup-status", "class") == "status error"
    assert_unchanged(page, store, "Cannot restore", "formatName", before, receipts)


def assert_unchanged(
    page: Page, store: PageStore, said: str, detail: str, before: Any, receipts: int
) -> None:
    """The refusal's words and technical detail are shown, and nothing was stored."""
    assert page.inner_text("#backup-status .error-text") == (
        f"{said}: This file is not a Panelot backup, or it is damaged. Nothing was changed."
    )
    page.click("#backup-status summary")
    assert detail in page.inner_text("#backup-status .error-detail pre")
    assert stored(store) == before
    assert len(restore_receipts(store)) == receipts


def test_a_damaged_backup_is_refused_after_the_confirmation_and_changes_nothing(
    panel: Page, store: PageStore, tmp_path: Path
) -> None:
    page = panel
    store.seed_thread("in the backup", title="Backed up")
    good = tmp_path / "good.json"
    back_up(page, good)
    backup = json.loads(good.read_text())
    [nodes] = [t for t in backup["data"]["data"] if t["tableName"] == "nodes"]
    nodes["rows"][-1]["payload"]["content"] = "not a list of blocks"
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(backup))
    store.seed_thread("made after the backup", title="Later")
    before = stored(store)
    receipts = len(restore_receipts(store))

    restores = count(page, "restore")
    restore(page, damaged)
    page.wait_for_selector("#dialog[open][data-kind=restore]")  # its header is sound
    page.click("#dialog-ok")
    assert wait_restore(page, restores) == "failed"
    assert_unchanged(page, store, "Restore failed", "payload.content", before, receipts)


def test_cancelling_the_confirmation_changes_nothing(
    panel: Page, store: PageStore, tmp_path: Path
) -> None:
    page = panel
    path = tmp_path / "backup.json"
    back_up(page, path)
    store.seed_thread("made after the backup", title="After")
    before = stored(store)
    receipts = len(restore_receipts(store))

    restores = count(page, "restore")
    restore(page, path)
    page.wait_for_selector("#dialog[open][data-kind=restore]")
    # The settings it names are sections of Settings (there is no "appearance").
    said = page.inner_text("#restore-settings")
    named = re.fullmatch(r"Your settings \((.+)\) will be replaced by the backup's too\.", said)
    assert named, said
    sections = page.eval_on_selector_all(
        "#view-settings h2", "els => els.map((e) => e.textContent)"
    )
    for name in re.split(r", | and ", named.group(1)):
        assert any(s.lower().startswith(name.lower()) for s in sections), (name, sections)
    page.click("#dialog-cancel")
    assert wait_restore(page, restores) == "cancelled"
    assert page.inner_text("#backup-status") == "Restore cancelled: nothing was changed."
    assert stored(store) == before
    assert len(restore_receipts(store)) == receipts
