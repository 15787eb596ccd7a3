"""The pause after a backup restore, and ``sync.resume`` (docs/sync.md, "Losing the sync state").

Store A syncs with a fresh server database, store B (another device) with the same one.
A backs up while it holds a thread the server never got ("only in the backup"); B then
pushes a thread A pulls ("only on the server", since the restore drops it from A). A
restores its backup: sync pauses until the user decides, merge or replace.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import text
from behavior.sync import all_docs, push, second_store, server, synced_store, until
from panelot.errors import SyncPausedError
from panelot.idb.errors import ValidationError
from panelot.store import PanelotStore

TIMEOUT = 20.0
"""Seconds a case waits for the loop's state at most."""


@dataclass
class _Restored:
    a: PanelotStore
    b: PanelotStore
    database: str
    kept: str
    """On both, in the backup and on the server."""
    backup_only: str
    """In the backup, never pushed."""
    server_only: str
    """Pushed by B, pulled by A, not in the backup."""


async def _status(store: PanelotStore) -> dict[str, Any]:
    status: dict[str, Any] = await store.query("sync.status")
    return status


async def _live_thread(ctx: Ctx, database: str, tid: str) -> bool:
    docs = await all_docs(ctx, database)
    doc = docs.get(f"threads:{tid}")
    return doc is not None and not doc.get("_deleted")


async def _prepare(
    ctx: Ctx, *, before_restore: Callable[[PanelotStore], Awaitable[None]] | None = None
) -> _Restored:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    kept = await a.create_thread("On both")
    await a.append(kept, "user_message", text("kept"))
    await push(a)
    await b.command("sync.pull", {})
    backup_only = await a.create_thread("Only in the backup")
    await a.append(backup_only, "user_message", text("from the backup"))
    backup = await a.export_backup()
    server_only = await b.create_thread("Only on the server")
    await b.append(server_only, "user_message", text("from B"))
    await push(b)
    pulled = await a.command("sync.pull", {})
    assert pulled["written"] >= 1, pulled
    assert await a.db.table("threads").get(server_only) is not None
    status = await _status(a)
    assert status["paused"] is None, status
    not_paused = await a.command("sync.resume", {"mode": "replace"})
    assert not_paused == {"resumed": False, "mode": "replace"}, not_paused  # a no-op
    if before_restore is not None:
        await before_restore(a)
    envelope = await a.restore_backup(backup.file, settings=False)
    assert envelope["status"] == "completed", envelope
    assert await a.db.table("threads").get(server_only) is None  # the restore dropped it
    assert await a.db.table("threads").get(backup_only) is not None
    return _Restored(a, b, database, kept, backup_only, server_only)


async def case_a_restore_pauses_sync_and_push_pull_now_start_refuse(ctx: Ctx) -> None:
    r = await _prepare(ctx)
    status = await _status(r.a)
    assert status["paused"] == "restore", status
    for command in ("sync.push", "sync.pull", "sync.now", "sync.start"):
        error = await raises(SyncPausedError, r.a.command(command, {}))
        assert "paused after a backup restore" in str(error) and "sync.resume" in str(error)
    assert (await _status(r.a))["running"] is False  # start refused: no loop
    docs = await all_docs(ctx, r.database)
    assert f"threads:{r.backup_only}" not in docs  # nothing went up
    assert not docs[f"threads:{r.server_only}"].get("_deleted")  # nothing deleted there
    bad = await raises(ValidationError, r.a.command("sync.resume", {"mode": "both"}))
    assert getattr(bad, "field", None) == "payload.mode" and "mode" in str(bad), bad
    assert (await _status(r.a))["paused"] == "restore"  # a refused resume changes nothing
    assert (await _status(r.b))["paused"] is None  # B's own state: B never restored
    await r.a.command("sync.forget", {})  # nothing left to stale: the pause goes too
    assert (await _status(r.a))["paused"] is None
    await r.a.command("sync.configure", {"server": server(), "database": r.database})
    assert (await _status(r.a))["paused"] is None


