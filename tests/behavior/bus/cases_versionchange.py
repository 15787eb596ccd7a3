"""Commands across another context's upgrade: the database reopens, a lost command reruns once.

A Dexie app (here: another connection declaring a ``version(2)``) upgrading the
database closes the store's connection (``versionchange``). The next command reopens
it at the new version and runs. A command whose transaction the closing aborted is run
once more, under its receipt, so it lands exactly once.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from behavior import Ctx, memory_only
from behavior.bus.cases_receipts import append_cmd
from panelot.api.registry import COMMANDS
from panelot.bus import Call, Handler
from panelot.idb import Database, SchemaDiffWarning, SchemaVersion, Transaction
from panelot.schema import PANELOT_VERSIONS
from panelot.store import PanelotStore

V2 = SchemaVersion(2, {"notes": "++id, threadId"})


async def _upgrade(ctx: Ctx, name: str, version: float = 2) -> Database:
    """Another context's Dexie-style upgrade of the store's database."""
    later = SchemaVersion(version, {f"notes{int(version * 10)}": "++id"})
    db = Database(name, [*PANELOT_VERSIONS, V2, *([later] if version > 2 else [])])
    await db.open(ctx.factory)
    ctx.dbs.append(db)
    return db


async def case_command_after_an_upgrade_elsewhere_runs_on_the_reopened_database(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("before")
    await _upgrade(ctx, store.db.name)
    assert store.db.core.versionchanged  # closed, as Dexie closes on versionchange
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = await store.send(append_cmd(tid, "after-upgrade"))
    assert out["status"] == "completed", out
    assert [w for w in caught if issubclass(w.category, SchemaDiffWarning)]
    assert (store.db.version, store.db.reopened) == (20, 1)
    described = await store.query("db.describe")
    assert described["schemaDiff"]["newer"] is True
    assert described["schemaDiff"]["extraTables"] == ["notes"]
    export = (await store.query("thread.export", {"threadId": tid}))["data"]
    assert [n["id"] for n in export["nodes"]] == [out["response"]["nodeId"]]


@dataclass(frozen=True)
class NotePayload:
    thread_id: str
    text: str


def _flaky_store(ctx: Ctx, store: PanelotStore, attempts: list[int], every: bool) -> PanelotStore:
    """A store whose ``test.note`` command is closed under by an upgrade elsewhere.

    Another context upgrades the database while the command's transaction runs: on the
    first attempt, or on ``every`` attempt.
    """
    name = store.db.name

    async def run(tx: Transaction, call: Call[NotePayload]) -> Any:
        attempts.append(len(attempts) + 1)
        if len(attempts) == 1 or every:
            # the memory core's stand-in for a connection closed under a transaction:
            # an upgrade opened from inside the body (it completes at once there)
            await _upgrade(ctx, name, 2 + len(attempts) / 10 if every else 2)
        thread = await tx.table("threads").get(call.payload.thread_id)
        await tx.table("threads").put({**thread, "title": call.payload.text})
        return {"attempt": len(attempts)}

    note = Handler(payload=NotePayload, tables=("threads",), run=run)
    return PanelotStore(
        store.db, ctx.clock, host=store.host, commands={**COMMANDS, "test.note": note}
    )


def _note(tid: str, sub: str, text: str) -> dict[str, Any]:
    payload = {"threadId": tid, "text": text}
    return {"type": "test.note", "clientId": "cli", "submissionId": sub, "payload": payload}


@memory_only  # IndexedDB cannot close a connection under a running transaction on cue
async def case_command_closed_under_by_an_upgrade_is_retried_once_under_its_receipt(
    ctx: Ctx,
) -> None:
    store = await ctx.store()
    tid = await store.create_thread("before")
    attempts: list[int] = []
    flaky = _flaky_store(ctx, store, attempts, every=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaDiffWarning)
        out = await flaky.send(_note(tid, "n1", "noted"))
    assert out == {"status": "completed", "response": {"attempt": 2}}, out
    assert attempts == [1, 2]  # the first attempt was aborted, then run once more
    assert store.db.reopened == 1 and store.db.version == 20
    assert (await store.query("thread.get", {"threadId": tid}))["title"] == "noted"
    receipts = await store.query("receipts.list", {"clientId": "cli"})
    assert [r["submissionId"] for r in receipts] == ["n1"]
    # the replay answers from the receipt: no third attempt
    assert await flaky.send(_note(tid, "n1", "noted")) == out
    assert attempts == [1, 2]


@memory_only  # see the case above
async def case_command_closed_under_twice_fails_after_one_retry(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("before")
    attempts: list[int] = []
    flaky = _flaky_store(ctx, store, attempts, every=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaDiffWarning)
        out = await flaky.send(_note(tid, "n1", "noted"))
        assert out["status"] == "failed", out
        assert out["error"]["name"] == "DatabaseClosedError", out
        assert attempts == [1, 2]  # retried once, not more
        assert (await store.query("thread.get", {"threadId": tid}))["title"] == "before"
        assert await store.query("receipts.list", {"clientId": "cli"}) == []
