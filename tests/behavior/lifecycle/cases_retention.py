"""Retention: archive threads untouched for N days, except active and pinned ones."""

from __future__ import annotations

from behavior import Ctx, raises
from behavior.attachments.cases_attachments import image, put
from behavior.payloads import answer, text
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
    off = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.dbs.append(off.db)
    assert off.startup["archived"] == 0
    off.close()
    on = await PanelotStore.open(
        ctx.factory,
        ctx.host,
        name,
        clock=ctx.clock,
        retention_days=30,
        active_thread_id=ids["active"],
    )
    ctx.dbs.append(on.db)
    assert on.startup["archived"] == 1
    await _check_archived(on, ids["old"], ids["image"])
    assert await _node_count(on, ids["active"]) == 2
    assert await _node_count(on, ids["pinned"]) == 2
    # a longer period spares everything
    on.close()
    later = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock, retention_days=60)
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


async def case_every_spared_thread_is_kept(ctx: Ctx) -> None:
    """``sparedThreadIds`` (what open panels show, what one will reopen) are all kept."""
    store = await ctx.store()
    ids = await _scene(ctx, store)
    spared = [ids["old"], ids["active"]]
    out = await store.command("thread.archive_old", {"days": 30, "sparedThreadIds": spared})
    assert out["archived"] == []
    for name in ("old", "active"):
        assert await _node_count(store, ids[name]) >= 2, name
    await raises(
        ValidationError,
        store.command("thread.archive_old", {"days": 30, "sparedThreadIds": "not a list"}),
    )
    name = store.db.name
    store.close()
    on = await PanelotStore.open(
        ctx.factory, ctx.host, name, clock=ctx.clock, retention_days=30, spared_thread_ids=spared
    )
    ctx.dbs.append(on.db)
    assert on.startup["archived"] == 0
    assert await _node_count(on, ids["old"]) == 3


async def case_preview_counts_what_a_pass_would_remove(ctx: Ctx) -> None:
    store = await ctx.store()
    ids = await _scene(ctx, store)
    plan = await store.query("retention.preview", {"days": 30, "activeThreadId": ids["active"]})
    # old: a question, an answer and an image message; nothing written by the preview
    assert plan == {"threadIds": [ids["old"]], "threads": 1, "messages": 3}
    assert await _node_count(store, ids["old"]) == 3
    spared = await store.query(
        "retention.preview", {"days": 30, "sparedThreadIds": [ids["old"], ids["active"]]}
    )
    assert spared == {"threadIds": [], "threads": 0, "messages": 0}
    await raises(ValidationError, store.query("retention.preview", {"days": 0}))


async def case_the_summary_is_shown_and_exported(ctx: Ctx) -> None:
    """``thread.summary`` and both exports give what retention kept, and say so."""
    store = await ctx.store()
    ids = await _scene(ctx, store)
    assert await store.query("thread.summary", {"threadId": ids["old"]}) is None
    await store.command("thread.archive_old", {"days": 30, "activeThreadId": ids["active"]})
    summary = await store.query("thread.summary", {"threadId": ids["old"]})
    assert summary is not None
    assert summary["markdown"].startswith("# old") and "answer of old" in summary["markdown"]
    assert summary["notice"].startswith("Retention removed this conversation's messages on ")
    md = (await store.query("thread.export", {"threadId": ids["old"], "format": "markdown"}))[
        "markdown"
    ]
    assert md.startswith("# old\n\n> Retention removed")
    assert "question of old" in md and "answer of old" in md
    data = (await store.query("thread.export", {"threadId": ids["old"]}))["data"]
    assert data["nodes"] == []
    assert data["retentionSummary"]["markdown"] == summary["markdown"]
    # Un-archived and continued: the summary stays, the new messages follow it.
    await store.command("thread.update", {"threadId": ids["old"], "patch": {"archived": False}})
    await store.append(ids["old"], "user_message", text("a new question"))
    md = (await store.query("thread.export", {"threadId": ids["old"], "format": "markdown"}))[
        "markdown"
    ]
    assert md.index("answer of old") < md.index("---") < md.index("a new question")
    assert await store.query("thread.summary", {"threadId": ids["active"]}) is None
