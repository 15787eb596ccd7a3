"""``sync.push``: what a store pushes is on a real CouchDB-compatible server, as mapped.

The server is express-pouchdb over PouchDB's memory adapter (tests/support/couch_server.cjs);
every case reads it back with plain HTTP GETs through the case's host.
"""

from __future__ import annotations

import base64
import hashlib
import urllib.parse
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import answer, b64, text
from behavior.sync import (
    AUTH_PASSWORD,
    AUTH_USER,
    all_docs,
    http_json,
    new_database,
    push,
    server,
    synced_store,
)
from panelot.errors import NetworkError
from panelot.idb.errors import ValidationError
from panelot.store import PanelotStore
from panelot.sync.docid import SYNCED_TABLES
from panelot.sync.mapping import LOCAL_THREAD_FIELDS
from panelot.sync.revs import next_rev


async def _thread_with_messages(store: PanelotStore) -> tuple[str, list[str]]:
    tid = await store.create_thread("Trip to Lisbon", tags=["travel"])
    a = await store.append(tid, "user_message", text("Where should we eat?"))
    b = await store.append(tid, "assistant_message", answer("Try the pastéis, 这个很好"))
    return tid, [a["nodeId"], b["nodeId"]]


async def _records(store: PanelotStore, table: str) -> dict[str, dict[str, Any]]:
    rows = await store.db.table(table).to_collection().to_list()
    return {row["id"]: row for row in rows}


def _md5_digest(data: bytes) -> str:
    return "md5-" + base64.b64encode(hashlib.md5(data).digest()).decode()


async def _put_attachment(store: PanelotStore, tid: str, data: bytes) -> str:
    payload = {"threadId": tid, "kind": "file", "mime": "text/plain", "dataBase64": b64(data)}
    return str((await store.command("attachment.put", payload))["attachmentId"])


async def case_a_pushed_store_is_on_the_server_with_the_mapping_ids_and_bodies(ctx: Ctx) -> None:
    store, database = await synced_store(ctx)
    tid, nids = await _thread_with_messages(store)
    await store.command("memory.write", {"key": "diet", "value": "vegetarian"})
    report = await push(store)
    threads, nodes = await _records(store, "threads"), await _records(store, "nodes")
    memories = await _records(store, "memories")
    expected = (
        {f"threads:{k}" for k in threads}
        | {f"nodes:{k}" for k in nodes}
        | {f"memories:{k}" for k in memories}
    )
    docs = await all_docs(ctx, database)
    assert set(docs) == expected, sorted(docs)
    assert set(nids) <= set(nodes)
    assert report["pushed"] == len(expected) and report["deleted"] == 0, report
    assert report["unchanged"] == 0 and report["batches"] == 1, report
    for nid, node in nodes.items():
        doc = docs[f"nodes:{nid}"]
        assert doc["table"] == "nodes" and doc["v"] == 1 and doc["record"] == node, doc
        assert doc["_rev"].startswith("1-") and "clocks" not in doc
    thread = docs[f"threads:{tid}"]
    local = {k: v for k, v in threads[tid].items() if k not in LOCAL_THREAD_FIELDS}
    assert thread["record"] == local, (thread["record"], local)
    assert set(thread["clocks"]) >= {"title", "tags", "leafId", "pinned", "archived"}
    assert len(set(thread["clocks"].values())) == len(thread["clocks"])  # never a tie
    [memory] = [d for d in docs.values() if d["table"] == "memories"]
    assert memory["record"]["value"] == "vegetarian" and set(memory["clocks"]) == {"record"}


async def case_pushing_twice_sends_nothing_new(ctx: Ctx) -> None:
    store, database = await synced_store(ctx)
    await _thread_with_messages(store)
    first = await push(store)
    before = {k: d["_rev"] for k, d in (await all_docs(ctx, database)).items()}
    second = await push(store)
    after = {k: d["_rev"] for k, d in (await all_docs(ctx, database)).items()}
    assert after == before
    assert second["pushed"] == 0 and second["batches"] == 0 and second["deleted"] == 0, second
    assert second["unchanged"] == first["pushed"] == len(before), (first, second)


async def case_a_change_after_a_push_makes_a_deterministic_second_revision(ctx: Ctx) -> None:
    store, database = await synced_store(ctx)
    tid, _ = await _thread_with_messages(store)
    await push(store)
    first = (await all_docs(ctx, database))[f"threads:{tid}"]
    await store.command("thread.update", {"threadId": tid, "patch": {"title": "Lisbon, May"}})
    report = await push(store)
    assert report["pushed"] == 1 and report["unchanged"] >= 2, report
    second = (await all_docs(ctx, database))[f"threads:{tid}"]
    assert second["_rev"].startswith("2-"), second["_rev"]
    assert second["record"]["title"] == "Lisbon, May"
    assert second["clocks"]["title"] > first["clocks"]["title"]  # a new clock for the title
    assert second["clocks"]["tags"] == first["clocks"]["tags"]  # the others keep theirs
    body = {k: second[k] for k in ("table", "v", "record", "clocks")}
    assert second["_rev"] == next_rev(first["_rev"], False, body)  # anyone can recompute it
    status, revs = await http_json(ctx, "GET", f"{server()}/{database}/threads:{tid}?revs=true")
    assert status == 200 and revs["_revisions"]["start"] == 2, revs
    assert revs["_revisions"]["ids"][1] == first["_rev"].partition("-")[2]  # one history


