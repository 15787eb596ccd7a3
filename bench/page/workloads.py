"""Python implementations of the benchmark workloads, run inside Pyodide by bench.mjs.

bench.mjs writes this file into Pyodide's file system as ``bench_workloads`` and calls
:func:`measure` once per measurement. Each workload uses the real panelot API (the
store facade, the command bus, the tree layer or ``panelot.idb``) on a database that
the page has created and seeded with plain IndexedDB; only ``run`` is timed. The JS
implementations of the same operations are in workloads.mjs, under the same names.
"""

from __future__ import annotations

import cProfile
import gc
import importlib.util
import io
import json
import pstats
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from panelot.idb import Database, Durability, Transaction
from panelot.idb.observe import LiveQuery
from panelot.schema import PANELOT_VERSIONS
from panelot.store import PanelotStore
from panelot.tree.nodes import TREE_TABLES, append_node, siblings, switch_branch

Args = dict[str, Any]
Run = Callable[[Database, Args, Any], Awaitable[Any]]
Setup = Callable[[Database, Args], Awaitable[Any]]
Check = Callable[[Database, Args, Any], Awaitable[Any]]

CLIENT = "bench-client"


@dataclass(frozen=True, slots=True)
class Workload:
    run: Run
    setup: Setup | None = None
    check: Check | None = None
    durability: Durability = "default"
    """The connection's ``chrome_transaction_durability`` (the ``*_strict`` workloads)."""


async def _store(db: Database, args: Args) -> PanelotStore:
    return PanelotStore(db, client_id=CLIENT)


async def _none(db: Database, args: Args, result: Any) -> Any:
    return None


async def _count(db: Database, table: str) -> int:
    return await db.table(table).count()


# --- append -----------------------------------------------------------------------------


def _append_body(thread_id: str, node_type: str, payload: Any) -> Callable[[Transaction], Any]:
    return lambda tx: append_node(tx, thread_id, node_type, payload)


async def append_run(db: Database, args: Args, ctx: Any) -> None:
    thread_id = args["threadId"]
    for m in args["messages"]:
        await db.transaction("rw", TREE_TABLES, _append_body(thread_id, m["type"], m["payload"]))


async def append_check(db: Database, args: Args, result: Any) -> list[Any]:
    thread = await db.table("threads").get(args["threadId"])
    nodes = await db.table("nodes").where("threadId").equals(args["threadId"]).to_list()
    top = max(nodes, key=lambda n: n["seq"], default=None)
    return [
        len(nodes),
        sum(n["seq"] for n in nodes),
        thread["stats"]["turns"],
        thread["stats"]["totalTokens"],
        top is not None and thread["leafId"] == top["id"],
    ]


async def append_bus_run(db: Database, args: Args, store: PanelotStore) -> None:
    thread_id = args["threadId"]
    for m, submission_id in zip(args["messages"], args["submissionIds"], strict=True):
        await store.command(
            "message.append",
            {"threadId": thread_id, "type": m["type"], "payload": m["payload"]},
            submission_id,
        )


async def append_bus_check(db: Database, args: Args, result: Any) -> list[Any]:
    return [*(await append_check(db, args, result)), await _count(db, "commandReceipts")]


# --- bulk, context, walk, list, branch ------------------------------------------------


async def bulk_run(db: Database, args: Args, ctx: Any) -> None:
    async def body(tx: Transaction) -> None:
        await tx.table("threads").add(args["thread"])
        await tx.table("nodes").bulk_add(args["nodes"])

    await db.transaction("rw", TREE_TABLES, body)


async def bulk_check(db: Database, args: Args, result: Any) -> list[int]:
    return [await _count(db, "threads"), await _count(db, "nodes")]


async def context_run(db: Database, args: Args, store: PanelotStore) -> dict[str, Any]:
    return await store.context(args["threadId"])


