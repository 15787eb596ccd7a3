"""Durability: ``strict`` where something irreversible follows the commit, the option's rules.

Each case turns on ``db.durability_log`` (every committed read-write transaction's mode,
tables and durability) and checks what the domain asked for. That the browser core
really opens ``IDBTransaction.durability == "strict"`` is checked in
``tests/browser/test_durability.py``.
"""

from __future__ import annotations

import copy
from typing import Any

from behavior import Ctx, raises
from behavior.backup.cases_backup import isolate
from behavior.legacy.browsa_fixture import storage
from behavior.payloads import text
from panelot.idb import Database, InvalidArgumentError, SchemaVersion, Transaction
from panelot.settings import MemoryStorageBackend
from panelot.settings.credentials import MemoryKeyStore

STORES = {"items": "id"}


def logged(db: Database, tables: str) -> list[str]:
    """The durabilities of the logged read-write transactions over exactly ``tables``."""
    assert db.durability_log is not None
    return [
        d for _, names, d in db.durability_log if "commandReceipts" in names and tables in names
    ]


async def case_durability_option_and_override(ctx: Ctx) -> None:
    default = await ctx.open(STORES)
    strict = Database(
        ctx.new_name(), [SchemaVersion(1, STORES)], chrome_transaction_durability="strict"
    )
    await strict.open(ctx.factory)
    ctx.dbs.append(strict)
    seen: list[str] = []

    async def body(tx: Transaction) -> None:
        seen.append(tx.durability)
        await tx.table("items").put({"id": "a"})

    for db in (default, strict):
        db.durability_log = []
        await db.transaction("rw", ["items"], body)
        await db.transaction("rw", ["items"], body, durability="relaxed")
        await db.table("items").put({"id": "b"})  # a table's own transaction
    assert seen == ["default", "relaxed", "strict", "relaxed"]
    assert [d for _, _, d in default.durability_log or []] == ["default", "relaxed", "default"]
    assert [d for _, _, d in strict.durability_log or []] == ["strict", "relaxed", "strict"]
    assert await strict.table("items").count() == 2


async def case_durability_bad_values_name_the_option(ctx: Ctx) -> None:
    err = await raises(
        InvalidArgumentError,
        _construct(ctx, "durable"),
    )
    assert err.field == "chrome_transaction_durability"  # type: ignore[attr-defined]
    assert "'default', 'strict' or 'relaxed'" in str(err) and "'durable'" in str(err)
    db = await ctx.open(STORES)

    async def body(tx: Transaction) -> None:
        await tx.table("items").put({"id": "never"})

    err = await raises(
        InvalidArgumentError, db.transaction("rw", ["items"], body, durability="STRICT")
    )  # type: ignore[arg-type]
    assert err.field == "durability"  # type: ignore[attr-defined]
    assert await db.table("items").count() == 0


async def _construct(ctx: Ctx, value: Any) -> None:
    Database(ctx.new_name(), [SchemaVersion(1, STORES)], chrome_transaction_durability=value)


async def case_thread_delete_cascade_is_strict(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    await store.append(tid, "user_message", text("hello"))
    store.db.durability_log = []
    out = await store.command("thread.delete", {"threadId": tid})
    assert out["threadId"] == tid
    assert logged(store.db, "nodes") == ["strict"]  # the cascade, with its receipt
    marks = [d for _, names, d in store.db.durability_log if "commandReceipts" not in names]
    assert marks == ["default"]  # the deleting mark: reversible


async def case_ordinary_commands_keep_the_default(ctx: Ctx) -> None:
    store = await ctx.store()
    store.db.durability_log = []
    tid = await store.create_thread()
    await store.append(tid, "user_message", text("hello"))
    assert [d for _, _, d in store.db.durability_log] == ["default", "default"]


async def case_backup_restore_replacing_transaction_is_strict(ctx: Ctx) -> None:
    host = isolate(ctx)
    a = await ctx.store(host)
    tid = await a.create_thread()
    await a.append(tid, "user_message", text("kept"))
    backup = await a.export_backup()
    b = await ctx.store(host)
    b.db.durability_log = []
    envelope = await b.restore_backup(backup.file, submission_id="restore-strict")
    assert envelope["status"] == "completed", envelope
    assert logged(b.db, "nodes") == ["strict"]


async def case_legacy_import_is_strict(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    await backend.set(copy.deepcopy(storage()))
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    store = await ctx.store(host)
    store.db.durability_log = []
    out = await store.command("legacy.import", {}, "import-strict")
    assert out["threads"] == 3
    assert logged(store.db, "nodes") == ["strict"]
