"""Sync faults: the server fails mid-push or mid-pull, then recovers.

Each case injects a fault through the test server's fault switch
(:func:`behavior.sync.fault`, documented at the top of tests/support/couch_server.cjs),
checks the command fails with a ``NetworkError`` that names the call and never the
password, clears the fault, syncs again and checks that every record arrived exactly
once (one revision of each document on the server, no conflict; every node of a
pulled thread here), that no thread landed half (its nodes all there, or the thread
absent) and that the checkpoint did not advance past what was applied.
"""

from __future__ import annotations

import base64
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import answer, b64, text
from behavior.sync import (
    AUTH_PASSWORD,
    AUTH_USER,
    clear_faults,
    fault,
    http_json,
    pull,
    push,
    second_store,
    server,
    synced_store,
)
from panelot.errors import NetworkError
from panelot.store import PanelotStore
from panelot.sync.docid import SYNCED_TABLES
from panelot.sync.mapping import local_view
from panelot.sync.push import replication_id


async def _thread_with(store: PanelotStore, title: str, turns: int) -> str:
    tid = await store.create_thread(title)
    for i in range(turns):
        await store.append(tid, "user_message", text(f"{title}: question {i}"))
        await store.append(tid, "assistant_message", answer(f"{title}: answer {i}"))
    return tid


async def _records(store: PanelotStore) -> dict[str, dict[str, Any]]:
    """Every synced record here, by document id, minus what stays on the device."""
    out: dict[str, dict[str, Any]] = {}
    for table in SYNCED_TABLES:
        for row in await store.db.table(table).to_collection().to_list():
            out[f"{table}:{row['id']}"] = local_view(table, row)
    return out


async def _server_docs(ctx: Ctx, database: str, *, auth: bool = False) -> dict[str, Any]:
    """The server's documents by id; each has one revision (``1-``), and no conflict."""
    url = f"{server(auth)}/{database}/_all_docs?include_docs=true&conflicts=true"
    status, said = await http_json(ctx, "GET", url, auth=auth)
    assert status == 200, (status, said)
    docs = {row["id"]: row["doc"] for row in said["rows"]}
    for did, doc in docs.items():
        assert doc["_rev"].startswith("1-"), (did, doc["_rev"])  # sent once
        assert "_conflicts" not in doc, (did, doc)
    return docs


async def _server_checkpoint(
    ctx: Ctx, store: PanelotStore, database: str, direction: str, *, auth: bool = False
) -> Any:
    """The server's ``_local`` checkpoint of ``store`` in ``direction`` (``None``: none)."""
    device = (await store.query("sync.status"))["device"]
    local_id = replication_id(device, server(auth), database, direction)
    url = f"{server(auth)}/{database}/_local/{local_id}"
    status, said = await http_json(ctx, "GET", url, auth=auth)
    assert status in (200, 404), (status, said)
    return said if status == 200 else None


def _assert_whole_threads(
    records: dict[str, dict[str, Any]], expected: dict[str, set[str]]
) -> None:
    """Each thread of ``expected`` ({thread id: its node ids}) is here whole, or absent."""
    for tid, nodes in expected.items():
        here = {
            r["id"] for k, r in records.items() if k.startswith("nodes:") and r["threadId"] == tid
        }
        assert here == (nodes if f"threads:{tid}" in records else set()), (tid, sorted(here))


async def _node_ids(store: PanelotStore, tid: str) -> set[str]:
    rows = await store.db.table("nodes").where("threadId").equals(tid).to_list()
    return {row["id"] for row in rows}


async def _push_with_answer_cut(ctx: Ctx, store: PanelotStore, database: str) -> BaseException:
    """A push whose ``_bulk_docs`` answer is cut (the server took the batch): its error."""
    await clear_faults(ctx)
    await fault(ctx, f"^POST /{database}/_bulk_docs", "cut")
    try:
        return await raises(NetworkError, push(store))
    finally:
        assert await clear_faults(ctx) == []


