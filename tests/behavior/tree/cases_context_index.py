"""Loading a thread through ``[threadId+seq]``: the same result as the plain read.

A thread's nodes are read in seq order through ``[threadId+seq]`` (so indexing them
needs no sort), counted through ``threadId``, and read again through ``threadId`` when
the count differs (a seq that is not a key) or when a record is malformed (so problems
are reported in the order they always were). These cases compare context, snapshot,
check and siblings with a plain walk over every stored node, on branched trees with
tombstones and on corrupt ones.
"""

from __future__ import annotations

import random
from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from behavior.tree.cases_integrity import _linear
from panelot.store import PanelotStore
from panelot.tree.integrity import index_nodes, walk_to_root


async def _stored(store: PanelotStore, tid: str) -> dict[str, Any]:
    rows = await store.db.table("nodes").where("threadId").equals(tid).to_list()
    return {r["id"]: r for r in rows}


def _plain_path(nodes: dict[str, Any], leaf: str | None) -> list[str]:
    path = []
    while leaf is not None:
        path.append(leaf)
        leaf = nodes[leaf].get("parentId")
    return path[::-1]


async def _branched(store: PanelotStore) -> str:
    """A thread with edits, regenerations, tool calls, tombstones and a branch switch."""
    tid = await store.create_thread("branched")
    users = []
    for turn in range(12):
        u = await store.append(tid, "user_message", text(f"q{turn}"))
        users.append(u["nodeId"])
        if turn % 3 == 0:
            call = {"itemId": f"i{turn}", "toolName": "t", "params": {}, "level": "L1"}
            await store.append(tid, "tool_call", call)
            result = {"itemId": f"i{turn}", "ok": True, "contentForLlm": [text("r")["content"][0]]}
            await store.append(tid, "tool_result", result)
        a = await store.append(tid, "assistant_message", answer(f"a{turn}"))
        if turn % 4 == 1:
            await store.command(
                "message.regenerate",
                {"threadId": tid, "userNodeId": u["nodeId"], "payload": answer(f"a{turn}'")},
            )
        if turn % 5 == 2:
            await store.command("message.delete", {"threadId": tid, "nodeId": a["nodeId"]})
        if turn == 7:
            e = await store.command(
                "message.edit", {"threadId": tid, "nodeId": users[5], "payload": text("q5'")}
            )
            await store.append(tid, "assistant_message", answer("a5'"), parentId=e["nodeId"])
    await store.command("message.delete", {"threadId": tid, "nodeId": users[1]})
    await store.command("branch.switch", {"threadId": tid, "nodeId": users[3]})
    return tid