def context_summary(ctx: dict[str, Any]) -> list[Any]:
    """The same summary as contextCheck() in data.mjs."""
    messages = ctx["messages"]
    roles: dict[str, int] = {}
    for m in messages:
        roles[m["role"]] = roles.get(m["role"], 0) + 1
    path = ctx["path"]
    return [
        len(messages),
        len(path),
        path[-1] if path else None,
        sum(len(m.get("toolCalls", [])) for m in messages),
        ctx["turnContext"]["turnId"] if ctx["turnContext"] else None,
        roles,
        len(ctx["pendingCalls"]),
    ]


async def context_check(db: Database, args: Args, ctx: dict[str, Any]) -> list[Any]:
    return context_summary(ctx)


async def walk_run(db: Database, args: Args, ctx: Any) -> list[Any]:
    async def body(tx: Transaction) -> list[Any]:
        nodes = tx.table("nodes")
        steps, last, current = 0, None, args["leafId"]
        while current is not None:
            node = await nodes.get(current)
            steps += 1
            last, current = node["id"], node["parentId"]
        return [steps, last]

    return await db.transaction("r", ["nodes"], body)


async def list_run(db: Database, args: Args, store: PanelotStore) -> Any:
    return await store.query("thread.list", {"limit": args["limit"]})


async def ids_check(db: Database, args: Args, rows: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in rows]


def _switch_body(thread_id: str, node_id: str) -> Callable[[Transaction], Awaitable[str]]:
    async def body(tx: Transaction) -> str:
        ids = [s["id"] for s in await siblings(tx, node_id)]
        target = ids[(ids.index(node_id) + 1) % len(ids)]
        return await switch_branch(tx, thread_id, target)

    return body


async def branch_run(db: Database, args: Args, ctx: Any) -> list[str]:
    thread_id = args["threadId"]
    return [
        await db.transaction("rw", TREE_TABLES, _switch_body(thread_id, node_id))
        for node_id in args["targets"]
    ]


async def result_check(db: Database, args: Args, result: Any) -> Any:
    return result


# --- receipts and delete ---------------------------------------------------------------


async def receipt_run(db: Database, args: Args, store: PanelotStore) -> int:
    commands = [
        ({"threadId": args["threadId"], "patch": {"title": title}}, submission_id)
        for title, submission_id in zip(args["titles"], args["submissionIds"], strict=True)
    ]
    first = [await store.command("thread.update", p, s) for p, s in commands]
    same = 0
    for (payload, submission_id), response in zip(commands, first, strict=True):
        if await store.command("thread.update", payload, submission_id) == response:
            same += 1
    return same


async def receipt_check(db: Database, args: Args, same: int) -> list[Any]:
    thread = await db.table("threads").get(args["threadId"])
    return [same, thread["title"], await _count(db, "commandReceipts")]


async def delete_run(db: Database, args: Args, store: PanelotStore) -> Any:
    return await store.command(
        "thread.delete", {"threadId": args["threadId"]}, args["submissionId"]
    )


async def delete_check(db: Database, args: Args, response: Any) -> list[Any]:
    receipts = await db.table("commandReceipts").to_list()
    return [
        response["deleted"],
        await _count(db, "nodes"),
        await _count(db, "threads"),
        await _count(db, "attachments"),
        [r["status"] for r in receipts],
    ]


# --- blob (panelot.attachments.records, when present) ---------------------------------------

BLOB_MIME = "image/png"


async def blob_setup(db: Database, args: Args) -> bytes:
    return random.Random(args["seed"]).randbytes(args["bytes"])


def _put_body(thread_id: str, data: bytes) -> Callable[[Transaction], Awaitable[Any]]:
    from panelot.attachments.records import AttachmentInput, put_attachment

    image = AttachmentInput(thread_id=thread_id, kind="image", mime=BLOB_MIME, data=data)
    return lambda tx: put_attachment(tx, image)


async def blob_run(db: Database, args: Args, data: bytes) -> list[int]:
    from panelot.attachments.records import ATTACHMENT_TABLES, read_bytes

    sizes = []
    for _ in range(args["times"]):
        record = await db.transaction("rw", ATTACHMENT_TABLES, _put_body(args["threadId"], data))
        _, read = await read_bytes(db, record["id"])
        sizes.append(len(read))
    return sizes