async def case_a_500_mid_push_keeps_the_batches_sent_and_the_next_push_sends_the_rest(
    ctx: Ctx,
) -> None:
    store, database = await synced_store(ctx)
    assert store.sync is not None
    store.sync.batch_docs = 2
    await _thread_with(store, "Batches", 2)  # a thread and 4 nodes
    await store.command("memory.write", {"key": "k", "value": "v"})  # 6 documents: 3 batches
    await clear_faults(ctx)
    await fault(ctx, f"^POST /{database}/_bulk_docs", "500", after=1)
    try:
        error = await raises(NetworkError, push(store))
    finally:
        assert await clear_faults(ctx) == []  # the fault was served
    message = str(error)
    assert "_bulk_docs" in message and "500" in message, message
    on_server = await _server_docs(ctx, database)
    assert len(on_server) == 2, sorted(on_server)  # the first batch, and only it
    status = await store.query("sync.status")
    assert status["lastPush"] is None, status  # no checkpoint yet, on either side
    assert await _server_checkpoint(ctx, store, database, "push") is None
    assert status["documents"] == 2, status  # the state holds what the server took
    report = await push(store)
    assert report["pushed"] == 4 and report["batches"] == 2, report  # the rest, once
    on_server = await _server_docs(ctx, database)
    assert on_server.keys() == (await _records(store)).keys(), sorted(on_server)
    assert report["checkpoint"]["seq"] == 1, report
    assert (await _server_checkpoint(ctx, store, database, "push"))["last_seq"] == 1
    assert (await push(store))["pushed"] == 0


async def case_a_push_whose_answer_is_cut_sends_nothing_twice(ctx: Ctx) -> None:
    # The server took the batch, the answer was cut: the next push finds the revisions
    # there (_revs_diff) and sends only what the server lacks.
    store, database = await synced_store(ctx)
    assert store.sync is not None
    store.sync.batch_docs = 3
    await _thread_with(store, "Cut answer", 2)
    error = await _push_with_answer_cut(ctx, store, database)
    assert "_bulk_docs" in str(error), str(error)
    assert len(await _server_docs(ctx, database)) == 3  # the server has the first batch
    assert (await store.query("sync.status"))["lastPush"] is None
    report = await push(store)
    assert report["pushed"] == 2 and report["unchanged"] == 3, report
    assert (await _server_docs(ctx, database)).keys() == (await _records(store)).keys()


async def case_a_dropped_connection_mid_push_loses_nothing(ctx: Ctx) -> None:
    store, database = await synced_store(ctx)
    assert store.sync is not None
    store.sync.batch_docs = 2
    await _thread_with(store, "Dropped", 2)
    await clear_faults(ctx)
    await fault(ctx, f"^POST /{database}/_bulk_docs", "drop", after=1, times=5)
    try:
        error = await raises(NetworkError, push(store))
    finally:
        await clear_faults(ctx)  # a browser may retry a dropped request: not counted
    assert "_bulk_docs" in str(error), str(error)
    assert len(await _server_docs(ctx, database)) == 2
    report = await push(store)
    assert report["pushed"] == 3, report
    assert (await _server_docs(ctx, database)).keys() == (await _records(store)).keys()


async def case_a_401_mid_push_names_the_password_and_never_holds_it(ctx: Ctx) -> None:
    # The credentials changed on the server between two batches.
    store, database = await synced_store(ctx, auth=True)
    assert store.sync is not None
    store.sync.batch_docs = 2
    await _thread_with(store, "Credentials", 2)
    await clear_faults(ctx, auth=True)
    await fault(ctx, f"^POST /{database}/_bulk_docs", "401", auth=True, after=1, times=50)
    error = await raises(NetworkError, push(store))
    message = str(error)
    token = base64.b64encode(f"{AUTH_USER}:{AUTH_PASSWORD}".encode()).decode()
    assert "401" in message and getattr(error, "field", None) == "password", message
    assert AUTH_PASSWORD not in message and token not in message, message
    assert AUTH_PASSWORD not in repr(error) and token not in repr(error)
    error = await raises(NetworkError, push(store))  # still refused: nothing more sent
    assert "401" in str(error)
    await clear_faults(ctx, auth=True)  # the user's credentials work again
    assert len(await _server_docs(ctx, database, auth=True)) == 2
    report = await push(store)
    assert report["pushed"] == 3, report
    docs = await _server_docs(ctx, database, auth=True)
    assert docs.keys() == (await _records(store)).keys()


