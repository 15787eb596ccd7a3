"""Windows of the UI snapshot: ``thread.snapshot`` with ``limit`` and ``before``."""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from panelot.idb import PanelotError
from panelot.store import PanelotStore


async def _window(store: PanelotStore, tid: str, **args: Any) -> dict[str, Any]:
    return await store.query("thread.snapshot", {"threadId": tid, **args})


async def _refused(store: PanelotStore, args: dict[str, Any]) -> PanelotError:
    try:
        await store.query("thread.snapshot", args)
    except PanelotError as exc:
        return exc
    raise AssertionError(f"{args} was accepted")


async def _turns(store: PanelotStore, tid: str, count: int) -> list[str]:
    """``count`` turns, each a user message, a hidden turn context and a reply."""
    made = []
    for n in range(count):
        made.append((await store.append(tid, "user_message", text(f"q{n}")))["nodeId"])
        ctx = {"turnId": f"t{n}", "model": "m", "permissionPolicy": "ask", "activeSkills": []}
        await store.append(tid, "turn_context", ctx)
        made.append((await store.append(tid, "assistant_message", answer(f"a{n}")))["nodeId"])
    return made


async def case_a_window_is_the_last_shown_nodes_with_their_positions(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    made = await _turns(store, tid, 6)
    regen = {"threadId": tid, "userNodeId": made[-2], "payload": answer("again")}
    made[-1] = (await store.command("message.regenerate", regen))["nodeId"]
    full = await store.snapshot(tid)
    assert "hasMore" not in full  # the whole path, as before
    assert [n["id"] for n in full["nodes"]] == made
    window = await _window(store, tid, limit=3)
    assert window["nodes"] == full["nodes"][-3:]
    assert window["hasMore"] is True
    assert (window["threadId"], window["leafId"]) == (tid, made[-1])
    assert [(n["siblingIndex"], n["siblingCount"]) for n in window["nodes"]] == [
        (1, 1),
        (1, 1),
        (2, 2),
    ]
    above = await _window(store, tid, limit=4, before=window["nodes"][0]["id"])
    assert above["nodes"] == full["nodes"][-7:-3]
    assert above["hasMore"] is True
    top = await _window(store, tid, limit=100, before=above["nodes"][0]["id"])
    assert top["nodes"] == full["nodes"][:-7]
    assert top["hasMore"] is False
    assert (await _window(store, tid, limit=12))["hasMore"] is False
    assert (await _window(store, tid, limit=0)) == {**full, "nodes": [], "hasMore": True}
    assert (await _window(store, tid, before=made[2]))["nodes"] == full["nodes"][:2]


async def case_a_window_of_an_empty_thread_is_empty(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    assert await _window(store, tid, limit=5) == {
        "threadId": tid,
        "leafId": None,
        "nodes": [],
        "hasMore": False,
    }


async def case_a_window_that_meets_a_break_repairs_as_the_full_snapshot(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    made = await _turns(store, tid, 3)
    await store.db.table("nodes").delete(
        made[-2]
    )  # the last question is gone: its turn context has no parent
    window = await _window(store, tid, limit=2)
    full = await store.snapshot(tid)  # after the window's repair: nothing left to repair
    assert window == {**full, "nodes": full["nodes"][-2:], "hasMore": True}
    assert full["nodes"][-1]["type"] == "system_notice"


async def case_bad_window_arguments_name_their_field(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    await _turns(store, tid, 1)
    for args, field in [
        ({"limit": -1}, "limit"),
        ({"limit": "5"}, "limit"),
        ({"limit": 1.5}, "limit"),
        ({"limit": True}, "limit"),
        ({"before": 5}, "before"),
    ]:
        exc = await _refused(store, {"threadId": tid, **args})
        assert exc.name == "ValidationError", (args, exc.name)
        assert exc.field is not None and exc.field.endswith(field), (args, exc.field)
    missing = await _refused(store, {"threadId": tid, "limit": 2, "before": "nope"})
    assert (missing.name, missing.field) == ("NotFoundError", "before")
    unknown = await _refused(store, {"threadId": tid, "limt": 2})
    assert unknown.name == "ValidationError"


async def case_a_window_on_an_older_branch_reads_past_the_newest_records(ctx: Ctx) -> None:
    """The window reads the newest records first; a path of older ones is read node by node."""
    store = await ctx.store()
    tid = await store.create_thread("branches")
    made = await _turns(store, tid, 8)
    # A newer branch from the second question's reply, longer than the window reads.
    await store.command("branch.switch", {"threadId": tid, "nodeId": made[3]})
    await store.append(tid, "user_message", text("elsewhere"), parentId=made[3])
    await _turns(store, tid, 12)
    back = await store.command("branch.switch", {"threadId": tid, "nodeId": made[-1]})
    assert back == {"leafId": made[-1]}
    full = await store.snapshot(tid)
    assert [n["id"] for n in full["nodes"]] == made
    for limit in (0, 1, 3, 5, 16):
        window = await _window(store, tid, limit=limit)
        assert window["nodes"] == full["nodes"][len(made) - min(limit, len(made)) :], limit
        assert window["hasMore"] is (limit < len(made))
    above = await _window(store, tid, limit=2, before=made[6])
    assert above["nodes"] == full["nodes"][4:6]
    assert above["nodes"][0]["siblingCount"] == 2  # the older branch's question at its place