async def case_an_attachments_bytes_go_up_once(ctx: Ctx) -> None:
    store, database = await synced_store(ctx)
    tid, _ = await _thread_with_messages(store)
    data = b"the bytes of a receipt \x00\xff" * 50
    aid = await _put_attachment(store, tid, data)
    await push(store)
    doc_url = f"{server()}/{database}/attachments:{aid}"
    status, doc = await http_json(ctx, "GET", doc_url)
    assert status == 200 and "bytes" not in doc["record"], doc
    stub = doc["_attachments"]["bytes"]
    assert stub["digest"] == _md5_digest(data) and stub["length"] == len(data), stub
    assert stub["content_type"] == "text/plain" and stub["revpos"] == 1, stub
    response = await ctx.host.http(_get(doc_url + "/bytes"))
    assert response.status == 200 and response.body == data
    # A second revision of the record carries the bytes as a stub: revpos stays 1.
    await store.db.table("attachments").update(aid, {"meta": {"note": "kept"}})
    report = await push(store)
    assert report["pushed"] == 1, report
    status, doc = await http_json(ctx, "GET", doc_url)
    assert doc["_rev"].startswith("2-") and doc["record"]["meta"] == {"note": "kept"}, doc
    assert doc["_attachments"]["bytes"]["revpos"] == 1, doc["_attachments"]
    assert doc["_attachments"]["bytes"]["digest"] == _md5_digest(data)


def _get(url: str) -> Any:
    from panelot.host import HttpRequest

    return HttpRequest("GET", url)


async def case_local_fields_and_tables_never_reach_the_server(ctx: Ctx) -> None:
    store, database = await synced_store(ctx)
    tid, nids = await _thread_with_messages(store)
    cut = {"model": "m1", "itemKeys": [], "contextBudget": None, "at": 1}
    await store.db.table("threads").update(tid, {"requestCut": cut})
    aid = await _put_attachment(store, tid, b"evictable")
    await store.append(
        tid,
        "user_message",
        {"content": [{"type": "file", "attachmentId": aid, "name": "a.txt"}]},
    )
    await push(store)
    await store.command("attachment.evict", {"budget": 0})  # marks the blocks evicted
    assert "'evicted': True" in repr(await _records(store, "nodes"))  # here, locally
    report = await push(store)
    docs = await all_docs(ctx, database)
    assert {k.split(":", 1)[0] for k in docs} <= set(SYNCED_TABLES), sorted(docs)
    assert not any(k.startswith(("commandReceipts", "runs", "approvals")) for k in docs)
    thread = docs[f"threads:{tid}"]["record"]
    assert not set(thread) & set(LOCAL_THREAD_FIELDS), thread
    local = (await _records(store, "threads"))[tid]
    assert {"requestCut", "stats"} <= set(local), local  # they exist here, not there
    assert f"attachments:{aid}" in docs  # eviction is local: the server keeps it
    for doc in docs.values():
        assert "evicted" not in repr(doc["record"]), doc  # the flag never goes up
    assert report["deleted"] == 0 and report["pushed"] == 0, report  # nothing synced changed


async def case_a_deleted_thread_is_deleted_on_the_server(ctx: Ctx) -> None:
    store, database = await synced_store(ctx)
    kept, _ = await _thread_with_messages(store)
    gone, gone_nodes = await _thread_with_messages(store)
    aid = await _put_attachment(store, gone, b"goes with its thread")
    await push(store)
    await store.command("thread.delete", {"threadId": gone})
    report = await push(store)
    assert report["deleted"] == 2 + len(gone_nodes), report
    docs = await all_docs(ctx, database)
    assert f"threads:{kept}" in docs and f"threads:{gone}" not in docs
    assert not any(k.startswith("nodes:") and k[6:] in gone_nodes for k in docs)
    status, doc = await http_json(ctx, "GET", f"{server()}/{database}/attachments:{aid}")
    assert status == 404, (status, doc)
    keys = [f"threads:{gone}", f"attachments:{aid}", *(f"nodes:{n}" for n in gone_nodes)]
    status, listed = await http_json(
        ctx, "POST", f"{server()}/{database}/_all_docs", {"keys": keys}
    )
    for row in listed["rows"]:  # deleted documents (tombstones), not missing ones
        assert row["value"]["deleted"] is True and row["value"]["rev"].startswith("2-"), row
    again = await push(store)
    assert again["deleted"] == 0 and again["pushed"] == 0, again


