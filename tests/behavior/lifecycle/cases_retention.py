"""Retention: archive threads untouched for N days, except active and pinned ones."""

from __future__ import annotations

from behavior import Ctx, raises
from behavior.attachments.cases_attachments import image, put
from behavior.tree.cases_tree import answer, text
from panelot.attachments.records import read_bytes
from panelot.idb.errors import ValidationError
from panelot.lifecycle.retention import DAY_MS, SUMMARY_REF
from panelot.store import PanelotStore


async def _conversation(store: PanelotStore, title: str) -> str:
    tid = await store.create_thread(title)
    await store.append(tid, "user_message", text(f"question of {title}"))
    await store.append(tid, "assistant_message", answer(f"answer of {title}"))
    return tid


async def _scene(ctx: Ctx, store: PanelotStore) -> dict[str, str]:
    """Old: plain (with an image), pinned, active, empty; then 40 days later a recent one."""
    ids = {name: await _conversation(store, name) for name in ("old", "pinned", "active")}
    att = await put(store, ids["old"], b"img")
    await store.append(ids["old"], "user_message", image(att))
    await store.command("thread.update", {"threadId": ids["pinned"], "patch": {"pinned": True}})
    ids["empty"] = await store.create_thread("empty")
    ids["image"] = att
    ctx.now += 40 * DAY_MS
    ids["recent"] = await _conversation(store, "recent")
    return ids


async def _node_count(store: PanelotStore, tid: str) -> int:
    return int(await store.db.table("nodes").where("threadId").equals(tid).count())


async def _check_archived(store: PanelotStore, tid: str, old_image: str) -> None:
    meta = await store.query("thread.get", {"threadId": tid})
    assert meta["archived"] is True and meta["leafId"] is None and meta["title"] == "old"
    assert await _node_count(store, tid) == 0
    rows = (await store.query("attachment.list", {"threadId": tid}))["attachments"]
    assert [(r["kind"], r["mime"], r["sourceRef"]) for r in rows] == [
        ("page_text", "text/markdown", SUMMARY_REF)
    ]
    assert old_image not in [r["id"] for r in rows]
    summary = (await read_bytes(store.db, rows[0]["id"]))[1].decode()
    assert summary.startswith("# old") and "question of old" in summary
    assert "answer of old" in summary
    snap = await store.query("thread.snapshot", {"threadId": tid})
    assert snap["nodes"] == []


async def case_archive_old_through_the_bus(ctx: Ctx) -> None:
    store = await ctx.store()
    ids = await _scene(ctx, store)
    out = await store.command("thread.archive_old", {"days": 30, "activeThreadId": ids["active"]})
    assert [a["threadId"] for a in out["archived"]] == [ids["old"]]
    assert out["archived"][0]["nodes"] == 3 and out["archived"][0]["attachments"] == 1
    await _check_archived(store, ids["old"], ids["image"])
    for name in ("pinned", "active", "recent"):
        meta = await store.query("thread.get", {"threadId": ids[name]})
        assert not meta["archived"] and await _node_count(store, ids[name]) == 2, name
    again = await store.command("thread.archive_old", {"days": 30})
    assert [a["threadId"] for a in again["archived"]] == [ids["active"]]
    await raises(ValidationError, store.command("thread.archive_old", {"days": 0}))
    await raises(ValidationError, store.command("thread.archive_old", {"days": "30"}))


async def case_archive_runs_at_start_up_when_enabled(ctx: Ctx) -> None:
    store = await ctx.store()
    ids = await _scene(ctx, store)
    name = store.db.name
    store.close()
    off = await PanelotStore.open(ctx.factory, name, clock=ctx.clock)
    ctx.dbs.append(off.db)
    assert off.startup["archived"] == 0
    off.close()
    on = await PanelotStore.open(
        ctx.factory, name, clock=ctx.clock, retention_days=30, active_thread_id=ids["active"]
    )
    ctx.dbs.append(on.db)
    assert on.startup["archived"] == 1
    await _check_archived(on, ids["old"], ids["image"])
    assert await _node_count(on, ids["active"]) == 2
    assert await _node_count(on, ids["pinned"]) == 2
    # a longer period spares everything
    on.close()
    later = await PanelotStore.open(ctx.factory, name, clock=ctx.clock, retention_days=60)
    ctx.dbs.append(later.db)
    assert later.startup["archived"] == 0


async def case_thread_with_an_active_run_is_not_archived(ctx: Ctx) -> None:
    store = await ctx.store()
    ids = await _scene(ctx, store)
    await store.db.table("runs").put(
        {
            "id": "run-1",
            "threadId": ids["old"],
            "submissionId": "s",
            "state": "running",
            "createdAt": 1,
            "updatedAt": 1,
        }
    )
    out = await store.command("thread.archive_old", {"days": 30, "activeThreadId": ids["active"]})
    assert out["archived"] == []
    assert await _node_count(store, ids["old"]) == 3