async def blob_check(db: Database, args: Args, sizes: list[int]) -> list[int]:
    return [len(sizes), sum(sizes), await _count(db, "attachments")]


# --- evict (panelot.attachments.eviction: plan, step 1 marks, step 2 deletes) ---------------------


async def evict_run(db: Database, args: Args, ctx: Any) -> int:
    from panelot.attachments.eviction import evict

    out = await evict(db, 0, None)
    return int(out["evicted"])


async def evict_check(db: Database, args: Args, evicted: int) -> list[int]:
    nodes = await db.table("nodes").to_list()
    marked = sum(
        1
        for n in nodes
        if any(isinstance(b, dict) and b.get("evicted") is True for b in n["payload"]["content"])
    )
    return [evicted, await _count(db, "attachments"), marked]


# --- storage-layer micro workloads ----------------------------------------------------


async def bulk_put_run(db: Database, args: Args, ctx: Any) -> None:
    await db.table("nodes").bulk_put(args["nodes"])


async def nodes_count(db: Database, args: Args, result: Any) -> int:
    return await _count(db, "nodes")


async def get_then_put_run(db: Database, args: Args, ctx: Any) -> None:
    async def body(tx: Transaction) -> None:
        nodes = tx.table("nodes")
        for node_id in args["ids"]:
            node = await nodes.get(node_id)
            node["ts"] += 1
            await nodes.put(node)

    await db.transaction("rw", ["nodes"], body)


async def ts_sum(db: Database, args: Args, result: Any) -> int:
    return sum(n["ts"] for n in await db.table("nodes").to_list())


async def read_by_index_run(db: Database, args: Args, ctx: Any) -> list[Any]:
    return await db.table("nodes").where("threadId").equals(args["threadId"]).to_list()


async def length_and_seq_sum(db: Database, args: Args, rows: list[Any]) -> list[int]:
    return [len(rows), sum(r["seq"] for r in rows)]


async def where_mix_run(db: Database, args: Args, ctx: Any) -> list[Any]:
    skills = db.table("skills")

    def w(index: str) -> Any:
        return skills.where(index)

    return [
        await w("name").starts_with_ignore_case(args["prefix"]).to_list(),
        await w("name").equals_ignore_case(args["exact"]).to_list(),
        await w("name").any_of_ignore_case(args["anyOf"]).to_list(),
        await w("name").starts_with_any_of(args["startsWithAnyOf"]).to_list(),
        await w("name").in_any_range(args["ranges"]).to_list(),
        await w("id").any_of(args["ids"]).to_list(),
        await w("name").not_equal(args["notEqual"]).limit(200).to_list(),
        await w("name").none_of(args["noneOf"]).count(),
        await w("sourceRef").starts_with_any_of_ignore_case(["SRC-1", "src-3"]).count(),
    ]


async def where_mix_check(db: Database, args: Args, results: list[Any]) -> list[Any]:
    return [r if isinstance(r, int) else sorted(x["id"] for x in r) for r in results]


async def or_distinct_run(db: Database, args: Args, ctx: Any) -> list[Any]:
    c = (
        db.table("skills")
        .where("name")
        .starts_with_ignore_case(args["prefix"])
        .or_("sourceRef")
        .equals(args["orSource"])
        .or_("id")
        .any_of(args["ids"])
        .or_("name")
        .starts_with_any_of(args["startsWithAnyOf"])
        .distinct()
    )
    return await c.to_list()


async def sorted_ids(db: Database, args: Args, rows: list[Any]) -> list[str]:
    return sorted(r["id"] for r in rows)


# --- backup and restore (panelot.backup: dexie-export-import's format) --------------------
#
# The checks are the page's (SHARED_CHECKS in workloads.mjs), the same code for both
# implementations: the exported file's rows, or the restored database's, digested
# order-free. Only JSON strings and the file's JsProxy cross to JS.


async def backup_run(db: Database, args: Args, store: PanelotStore) -> Any:
    return await store.export_backup()


async def backup_check(db: Database, args: Args, backup: Any) -> Any:
    import js  # Pyodide only

    text = await js.bench.checks.backupFile(backup.file, json.dumps(args["expected"]))
    return json.loads(text)


