r"""Corrupt stored threads and check that every reader copes (docs/tree.md, Integrity).

This module imports only ``panelot``, so it runs unchanged on the memory core in
CPython (``tests/properties/test_corruption.py``) and, copied into Pyodide, on real IndexedDB.

A corruption is a list of plain JSON operations (generated with hypothesis on the host
and sent to the page as JSON). :func:`apply_ops` writes them as raw records through
the idb layer's Table API, bypassing every domain check, the way a buggy client or a
disk error would. :func:`check_store` then drives every reader and the writers that
walk the tree, and asserts:

* each call either succeeds or raises one of the project's errors (``PanelotError``),
  never ``KeyError``/``TypeError``/...; no call hangs (walks are bounded);
* a thread whose leaf cannot reach a root is repaired on load with exactly one
  ``system_notice`` (code ``integrity_repair``) that becomes the leaf, and the check
  then finds the leaf sound; a sound thread is not touched;
* a second load is stable: same path, no second notice.

Values in operations may hold markers resolved against the base scenario:
``{"\u0000ref": "A", "i": k}`` (the id of node k of thread A; ``"B"`` likewise),
``{"\u0000ref": "thread", "t": "B"}``, ``{"\u0000ref": "ghost"}``,
``{"\u0000float": "nan" | "inf" | "-inf"}`` and ``{"\u0000big": n}`` (n characters).
"""

from __future__ import annotations

import json
import math
from typing import Any

from panelot.idb.errors import PanelotError
from panelot.store import PanelotStore
from panelot.tree.integrity import index_nodes, walk_to_root

__all__ = ["apply_ops", "build_base", "check_store", "resolve"]

REF, FLOAT, BIG = "\0ref", "\0float", "\0big"
GHOST = "ghost-node-0000"


