"""Runs, RunEnvironmentSnapshot and recovery (docs/api.md)."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import rfc8785

from behavior import Ctx, raises
from panelot.bus.receipts import receipt_id
from panelot.errors import (
    BindingDriftError,
    MissingSnapshotError,
    SnapshotIntegrityError,
    SnapshotTooLargeError,
    SnapshotVersionError,
    TransitionError,
)
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.runs.records import ACTIVE_STATES, recover_run, run_by_submission, runs_for_thread
from panelot.runs.snapshot import MAX_SNAPSHOT_BYTES, MAX_SNAPSHOT_DEPTH, snapshot_digest
from panelot.store import PanelotStore

SECRET = "sk-ant-api03-Zx9Qm2Lp7Rt4Vb8Nc1Kd6Hf3Jg5Ws0Ey"


def snapshot_body(**over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "connection": {
            "id": "conn-1",
            "providerKind": "anthropic",
            "baseUrl": "https://api.anthropic.com",
            "credentialRef": "cred:anthropic-main",
        },
        "model": "claude-x",
        "parameters": {"temperature": 0.7, "maxTokens": 4096, "topP": 1.0},
        "systemPrompt": "You are Panelot.",
        "skills": [{"id": "s1", "name": "summarize", "body": "Summarize the page."}],
        "toolSchemas": [{"name": "read_page", "inputSchema": {"type": "object"}}],
        "executionBindings": {"read_page": {"level": "L1", "handler": "builtin:read_page"}},
        "permissionPolicy": {"mode": "ask", "rules": [{"origin": "https://example.com"}]},
        "submissionContext": {
            "tabUrl": "https://example.com/a",
            "title": "A page",
            "origin": "https://example.com",
        },
        "capabilities": {"vision": True, "pricing": {"inputPerMTok": 3.0, "outputPerMTok": 15}},
    }
    body.update(over)
    return body


def current_bindings(body: dict[str, Any] | None = None) -> dict[str, Any]:
    body = body or snapshot_body()
    return {
        "connection": dict(body["connection"]),
        "executionBindings": copy.deepcopy(body["executionBindings"]),
    }


def start_cmd(tid: str, sub: str, snapshot: dict[str, Any], text: Any = "hello") -> dict:
    return {
        "type": "run.start",
        "clientId": "cli",
        "submissionId": sub,
        "payload": {"threadId": tid, "submissionId": sub, "input": text, "snapshot": snapshot},
    }


async def start(store: PanelotStore, tid: str, sub: str = "sub-1", **over: Any) -> str:
    out = await store.command(
        "run.start",
        {"threadId": tid, "submissionId": sub, "input": "hello", "snapshot": snapshot_body(**over)},
    )
    return str(out["runId"])


async def move(store: PanelotStore, run_id: str, *states: str) -> None:
    for to in states:
        assert (await store.command("run.transition", {"runId": run_id, "to": to}))["state"] == to


async def plant(store: PanelotStore, run: dict[str, Any]) -> None:
    await store.db.table("runs").put(run)


def redigest(snap: dict[str, Any]) -> dict[str, Any]:
    snap["digest"] = snapshot_digest(snap)
    return snap


async def case_start_run_stores_normalized_input_and_digested_snapshot(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    out = await store.send(start_cmd(tid, "sub-1", snapshot_body()))
    assert out["status"] == "completed" and out["response"]["state"] == "queued"
    run = await store.query("run.get", {"runId": out["response"]["runId"]})
    assert run["state"] == "queued" and run["threadId"] == tid and run["submissionId"] == "sub-1"
    assert run["input"] == {"content": [{"type": "text", "text": "hello"}]}
    snap = run["snapshot"]
    assert snap["version"] == 1 and len(snap["digest"]) == 64
    body = {k: v for k, v in snap.items() if k != "digest"}
    assert snap["digest"] == hashlib.sha256(rfc8785.dumps(body)).hexdigest()
    assert {k: v for k, v in body.items() if k != "version"} == snapshot_body()
    receipt = await store.db.table("commandReceipts").get(receipt_id("cli", "sub-1"))
    assert receipt["response"] == out["response"]
    await move(store, run["id"], "preparing", "running")
    # replaying the submission returns the stored response and starts nothing new
    assert await store.send(start_cmd(tid, "sub-1", snapshot_body())) == out
    assert len(await store.query("run.list", {"threadId": tid})) == 1


async def case_refused_snapshot_or_input_writes_nothing(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    base = snapshot_body()
    conn = base["connection"]
    bad: list[tuple[dict[str, Any], str]] = [
        (snapshot_body(connection={**conn, "credentialRef": SECRET}), "connection.credentialRef"),
        (
            snapshot_body(connection={**conn, "credentialRef": "cred:" + SECRET}),
            "connection.credentialRef",
        ),
        (
            snapshot_body(
                connection={
                    **conn,
                    "credentialRef": "cred:QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MjQy",
                }
            ),
            "connection.credentialRef",
        ),
        (snapshot_body(connection={**conn, "apiKey": "x"}), "connection.apiKey"),
        (snapshot_body(parameters={"temperature": 1, "apiKey": SECRET}), "parameters.apiKey"),
        (
            snapshot_body(executionBindings={"mcp": {"headers": {"Authorization": "Bearer abc"}}}),
            "executionBindings.mcp.headers.Authorization",
        ),
        (
            snapshot_body(executionBindings={"mcp": {"header": "Bearer abcdef"}}),
            "executionBindings.mcp.header",
        ),
        (
            snapshot_body(connection={**conn, "baseUrl": "https://u:p@api.example.com"}),
            "connection.baseUrl",
        ),
        (
            snapshot_body(connection={**conn, "baseUrl": "https://api.example.com/?key=abc"}),
            "connection.baseUrl",
        ),
        (
            snapshot_body(executionBindings={"mcp": {"access_token": "abc"}}),
            "executionBindings.mcp.access_token",
        ),
        (snapshot_body(model=5), "model"),
        (snapshot_body(extra=1), "extra"),
        ({k: v for k, v in base.items() if k != "systemPrompt"}, "systemPrompt"),
    ]
    for i, (snap, field) in enumerate(bad):
        out = await store.send(start_cmd(tid, f"bad-{i}", snap))
        assert out["status"] == "failed", field
        assert out["error"]["name"] == "ValidationError", out["error"]
        assert out["error"]["field"] == f"payload.snapshot.{field}", (out["error"], field)
        assert SECRET not in repr(out)
    out = await store.send(start_cmd(tid, "bad-input", base, text={"content": [{"type": "x"}]}))
    assert out["error"]["field"] == "payload.input.content[0].type"
    out = await store.send(start_cmd(tid, "bad-version", snapshot_body(version=2)))
    assert out["error"]["name"] == "SnapshotVersionError"
    big = snapshot_body(systemPrompt="x" * (MAX_SNAPSHOT_BYTES + 1))
    out = await store.send(start_cmd(tid, "too-big", big))
    assert out["error"]["name"] == "SnapshotTooLargeError"
    deep: Any = 1
    for _ in range(MAX_SNAPSHOT_DEPTH):
        deep = {"d": deep}
    out = await store.send(start_cmd(tid, "too-deep", snapshot_body(parameters=deep)))
    assert out["error"]["name"] == "SnapshotTooLargeError"
    assert await store.db.table("runs").count() == 0
    assert await store.db.table("commandReceipts").where("status").equals("completed").count() == 1
    # a UUID reference and token-count parameters are fine
    ok = snapshot_body(
        parameters={"maxTokens": 100, "stopToken": "</s>"},
        connection={**conn, "credentialRef": "cred:550e8400-e29b-41d4-a716-446655440000"},
    )
    assert (await store.send(start_cmd(tid, "ok", ok)))["status"] == "completed"


async def case_transitions_follow_the_table(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    run_id = await start(store, tid)

    async def refused(to: str) -> dict[str, Any]:
        out = await store.send(
            {
                "type": "run.transition",
                "clientId": "c",
                "submissionId": f"t-{to}-{ctx.clock()}",
                "payload": {"runId": run_id, "to": to},
            }
        )
        assert out["status"] == "failed", to
        return dict(out["error"])

    assert (await refused("running"))["name"] == "TransitionError"  # queued must prepare first
    assert (await refused("completed"))["name"] == "TransitionError"
    assert (await refused("sleeping"))["field"] == "payload.to"
    await move(store, run_id, "preparing", "running")
    # the approval waits are entered and left only through requests and claims
    err = await refused("awaiting_approval")
    assert err["name"] == "TransitionError" and "approval" in err["message"]
    await move(store, run_id, "completed")
    for to in ("running", "failed", "queued"):
        assert (await refused(to))["name"] == "TransitionError"
    assert (await store.query("run.get", {"runId": run_id}))["state"] == "completed"
    other = await start(store, tid, "sub-2")
    await store.command(
        "run.transition", {"runId": other, "to": "failed", "error": {"message": "provider 500"}}
    )
    failed = await store.query("run.get", {"runId": other})
    assert failed["state"] == "failed" and failed["error"] == {"message": "provider 500"}
    assert ACTIVE_STATES == {
        "queued",
        "preparing",
        "running",
        "awaiting_approval",
        "awaiting_interaction",
    }


async def case_a_run_cannot_prepare_without_a_valid_snapshot(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    run_id = await start(store, tid)
    run = await store.query("run.get", {"runId": run_id})
    legacy = {k: v for k, v in run.items() if k != "snapshot"}
    await plant(store, legacy)
    out = await store.send(
        {
            "type": "run.transition",
            "clientId": "c",
            "submissionId": "p1",
            "payload": {"runId": run_id, "to": "preparing"},
        }
    )
    assert out["error"]["name"] == "MissingSnapshotError"
    tampered = copy.deepcopy(run)
    tampered["snapshot"]["model"] = "other-model"
    await plant(store, tampered)
    out = await store.send(
        {
            "type": "run.transition",
            "clientId": "c",
            "submissionId": "p2",
            "payload": {"runId": run_id, "to": "preparing"},
        }
    )
    assert out["error"]["name"] == "SnapshotIntegrityError"
    assert (await store.query("run.get", {"runId": run_id}))["state"] == "queued"


async def case_every_recovery_rejection_has_its_own_error(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    run_id = await start(store, tid)
    await move(store, run_id, "preparing", "running")
    good = await store.query("run.get", {"runId": run_id})
    ok = await store.query("run.recover", {"runId": run_id, "bindings": current_bindings()})
    assert ok == {"ok": True, "snapshot": good["snapshot"]}

    async def rejected(kind: type[BaseException], snap: Any, bindings: Any = None) -> Any:
        run = copy.deepcopy(good)
        if snap is None:
            run.pop("snapshot")
        else:
            run["snapshot"] = snap
        await plant(store, run)
        err = await raises(kind, recover_run(store.db, run_id, bindings or current_bindings()))
        await raises(
            kind,
            store.query(
                "run.recover", {"runId": run_id, "bindings": bindings or current_bindings()}
            ),
        )
        return err

    await rejected(MissingSnapshotError, None)
    v2 = redigest({**copy.deepcopy(good["snapshot"]), "version": 2})
    await rejected(SnapshotVersionError, v2)
    edited = {**copy.deepcopy(good["snapshot"]), "model": "cheaper-model"}
    err = await rejected(SnapshotIntegrityError, edited)
    assert err.field == "snapshot.digest"
    big = redigest(
        {**copy.deepcopy(good["snapshot"]), "systemPrompt": "y" * (MAX_SNAPSHOT_BYTES + 10)}
    )
    await rejected(SnapshotTooLargeError, big)
    deep: Any = "leaf"
    for _ in range(MAX_SNAPSHOT_DEPTH + 2):
        deep = [deep]
    await rejected(
        SnapshotTooLargeError,
        redigest({**copy.deepcopy(good["snapshot"]), "parameters": {"d": deep}}),
    )
    drift = current_bindings()
    drift["connection"]["baseUrl"] = "https://proxy.example.com"
    err = await rejected(BindingDriftError, good["snapshot"], drift)
    assert err.field == "bindings.connection.baseUrl"
    drift = current_bindings()
    drift["executionBindings"]["read_page"]["handler"] = "mcp:other"
    err = await rejected(BindingDriftError, good["snapshot"], drift)
    assert err.field == "bindings.executionBindings.read_page"
    drift = current_bindings()
    drift["executionBindings"]["new_tool"] = {"level": "L2"}
    err = await rejected(BindingDriftError, good["snapshot"], drift)
    assert err.field == "bindings.executionBindings.new_tool"
    await plant(store, good)
    await raises(NotFoundError, recover_run(store.db, "no-such-run", current_bindings()))
    await raises(ValidationError, recover_run(store.db, run_id, {"connection": {}}))


async def case_credential_rotation_is_accepted_and_settings_are_not_reread(ctx: Ctx) -> None:
    store = await ctx.store()
    vault = {"cred:anthropic-main": "sk-ant-old-secret-value"}
    settings = snapshot_body()
    tid = await store.create_thread()
    run_id = await start(store, tid)
    await move(store, run_id, "preparing", "running")
    # the secret rotates behind the same reference; settings change model and prompt
    vault["cred:anthropic-main"] = "sk-ant-new-secret-value"
    settings["model"] = "claude-y"
    settings["systemPrompt"] = "changed"
    now = current_bindings(settings)
    now["connection"]["label"] = "renamed in settings"  # not a transport field: ignored
    snap = await recover_run(store.db, run_id, now)
    assert snap.model == "claude-x" and snap.system_prompt == "You are Panelot."
    assert snap.connection.credential_ref == "cred:anthropic-main"
    stored = await store.query("run.get", {"runId": run_id})
    assert "secret-value" not in repr(stored)
    now["connection"]["credentialRef"] = "cred:anthropic-other"
    err = await raises(BindingDriftError, recover_run(store.db, run_id, now))
    assert err.field == "bindings.connection.credentialRef"


async def case_runs_by_thread_state_and_submission(ctx: Ctx) -> None:
    store = await ctx.store()
    t1, t2 = await store.create_thread("one"), await store.create_thread("two")
    a = await start(store, t1, "s-a")
    b = await start(store, t1, "s-b")
    c = await start(store, t1, "s-c")
    d = await start(store, t2, "s-d")
    await move(store, b, "preparing", "running")
    await move(store, c, "cancelled")
    listed = await store.query("run.list", {"threadId": t1})
    assert [r["id"] for r in listed] == [a, b, c]
    assert all("snapshot" not in r and "input" not in r for r in listed)
    assert all(len(r["snapshotDigest"]) == 64 for r in listed)
    assert [
        r["id"] for r in await store.query("run.list", {"threadId": t1, "state": "running"})
    ] == [b]
    assert [r["id"] for r in await runs_for_thread(store.db, t1, "queued")] == [a]
    assert [r["id"] for r in await runs_for_thread(store.db, t2)] == [d]
    assert await runs_for_thread(store.db, t2, "running") == []
    assert (await store.query("run.get", {"submissionId": "s-c"}))["id"] == c
    assert (await run_by_submission(store.db, "s-d") or {}).get("id") == d
    assert await run_by_submission(store.db, "nope") is None
    await raises(NotFoundError, store.query("run.get", {"submissionId": "nope"}))
    await raises(NotFoundError, store.query("run.get", {"runId": "nope"}))
    err = await raises(ValidationError, store.query("run.list", {"threadId": t1, "state": "zzz"}))
    assert err.field == "state"
    await raises(TransitionError, store.command("run.transition", {"runId": c, "to": "running"}))
    out = await store.send(start_cmd("no-such-thread", "s-x", snapshot_body()))
    assert out["error"]["name"] == "NotFoundError" and out["error"]["field"] == "payload.threadId"