async def _pushed_pair(ctx: Ctx) -> tuple[PanelotStore, PanelotStore, str, dict[str, set[str]]]:
    """A pushed two threads (with an attachment) and a skill; B syncs with the same database."""
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    first = await _thread_with(a, "First", 2)
    second = await _thread_with(a, "Second", 1)
    data = b"attached bytes " * 20
    payload = {"threadId": first, "kind": "file", "mime": "text/plain", "dataBase64": b64(data)}
    await a.command("attachment.put", payload)
    skill = {"id": "s1", "name": "n", "body": "b", "description": "d", "sourceRef": "r"}
    await a.command("skill.put", {"skill": skill})
    await push(a)
    await clear_faults(ctx)
    threads = {first: await _node_ids(a, first), second: await _node_ids(a, second)}
    return a, b, database, threads


async def _failed_pull_then_recovered(
    ctx: Ctx, pattern: str, kind: str, names: str, **extra: Any
) -> str:
    """B's pull fails with ``kind`` on ``pattern``, writes nothing, then a pull gets all."""
    a, b, database, threads = await _pushed_pair(ctx)
    await fault(ctx, pattern.format(db=database), kind, **extra)
    try:
        error = await raises(NetworkError, pull(b))
    finally:
        await clear_faults(ctx)
    assert names in str(error), str(error)
    assert await _records(b) == {}  # nothing written
    status = await b.query("sync.status")
    assert status["lastPull"] is None and status["documents"] == 0, status
    assert await _server_checkpoint(ctx, b, database, "pull") is None
    report = await pull(b)
    assert report["refused"] == [] and report["onServer"] == [], report
    mine, theirs = await _records(a), await _records(b)
    assert mine == theirs, (sorted(mine), sorted(theirs))  # every record, once
    _assert_whole_threads(theirs, threads)
    again = await pull(b)
    assert again["pulled"] == 0 and again["written"] == 0, again
    await _server_docs(ctx, database)  # B sent nothing back: one revision each
    return str(error)


async def case_a_server_error_on_bulk_get_mid_pull_writes_nothing_then_all_arrives(
    ctx: Ctx,
) -> None:
    said = await _failed_pull_then_recovered(ctx, "^POST /{db}/_bulk_get", "500", "_bulk_get")
    assert ": 500: " in said, said


async def case_a_cut_changes_feed_writes_nothing_then_all_arrives(ctx: Ctx) -> None:
    await _failed_pull_then_recovered(ctx, "^GET /{db}/_changes", "cut", "_changes")


async def case_a_cut_bulk_get_writes_nothing_then_all_arrives(ctx: Ctx) -> None:
    await _failed_pull_then_recovered(ctx, "^POST /{db}/_bulk_get", "cut", "_bulk_get")


async def case_a_cut_attachment_download_is_no_refusal_and_all_arrives_after(ctx: Ctx) -> None:
    # Cut bytes are a network failure, not a document to refuse (a refusal would move
    # the checkpoint past an attachment whose bytes never change: lost here for good).
    await _failed_pull_then_recovered(ctx, "^GET /{db}/attachments", "cut", "attachments")


async def case_a_dropped_attachment_download_writes_nothing_then_all_arrives(ctx: Ctx) -> None:
    await _failed_pull_then_recovered(ctx, "^GET /{db}/attachments", "drop", "attachments", times=5)


async def case_a_failed_pull_checkpoint_keeps_the_old_one_and_nothing_comes_twice(
    ctx: Ctx,
) -> None:
    # The server stops after the records were written here, before the checkpoint.
    a, b, database, threads = await _pushed_pair(ctx)
    await fault(ctx, f"^PUT /{database}/_local/", "500", times=5)
    try:
        error = await raises(NetworkError, pull(b))
    finally:
        await clear_faults(ctx)
    assert "_local" in str(error) and "500" in str(error), str(error)
    assert await _records(b) == await _records(a)  # written, whole
    _assert_whole_threads(await _records(b), threads)
    assert (await b.query("sync.status"))["lastPull"] is None  # not advanced
    assert await _server_checkpoint(ctx, b, database, "pull") is None
    report = await pull(b)
    assert report["written"] == 0 and report["refused"] == [], report  # nothing twice
    assert report["checkpoint"]["since"], report
    assert await _records(b) == await _records(a)
    assert (await push(b))["pushed"] == 0