async def restore_setup(db: Database, args: Args) -> tuple[PanelotStore, Any]:
    """The store, and the file the page made (a JS Blob) out of ``args``."""
    return PanelotStore(db, client_id=CLIENT), args.pop("input")


async def restore_run(db: Database, args: Args, ctx: tuple[PanelotStore, Any]) -> Any:
    store, file = ctx
    envelope = await store.restore_backup(file, submission_id=args["submissionId"])
    if envelope["status"] != "completed":
        raise RuntimeError(f"restore: {envelope.get('error')}")
    return envelope["response"]


async def restore_check(db: Database, args: Args, response: Any) -> Any:
    import js  # Pyodide only

    text = await js.bench.checks.restoredDb(db.name, json.dumps(args["expected"]))
    return json.loads(text)


WORKLOADS: dict[str, Workload] = {
    "append": Workload(append_run, check=append_check),
    "append_bus": Workload(append_bus_run, _store, append_bus_check),
    "bulk": Workload(bulk_run, check=bulk_check),
    "append_strict": Workload(append_run, check=append_check, durability="strict"),
    "bulk_strict": Workload(bulk_run, check=bulk_check, durability="strict"),
    "context": Workload(context_run, _store, context_check),
    "walk": Workload(walk_run, check=result_check),
    "list": Workload(list_run, _store, ids_check),
    "branch": Workload(branch_run, check=result_check),
    "receipt": Workload(receipt_run, _store, receipt_check),
    "delete": Workload(delete_run, _store, delete_check),
    **(
        {
            "blob": Workload(blob_run, blob_setup, blob_check),
            "evict": Workload(evict_run, check=evict_check),
        }
        if importlib.util.find_spec("panelot.attachments.records") is not None
        else {}
    ),
    "bulk_put": Workload(bulk_put_run, check=nodes_count),
    "get_then_put": Workload(get_then_put_run, check=ts_sum),
    "read_by_index": Workload(read_by_index_run, check=length_and_seq_sum),
    "where_mix": Workload(where_mix_run, check=where_mix_check),
    "or_distinct": Workload(or_distinct_run, check=sorted_ids),
    "backup": Workload(backup_run, _store, backup_check),
    "restore": Workload(restore_run, restore_setup, restore_check),
    # Measured in the variants of VARIANTS, not against Dexie (see measure).
    "observe_append": Workload(append_run, check=append_check),
    "observe_bulk_put": Workload(bulk_put_run, check=nodes_count),
}

VARIANTS = ("off", "on", "live_other", "live_same", "interleaved")
"""How an ``observe_*`` workload runs: ``Database(observe=False)``, observing (the
default), and observing with a live query open on the nodes of another thread
(``args["otherThreadId"]``: every change set is checked and ignored) or of the written
thread (``args["threadId"]``: it runs again while the workload writes). ``interleaved``
(``observe_append`` only) runs off and on in one measurement: see :func:`_interleaved`."""

BLOCK = 50
"""Appends per block of an ``interleaved`` measurement."""


# --- the entry points bench.mjs calls -----------------------------------------------------


async def _open(db_name: str, observe: bool = True, durability: Durability = "default") -> Database:
    from panelot.idb.browser import BrowserFactory  # Pyodide only

    db = Database(
        db_name, PANELOT_VERSIONS, observe=observe, chrome_transaction_durability=durability
    )
    return await db.open(BrowserFactory())


def _thread_nodes(thread_id: str) -> Callable[[Transaction], Awaitable[list[Any]]]:
    """The live queries' read: a thread's nodes (Dexie: ``nodes.where("threadId")``)."""
    return lambda tx: tx.table("nodes").where("threadId").equals(thread_id).to_list()


def _profile_text(profile: cProfile.Profile, top: int = 35) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


async def _heap_mark(full: bool) -> dict[str, int]:
    """The page's heap mark (bench.mjs's heapMark): JS heap in use, wasm heap size."""
    import js  # Pyodide only

    mark = await js.bench.heap(full)
    return {"js": int(mark.js), "wasm": int(mark.wasm)}


