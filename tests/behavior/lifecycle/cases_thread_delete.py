"""``thread.delete``: admission stop, waiting for executions, one atomic cascade."""

from __future__ import annotations

import asyncio
from typing import Any

from behavior import Ctx
from behavior.payloads import text
from panelot.bus.receipts import receipt_id
from panelot.faults import FAULTS
from panelot.store import PanelotStore


async def _populate(store: PanelotStore, tid: str, nodes: int) -> None:
    """Write a linear thread and one record per dependent table straight into storage."""
    rows = [
        {
            "id": f"{tid}-n{i}",
            "threadId": tid,
            "parentId": f"{tid}-n{i - 1}" if i else None,
            "seq": i + 1,
            "ts": i,
            "type": "user_message",
            "payload": text(f"m{i}"),
        }
        for i in range(nodes)
    ]
    await store.db.table("nodes").bulk_put(rows)
    await store.db.table("threads").update(tid, {"leafId": rows[-1]["id"]})
    await store.db.table("attachments").put(
        {"id": f"{tid}-att", "threadId": tid, "createdAt": 1, "kind": "file", "mime": "text/plain"}
    )
    await store.db.table("runs").bulk_put(
        [
            {
                "id": f"{tid}-run-active",
                "threadId": tid,
                "submissionId": "s",
                "state": "running",
                "createdAt": 1,
                "updatedAt": 1,
            },
            {
                "id": f"{tid}-run-done",
                "threadId": tid,
                "submissionId": "s2",
                "state": "completed",
                "createdAt": 1,
                "updatedAt": 1,
            },
        ]
    )
    await store.db.table("approvals").put(
        {
            "id": f"{tid}-ap",
            "threadId": tid,
            "runId": f"{tid}-run-active",
            "status": "pending",
            "requestedAt": 1,
        }
    )
    await store.db.table("interactions").put(
        {
            "id": f"{tid}-in",
            "threadId": tid,
            "runId": f"{tid}-run-active",
            "status": "pending",
            "requestedAt": 1,
        }
    )


async def _counts(store: PanelotStore, tid: str) -> dict[str, int]:
    out = {"threads": 1 if await store.db.table("threads").get(tid) else 0}
    for table in ("nodes", "attachments", "runs", "approvals", "interactions"):
        out[table] = await store.db.table(table).where("threadId").equals(tid).count()
    return out


def delete_cmd(tid: str, sub: str = "del-1") -> dict[str, Any]:
    return {
        "type": "thread.delete",
        "clientId": "ui",
        "submissionId": sub,
        "payload": {"threadId": tid},
    }


async def case_delete_cascades_and_receipt_survives_a_restart(ctx: Ctx) -> None:
    store = await ctx.store()
    keep = await store.create_thread("keep")
    await _populate(store, keep, 3)
    tid = await store.create_thread("doomed")
    await _populate(store, tid, 50)
    out = await store.send(delete_cmd(tid))
    assert out["status"] == "completed", out
    expected = {
        "threadId": tid,
        "deleted": {"nodes": 50, "attachments": 1, "runs": 2, "approvals": 1, "interactions": 1},
    }
    assert out["response"] == expected
    assert await _counts(store, tid) == {
        "threads": 0,
        "nodes": 0,
        "attachments": 0,
        "runs": 0,
        "approvals": 0,
        "interactions": 0,
    }
    assert await _counts(store, keep) == {
        "threads": 1,
        "nodes": 3,
        "attachments": 1,
        "runs": 2,
        "approvals": 1,
        "interactions": 1,
    }
    receipt = await store.db.table("commandReceipts").get(receipt_id("ui", "del-1"))
    assert receipt["status"] == "acknowledged" and receipt["response"] == expected
    # a restart: a new store over the same database; the acknowledgement was lost, so the UI replays
    name = store.db.name
    store.close()
    again = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.dbs.append(again.db)
    assert await again.send(delete_cmd(tid)) == out
    gone = await again.send(delete_cmd(tid, "del-2"))
    assert gone["status"] == "failed" and gone["error"]["name"] == "NotFoundError"


