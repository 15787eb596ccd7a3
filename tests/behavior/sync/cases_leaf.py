"""A thread's leaf that reaches a device before its node (docs/sync.md "Merges", the leaf).

A thread's document can come in one pull and the node its ``leafId`` names in a later
one (a long-poll woken between two documents of another device's push). Meanwhile the
device keeps its own leaf; that kept leaf is not a change made here: a push must not send
it back with a newer clock (it would undo the other device's edit everywhere), and once
the node comes the server's leaf is taken. A leaf moved here meanwhile (an append) is
this device's change: it is pushed and stays. Stores A and B are two devices syncing
one fresh server database; the early document is put with plain HTTP.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from behavior.sync import (
    all_docs,
    push,
    put_doc,
    second_store,
    synced_rows,
    synced_store,
)
from panelot.store import PanelotStore
from panelot.sync.docid import SYNCED_TABLES

_LATER = "9000000000000-0000-zz"
"""A clock later than any the stores tick in a case."""


async def _pull(store: PanelotStore) -> dict[str, Any]:
    report: dict[str, Any] = await store.command("sync.pull", {})
    assert report["refused"] == [], report
    return report


async def _leaf(store: PanelotStore, tid: str) -> Any:
    thread = await store.db.table("threads").get(tid)
    assert isinstance(thread, dict), thread
    return thread["leafId"]


async def _put_early_node(ctx: Ctx, database: str, tid: str, parent: str, node_id: str) -> None:
    """Put on the server, as another device would, the node the early leaf names."""
    node = {
        "id": node_id,
        "threadId": tid,
        "parentId": parent,
        "seq": 3,
        "ts": 1_764_000_000_003,
        "type": "assistant_message",
        "payload": answer("Another version"),
    }
    record = {"_id": f"nodes:{node_id}", "table": "nodes", "v": 1, "record": node}
    await put_doc(ctx, database, record)


async def case_a_leaf_before_its_node_is_not_pushed_back_and_is_taken_once_it_comes(
    ctx: Ctx,
) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    tid = await a.create_thread("Early leaf")
    question = (await a.append(tid, "user_message", text("Hello")))["nodeId"]
    reply = (await a.append(tid, "assistant_message", answer("Hi")))["nodeId"]
    await push(a)
    await _pull(b)
    assert await _leaf(b, tid) == reply

    # Another device's thread document arrives first: its leaf is a node not yet here.
    later = "n-early-leaf"
    thread_doc = (await all_docs(ctx, database))[f"threads:{tid}"]
    thread_doc["record"] = {**thread_doc["record"], "leafId": later}
    thread_doc["clocks"] = {**thread_doc["clocks"], "leafId": _LATER}
    await put_doc(ctx, database, thread_doc)
    await _pull(b)
    assert await _leaf(b, tid) == reply  # its node is not here: B keeps its own leaf
    assert (await push(b))["pushed"] == 0  # ... and does not push it as a change of its own
    on_server = (await all_docs(ctx, database))[f"threads:{tid}"]
    assert on_server["record"]["leafId"] == later, on_server
    assert on_server["clocks"]["leafId"] == _LATER, on_server

    # A change of B's own meanwhile goes with the server's leaf, not the kept one.
    await b.command("thread.update", {"threadId": tid, "patch": {"pinned": True}})
    assert (await push(b))["pushed"] == 1
    on_server = (await all_docs(ctx, database))[f"threads:{tid}"]
    assert on_server["record"]["leafId"] == later and on_server["record"]["pinned"], on_server
    assert on_server["clocks"]["leafId"] == _LATER, on_server

    # The node comes in a later pull, with no new thread document: B takes the leaf.
    await _put_early_node(ctx, database, tid, question, later)
    await _pull(b)
    assert await _leaf(b, tid) == later
    assert (await push(b))["pushed"] == 0  # B's leaf is the server's: nothing to send
    await _pull(a)
    assert await _leaf(a, tid) == later
    for table in SYNCED_TABLES:
        mine, theirs = await synced_rows(a, table), await synced_rows(b, table)
        assert mine == theirs, (table, mine, theirs)


async def case_a_leaf_moved_here_while_the_servers_is_early_is_this_devices_change(
    ctx: Ctx,
) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    tid = await a.create_thread("Moved meanwhile")
    question = (await a.append(tid, "user_message", text("Hello")))["nodeId"]
    await a.append(tid, "assistant_message", answer("Hi"))
    await push(a)
    await _pull(b)
    later = "n-early-leaf-2"
    thread_doc = (await all_docs(ctx, database))[f"threads:{tid}"]
    thread_doc["record"] = {**thread_doc["record"], "leafId": later}
    await put_doc(ctx, database, thread_doc)
    await _pull(b)

    # A pin of B's goes with the server's leaf; the leaf B keeps is still not its change.
    await b.command("thread.update", {"threadId": tid, "patch": {"pinned": True}})
    assert (await push(b))["pushed"] == 1
    assert (await all_docs(ctx, database))[f"threads:{tid}"]["record"]["leafId"] == later
    # B appends before the early leaf's node comes: its new leaf is its own change.
    mine = (await b.append(tid, "user_message", text("From B meanwhile")))["nodeId"]
    assert await _leaf(b, tid) == mine
    assert (await push(b))["pushed"] == 2  # the node and the thread, with B's leaf
    on_server = (await all_docs(ctx, database))[f"threads:{tid}"]
    assert on_server["record"]["leafId"] == mine, on_server
    await _put_early_node(ctx, database, tid, question, later)
    await _pull(b)
    assert await _leaf(b, tid) == mine  # the server's leaf is B's now: it stays
    await _pull(a)
    assert await _leaf(a, tid) == mine
    for table in SYNCED_TABLES:
        mine_rows, theirs = await synced_rows(a, table), await synced_rows(b, table)
        assert mine_rows == theirs, (table, mine_rows, theirs)