async def measure(
    name: str,
    db_name: str,
    args_json: str,
    profile: bool = False,
    variant: str = "on",
    memory: bool = False,
    input: Any = None,
) -> str:
    """One measurement on the seeded database ``db_name``: JSON ``{ms, check, profile?}``.

    ``variant`` (one of :data:`VARIANTS`) says whether the connection observes, and
    whether a live query is open during ``run`` (then ``live_runs`` counts its runs,
    the first, untimed one included). ``memory`` adds ``heap``: the JS heap before
    ``run`` (after a full GC), at its end and after a GC, and the wasm heap before and
    at the end (it never shrinks: growth is a new high-water mark). ``input`` (a JS
    value the page made for the workload) is handed to setup as ``args["input"]``.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    workload = WORKLOADS[name]
    args = json.loads(args_json)
    if variant == "interleaved":
        return json.dumps(await _interleaved(name, db_name, args))
    if input is not None:
        args["input"] = input
    db = await _open(db_name, observe=variant != "off", durability=workload.durability)
    live: LiveQuery[list[Any]] | None = None
    try:
        ctx = await workload.setup(db, args) if workload.setup else None
        if variant in ("live_other", "live_same"):
            watched = args["otherThreadId" if variant == "live_other" else "threadId"]
            live = db.live_query(_thread_nodes(watched), ["nodes"])
            await anext(live)  # its first run, before the clock starts
        gc.collect()
        before = await _heap_mark(True) if memory else None
        profiler = cProfile.Profile() if profile else None
        started = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        result = await workload.run(db, args, ctx)
        if profiler is not None:
            profiler.disable()
        ms = (time.perf_counter() - started) * 1000
        heap = None
        if before is not None:
            end = await _heap_mark(False)
            retained = await _heap_mark(True)
            heap = {
                "js_before": before["js"],
                "js_end": end["js"],
                "js_retained": retained["js"],
                "wasm_before": before["wasm"],
                "wasm_end": end["wasm"],
            }
        if live is not None:
            live.close()
        checked = await (workload.check or _none)(db, args, result)
    finally:
        if live is not None:
            live.close()
        db.close()
    out: dict[str, Any] = {"ms": ms, "check": checked}
    if heap is not None:
        out["heap"] = heap
    if live is not None:
        out["live_runs"] = live.runs
    if profiler is not None:
        out["profile"] = _profile_text(profiler)
    return json.dumps(out)


async def _interleaved(name: str, db_name: str, args: Args) -> dict[str, Any]:
    """Append ``args["messages"]`` in blocks of :data:`BLOCK`, by two connections in turn.

    One connection observes, the other does not (``Database(observe=False)``). Blocks go
    in pairs, off-on then on-off, so that a slower or faster stretch of the machine
    falls on both alike; both write the same thread, which holds every message in order
    at the end, as in the other variants. An observing block ends by publishing what it
    still holds (``feed.flush``), so it pays for all it announces (a little more than
    it would in a longer burst). Returns the summed time of each side (``ms``: both)
    and, as ``ratio``, the median over the pairs of on / off: a pause of the machine
    (or a collection) in one block moves the sums, not the median.
    """
    if name != "observe_append":
        raise ValueError(f"{name}: no interleaved variant")
    off = await _open(db_name, observe=False)
    on = await _open(db_name)
    blocks: dict[bool, list[float]] = {False: [], True: []}  # seconds, by observing
    try:
        messages = args["messages"]
        gc.collect()
        for i, start in enumerate(range(0, len(messages), BLOCK)):
            db = on if (i % 4) in (1, 2) else off  # off on | on off | off on | ...
            block = {**args, "messages": messages[start : start + BLOCK]}
            started = time.perf_counter()
            await append_run(db, block, None)
            db.feed.flush()
            blocks[db is on].append(time.perf_counter() - started)
        checked = await append_check(on, args, None)
    finally:
        off.close()
        on.close()
    # The k-th off block and the k-th on block are a pair (one runs right after the other).
    ratios = [b / a for a, b in zip(blocks[False], blocks[True], strict=False)]
    off_ms, on_ms = sum(blocks[False]) * 1000, sum(blocks[True]) * 1000
    return {
        "ms": off_ms + on_ms,
        "off_ms": off_ms,
        "on_ms": on_ms,
        "ratio": statistics.median(ratios),
        "check": checked,
    }


def python_memory() -> dict[str, int]:
    """Python-side memory figures after a full collection."""
    gc.collect()
    return {"gc_objects": len(gc.get_objects())}


async def append_many(db_name: str, thread_id: str, messages_json: str, count: int) -> str:
    """Append ``count`` nodes (cycling through ``messages``), one per transaction."""
    messages = json.loads(messages_json)
    db = await _open(db_name)
    try:
        started = time.perf_counter()
        for i in range(count):
            m = messages[i % len(messages)]
            body = _append_body(thread_id, m["type"], m["payload"])
            await db.transaction("rw", TREE_TABLES, body)
        ms = (time.perf_counter() - started) * 1000
    finally:
        db.close()
    del messages
    return json.dumps({"ms": ms})


# --- live_notify (bench/run.py drives two pages; see bench.mjs) -------------------------------

_live: dict[str, Any] = {}
"""This page's side of live_notify: the writer connection (page A), or the reader's
connection, live query and seen ids (page B)."""


def _wall_ms() -> float:
    """``performance.timeOrigin + performance.now()``: comparable across pages."""
    import js  # Pyodide only

    perf = _live.get("perf")
    if perf is None:
        perf = _live["perf"] = js.performance
        _live["origin"] = float(perf.timeOrigin)
    return float(_live["origin"] + perf.now())


async def live_writer_open(db_name: str) -> None:
    """Page A: open the connection ``live_write`` appends with (observing).

    Its feed notes when each commit reached it (``committed_at``, wall ms): after the
    commit, before the set is encoded and announced, so that announcing counts in the
    latency measured (a pause of the page while announcing, a collection, included).
    """
    writer = await _open(db_name)
    committed = writer.feed.committed

    def stamped(changes: Any) -> None:
        _live["committed_at"] = _wall_ms()
        committed(changes)

    writer.feed.committed = stamped  # type: ignore[method-assign]
    _live["writer"] = writer


async def live_write(thread_id: str, message_json: str) -> str:
    """Page A: append one message in one transaction; JSON ``{id, t0, t1, tc}`` (wall ms).

    ``t0`` before the write, ``t1`` once it returned, ``tc`` when its commit reached the
    feed (see :func:`live_writer_open`).
    """
    m = json.loads(message_json)
    body = _append_body(thread_id, m["type"], m["payload"])
    _live["committed_at"] = None
    t0 = _wall_ms()
    node = await _live["writer"].transaction("rw", TREE_TABLES, body)
    t1 = _wall_ms()
    tc = _live["committed_at"]
    if tc is None:
        raise RuntimeError("live_write: the commit never reached the feed")
    return json.dumps({"id": node.id, "t0": t0, "t1": t1, "tc": tc})


def live_writer_close() -> None:
    _live.pop("writer").close()
    _live.pop("committed_at", None)


async def live_reader_open(db_name: str, thread_id: str, interval: float, mark: Any) -> None:
    """Page B: a live query on the thread's nodes; each result calls ``mark(new ids, t, n)``.

    ``t`` is taken first thing in the callback; the ids are those not in an earlier result.
    """
    db = await _open(db_name)
    seen: set[str] = set()

    def on_result(rows: list[Any]) -> None:
        t = _wall_ms()
        new = [r["id"] for r in rows if r["id"] not in seen]
        seen.update(new)
        mark(json.dumps(new), t, len(rows))

    _live["reader"] = db
    _live["query"] = db.live_query(
        _thread_nodes(thread_id), ["nodes"], on_result=on_result, interval=interval
    )


def live_reader_close() -> str:
    """Page B: close the live query and its connection; JSON: how many runs it made."""
    query: LiveQuery[Any] = _live.pop("query")
    query.close()
    _live.pop("reader").close()
    return json.dumps(query.runs)
