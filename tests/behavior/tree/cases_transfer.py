"""JSON export and import with its pre-check."""

from __future__ import annotations

import copy
from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text


async def _exported(ctx: Ctx) -> tuple[object, str, dict]:
    store = await ctx.store()
    tid = await store.create_thread("exported")
    await store.append(
        tid,
        "turn_context",
        {"turnId": "t", "model": "m", "permissionPolicy": "ask", "activeSkills": []},
    )
    u = await store.append(tid, "user_message", text("q"))
    a = await store.append(tid, "assistant_message", answer("a"))
    await store.command(
        "message.edit", {"threadId": tid, "nodeId": u["nodeId"], "payload": text("q2")}
    )
    await store.command("message.delete", {"threadId": tid, "nodeId": a["nodeId"]})
    data = (await store.query("thread.export", {"threadId": tid, "format": "json"}))["data"]
    return store, tid, data


async def _refused_import(store: Any, bad: dict, submission: str) -> str:
    """Send ``thread.import`` of ``bad``; check it failed with ImportError; its message."""
    out = await store.send(
        {
            "type": "thread.import",
            "clientId": "c",
            "submissionId": submission,
            "payload": {"data": bad},
        }
    )
    assert out["status"] == "failed" and out["error"]["name"] == "ImportError", out
    return str(out["error"]["message"])


async def case_export_then_import_round_trip(ctx: Ctx) -> None:
    store, tid, data = await _exported(ctx)
    assert data["format"] == "panelot.thread" and len(data["nodes"]) == 4
    assert {n["type"] for n in data["nodes"]} == {
        "turn_context",
        "user_message",
        "assistant_message",
    }
    out = await store.command("thread.import", {"data": data})  # type: ignore[attr-defined]
    assert out["nodes"] == 4 and out["threadId"] != tid
    copy_ = (await store.query("thread.export", {"threadId": out["threadId"]}))["data"]  # type: ignore[attr-defined]
    strip = lambda nodes: [(n["seq"], n["type"], n["payload"]) for n in nodes]  # noqa: E731
    assert strip(copy_["nodes"]) == strip(data["nodes"])
    assert copy_["thread"]["title"] == "exported"
    original_ctx = await store.context(tid)  # type: ignore[attr-defined]
    copied_ctx = await store.context(out["threadId"])  # type: ignore[attr-defined]
    assert original_ctx["messages"] == copied_ctx["messages"]


async def case_import_refuses_bad_data_and_writes_nothing(ctx: Ctx) -> None:
    store, tid, data = await _exported(ctx)
    before = await store.db.table("nodes").count()  # type: ignore[attr-defined]
    threads_before = await store.db.table("threads").count()  # type: ignore[attr-defined]
    broken = []
    d = copy.deepcopy(data)
    d["nodes"][1]["payload"]["content"] = "nope"
    broken.append((d, "content"))  # noqa: E702
    d = copy.deepcopy(data)
    d["nodes"][2]["parentId"] = "ghost"
    broken.append((d, "outside the thread"))  # noqa: E702
    d = copy.deepcopy(data)
    d["nodes"][0]["parentId"] = d["nodes"][1]["id"]
    d["nodes"][1]["parentId"] = d["nodes"][0]["id"]
    broken.append((d, "cycle"))  # noqa: E702
    d = copy.deepcopy(data)
    d["nodes"][3]["id"] = d["nodes"][1]["id"]
    broken.append((d, "twice"))  # noqa: E702
    d = copy.deepcopy(data)
    d["thread"]["leafId"] = "ghost"
    broken.append((d, "leafId"))  # noqa: E702
    d = copy.deepcopy(data)
    d["nodes"][1]["type"] = "alien"
    broken.append((d, "nodes[1].type: unknown node type"))  # noqa: E702  (the row is named)
    d = copy.deepcopy(data)
    d["format"] = "other"
    broken.append((d, "format"))  # noqa: E702
    d = copy.deepcopy(data)
    d["nodes"][1]["threadId"] = "elsewhere"
    broken.append((d, "threadId"))  # noqa: E702
    for i, (bad, why) in enumerate(broken):
        said = await _refused_import(store, bad, f"b{i}")
        assert why in said, (why, said)
    assert await store.db.table("nodes").count() == before  # type: ignore[attr-defined]
    assert await store.db.table("threads").count() == threads_before  # type: ignore[attr-defined]