async def case_http_to_a_non_loopback_host_is_refused_naming_server(ctx: Ctx) -> None:
    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)
    for url in ("http://couch.example", "ftp://127.0.0.1", "https://u:p@couch.example"):
        error = await raises(
            ValidationError,
            store.command("sync.configure", {"server": url, "database": "panelot"}),
        )
        assert error.field is not None and error.field.endswith("server"), (url, error.field)
    error = await raises(
        ValidationError,
        store.command("sync.configure", {"server": server(), "database": "Bad Name"}),
    )
    assert error.field is not None and error.field.endswith("database"), error.field
    for url in ("https://couch.example/", "http://localhost:5984", "http://[::1]:5984"):
        saved = await store.command("sync.configure", {"server": url, "database": "panelot"})
        assert saved == {"server": url.rstrip("/"), "database": "panelot"}, saved


async def case_a_401_is_a_clear_error_without_the_password(ctx: Ctx) -> None:
    store, database = await synced_store(ctx, auth=True)
    await _thread_with_messages(store)
    report = await push(store)  # the right password: accepted
    assert report["pushed"] == 3, report
    wrong = "wrong-Pässword-71c0"
    args = {"server": server(auth=True), "database": database, "user": AUTH_USER}
    saved = await store.command("sync.configure", {**args, "password": wrong})
    assert wrong not in repr(saved) and AUTH_PASSWORD not in repr(saved)
    error = await raises(NetworkError, push(store))
    message = str(error)
    assert "401" in message and "password" in message, message
    token = base64.b64encode(f"{AUTH_USER}:{wrong}".encode()).decode()
    for secret in (wrong, AUTH_PASSWORD, token):
        assert secret not in message and secret not in repr(error.to_json()), message
    status = await store.query("sync.status")
    assert wrong not in repr(status) and status["user"] == AUTH_USER, status
    envelope = await store.send(
        {"type": "sync.push", "clientId": "c", "submissionId": "s401", "payload": {}}
    )
    assert envelope["status"] == "failed", envelope
    assert wrong not in repr(envelope) and token not in repr(envelope), envelope


async def case_the_checkpoint_is_on_both_sides(ctx: Ctx) -> None:
    store, database = await synced_store(ctx)
    await _thread_with_messages(store)
    report = await push(store)
    checkpoint = report["checkpoint"]
    assert checkpoint["id"].startswith("_local/") and checkpoint["seq"] == 1, checkpoint
    status, doc = await http_json(ctx, "GET", f"{server()}/{database}/{checkpoint['id']}")
    assert status == 200 and doc["last_seq"] == 1, (status, doc)
    second = await push(store)
    assert second["checkpoint"]["id"] == checkpoint["id"]  # one replication id
    status, doc = await http_json(ctx, "GET", f"{server()}/{database}/{checkpoint['id']}")
    assert doc["last_seq"] == 2, doc
    state = await store.query("sync.status")
    assert state["lastPush"] == second["checkpoint"] and state["configured"], state
    assert state["documents"] == report["pushed"], state


async def case_a_missing_database_is_named(ctx: Ctx) -> None:
    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)
    name = await new_database(ctx)
    args = {"server": server(), "database": name + "-absent"}
    await store.command("sync.configure", args)
    error = await raises(NetworkError, push(store))
    assert (error.field or "").endswith("database") and "does not exist" in str(error), error


async def case_library_records_push_and_their_deletions_follow(ctx: Ctx) -> None:
    store, database = await synced_store(ctx)
    css = b"body { color: teal }"
    await store.command(
        "plugin.install",
        {
            "plugin": {"id": "p1", "name": "n", "version": "1", "manifest": {"title": "m"}},
            "assets": [
                {"path": "a/b.css", "kind": "style", "mime": "text/css", "dataBase64": b64(css)}
            ],
        },
    )
    skill = {"id": "s1", "name": "n", "body": "b", "description": "d", "sourceRef": "r"}
    await store.command("skill.put", {"skill": skill})
    report = await push(store)
    docs = await all_docs(ctx, database)
    [asset_id] = [k for k in docs if k.startswith("pluginAssets:")]
    assert {"plugins:p1", "skills:s1", asset_id} == set(docs), sorted(docs)
    assert report["pushed"] == 3, report
    asset = docs[asset_id]
    assert "bytes" not in asset["record"] and asset["record"]["path"] == "a/b.css"
    assert asset["_attachments"]["bytes"]["digest"] == _md5_digest(css)
    assert asset["_attachments"]["bytes"]["content_type"] == "text/css"
    assert set(docs["skills:s1"]["clocks"]) == {"record"}
    quoted = urllib.parse.quote(asset_id, safe="")  # an asset's id may hold '/'
    response = await ctx.host.http(_get(f"{server()}/{database}/{quoted}/bytes"))
    assert response.status == 200 and response.body == css, response.status
    await store.command("skill.delete", {"skillId": "s1"})
    report = await push(store)
    assert report["deleted"] == 1 and report["pushed"] == 0, report
    assert "skills:s1" not in await all_docs(ctx, database)
