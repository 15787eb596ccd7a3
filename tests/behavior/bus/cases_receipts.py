"""The command bus and its receipts (docs/api.md, Receipts)."""

from __future__ import annotations

from behavior import Ctx, raises
from behavior.payloads import text
from panelot.bus.receipts import cleanup_receipts, receipt_id, write_receipt


def append_cmd(tid: str, sub: str, t: str = "hello") -> dict:
    return {
        "type": "message.append",
        "clientId": "cli",
        "submissionId": sub,
        "payload": {"threadId": tid, "type": "user_message", "payload": text(t)},
    }


async def case_replay_returns_stored_response_and_writes_nothing(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    first = await store.send(append_cmd(tid, "s1"))
    assert first["status"] == "completed"
    again = await store.send(append_cmd(tid, "s1"))
    assert again == first
    export = (await store.query("thread.export", {"threadId": tid}))["data"]
    assert len(export["nodes"]) == 1


async def case_replay_with_other_payload_conflicts(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    await store.send(append_cmd(tid, "s1", "one"))
    out = await store.send(append_cmd(tid, "s1", "two"))
    assert out["status"] == "failed"
    assert out["error"]["name"] == "ConflictError" and out["error"]["field"] == "submissionId"
    assert len((await store.query("thread.export", {"threadId": tid}))["data"]["nodes"]) == 1


async def case_receipt_and_effect_land_together_or_not_at_all(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    failed = await store.send(
        {
            **append_cmd(tid, "bad"),
            "payload": {"threadId": tid, "type": "user_message", "payload": {"content": 5}},
        }
    )
    assert failed["status"] == "failed"
    receipts = store.db.table("commandReceipts")
    assert await receipts.get(receipt_id("cli", "bad")) is None
    ok = await store.send(append_cmd(tid, "good", "secret words"))
    rec = await receipts.get(receipt_id("cli", "good"))
    assert rec["status"] == "completed" and rec["response"] == ok["response"]
    assert rec["commandType"] == "message.append" and len(rec["requestFingerprint"]) == 64
    assert rec["expiresAt"] > rec["createdAt"]
    assert "secret words" not in repr(rec)  # the receipt never stores the input text
    by_index = await receipts.where("[clientId+submissionId]").equals(["cli", "good"]).to_list()
    assert by_index == [rec]


async def case_completed_receipt_cannot_be_overwritten(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    cmd = append_cmd(tid, "s1")
    await store.send(cmd)

    async def body(tx):  # type: ignore[no-untyped-def]
        await write_receipt(tx, cmd, "f" * 64, {"forged": True}, 1)

    from panelot.idb import ConstraintError

    await raises(ConstraintError, store.db.transaction("rw", ["commandReceipts"], body))
    rec = await store.db.table("commandReceipts").get(receipt_id("cli", "s1"))
    assert "forged" not in rec["response"]


async def case_expired_receipts_are_cleaned(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    await store.send(append_cmd(tid, "old"))
    assert await cleanup_receipts(store.db, ctx.now) == 0
    removed = await cleanup_receipts(store.db, ctx.now + 31 * 24 * 3600 * 1000)
    assert removed == 2  # thread.create's receipt and the append's
    assert await store.db.table("commandReceipts").count() == 0


async def case_bad_envelopes_are_refused_cleanly(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    out = await store.send({"type": "no.such", "clientId": "c", "submissionId": "s"})
    assert out["status"] == "failed" and out["error"]["name"] == "UnknownCommandError"
    out = await store.send({"type": "message.append", "clientId": "", "submissionId": "s"})
    assert out["error"]["field"] == "clientId"
    out = await store.send({"type": "message.append", "clientId": "c", "submissionId": "x" * 201})
    assert out["error"]["field"] == "submissionId"
    out = await store.send(
        {
            "type": "message.append",
            "clientId": "c",
            "submissionId": "s",
            "payload": {"threadId": tid},
        }
    )
    assert out["error"]["field"] == "payload.type"
    out = await store.send(
        {
            "type": "message.append",
            "clientId": "c",
            "submissionId": "s2",
            "payload": {
                "threadId": tid,
                "type": "user_message",
                "payload": text("x"),
                "parentId": 5,
            },
        }
    )
    assert out["error"]["field"] == "payload.parentId"
    out = await store.send(["not", "an", "object"])
    assert out["status"] == "failed" and out["error"]["field"] == "command"
    out = await store.send(
        {
            "type": "thread.update",
            "clientId": "c",
            "submissionId": "n",
            "payload": {"threadId": "missing", "patch": {}},
        }
    )
    assert out["error"]["name"] == "NotFoundError"


async def case_staged_writes_land_with_the_receipt_or_not_at_all(ctx: Ctx) -> None:
    # thread.update hands its write to the bus (Staged), which issues it with the
    # receipt in one round trip: both land, and a failing staged write leaves neither.
    from dataclasses import dataclass

    from panelot.api.registry import COMMANDS
    from panelot.bus import Handler, Staged

    store = await ctx.store()
    tid = await store.create_thread("before")
    update = {"type": "thread.update", "clientId": "cli", "submissionId": "u1"}
    out = await store.send({**update, "payload": {"threadId": tid, "patch": {"title": "after"}}})
    assert out["status"] == "completed" and out["response"]["thread"]["title"] == "after"
    receipts = store.db.table("commandReceipts")
    assert (await receipts.get(receipt_id("cli", "u1")))["response"] == out["response"]
    assert (await store.db.table("threads").get(tid))["title"] == "after"

    @dataclass(frozen=True)
    class OnThread:
        thread_id: str

    async def clash(tx, call):  # type: ignore[no-untyped-def]
        assert "admission" in call.found, "the bus read the thread for its admission check"
        threads = tx.table("threads")
        thread = call.found["admission"]
        renamed = {**thread, "title": "never"}
        return Staged({"ok": True}, (threads.put(renamed), threads.add(dict(thread))))

    COMMANDS["test.staged"] = Handler(payload=OnThread, tables=("threads",), run=clash)
    try:
        failed = await store.send(
            {
                "type": "test.staged",
                "clientId": "cli",
                "submissionId": "s1",
                "payload": {"threadId": tid},
            }
        )
    finally:
        del COMMANDS["test.staged"]
    assert failed["status"] == "failed" and failed["error"]["name"] == "ConstraintError"
    assert await receipts.get(receipt_id("cli", "s1")) is None
    assert (await store.db.table("threads").get(tid))["title"] == "after"
