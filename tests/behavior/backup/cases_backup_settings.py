"""A backup's settings section, and the marker that applies it after the commit.

The section holds the groups and credential references, never a secret; the pending
marker applies a restore's settings once its transaction has committed.

Each case uses a memory settings backend of its own (``ctx.host.with_settings``), and
every store of a case that shares settings is opened on that one host.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from behavior import Ctx
from behavior.backup.fill import dump
from behavior.payloads import text
from behavior.settings.cases_settings import forms
from panelot.backup.section import PENDING_KEY, STALE_MS, stage_pending
from panelot.bus.receipts import receipt_id
from panelot.idb import Database
from panelot.idb.blobs import blob_bytes
from panelot.settings import MemoryStorageBackend
from panelot.settings.credentials import MemoryKeyStore
from panelot.store import PanelotStore

SECRET = "sk-live-BACKUP-PLANTED-5e1d9c7a3b"
OTHER_SECRET = "sk-ant-BACKUP-PLANTED-0f2e4d6c8a"

PROVIDERS = {
    "connections": [
        {
            "id": "oa",
            "kind": "openai",
            "baseUrl": "https://api.openai.test/v1",
            "models": ["m-1", "m-2"],
            "credentialRef": "cred:openai",
        },
        {
            "id": "an",
            "kind": "anthropic",
            "baseUrl": "https://api.anthropic.test",
            "credentialRef": "cred:anthropic",
            "label": "Claude",
        },
        {"id": "local", "kind": "ollama", "baseUrl": "http://127.0.0.1:11434"},
    ],
    "defaultConnectionId": "an",
}
UI = {"theme": "dark", "fontSize": 18, "language": "fr"}


async def groups(store: PanelotStore) -> dict[str, Any]:
    """Every settings group's value, as ``settings.all`` answers."""
    answer = await store.query("settings.all")
    assert answer["problems"] == []
    groups: dict[str, Any] = answer["groups"]
    return groups