async def case_a_running_loop_stops_syncing_at_a_restore_and_goes_on_after_resume(
    ctx: Ctx,
) -> None:
    async def start(a: PanelotStore) -> None:
        assert a.sync is not None
        a.sync.poll_seconds = 0.5  # the paused loop asks again this often
        await a.command("sync.start", {})
        await until(lambda: _idle(a), "the start-up sync", TIMEOUT)

    r = await _prepare(ctx, before_restore=start)
    live = r.a.sync.live if r.a.sync is not None else None
    assert live is not None
    await until(lambda: _flag(live.paused), "the loop to see the pause", TIMEOUT)
    pushes, pulls = live.pushes, live.pulls
    nid = (await r.a.append(r.kept, "user_message", text("while paused")))["nodeId"]
    await until(lambda: _waiting(r.a), "the append in the outbox", TIMEOUT)
    status = await _status(r.a)
    assert status["running"] is True and status["paused"] == "restore", status
    assert (live.pushes, live.pulls) == (pushes, pulls)  # the loop neither pushed nor pulled
    assert f"nodes:{nid}" not in await all_docs(ctx, r.database)
    resumed = await r.a.command("sync.resume", {"mode": "merge"})
    assert resumed == {"resumed": True, "mode": "merge"}, resumed

    async def node_up() -> bool:
        return f"nodes:{nid}" in await all_docs(ctx, r.database)

    await until(node_up, "the loop to push after the resume", TIMEOUT)
    await until(lambda: _has_thread(r.a, r.server_only), "the server's thread back on A", TIMEOUT)
    assert live.paused is False and (await _status(r.a))["paused"] is None
    await r.a.command("sync.stop", {})


async def _flag(value: bool) -> bool:
    return value


async def _idle(store: PanelotStore) -> bool:
    live = store.sync.live if store.sync is not None else None
    return live is not None and live.pushes >= 1 and (await _status(store))["waiting"] == 0


async def _waiting(store: PanelotStore) -> bool:
    return bool((await _status(store))["waiting"] > 0)


async def _has_thread(store: PanelotStore, tid: str) -> bool:
    return await store.db.table("threads").get(tid) is not None


async def case_resume_merge_brings_the_server_back_and_sends_the_backup_deleting_nothing(
    ctx: Ctx,
) -> None:
    r = await _prepare(ctx)
    resumed = await r.a.command("sync.resume", {"mode": "merge"})
    assert resumed == {"resumed": True, "mode": "merge"}, resumed
    status = await _status(r.a)
    assert status["paused"] is None and status["documents"] == 0, status  # forgotten
    both = await r.a.command("sync.now", {})
    assert both["push"]["deleted"] == 0, both
    assert await _has_thread(r.a, r.server_only)  # only on the server: back here
    assert await _has_thread(r.a, r.backup_only) and await _has_thread(r.a, r.kept)
    for tid in (r.kept, r.backup_only, r.server_only):
        assert await _live_thread(ctx, r.database, tid), tid  # nothing deleted there
    await r.b.command("sync.pull", {})
    assert await _has_thread(r.b, r.backup_only)  # the backup's thread reached B
    assert await _has_thread(r.b, r.server_only)
    again = await r.a.command("sync.resume", {"mode": "replace"})
    assert again == {"resumed": False, "mode": "replace"}, again  # decided already


async def case_resume_replace_deletes_what_the_restore_lacks_on_the_server(ctx: Ctx) -> None:
    r = await _prepare(ctx)
    resumed = await r.a.command("sync.resume", {"mode": "replace"})
    assert resumed["resumed"] is True and resumed["mode"] == "replace", resumed
    assert resumed["deleted"] >= 2, resumed  # the thread and its node
    assert resumed["push"]["pushed"] >= 2, resumed  # the backup's thread and node went up
    assert (await _status(r.a))["paused"] is None
    assert not await _live_thread(ctx, r.database, r.server_only)  # deleted there
    assert await _live_thread(ctx, r.database, r.backup_only)
    assert await _live_thread(ctx, r.database, r.kept)
    pulled = await r.b.command("sync.pull", {})
    assert pulled["deleted"] == 1, pulled  # B's own cascade of the deleted thread
    assert not await _has_thread(r.b, r.server_only)
    assert await _has_thread(r.b, r.backup_only) and await _has_thread(r.b, r.kept)
    nodes = await r.b.db.table("nodes").where("threadId").equals(r.server_only).to_list()
    assert nodes == [], nodes
    both = await r.a.command("sync.now", {})  # A stays as restored
    assert both["push"]["deleted"] == 0 and both["pull"]["refused"] == [], both
    assert not await _has_thread(r.a, r.server_only)