def _text(s: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": s}]}


def _answer(s: str) -> dict[str, Any]:
    return {**_text(s), "model": "m", "connectionId": "c"}


async def build_base(store: PanelotStore) -> dict[str, Any]:
    """Thread A (8 nodes, two branches, a tombstone), thread B (2 nodes), empty thread C."""
    a = await store.create_thread("A")
    ids: list[str] = []

    async def add(kind: str, payload: dict[str, Any], **kw: Any) -> str:
        node_id = str((await store.append(a, kind, payload, **kw))["nodeId"])
        ids.append(node_id)
        return node_id

    n0 = await add("user_message", _text("q1"))
    n1 = await add("assistant_message", _answer("a1"))
    n2 = await add("tool_call", {"itemId": "i1", "toolName": "t", "params": {}, "level": "L1"})
    await add(
        "tool_result",
        {"itemId": "i1", "ok": True, "contentForLlm": [{"type": "text", "text": "r"}]},
    )
    await add("assistant_message", _answer("a2"))
    n5 = str(
        (
            await store.command(
                "message.edit", {"threadId": a, "nodeId": n0, "payload": _text("q1 again")}
            )
        )["nodeId"]
    )
    ids.append(n5)
    await add("assistant_message", _answer("a3"))
    await add("system_notice", {"text": "note", "level": "info"})
    await store.command("branch.switch", {"threadId": a, "nodeId": n2})
    await store.command("message.delete", {"threadId": a, "nodeId": n1})
    b = await store.create_thread("B")
    m0 = (await store.append(b, "user_message", _text("b")))["nodeId"]
    m1 = (await store.append(b, "assistant_message", _answer("b")))["nodeId"]
    c = await store.create_thread("C")
    return {"A": a, "B": b, "C": c, "nodesA": ids, "nodesB": [m0, m1]}


def resolve(value: Any, base: dict[str, Any]) -> Any:
    """Replace the markers in ``value`` (see the module docstring)."""
    if isinstance(value, list):
        return [resolve(v, base) for v in value]
    if not isinstance(value, dict):
        return value
    if REF in value:
        kind = value[REF]
        if kind in ("A", "B"):
            nodes = base[f"nodes{kind}"]
            return nodes[value["i"] % len(nodes)]
        if kind == "thread":
            return base[value["t"]]
        return GHOST
    if FLOAT in value:
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[value[FLOAT]]
    if BIG in value:
        return "x" * int(value[BIG])
    return {k: resolve(v, base) for k, v in value.items()}


async def apply_ops(store: PanelotStore, base: dict[str, Any], ops: list[dict[str, Any]]) -> int:
    """Write each operation as raw records; return how many the storage layer refused.

    A refusal by the idb layer itself (a value it cannot store) skips that operation:
    such a record cannot exist in the database, so it is not a corruption to test.
    """
    nodes, threads = store.db.table("nodes"), store.db.table("threads")
    refused = 0
    for op in ops:
        kind = op["op"]
        node_id = base["nodesA"][op.get("node", 0) % len(base["nodesA"])]
        try:
            if kind == "node_field":
                raw = await nodes.get(node_id)
                if raw is not None:
                    raw[op["field"]] = resolve(op["value"], base)
                    await nodes.put(raw)
            elif kind == "payload_field":
                raw = await nodes.get(node_id)
                if raw is not None and isinstance(raw.get("payload"), dict):
                    raw["payload"][op["field"]] = resolve(op["value"], base)
                    await nodes.put(raw)
            elif kind == "delete_node":
                await nodes.delete(node_id)
            elif kind == "add_node":
                record = {k: resolve(v, base) for k, v in op["record"].items()}
                await nodes.put({**record, "id": f"extra-{op['n']}"})
            elif kind == "thread_field":
                thread_id = base[op["thread"]]
                raw = await threads.get(thread_id)
                if raw is not None:
                    raw[op["field"]] = resolve(op["value"], base)
                    await threads.put(raw)
            elif kind == "delete_thread_record":
                await threads.delete(base[op["thread"]])
            else:
                raise AssertionError(f"unknown operation {kind!r}")
        except PanelotError:
            refused += 1
    return refused


def _leaf_problem(raw_thread: Any, raw_nodes: list[Any], thread_id: str) -> str | None:
    """The oracle: does the stored leaf fail to reach a root (what the integrity repair mends)?"""
    leaf = raw_thread.get("leafId") if isinstance(raw_thread, dict) else None
    if leaf is not None and not isinstance(leaf, str):
        return "leafId is not a string"
    return walk_to_root(index_nodes(thread_id, raw_nodes), leaf).problem


class Outcome:
    """What the calls of one check did, for the figures in the report."""

    def __init__(self) -> None:
        self.ok = 0
        self.errors: dict[str, int] = {}
        self.repaired = 0

    def to_json(self) -> dict[str, Any]:
        """The counts as JSON."""
        return {"ok": self.ok, "errors": self.errors, "repaired": self.repaired}


async def _call(out: Outcome, what: str, coro: Any) -> Any:
    """Await ``coro``; a project error is recorded and returns None, anything else fails."""
    try:
        result = await coro
    except PanelotError as exc:
        assert exc.message, f"{what}: {type(exc).__name__} without a message"
        out.errors[exc.name] = out.errors.get(exc.name, 0) + 1
        return None
    except Exception as exc:
        raise AssertionError(f"{what} raised {type(exc).__name__}: {exc!r}") from exc
    out.ok += 1
    return result


async def _raw(store: PanelotStore, thread_id: str) -> tuple[Any, list[Any]]:
    thread = await store.db.table("threads").get(thread_id)
    nodes = await store.db.table("nodes").where("threadId").equals(thread_id).to_list()
    return thread, nodes


def _as_json(value: Any) -> str:
    """``value`` as canonical JSON text (NaN and Infinity spelled out)."""
    return json.dumps(value, sort_keys=True)


async def _check_thread(store: PanelotStore, thread_id: str, out: Outcome) -> None:
    q = store.query
    raw_thread, raw_nodes = await _raw(store, thread_id)
    problem = _leaf_problem(raw_thread, raw_nodes, thread_id)
    report = await _call(out, "thread.check", q("thread.check", {"threadId": thread_id}))
    if report is not None:
        assert isinstance(report["problems"], list)
        assert report["ok"] == (not report["problems"])
        if problem is not None:
            assert not report["ok"], (problem, report)
    snap = await _call(out, "thread.snapshot", q("thread.snapshot", {"threadId": thread_id}))
    after_thread, after_nodes = await _raw(store, thread_id)
    if snap is None:  # refused (a malformed thread record): nothing may have been written
        assert len(after_nodes) == len(raw_nodes)
    elif problem is None:
        assert len(after_nodes) == len(raw_nodes), "a sound thread was changed on load"
    else:
        out.repaired += 1
        assert len(after_nodes) == len(raw_nodes) + 1, "the repair must add exactly one node"
        notice = next(n for n in after_nodes if n["id"] == after_thread["leafId"])
        assert notice["type"] == "system_notice"
        assert notice["payload"]["code"] == "integrity_repair" and notice["payload"]["text"]
        assert _leaf_problem(after_thread, after_nodes, thread_id) is None
        assert snap["leafId"] == notice["id"] and snap["nodes"][-1]["id"] == notice["id"]
    if snap is not None:
        again = await _call(out, "second load", q("thread.snapshot", {"threadId": thread_id}))
        # Compared as JSON text: a stored NaN reads back as a new float each time, and
        # NaN != NaN would make equal snapshots differ.
        assert _as_json(again) == _as_json(snap), "a second load must be stable"
        assert len((await _raw(store, thread_id))[1]) == len(after_nodes)
        known = {n["id"] for n in after_nodes}
        assert all(n["id"] in known for n in snap["nodes"])
    ctx = await _call(out, "thread.context", q("thread.context", {"threadId": thread_id}))
    if ctx is not None:
        assert isinstance(ctx["messages"], list) and isinstance(ctx["path"], list)
    md = await _call(
        out, "markdown", q("thread.export", {"threadId": thread_id, "format": "markdown"})
    )
    assert md is None or isinstance(md["markdown"], str)
    exported = await _call(out, "thread.export", q("thread.export", {"threadId": thread_id}))
    if exported is not None:
        imported = await store.send(
            {
                "type": "thread.import",
                "clientId": "corrupt",
                "submissionId": f"import-{thread_id}",
                "payload": {"data": exported["data"]},
            }
        )
        if imported["status"] == "failed":
            assert imported["error"]["name"] in ("ImportError", "ValidationError"), imported
    await _call(out, "thread.get", q("thread.get", {"threadId": thread_id}))
    for node in after_nodes[:12]:
        node_id = node["id"]
        await _call(out, "thread.siblings", q("thread.siblings", {"nodeId": node_id}))
        await _call(
            out,
            "branch.switch",
            store.command("branch.switch", {"threadId": thread_id, "nodeId": node_id}),
        )
    await _call(
        out,
        "message.append",
        store.append(thread_id, "user_message", _text("after corruption")),
    )
    await _call(out, "thread.check after writes", q("thread.check", {"threadId": thread_id}))


async def check_store(store: PanelotStore, base: dict[str, Any]) -> dict[str, Any]:
    """Run every reader over the corrupted store and assert the properties above."""
    out = Outcome()
    listed = await _call(out, "thread.list", store.query("thread.list", {"archived": None}))
    assert listed is not None, "the thread list must never fail"
    for row in listed:  # what the UI reads from each row has its declared type
        assert isinstance(row["id"], str) and isinstance(row["title"], str), row
        assert all(isinstance(tag, str) for tag in row.get("tags") or []), row
    for archived in (True, False):
        await _call(out, "thread.list", store.query("thread.list", {"archived": archived}))
    await _call(out, "thread.list tag", store.query("thread.list", {"tag": "x", "limit": 5}))
    for name in ("A", "B", "C"):
        await _check_thread(store, base[name], out)
    return out.to_json()