async def case_backup_settings_carry_references_never_secrets(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    services = host.services
    a = await ctx.store(host)
    tid = await a.create_thread("with settings")
    await a.append(tid, "user_message", text("hi"))
    await a.command("settings.set", {"group": "ui", "value": UI})
    await a.command("settings.set", {"group": "providers", "value": PROVIDERS})
    await a.command("settings.set", {"group": "retention", "value": {"days": 30}})
    await a.command("credential.set", {"secret": SECRET, "ref": "cred:openai"})
    await a.command("credential.set", {"secret": OTHER_SECRET, "ref": "cred:anthropic"})
    configured = await groups(a)
    ciphertexts = [backend.dump()[ref]["data"] for ref in ("cred:openai", "cred:anthropic")]

    backup = await a.export_backup()
    raw = await blob_bytes(backup.file)
    file_text = raw.decode()
    section = json.loads(raw)["panelotSettings"]
    assert section["format"] == "panelot.settings" and section["version"] == 1
    assert sorted(c["ref"] for c in section["credentials"]) == ["cred:anthropic", "cred:openai"]
    assert all(set(c) == {"ref", "createdAt", "updatedAt"} for c in section["credentials"])
    assert section["groups"]["ui"]["value"]["theme"] == "dark"
    assert "cred:openai" in file_text and "cred:anthropic" in file_text
    for secret in (SECRET, OTHER_SECRET):
        for form in forms(secret):
            assert form not in file_text, form
    for data in ciphertexts:  # not even encrypted
        assert str(data)[:24] not in file_text
    without = await blob_bytes((await a.export_backup(settings=False)).file)
    assert "panelotSettings" not in json.loads(without)  # (the receipts still name the refs)

    # the settings reset and a credential gone, then the restore
    for group in ("ui", "providers", "retention"):
        await a.command("settings.reset", {"group": group})
    await a.command("credential.delete", {"ref": "cred:openai"})
    assert (await services.settings.get("ui")).theme == "system"
    b = await ctx.store(host)
    envelope = await b.restore_backup(backup.file, submission_id="with-settings")
    assert envelope["status"] == "completed", envelope
    assert envelope["settingsApplied"] is True
    assert envelope["missingCredentials"] == ["cred:openai"]
    assert envelope["response"]["settings"] is True
    assert sorted(envelope["response"]["credentials"]) == ["cred:anthropic", "cred:openai"]
    assert await groups(b) == configured
    ui = await services.settings.get("ui")
    assert (ui.theme, ui.font_size, ui.language) == ("dark", 18, "fr")
    providers = await services.settings.get("providers")
    assert [c.credential_ref for c in providers.connections] == [
        "cred:openai",
        "cred:anthropic",
        None,
    ]
    # a restore never makes or removes a credential
    assert [c["ref"] for c in await b.query("credential.list")] == ["cred:anthropic"]
    assert await services.credentials.reveal("cred:anthropic") == OTHER_SECRET
    assert (await backend.get([PENDING_KEY])) == {}

    # a new profile (a fresh backend): the settings come back, every key is to enter again
    fresh_host = ctx.host.with_settings(MemoryStorageBackend(), MemoryKeyStore())
    fresh = fresh_host.services
    c = await ctx.store(fresh_host)
    envelope = await c.restore_backup(backup.file)
    assert envelope["status"] == "completed", envelope
    assert envelope["settingsApplied"] is True
    assert envelope["missingCredentials"] == ["cred:anthropic", "cred:openai"]
    assert await groups(c) == configured
    assert await c.query("credential.list") == []
    assert (await fresh.settings.get("ui")).theme == "dark"


async def case_backup_restore_without_settings_leaves_them(ctx: Ctx) -> None:
    host = ctx.host.with_settings(MemoryStorageBackend(), MemoryKeyStore())
    services = host.services
    a = await ctx.store(host)
    await a.command("settings.set", {"group": "ui", "value": UI})
    backup = await a.export_backup()
    await a.command("settings.set", {"group": "ui", "value": {"theme": "light"}})
    b = await ctx.store(host)
    envelope = await b.restore_backup(backup.file, settings=False)
    assert envelope["status"] == "completed", envelope
    assert envelope["settingsApplied"] is False and envelope["response"]["settings"] is False
    assert (await services.settings.get("ui")).theme == "light"
    # a backup made without settings restores none, whatever the caller asks
    bare = await a.export_backup(settings=False)
    await a.command("settings.set", {"group": "ui", "value": {"theme": "system", "fontSize": 9}})
    envelope = await b.restore_backup(bare.file)
    assert envelope["status"] == "completed", envelope
    assert envelope["settingsApplied"] is False and envelope["response"]["settings"] is False
    ui = await services.settings.get("ui")
    assert (ui.theme, ui.font_size) == ("system", 9)


class ClosingBackend(MemoryStorageBackend):
    """A memory backend that closes ``db`` right after a restore's settings are parked."""

    def __init__(self) -> None:
        super().__init__()
        self.db: Database | None = None
        self.parked: list[Any] = []

    async def set(self, items: Mapping[str, Any]) -> None:
        await super().set(items)
        if PENDING_KEY in items and self.db is not None:
            self.parked.append(items[PENDING_KEY])
            self.db.close()


async def case_backup_failed_restore_drops_its_parked_settings(ctx: Ctx) -> None:
    """A restore whose transaction fails after its settings were parked drops them."""
    backend = ClosingBackend()
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    services = host.services
    a = await ctx.store(host)
    await a.command("settings.set", {"group": "ui", "value": UI})
    backup = await a.export_backup()
    await a.command("settings.reset", {"group": "ui"})
    b = await ctx.store(host)
    await b.create_thread("before")
    before = await dump(b)
    # The file is read and checked, its settings parked; then the connection closes
    # under the command, so its transaction cannot run.
    backend.db = b.db
    envelope = await b.restore_backup(backup.file, submission_id="doomed")
    assert envelope["status"] == "failed", envelope
    assert len(backend.parked) == 1 and backend.parked[0]["settings"]["settings.ui"]
    assert (await backend.get([PENDING_KEY])) == {}
    assert (await services.settings.get("ui")).theme == "system"
    backend.db = None
    reopened = await PanelotStore.open(ctx.factory, b.host, b.db.name, clock=ctx.clock)
    ctx.dbs.append(reopened.db)
    assert await dump(reopened) == before
    assert (await services.settings.get("ui")).theme == "system"


def ui_record(theme: str) -> dict[str, Any]:
    """A staged ``settings.ui`` record, as a restore parks it."""
    return {"settings.ui": {"version": 1, "value": {"theme": theme, "fontSize": 20}}}


async def reopen(ctx: Ctx, store: PanelotStore, now: int) -> PanelotStore:
    """Another context opening the store's database, at time ``now``."""
    other = await PanelotStore.open(ctx.factory, store.host, store.db.name, clock=lambda: now)
    ctx.dbs.append(other.db)
    return other


async def case_backup_pending_settings_applied_at_open_once_committed(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    services = host.services
    store = await ctx.store(host)
    await store.command("thread.create", {"title": "x"}, "committed")
    rid = receipt_id(store.client_id, "committed")
    await stage_pending(services, rid, ui_record("dark"), ctx.now)
    # the restore committed (its receipt is there), then its context died: the next
    # context to open the store applies the settings and removes the marker
    await reopen(ctx, store, ctx.now + 5)
    ui = await services.settings.get("ui")
    assert (ui.theme, ui.font_size) == ("dark", 20)
    assert (await backend.get([PENDING_KEY])) == {}
    # applied once: a later change is not undone by another opening
    await services.settings.set("ui", {"theme": "light"})
    await reopen(ctx, store, ctx.now + 10)
    assert (await services.settings.get("ui")).theme == "light"


async def case_backup_pending_settings_wait_for_their_receipt_until_stale(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    services = host.services
    store = await ctx.store(host)
    staged_at = ctx.now
    rid = receipt_id("panel", "still-running")
    await stage_pending(services, rid, ui_record("dark"), staged_at)
    marker = await backend.get([PENDING_KEY])
    assert marker[PENDING_KEY]["receiptId"] == rid
    # no receipt yet: the restore may still be running in another context; left alone
    await reopen(ctx, store, staged_at + 1000)
    assert (await services.settings.get("ui")).theme == "system"
    assert await backend.get([PENDING_KEY]) == marker
    await reopen(ctx, store, staged_at + STALE_MS)
    assert await backend.get([PENDING_KEY]) == marker
    # its receipt appears (the restore committed): applied at the next opening
    await store.send(
        {
            "type": "thread.create",
            "clientId": "panel",
            "submissionId": "still-running",
            "payload": {"title": "t"},
        }
    )
    await reopen(ctx, store, staged_at + STALE_MS)
    assert (await services.settings.get("ui")).theme == "dark"
    assert await backend.get([PENDING_KEY]) == {}

    # one that never commits is dropped once stale, unapplied
    await services.settings.set("ui", {"theme": "light"})
    await stage_pending(services, receipt_id("panel", "never"), ui_record("dark"), staged_at)
    await reopen(ctx, store, staged_at + STALE_MS)
    assert (await backend.get([PENDING_KEY])) != {}
    await reopen(ctx, store, staged_at + STALE_MS + 1)
    assert await backend.get([PENDING_KEY]) == {}
    assert (await services.settings.get("ui")).theme == "light"
