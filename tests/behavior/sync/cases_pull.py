"""``sync.pull``: two stores converge through one database of a real CouchDB-compatible server.

Stores A and B are two stores of the case (two databases on the case's core), each with
its own sync state (its own device), configured with the same fresh server database.
Convergence is checked table by table: every synced record, minus what stays on the
device (:func:`panelot.sync.mapping.local_view`), is the same on both.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, b64, text
from behavior.sync import (
    all_docs,
    http_json,
    pull,
    push,
    put_doc,
    second_store,
    server,
    synced_rows,
    synced_store,
)
from panelot.idb.blobs import blob_bytes
from panelot.store import PanelotStore
from panelot.sync.docid import SYNCED_TABLES


async def _assert_converged(a: PanelotStore, b: PanelotStore) -> None:
    for table in SYNCED_TABLES:
        mine, theirs = await synced_rows(a, table), await synced_rows(b, table)
        assert mine == theirs, (table, mine, theirs)


async def _nodes(store: PanelotStore, tid: str) -> dict[str, dict[str, Any]]:
    rows = await store.db.table("nodes").where("threadId").equals(tid).to_list()
    return {row["id"]: row for row in rows}


async def _thread(store: PanelotStore, tid: str) -> Any:
    return await store.db.table("threads").get(tid)


async def case_b_pulls_what_a_pushed_and_a_pulls_b_edits_back(ctx: Ctx) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    tid = await a.create_thread("Trip to Lisbon", tags=["travel"])
    u1 = (await a.append(tid, "user_message", text("Where should we eat?")))["nodeId"]
    await a.append(tid, "assistant_message", answer("Try the pastéis"))
    u2 = (await a.append(tid, "user_message", text("And after?")))["nodeId"]
    await a.append(tid, "assistant_message", answer("A walk by the river"))
    await a.command("memory.write", {"key": "diet", "value": "vegetarian"})
    pushed = await push(a)
    report = await pull(b)
    assert report["written"] == pushed["pushed"] and report["refused"] == [], report
    assert report["pulled"] == pushed["pushed"], report
    await _assert_converged(a, b)
    thread_b = await _thread(b, tid)
    assert thread_b["stats"] == (await _thread(a, tid))["stats"], thread_b
    assert thread_b["shown"]["turns"] == 2, thread_b["shown"]  # recomputed here
    listed = await b.query("thread.list", {})
    assert tid in repr(listed), listed
    assert (await push(b))["pushed"] == 0  # what was just pulled does not go back
    # B edits: a sibling branch, a regenerated reply, a rename, a pin, a tombstone.
    edited = await b.command(
        "message.edit", {"threadId": tid, "nodeId": u2, "payload": text("And tonight?")}
    )
    await b.command(
        "message.regenerate",
        {"threadId": tid, "userNodeId": edited["nodeId"], "payload": answer("Fado in Alfama")},
    )
    patch = {"title": "Lisbon, May", "pinned": True}
    await b.command("thread.update", {"threadId": tid, "patch": patch})
    await b.command("message.delete", {"threadId": tid, "nodeId": u1})
    second = await push(b)
    assert second["pushed"] >= 4, second
    back = await pull(a)
    assert back["refused"] == [] and back["written"] >= 4, back
    await _assert_converged(a, b)
    thread_a = await _thread(a, tid)
    assert thread_a["title"] == "Lisbon, May" and thread_a["pinned"] is True, thread_a
    assert thread_a["leafId"] == (await _thread(b, tid))["leafId"]
    tomb = (await _nodes(a, tid))[u1]
    assert tomb["payload"].get("deleted") is True, tomb  # the tombstone came across
    snapshot = await a.query("thread.snapshot", {"threadId": tid})
    assert "Fado in Alfama" in repr(snapshot), snapshot
    again = await pull(a)
    assert again["pulled"] == 0 and again["written"] == 0, again  # the checkpoint held


async def case_offline_edits_on_both_converge_and_keep_every_node(ctx: Ctx) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    tid = await a.create_thread("Plans")
    await a.append(tid, "user_message", text("Hello"))
    await a.append(tid, "assistant_message", answer("Hi"))
    await push(a)
    await pull(b)
    # offline on both: each appends to the same thread and renames it
    on_a = (await a.append(tid, "user_message", text("From A")))["nodeId"]
    on_b = (await b.append(tid, "user_message", text("From B")))["nodeId"]
    seq_a, seq_b = (await _nodes(a, tid))[on_a]["seq"], (await _nodes(b, tid))[on_b]["seq"]
    assert seq_a == seq_b  # the same seq on both devices: a collision, kept
    await a.command("thread.update", {"threadId": tid, "patch": {"title": "A's title"}})
    await b.command("thread.update", {"threadId": tid, "patch": {"title": "B's title"}})
    await push(a)
    both = await b.command("sync.now", {})  # B: pull, then push
    assert both["pull"]["refused"] == [] and both["pull"]["written"] >= 2, both
    assert both["push"]["pushed"] >= 2, both  # B's node and B's merged thread
    last = await pull(a)
    assert last["refused"] == [], last
    await _assert_converged(a, b)
    nodes = await _nodes(a, tid)
    assert {on_a, on_b} <= set(nodes), sorted(nodes)
    docs = await all_docs(ctx, database)
    title_doc = docs[f"threads:{tid}"]
    assert title_doc["record"]["title"] == "B's title", title_doc  # B's clock is the later
    assert (await _thread(a, tid))["title"] == "B's title"
    snapshot = await a.query("thread.snapshot", {"threadId": tid})
    assert "From B" in repr(snapshot) or "From A" in repr(snapshot), snapshot
    assert (await push(a))["pushed"] == 0 and (await pull(b))["written"] == 0


async def case_a_thread_deleted_elsewhere_goes_through_the_cascade_and_stays_gone(
    ctx: Ctx,
) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    kept = await a.create_thread("Kept")
    await a.append(kept, "user_message", text("stay"))
    gone = await a.create_thread("Gone")
    await a.append(gone, "user_message", text("first"))
    await push(a)
    await pull(b)
    assert await _thread(b, gone) is not None
    await a.command("thread.delete", {"threadId": gone})
    await push(a)
    late = (await b.append(gone, "user_message", text("appended meanwhile")))["nodeId"]
    report = await pull(b)
    assert report["deleted"] == 1, report
    assert await _thread(b, gone) is None and await _nodes(b, gone) == {}  # the cascade ran
    receipts = await b.db.table("commandReceipts").to_collection().to_list()
    assert any(r.get("commandType") == "thread.delete" for r in receipts), receipts  # a command
    await push(b)
    await pull(a)
    assert await _thread(a, gone) is None and await _nodes(a, gone) == {}
    docs = await all_docs(ctx, database)
    assert f"threads:{gone}" not in docs and f"nodes:{late}" not in docs, sorted(docs)
    await _assert_converged(a, b)


async def case_hostile_documents_are_refused_by_id_and_the_rest_is_written(ctx: Ctx) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    tid = await a.create_thread("Fine")
    nid = (await a.append(tid, "user_message", text("ok")))["nodeId"]
    other = await a.create_thread("Other")
    other_node = (await a.append(other, "user_message", text("there")))["nodeId"]
    await push(a)
    node = (await _nodes(a, tid))[nid]
    script = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    hostile = [
        {"_id": "nodes:n_malformed", "table": "nodes", "v": 1, "record": "not an object"},
        {
            "_id": "nodes:n_types",
            "table": "nodes",
            "v": 1,
            "record": {**node, "id": "n_types", "seq": "twelve", "payload": [1]},
        },
        {
            "_id": "nodes:n_elsewhere",
            "table": "nodes",
            "v": 1,
            "record": {**node, "id": "n_elsewhere", "parentId": other_node, "seq": 99},
        },
        {
            "_id": "threads:t_badtypes",
            "table": "threads",
            "v": 1,
            "record": {"id": "t_badtypes", "title": 7, "createdAt": "now", "leafId": None},
            "clocks": {"title": "0000000000001-0000-x"},
        },
        {"_id": "memories:m_noclock", "table": "memories", "v": 1, "record": {"id": "m_noclock"}},
    ]
    for doc in hostile:
        await put_doc(ctx, database, doc)
    thread = await _thread(a, tid)
    scripted = {
        k: v
        for k, v in thread.items()
        if k not in ("stats", "shown", "deleting", "deletingSince", "requestCut")
    }
    scripted.update(id="t_scripted", title=script, leafId=None)
    scripted.update(deleting=True, deletingSince=1, requestCut={"model": "x"})  # local fields
    doc = {"_id": "threads:t_scripted", "table": "threads", "v": 1, "record": scripted}
    doc["clocks"] = {"title": "0000000000001-0000-x"}
    await put_doc(ctx, database, doc)
    report = await pull(b)
    refused = {r["id"] for r in report["refused"]}
    wanted = {d["_id"] for d in hostile}
    assert refused == wanted, report["refused"]
    assert all(r["reason"] for r in report["refused"]), report["refused"]
    for hid in ("n_malformed", "n_types", "n_elsewhere"):
        assert await b.db.table("nodes").get(hid) is None, hid
    assert await b.db.table("threads").get("t_badtypes") is None
    assert await b.db.table("memories").get("m_noclock") is None
    assert (await _nodes(b, tid)).keys() == {nid}  # the rest is written
    assert (await _nodes(b, other)).keys() == {other_node}
    written = await _thread(b, "t_scripted")  # a script is text: stored as it came, inert
    assert written is not None and written["title"] == script, written
    assert "deleting" not in written and "requestCut" not in written, written  # never taken
    assert written["stats"]["turns"] == 0 and written["shown"]["messages"] == 0, written
    status = await b.query("sync.status", {})
    assert {r["id"] for r in status["lastPull"]["refused"]} == wanted, status


async def case_conflicting_revisions_merge_by_clock_and_are_resolved_on_the_server(
    ctx: Ctx,
) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    tid = await a.create_thread("Original", tags=["one"])
    await a.append(tid, "user_message", text("hi"))
    await push(a)
    base = (await all_docs(ctx, database))[f"threads:{tid}"]
    clocks = dict(base["clocks"])
    later = "9000000000000-0000-zz"
    sooner = "8000000000000-0000-yy"
    left = {**base["record"], "title": "Left title", "tags": ["left"]}
    right = {**base["record"], "title": "Right title", "tags": ["right"]}
    leaves = [
        (left, {**clocks, "title": later, "tags": sooner}, "2-" + "a" * 32),
        (right, {**clocks, "title": sooner, "tags": later}, "2-" + "b" * 32),
    ]
    docs = []
    for record, leaf_clocks, rev in leaves:
        doc = {"_id": f"threads:{tid}", "_rev": rev, "table": "threads", "v": 1}
        doc.update(record=record, clocks=leaf_clocks)
        doc["_revisions"] = {"start": 2, "ids": [rev[2:], base["_rev"][2:]]}
        docs.append(doc)
    url = f"{server()}/{database}/_bulk_docs"
    status, said = await http_json(ctx, "POST", url, {"docs": docs, "new_edits": False})
    assert status == 201, (status, said)
    report = await pull(b)
    assert report["resolved"] == 1 and report["refused"] == [], report
    thread = await _thread(b, tid)
    assert thread["title"] == "Left title" and thread["tags"] == ["right"], thread  # by clock
    status, doc = await http_json(ctx, "GET", f"{server()}/{database}/threads:{tid}?conflicts=true")
    assert status == 200 and "_conflicts" not in doc, doc  # resolved: one leaf left
    assert doc["_rev"].startswith("3-") and doc["record"]["title"] == "Left title", doc
    assert (await push(b))["pushed"] == 0  # the state holds the resolved revision
    await pull(a)
    await _assert_converged(a, b)


async def case_attachment_bytes_come_while_the_budget_has_room_else_stay_on_the_server(
    ctx: Ctx,
) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    tid = await a.create_thread("Files")
    await a.append(tid, "user_message", text("see attached"))
    data = bytes(range(256)) * 8
    payload = {"threadId": tid, "kind": "file", "mime": "text/plain", "dataBase64": b64(data)}
    aid = (await a.command("attachment.put", payload))["attachmentId"]
    await push(a)
    report = await pull(b)
    assert report["refused"] == [] and report["onServer"] == [], report
    pulled = await b.db.table("attachments").get(aid)
    assert pulled is not None and await blob_bytes(pulled["bytes"]) == data  # the same bytes
    await _assert_converged(a, b)
    big = {**payload, "dataBase64": b64(b"x" * 5000)}
    second = (await a.command("attachment.put", big))["attachmentId"]
    await push(a)
    budget = ctx.host.storage.budget
    ctx.host.storage.set_budget(len(data) + 100)  # no room for 5,000 more bytes
    try:
        later = await pull(b)
    finally:
        ctx.host.storage.set_budget(budget)
    assert later["onServer"] == [f"attachments:{second}"], later
    assert await b.db.table("attachments").get(second) is None  # kept on the server
    assert (await push(b))["deleted"] == 0  # not here, but on the server: nothing deleted
    status, doc = await http_json(ctx, "GET", f"{server()}/{database}/attachments:{second}")
    assert status == 200 and "_deleted" not in doc, doc


async def case_an_append_pushed_after_the_thread_was_deleted_elsewhere_is_deleted_too(
    ctx: Ctx,
) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    gone = await a.create_thread("Gone")
    await a.append(gone, "user_message", text("first"))
    await push(a)
    await pull(b)
    await a.command("thread.delete", {"threadId": gone})
    await push(a)
    late = (await b.append(gone, "user_message", text("pushed before B pulled")))["nodeId"]
    await push(b)  # the thread's document now has a deleted leaf and a live one
    report = await pull(a)
    assert report["refused"] == [] and report["written"] == 0, report
    assert await _thread(a, gone) is None and await _nodes(a, gone) == {}  # deletion wins
    status, doc = await http_json(ctx, "GET", f"{server()}/{database}/nodes:{late}")
    assert status == 404, (status, doc)  # deleted on the server too
    status, doc = await http_json(ctx, "GET", f"{server()}/{database}/threads:{gone}")
    assert status == 404, (status, doc)  # its live leaf was given a deleted child
    back = await pull(b)
    assert back["deleted"] == 1, back  # B's own cascade
    assert await _thread(b, gone) is None and await _nodes(b, gone) == {}
    await push(b)
    await pull(a)
    await _assert_converged(a, b)
    docs = await all_docs(ctx, database)
    assert not any(gone in repr(d.get("record")) for d in docs.values()), sorted(docs)


async def case_library_records_and_plugin_asset_bytes_pull_and_follow_edits(ctx: Ctx) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    css = b"body { color: teal }"
    asset = {"path": "a/b.css", "kind": "style", "mime": "text/css", "dataBase64": b64(css)}
    plugin = {"id": "p1", "name": "n", "version": "1", "manifest": {"title": "m"}}
    await a.command("plugin.install", {"plugin": plugin, "assets": [asset]})
    skill = {"id": "s1", "name": "n", "body": "b", "description": "d", "sourceRef": "r"}
    await a.command("skill.put", {"skill": skill})
    await push(a)
    report = await pull(b)
    assert report["refused"] == [] and report["written"] == 3, report
    await _assert_converged(a, b)
    [row] = await b.db.table("pluginAssets").to_collection().to_list()
    assert bytes(row["bytes"]) == css  # the bytes came with the record
    await a.command("skill.put", {"skill": {**skill, "body": "changed"}})
    await push(a)
    await pull(b)
    assert (await b.db.table("skills").get("s1"))["body"] == "changed"
    await a.command("skill.delete", {"skillId": "s1"})
    await push(a)
    gone = await pull(b)
    assert gone["written"] == 1 and await b.db.table("skills").get("s1") is None, gone
    await _assert_converged(a, b)


async def case_approved_origins_stay_on_their_device_whatever_the_server_says(ctx: Ctx) -> None:
    # scopeOrigins is a grant of this device's user: never pushed, never taken from a pull.
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    tid = await a.create_thread("Reading a page")
    await a.command(
        "thread.update", {"threadId": tid, "patch": {"scopeOrigins": ["https://a.example"]}}
    )
    await push(a)
    pushed = (await all_docs(ctx, database))[f"threads:{tid}"]
    assert "scopeOrigins" not in pushed["record"], pushed
    # A hostile server grants an origin in the thread's document: B does not take it.
    pushed["record"]["scopeOrigins"] = ["https://evil.example"]
    url = f"{server()}/{database}/threads:{tid}"
    status, said = await http_json(ctx, "PUT", url, pushed)
    assert status == 201, (status, said)
    report = await pull(b)
    assert report["refused"] == [], report
    assert (await _thread(b, tid))["scopeOrigins"] == []
    # And A, pulling the same document back, keeps its own grant.
    await pull(a)
    assert (await _thread(a, tid))["scopeOrigins"] == ["https://a.example"]