async def case_context_and_snapshot_follow_the_stored_tree(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await _branched(store)
    nodes = await _stored(store, tid)
    leaf = (await store.query("thread.get", {"threadId": tid}))["leafId"]
    path = _plain_path(nodes, leaf)
    visible = [i for i in path if not nodes[i]["payload"].get("deleted")]
    assert len(visible) < len(path) < len(nodes)  # tombstones on the path, branches off it
    out = await store.context(tid)
    assert out["path"] == visible
    roles: list[str] = []
    for kind in (nodes[i]["type"] for i in visible):
        if kind == "tool_call" and (not roles or roles[-1] != "assistant"):
            roles.append("assistant")  # a call without an answer before it gets one
        elif kind in ("user_message", "assistant_message", "tool_result"):
            roles.append({"user_message": "user", "tool_result": "tool"}.get(kind, "assistant"))
    assert [m["role"] for m in out["messages"]] == roles
    assert "tool" in roles
    snap = await store.snapshot(tid)
    assert [n["id"] for n in snap["nodes"]] == visible
    for item in snap["nodes"]:
        parent = nodes[item["id"]]["parentId"]
        sibs = sorted(
            (
                n
                for n in nodes.values()
                if n["parentId"] == parent and not n["payload"].get("deleted")
            ),
            key=lambda n: (n["seq"], n["id"]),
        )
        assert item["siblingCount"] == len(sibs)
        assert item["siblingIndex"] == [n["id"] for n in sibs].index(item["id"]) + 1
    assert await store.query("thread.check", {"threadId": tid}) == {"ok": True, "problems": []}
    # Another leaf: the explicit-leaf path of the context.
    other = await store.context(tid, path[1])
    assert other["path"] == [i for i in path[:2] if not nodes[i]["payload"].get("deleted")]


def _node(tid: str, ident: str, parent: str | None, seq: Any, **over: Any) -> dict[str, Any]:
    return {
        "id": ident,
        "threadId": tid,
        "parentId": parent,
        "seq": seq,
        "ts": 1,
        "type": "user_message",
        "payload": text(ident),
        **over,
    }


async def case_seqs_that_are_not_keys_are_still_reported(ctx: Ctx) -> None:
    """Records missing from ``[threadId+seq]`` (null, boolean, object, absent seq)."""
    store = await ctx.store()
    tid, ids = await _linear(store)
    nodes = store.db.table("nodes")
    await nodes.put(_node(tid, "s-null", ids[-1], None))
    await nodes.put(_node(tid, "s-bool", ids[-1], True))
    await nodes.put(_node(tid, "s-object", ids[-1], {"n": 1}))
    absent = _node(tid, "s-absent", ids[-1], 0)
    del absent["seq"]
    await nodes.put(absent)
    report = await store.query("thread.check", {"threadId": tid})
    assert report == {
        "ok": False,
        "problems": [
            f"node {i!r} has an invalid seq" for i in ("s-absent", "s-bool", "s-null", "s-object")
        ],
    }
    out = await store.context(tid)
    assert out["path"] == ids and len(out["messages"]) == 4


async def case_problems_keep_the_order_of_the_thread_id_read(ctx: Ctx) -> None:
    """Malformed records whose id order differs from their seq order."""
    store = await ctx.store()
    tid, ids = await _linear(store)
    nodes = store.db.table("nodes")
    await nodes.put(_node(tid, "zz-payload", ids[0], 1.5, payload=None))
    await nodes.put(_node(tid, "aa-type", ids[1], 50, type=7))
    await nodes.put(_node(tid, "mm-text-seq", ids[1], "x"))
    report = await store.query("thread.check", {"threadId": tid})
    assert report["problems"] == [
        "node 'aa-type' has an invalid type",
        "node 'mm-text-seq' has an invalid seq",
        "node 'zz-payload' has an invalid payload",
    ]
    assert (await store.context(tid))["path"] == ids


async def case_equal_and_fractional_seqs_order_siblings_by_seq_then_id(ctx: Ctx) -> None:
    """Duplicate seqs (another writer's bug) and ids whose key order differs from Python's."""
    store = await ctx.store()
    tid, ids = await _linear(store, 2)
    nodes = store.db.table("nodes")
    # Under ids[0]: ids[1] (seq 2) and four more, two of them with the same seq 2.
    # "\uffff" sorts after "\U0001f600" in IndexedDB (UTF-16) but before it in Python.
    for ident, seq in (("\U0001f600", 7), ("\uffff", 7), ("b-dup", 2), ("a-frac", 1.5)):
        await nodes.put(
            _node(tid, ident, ids[0], seq, type="assistant_message", payload=answer(ident))
        )
    sibs = await store.query("thread.siblings", {"nodeId": ids[1]})
    kids = [
        k[1]
        for k in sorted(
            [(1.5, "a-frac"), (2, ids[1]), (2, "b-dup"), (7, "\U0001f600"), (7, "\uffff")]
        )
    ]
    assert [s["id"] for s in sibs] == kids and kids[3:] == ["\uffff", "\U0001f600"]
    snap = await store.snapshot(tid)
    assert snap["nodes"][1]["id"] == ids[1]
    assert (snap["nodes"][1]["siblingIndex"], snap["nodes"][1]["siblingCount"]) == (
        kids.index(ids[1]) + 1,
        5,
    )
    assert (await store.context(tid))["path"] == ids
    await store.command("branch.switch", {"threadId": tid, "nodeId": "\uffff"})
    snap = await store.snapshot(tid)
    assert [n["id"] for n in snap["nodes"]] == [ids[0], "\uffff"]
    assert (snap["nodes"][1]["siblingIndex"], snap["nodes"][1]["siblingCount"]) == (4, 5)
    # A broken leaf: the repair continues from the highest (seq, id) leaf, in Python order.
    await store.db.table("threads").update(tid, {"leafId": "ghost"})
    repaired = await store.snapshot(tid)
    assert repaired["nodes"][-1]["parentId"] == "\U0001f600"


def _raw(ident: str, parent: str | None, seq: Any) -> dict[str, Any]:
    return _node("t", ident, parent, seq)


async def case_index_nodes_is_the_same_for_any_input_order(ctx: Ctx) -> None:
    rng = random.Random(7)
    raws = [_raw("n0", None, 1)]
    for i in range(1, 300):
        parent = raws[rng.randrange(len(raws))]["id"]
        seq = rng.choice([i, i, i, float(i) + 0.5, rng.randrange(1, i + 1)])  # some equal seqs
        raws.append(_raw(f"n{i}", parent, seq))
    ordered = sorted(raws, key=lambda r: (r["seq"], r["id"]))
    want = index_nodes("t", ordered)
    assert list(want.nodes) == [r["id"] for r in ordered] and not want.problems
    for _ in range(5):
        shuffled = raws[:]
        rng.shuffle(shuffled)
        got = index_nodes("t", shuffled)
        assert list(got.nodes) == list(want.nodes) and got.children == want.children
        assert all(got.nodes[k] is want.nodes[k] for k in want.nodes)  # the records themselves
    # One malformed record among sound ones: reported, the rest indexed alike.
    bad = [*shuffled, {**_raw("broken", "n0", 3), "payload": []}]
    got = index_nodes("t", bad)
    assert got.problems == ["node 'broken' has an invalid payload"]
    assert list(got.nodes) == list(want.nodes) and got.children == want.children
    # A record without parentId reads as a root, in its seq place.
    rootless = {k: v for k, v in _raw("r", None, 0).items() if k != "parentId"}
    got = index_nodes("t", [*ordered, rootless])
    assert list(got.nodes)[0] == "r" and got.kids(None) == ["r", "n0"] and not got.problems


async def case_walks_say_what_stopped_them(ctx: Ctx) -> None:
    chain = [_raw("a", None, 1), _raw("b", "a", 2), _raw("c", "b", 3)]
    index = index_nodes("t", chain)
    assert walk_to_root(index, "c").path == ["a", "b", "c"]
    assert walk_to_root(index, "c").problem is None
    assert walk_to_root(index, "zz").problem == "leaf 'zz' is missing from the thread"
    dangling = index_nodes("t", [_raw("a", "ghost", 1), _raw("b", "a", 2)])
    walk = walk_to_root(dangling, "b")
    assert (walk.path, walk.problem) == ([], "parent 'ghost' is missing from the thread")
    loop = index_nodes("t", [_raw("a", "c", 1), _raw("b", "a", 2), _raw("c", "b", 3)])
    walk = walk_to_root(loop, "c")
    assert (walk.path, walk.problem) == ([], "the walk from 'c' loops at 'c'")
    selfish = index_nodes("t", [_raw("a", "a", 1)])
    assert walk_to_root(selfish, "a").problem == "the walk from 'a' loops at 'a'"
    assert walk_to_root(index_nodes("t", []), None).problem is None
    assert walk_to_root(index, None).problem == "the thread has nodes but no leaf"
    assert walk_to_root(index_nodes("t", []), "x").problem == "leaf 'x' is missing from the thread"