async def case_import_says_which_nodes_are_on_a_cycle_and_which_hang_below_one(
    ctx: Ctx,
) -> None:
    store, _tid, data = await _exported(ctx)
    ids = [n["id"] for n in data["nodes"]]  # turn_context, q (below it), a (below q), q2
    cycle = copy.deepcopy(data)
    cycle["nodes"][0]["parentId"] = ids[1]
    said = await _refused_import(store, cycle, "cycle")
    assert f"{ids[0]!r} is on a cycle" in said and f"{ids[1]!r} is on a cycle" in said, said
    for below in (ids[2], ids[3]):
        assert f"{below!r} is on a cycle" not in said, said
        assert f"{below!r} does not reach a root" in said, said
    ghost = copy.deepcopy(data)
    ghost["nodes"][1]["parentId"] = "ghost"
    said = await _refused_import(store, ghost, "ghost")
    assert f"{ids[1]!r} has parent 'ghost' outside the thread" in said, said
    assert f"{ids[2]!r} does not reach a root" in said, said
    assert "is on a cycle" not in said, said


async def case_a_bundle_imports_all_or_nothing(ctx: Ctx) -> None:
    store, tid, data = await _exported(ctx)
    second = copy.deepcopy(data)
    second["thread"]["title"] = "second"
    bundle = {"format": "panelot.all", "version": 1, "threads": [data, second]}
    out = await store.command("thread.import", {"data": bundle})  # type: ignore[attr-defined]
    assert out["threads"] == 2 and out["nodes"] == 8 and len(set(out["threadIds"])) == 2
    titles = {
        (await store.query("thread.get", {"threadId": t}))["title"]  # type: ignore[attr-defined]
        for t in out["threadIds"]
    }
    assert titles == {"exported", "second"}
    counts = [await store.db.table(t).count() for t in ("threads", "nodes")]  # type: ignore[attr-defined]
    bad = copy.deepcopy(second)
    bad["nodes"][2]["payload"]["content"] = "nope"
    refused = await store.send(  # type: ignore[attr-defined]
        {
            "type": "thread.import",
            "clientId": "c",
            "submissionId": "bundle-bad",
            "payload": {"data": {**bundle, "threads": [data, data, bad]}},
        }
    )
    assert refused["status"] == "failed" and refused["error"]["name"] == "ImportError"
    assert refused["error"]["field"].startswith("payload.data.threads[2].nodes[2].payload.content")
    assert "'second'" in refused["error"]["message"]  # the thread is named by its title
    # the two good threads before it were not written either
    assert [await store.db.table(t).count() for t in ("threads", "nodes")] == counts  # type: ignore[attr-defined]


async def _dated(store: Any, title: str) -> dict[str, Any]:
    """Export a new thread ``title`` with one turn (a question and its answer)."""
    tid = await store.create_thread(title)
    await store.append(tid, "user_message", text(f"about {title}"))
    await store.append(tid, "assistant_message", answer(f"on {title}"))
    out: dict[str, Any] = (await store.query("thread.export", {"threadId": tid}))["data"]
    return out


async def _listed(store: Any, ids: list[str]) -> list[dict[str, Any]]:
    """The threads ``ids`` as ``thread.list`` orders them."""
    return [t for t in await store.query("thread.list") if t["id"] in ids]


async def case_an_imported_bundle_keeps_its_times_and_list_order(ctx: Ctx) -> None:
    store = await ctx.store()
    made = {}
    for title in ("oldest", "middle", "newest"):
        made[title] = await _dated(store, title)
        ctx.now += 3_600_000  # an hour between them
    ctx.now += 30 * 86_400_000  # the import runs a month later
    bundle = {
        "format": "panelot.all",
        "version": 1,
        "threads": [made["middle"], made["oldest"], made["newest"]],  # not in time order
    }
    out = await store.command("thread.import", {"data": bundle})
    listed = await _listed(store, out["threadIds"])
    # the list reads as where it was exported: newest first, each with its own times
    assert [t["title"] for t in listed] == ["newest", "middle", "oldest"]
    for t in listed:
        exported = made[t["title"]]["thread"]
        assert (t["updatedAt"], t["createdAt"]) == (
            exported["updatedAt"],
            exported["createdAt"],
        ), t
        assert t["updatedAt"] < ctx.now - 30 * 86_400_000
    # the nodes keep their times too
    for tid in out["threadIds"]:
        got = (await store.query("thread.export", {"threadId": tid}))["data"]
        source = made[got["thread"]["title"]]
        assert [n["ts"] for n in got["nodes"]] == [n["ts"] for n in source["nodes"]]


async def case_a_thread_imported_twice_keeps_its_times_in_each_copy(ctx: Ctx) -> None:
    store = await ctx.store()
    data = await _dated(store, "twice")
    ctx.now += 86_400_000
    first = await store.command("thread.import", {"data": data})
    ctx.now += 86_400_000
    second = await store.command("thread.import", {"data": data})
    assert first["threadId"] != second["threadId"]
    for tid in (data["thread"]["id"], first["threadId"], second["threadId"]):
        meta = await store.query("thread.get", {"threadId": tid})
        assert meta["updatedAt"] == data["thread"]["updatedAt"], (tid, meta)
        assert meta["createdAt"] == data["thread"]["createdAt"], (tid, meta)


