"""Approvals and interactions: requests, the one claim, pending lists (docs/api.md)."""

from __future__ import annotations

import asyncio
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import text
from behavior.runs.cases_runs import move, start
from panelot.errors import AlreadyResolvedError, TransitionError
from panelot.idb.errors import NotFoundError, PanelotError
from panelot.runs.approvals import claim_approval, claim_interaction, pending
from panelot.store import PanelotStore

ASK = {"toolName": "click", "params": {"selector": "#buy"}, "origin": "https://shop.example"}


async def running_run(store: PanelotStore, sub: str = "sub-1") -> tuple[str, str, str]:
    """A thread with one user message and a running run: (threadId, runId, leafId)."""
    tid = await store.create_thread()
    leaf = (await store.append(tid, "user_message", text("buy it")))["nodeId"]
    run_id = await start(store, tid, sub)
    await move(store, run_id, "preparing", "running")
    return tid, run_id, leaf


async def ask(store: PanelotStore, tid: str, run_id: str, kind: str = "approval") -> str:
    out = await store.command(f"{kind}.request", {"threadId": tid, "runId": run_id, "request": ASK})
    return str(out[f"{kind}Id"])


async def decision_nodes(store: PanelotStore, tid: str, kind: str) -> list[dict[str, Any]]:
    data = (await store.query("thread.export", {"threadId": tid}))["data"]
    return [n for n in data["nodes"] if n["type"] == kind]


def claim_cmd(approval_id: str, sub: str, decision: str = "approved") -> dict[str, Any]:
    return {
        "type": "approval.claim",
        "clientId": "ui",
        "submissionId": sub,
        "payload": {"approvalId": approval_id, "decision": decision},
    }