async def case_a_slow_server_beyond_the_timeout_is_a_network_error(ctx: Ctx) -> None:
    a, b, database, threads = await _pushed_pair(ctx)
    assert b.sync is not None
    b.sync.timeout = 1.0  # the server holds the request until the client gives up
    await fault(ctx, f"^GET /{database}/_changes", "slow")
    try:
        error = await raises(NetworkError, pull(b))
    finally:
        await clear_faults(ctx)
    assert "_changes" in str(error), str(error)
    assert await _records(b) == {}
    b.sync.timeout = 30.0
    report = await pull(b)
    assert report["refused"] == [], report
    assert await _records(b) == await _records(a)
    _assert_whole_threads(await _records(b), threads)


async def case_a_server_dripping_its_answer_is_given_up_at_the_timeout(ctx: Ctx) -> None:
    # One byte every 100 ms: every read is quick, only the whole call's deadline ends it.
    a, b, database, threads = await _pushed_pair(ctx)
    assert b.sync is not None
    b.sync.timeout = 1.0
    await fault(ctx, f"^POST /{database}/_bulk_get", "drip")
    try:
        error = await raises(NetworkError, pull(b))
    finally:
        await clear_faults(ctx)
    assert "_bulk_get" in str(error) and "within 1 s" in str(error), str(error)
    assert await _records(b) == {}
    assert (await b.query("sync.status"))["lastPull"] is None
    b.sync.timeout = 30.0
    assert (await pull(b))["refused"] == []
    assert await _records(b) == await _records(a)
    _assert_whole_threads(await _records(b), threads)


async def case_a_change_after_a_lost_push_answer_follows_the_sent_revision(ctx: Ctx) -> None:
    # The server took a batch whose answer never came (a cut answer, or the browser killed
    # before it was recorded), then the thread changed here: the next push sends the
    # change as a child of the revision the server may have, never a sibling of it.
    store, database = await synced_store(ctx)
    tid = await _thread_with(store, "Lost answer", 1)
    await _push_with_answer_cut(ctx, store, database)
    assert len(await _server_docs(ctx, database)) == 3  # taken, the answer lost
    await store.command("thread.update", {"threadId": tid, "patch": {"title": "Renamed"}})
    report = await push(store)
    assert report["pushed"] == 1 and report["unchanged"] == 2, report
    url = f"{server()}/{database}/threads%3A{tid}?conflicts=true&deleted_conflicts=true&revs=true"
    status, doc = await http_json(ctx, "GET", url)
    assert status == 200 and "_conflicts" not in doc, doc  # one leaf, no sibling
    assert doc["record"]["title"] == "Renamed" and doc["_rev"].startswith("2-"), doc
    assert len(doc["_revisions"]["ids"]) == 2, doc  # a child of the revision sent first
    assert (await push(store))["pushed"] == 0
    other = await second_store(ctx, database)
    await pull(other)
    assert (await other.db.table("threads").get(tid))["title"] == "Renamed"


async def case_a_thread_deleted_after_a_lost_push_answer_is_deleted_on_the_server(
    ctx: Ctx,
) -> None:
    # The server took the thread, the answer was lost, then the thread was deleted here:
    # the state never knew the server had it, and the next push still deletes it there
    # (a deleted child of the revision sent), so no device gets it back.
    store, database = await synced_store(ctx)
    tid = await _thread_with(store, "Deleted after", 1)
    await _push_with_answer_cut(ctx, store, database)
    assert len(await _server_docs(ctx, database)) == 3
    await store.command("thread.delete", {"threadId": tid})
    assert await store.db.table("threads").get(tid) is None
    report = await push(store)
    assert report["deleted"] == 3 and report["pushed"] == 0, report
    assert await _server_docs(ctx, database) == {}  # every document deleted, no leaf left
    url = f"{server()}/{database}/threads%3A{tid}?open_revs=all"
    status, leaves = await http_json(ctx, "GET", url)
    assert status == 200 and len(leaves) == 1 and leaves[0]["ok"]["_deleted"], leaves
    assert (await push(store))["deleted"] == 0
    other = await second_store(ctx, database)
    await pull(other)
    assert await other.db.table("threads").get(tid) is None