async def case_an_import_without_a_usable_updated_at_takes_its_newest_time(ctx: Ctx) -> None:
    """A missing, null or unusable ``updatedAt`` becomes the newest node's time or createdAt."""
    store = await ctx.store()
    data = await _dated(store, "undated")
    newest = max(n["ts"] for n in data["nodes"])
    assert newest > data["thread"]["createdAt"]
    ctx.now += 86_400_000
    unusable: list[Any] = [None, "yesterday", -5, 1.5, 1e300, True, [1], {"t": 1}]
    for i, value in enumerate([*unusable, "missing"]):
        d = copy.deepcopy(data)
        if value == "missing":
            del d["thread"]["updatedAt"]
        else:
            d["thread"]["updatedAt"] = value
        out = await store.command("thread.import", {"data": d}, f"undated-{i}")
        meta = await store.query("thread.get", {"threadId": out["threadId"]})
        assert meta["updatedAt"] == newest, (value, meta)
    # an integral float is a time like any other (JSON has one kind of number)
    d = copy.deepcopy(data)
    d["thread"]["updatedAt"] = float(data["thread"]["updatedAt"])
    out = await store.command("thread.import", {"data": d}, "float")
    meta = await store.query("thread.get", {"threadId": out["threadId"]})
    assert meta["updatedAt"] == data["thread"]["updatedAt"]
    # a thread with no nodes falls back to its createdAt
    tid = await store.create_thread("empty")
    empty = (await store.query("thread.export", {"threadId": tid}))["data"]
    del empty["thread"]["updatedAt"]
    out = await store.command("thread.import", {"data": empty}, "empty")
    meta = await store.query("thread.get", {"threadId": out["threadId"]})
    assert meta["updatedAt"] == empty["thread"]["createdAt"]
    # createdAt is still required: without it the import is refused, naming the field
    d = copy.deepcopy(data)
    del d["thread"]["createdAt"], d["thread"]["updatedAt"]
    said = await _refused_import(store, d, "no-created")
    assert "createdAt" in said, said


async def case_an_import_never_arrives_being_deleted_nor_with_state_from_elsewhere(
    ctx: Ctx,
) -> None:
    """The file's delete mark, approved origins, parent link and stats are not taken."""
    store = await ctx.store()
    tid = await store.create_thread("kept", tags=["t"], folderId="work")
    patch = {"preset": "p1", "pinned": True}
    await store.command("thread.update", {"threadId": tid, "patch": patch})
    await store.append(tid, "user_message", text("q"))
    await store.append(tid, "assistant_message", answer("a", tokens=5, cost=0.25))
    await store.append(tid, "assistant_message", answer("b", tokens=7, cost=0.5))
    data = (await store.query("thread.export", {"threadId": tid}))["data"]
    counted = data["thread"]["stats"]
    assert counted == {"turns": 2, "totalTokens": 24, "costUsd": 0.75}
    data["thread"].update(
        deleting=True,
        deletingSince=ctx.now,
        scopeOrigins=["https://approved.elsewhere.test"],
        parentThreadId="a-thread-of-another-database",
        stats={"turns": 99, "totalTokens": 1, "costUsd": 12.5},
        archived=True,
    )
    out = await store.command("thread.import", {"data": data})
    meta = await store.query("thread.get", {"threadId": out["threadId"]})
    assert "deleting" not in meta and "deletingSince" not in meta, meta
    assert "parentThreadId" not in meta and meta["scopeOrigins"] == [], meta
    assert meta["stats"] == counted, meta
    kept = ("title", "tags", "pinned", "archived", "folderId", "preset", "createdAt", "updatedAt")
    assert {k: meta[k] for k in kept} == {k: data["thread"][k] for k in kept}
    # not stuck: commands on it are admitted
    ok = await store.append(out["threadId"], "user_message", text("still mine"))
    assert ok["seq"] == 4
    # a bundle keeps a parent link to a thread it brings along, under its fresh id
    child = copy.deepcopy(data)
    child["thread"].update(id="child-in-file", parentThreadId=data["thread"]["id"])
    child["nodes"] = [{**n, "threadId": "child-in-file"} for n in child["nodes"]]
    bundle = {"format": "panelot.all", "version": 1, "threads": [data, child]}
    both = await store.command("thread.import", {"data": bundle})
    parent_id, child_id = both["threadIds"]
    got = await store.query("thread.get", {"threadId": child_id})
    assert got["parentThreadId"] == parent_id != tid, got