async def case_approval_request_and_claim(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, run_id, leaf = await running_run(store)
    out = await store.command(
        "approval.request", {"threadId": tid, "runId": run_id, "request": ASK}
    )
    assert out["runState"] == "awaiting_approval"
    aid = out["approvalId"]
    listed = await store.query("approvals.pending", {"threadId": tid})
    assert [a["id"] for a in listed["approvals"]] == [aid] and listed["interactions"] == []
    assert listed["approvals"][0]["status"] == "pending"
    assert listed["approvals"][0]["request"] == ASK
    done = await store.command("approval.claim", {"approvalId": aid, "decision": "approved"})
    assert done["approvalId"] == aid and done["runState"] == "running"
    (node,) = await decision_nodes(store, tid, "approval_decision")
    assert node["id"] == done["nodeId"] and node["parentId"] == leaf
    assert node["payload"]["approvalId"] == aid and node["payload"]["request"] == ASK
    assert node["payload"]["decision"] == "approved" and isinstance(node["payload"]["ts"], int)
    assert (await store.query("thread.get", {"threadId": tid}))["leafId"] == node["id"]
    record = await store.db.table("approvals").get(aid)
    assert record["status"] == "resolved" and record["decision"] == "approved"
    assert record["nodeId"] == node["id"] and record["resolvedAt"] >= record["requestedAt"]
    assert await store.query("approvals.pending", {"threadId": tid}) == {
        "approvals": [],
        "interactions": [],
    }
    assert (await store.query("run.get", {"runId": run_id}))["state"] == "running"
    # approval decisions stay out of the provider messages
    assert [m["role"] for m in (await store.context(tid))["messages"]] == ["user"]


async def case_second_claim_is_refused_and_changes_nothing(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, run_id, _ = await running_run(store)
    aid = await ask(store, tid, run_id)
    first = await claim_approval(store.db, aid, "denied", ctx.clock)
    assert first["runState"] == "running"
    before = (await store.query("thread.export", {"threadId": tid}))["data"]["nodes"]
    thread_before = await store.query("thread.get", {"threadId": tid})
    err = await raises(AlreadyResolvedError, claim_approval(store.db, aid, "approved", ctx.clock))
    assert err.field == "approvalId"
    out = await store.send(claim_cmd(aid, "second", "approved"))
    assert out["status"] == "failed" and out["error"]["name"] == "AlreadyResolvedError"
    assert (await store.query("thread.export", {"threadId": tid}))["data"]["nodes"] == before
    assert await store.query("thread.get", {"threadId": tid}) == thread_before
    assert len(await decision_nodes(store, tid, "approval_decision")) == 1
    assert (await store.db.table("approvals").get(aid))["decision"] == "denied"


async def case_concurrent_claims_exactly_one_wins(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, run_id, _ = await running_run(store)
    # one store, two concurrent claims
    aid = await ask(store, tid, run_id)
    results = await asyncio.gather(
        claim_approval(store.db, aid, "approved", ctx.clock),
        claim_approval(store.db, aid, "denied", ctx.clock),
        return_exceptions=True,
    )
    wins = [r for r in results if isinstance(r, dict)]
    losses = [r for r in results if isinstance(r, AlreadyResolvedError)]
    assert len(wins) == 1 and len(losses) == 1, results
    # two connections to the same database (two extension contexts), through the bus
    other = await PanelotStore.open(ctx.factory, ctx.host, store.db.name, clock=ctx.clock)
    ctx.dbs.append(other.db)
    aid2 = await ask(store, tid, run_id)
    outs = await asyncio.gather(
        store.send(claim_cmd(aid2, "side-panel")), other.send(claim_cmd(aid2, "popup"))
    )
    assert sorted(o["status"] for o in outs) == ["completed", "failed"], outs
    failed = next(o for o in outs if o["status"] == "failed")
    assert failed["error"]["name"] == "AlreadyResolvedError"
    nodes = await decision_nodes(store, tid, "approval_decision")
    assert sorted(n["payload"]["approvalId"] for n in nodes) == sorted([aid, aid2])
    assert (await store.query("run.get", {"runId": run_id}))["state"] == "running"


async def case_claim_replay_returns_the_stored_response(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, run_id, _ = await running_run(store)
    aid = await ask(store, tid, run_id)
    first = await store.send(claim_cmd(aid, "claim-1"))
    assert first["status"] == "completed"
    again = await store.send(claim_cmd(aid, "claim-1"))  # e.g. after a worker restart
    assert again == first
    conflict = await store.send(claim_cmd(aid, "claim-1", "denied"))
    assert conflict["error"]["name"] == "ConflictError"
    assert len(await decision_nodes(store, tid, "approval_decision")) == 1


async def case_interaction_request_and_response(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, run_id, leaf = await running_run(store)
    iid = await ask(store, tid, run_id, "interaction")
    assert (await store.query("run.get", {"runId": run_id}))["state"] == "awaiting_interaction"
    listed = await pending(store.db, tid)
    assert [i["id"] for i in listed["interactions"]] == [iid]
    response = {"choice": "b", "note": "the blue one"}
    out = await store.command("interaction.claim", {"interactionId": iid, "response": response})
    assert out["interactionId"] == iid and out["runState"] == "running"
    (node,) = await decision_nodes(store, tid, "interaction_response")
    assert node["parentId"] == leaf and node["payload"]["response"] == response
    assert node["payload"]["interactionId"] == iid and node["payload"]["request"] == ASK
    assert isinstance(node["payload"]["respondedAt"], int)
    await raises(AlreadyResolvedError, claim_interaction(store.db, iid, "again", ctx.clock))
    assert len(await decision_nodes(store, tid, "interaction_response")) == 1
    snap = await store.snapshot(tid)
    assert all(n["type"] != "interaction_response" for n in snap["nodes"])


async def case_run_waits_until_nothing_is_pending(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, run_id, _ = await running_run(store)
    iid = await ask(store, tid, run_id, "interaction")
    a1 = await ask(store, tid, run_id)
    a2 = await ask(store, tid, run_id)

    async def state() -> str:
        return str((await store.query("run.get", {"runId": run_id}))["state"])

    assert await state() == "awaiting_approval"
    listed = await store.query("approvals.pending", {"threadId": tid})
    assert [a["id"] for a in listed["approvals"]] == [a1, a2]
    assert (await claim_approval(store.db, a2, "approved"))["runState"] == "awaiting_approval"
    assert (await claim_approval(store.db, a1, "denied"))["runState"] == "awaiting_interaction"
    assert (await claim_interaction(store.db, iid, {"ok": True}))["runState"] == "running"
    await move(store, run_id, "completed")


async def case_requests_need_a_live_run_of_the_thread(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, run_id, _ = await running_run(store)
    other_tid = await store.create_thread()
    queued = await start(store, tid, "sub-2")
    err = await raises(TransitionError, ask(store, tid, queued))
    assert err.field == "to"
    err = await raises(NotFoundError, ask(store, other_tid, run_id))
    assert err.field == "payload.runId"
    await raises(NotFoundError, ask(store, tid, "no-such-run"))
    aid = await ask(store, tid, run_id)
    bad = await store.send(claim_cmd(aid, "bad", "maybe"))
    assert bad["error"]["name"] == "ValidationError" and bad["error"]["field"] == "payload.decision"
    bad = await store.send(
        {
            "type": "approval.request",
            "clientId": "c",
            "submissionId": "r",
            "payload": {"threadId": tid, "runId": run_id, "request": "not an object"},
        }
    )
    assert bad["error"]["field"] == "payload.request"
    await raises(NotFoundError, claim_approval(store.db, "no-such-approval", "approved"))
    assert len((await pending(store.db, tid))["approvals"]) == 1  # nothing else was written


async def case_ending_a_run_closes_its_pending_items(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, run_id, _ = await running_run(store)
    aid = await ask(store, tid, run_id)
    iid = await ask(store, tid, run_id, "interaction")
    await move(store, run_id, "cancelled")
    assert await pending(store.db, tid) == {"approvals": [], "interactions": []}
    record = await store.db.table("approvals").get(aid)
    assert record["status"] == "resolved" and record["closedReason"] == "run_cancelled"
    err = await raises(AlreadyResolvedError, claim_approval(store.db, aid, "approved"))
    assert "run_cancelled" in err.message
    await raises(AlreadyResolvedError, claim_interaction(store.db, iid, 1))
    assert await decision_nodes(store, tid, "approval_decision") == []


async def case_pending_lists_items_per_thread(ctx: Ctx) -> None:
    store = await ctx.store()
    t1, r1, _ = await running_run(store, "s1")
    t2, r2, _ = await running_run(store, "s2")
    a1 = await ask(store, t1, r1)
    i1 = await ask(store, t1, r1, "interaction")
    a2 = await ask(store, t2, r2)
    one = await store.query("approvals.pending", {"threadId": t1})
    assert [a["id"] for a in one["approvals"]] == [a1]
    assert [i["id"] for i in one["interactions"]] == [i1]
    two = await pending(store.db, t2)
    assert [a["id"] for a in two["approvals"]] == [a2] and two["interactions"] == []
    await claim_approval(store.db, a1, "approved")
    assert (await pending(store.db, t1))["approvals"] == []
    resolved = (
        await store.db.table("approvals")
        .where("[threadId+status]")
        .equals([t1, "resolved"])
        .to_list()
    )
    assert [a["id"] for a in resolved] == [a1]


async def case_a_thread_being_deleted_refuses_runs_and_claims(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, run_id, _ = await running_run(store)
    aid = await ask(store, tid, run_id)
    thread = await store.db.table("threads").get(tid)
    await store.db.table("threads").put({**thread, "deleting": True})
    out = await store.send(claim_cmd(aid, "late"))
    assert out["error"]["name"] == "AdmissionError"
    err = await raises(PanelotError, start(store, tid, "sub-late"))
    assert err.name == "AdmissionError"
    assert (await pending(store.db, tid))["approvals"][0]["id"] == aid
    assert len(await store.query("run.list", {"threadId": tid})) == 1