async def case_failure_half_way_through_5000_nodes_deletes_nothing(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("big")
    await _populate(store, tid, 5000)
    before = await _counts(store, tid)
    FAULTS.arm("thread.delete.batch", after=5)  # fails after 2,500 nodes were deleted
    try:
        out = await store.send(delete_cmd(tid))
    finally:
        FAULTS.disarm()
    assert out["status"] == "failed" and out["error"]["name"] == "InjectedFault", out
    assert await _counts(store, tid) == before
    assert await store.db.table("commandReceipts").get(receipt_id("ui", "del-1")) is None
    thread = await store.query("thread.get", {"threadId": tid})
    assert "deleting" not in thread  # the admission stop was lifted again
    run = await store.db.table("runs").get(f"{tid}-run-active")
    assert run["state"] == "cancelled"  # cancelled executions stay cancelled
    appended = await store.append(tid, "user_message", text("still alive"))
    assert appended["seq"] == 5001
    out = await store.send(delete_cmd(tid))  # the same submission can now complete
    assert out["status"] == "completed" and out["response"]["deleted"]["nodes"] == 5001


async def case_admission_stops_and_executions_are_awaited(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("busy")
    order: list[str] = []
    started = asyncio.Event()

    async def execution() -> None:
        async with store.executions.running(tid):
            started.set()
            while not store.executions.cancelled(tid):
                await asyncio.sleep(0.01)
            refused = await store.send(
                {
                    "type": "message.append",
                    "clientId": "engine",
                    "submissionId": "late",
                    "payload": {"threadId": tid, "type": "user_message", "payload": text("late")},
                }
            )
            order.append(refused["error"]["name"] if refused["status"] == "failed" else "written")
            order.append("execution exited")

    async def delete() -> None:
        await started.wait()
        out = await store.send(delete_cmd(tid))
        order.append(out["status"])

    await asyncio.gather(execution(), delete())
    assert order == ["AdmissionError", "execution exited", "completed"]
    assert await _counts(store, tid) == {
        "threads": 0,
        "nodes": 0,
        "attachments": 0,
        "runs": 0,
        "approvals": 0,
        "interactions": 0,
    }


async def case_start_up_lifts_the_mark_of_a_delete_that_died_half_way(ctx: Ctx) -> None:
    from panelot.lifecycle.thread_delete import STALE_DELETE_MS, stop_thread

    store = await ctx.store()
    dead = await store.create_thread("page died after step 1")
    live = await store.create_thread("another context is deleting it right now")
    await _populate(store, dead, 5)
    await stop_thread(store.db, store.executions, dead, ctx.now)  # step 1, then the page dies
    refused = await store.send(
        {
            "type": "message.append",
            "clientId": "c",
            "submissionId": "x",
            "payload": {"threadId": dead, "type": "user_message", "payload": text("x")},
        }
    )
    assert refused["error"]["name"] == "AdmissionError"
    ctx.now += STALE_DELETE_MS + 1
    await stop_thread(store.db, store.executions, live, ctx.now)  # a fresh mark
    name = store.db.name
    store.close()
    again = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.dbs.append(again.db)
    assert "deleting" not in await again.query("thread.get", {"threadId": dead})
    assert (await again.query("thread.get", {"threadId": live}))["deleting"] is True
    assert await _counts(again, dead) == {
        "threads": 1,
        "nodes": 5,
        "attachments": 1,
        "runs": 2,
        "approvals": 1,
        "interactions": 1,
    }
    ok = await again.append(dead, "user_message", text("back"))
    assert ok["seq"] == 6
    out = await again.send(delete_cmd(dead))  # the replayed command runs the whole delete
    assert out["status"] == "completed" and out["response"]["deleted"]["nodes"] == 6


async def case_commands_with_a_first_step_are_refused_too(ctx: Ctx) -> None:
    from panelot.lifecycle.thread_delete import stop_thread

    store = await ctx.store()
    tid = await store.create_thread("being deleted")
    await stop_thread(store.db, store.executions, tid, ctx.now)  # the mark, as delete sets it
    refused = await store.send(
        {
            "type": "attachment.put",
            "clientId": "c",
            "submissionId": "put",
            "payload": {"threadId": tid, "kind": "file", "mime": "text/plain",
                        "dataBase64": "aGk="},
        }
    )  # fmt: skip
    assert refused["status"] == "failed" and refused["error"]["name"] == "AdmissionError"
    assert await store.db.table("attachments").count() == 0
    done = await store.command("thread.delete", {"threadId": tid})  # delete itself still runs
    assert done["threadId"] == tid


async def case_a_restored_delete_mark_is_lifted_at_the_next_start(ctx: Ctx) -> None:
    """A restore copies delete marks as they are; the next start lifts stale ones.

    Stale includes a mark dated after now (a backup from a machine whose clock ran
    ahead), which would otherwise keep its thread refusing every command for that long.
    """
    from panelot.lifecycle.thread_delete import STALE_DELETE_MS

    a = await ctx.store()
    died = await a.create_thread("its delete died before the backup")
    ahead = await a.create_thread("marked where the clock ran a day ahead")
    marks = {died: ctx.now - STALE_DELETE_MS - 1, ahead: ctx.now + 86_400_000}
    for tid, since in marks.items():
        await a.db.table("threads").update(tid, {"deleting": True, "deletingSince": since})
    backup = await a.export_backup(settings=False)
    b = await ctx.store()
    out = await b.restore_backup(backup.file, settings=False, submission_id="restore")
    assert out["status"] == "completed", out
    for tid, since in marks.items():  # a faithful copy, marks included
        got = await b.query("thread.get", {"threadId": tid})
        assert (got["deleting"], got["deletingSince"]) == (True, since), got
    name = b.db.name
    b.close()
    again = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.dbs.append(again.db)
    for tid in marks:
        got = await again.query("thread.get", {"threadId": tid})
        assert "deleting" not in got and "deletingSince" not in got, got
        assert (await again.append(tid, "user_message", text("mine again")))["seq"] == 1
