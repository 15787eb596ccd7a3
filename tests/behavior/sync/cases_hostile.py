"""Hostile server answers: refused, reported, nothing written.

Store A pushes a thread; the test server's fault switch (:func:`behavior.sync.fault`)
then serves B's pull crafted answers, the same bytes on both cores: malformed JSON,
a ``_bulk_get`` whose documents are not the ones asked for, answers over the size
bound or nested deeper than ``MAX_ANSWER_DEPTH`` (checked before parsing). Documents the domain would refuse (over its
limits, bad numbers, nested too deep) are put on the server with plain HTTP. A whole
answer that cannot be read fails the pull (``NetworkError``, nothing written, the
checkpoint kept); a document that cannot be taken is refused by id and the pull goes on.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import answer, text
from behavior.sync import clear_faults, fault, http_json, pull, push, server, synced_store
from panelot.errors import NetworkError
from panelot.store import PanelotStore
from panelot.sync.couch import MAX_ANSWER_DEPTH, MAX_RESPONSE
from panelot.sync.docid import SYNCED_TABLES
from panelot.sync.fetch import MAX_DOC_DEPTH

_DEEP = 200
"""A document this deep is parsed (its answer is within ``MAX_ANSWER_DEPTH``), and
refused by id for its depth before anything walks it."""
assert MAX_DOC_DEPTH < _DEEP < MAX_ANSWER_DEPTH - 10


async def _pair(ctx: Ctx) -> tuple[PanelotStore, PanelotStore, str, str]:
    """A pushed a thread of two nodes; B syncs with the same database. ``(a, b, db, tid)``."""
    a, database = await synced_store(ctx)
    b = await ctx.store()
    assert b.sync is not None
    ctx.names.append(b.sync.state_name)
    await b.command("sync.configure", {"server": server(), "database": database})
    tid = await a.create_thread("Fine")
    await a.append(tid, "user_message", text("question"))
    await a.append(tid, "assistant_message", answer("reply"))
    await push(a)
    await clear_faults(ctx)
    return a, b, database, tid


async def _count(store: PanelotStore) -> int:
    return sum([await store.db.table(t).count() for t in SYNCED_TABLES])


async def _leaves(ctx: Ctx, database: str) -> list[dict[str, Any]]:
    """Every document on the server as ``_bulk_get`` gives it (``revs=true``)."""
    status, said = await http_json(ctx, "GET", f"{server()}/{database}/_all_docs")
    assert status == 200, (status, said)
    out = []
    for row in said["rows"]:
        quoted = urllib.parse.quote(row["id"], safe=":")
        status, doc = await http_json(ctx, "GET", f"{server()}/{database}/{quoted}?revs=true")
        assert status == 200, (status, doc)
        out.append(doc)
    return out


def _bulk_get(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"results": [{"id": d["_id"], "docs": [{"ok": d}]} for d in docs]}


async def _refused_whole(ctx: Ctx, b: PanelotStore, database: str, pattern: str, **f: Any) -> str:
    """B's pull fails on the crafted answer: nothing written, no checkpoint. The error."""
    await fault(ctx, pattern.format(db=database), "body", **f)
    try:
        error = await raises(NetworkError, pull(b))
    finally:
        await clear_faults(ctx)
    assert await _count(b) == 0
    status = await b.query("sync.status")
    assert status["lastPull"] is None and status["documents"] == 0, status
    return str(error)


async def case_malformed_answers_fail_the_pull_and_write_nothing(ctx: Ctx) -> None:
    a, b, database, tid = await _pair(ctx)
    changes, bulk = "^GET /{db}/_changes", "^POST /{db}/_bulk_get"
    said = await _refused_whole(ctx, b, database, changes, raw='{"results": [{"id": "threads:')
    assert "_changes" in said and "not JSON" in said, said
    said = await _refused_whole(ctx, b, database, changes, body={"results": 5})
    assert "_changes" in said and "not a changes feed" in said, said
    said = await _refused_whole(ctx, b, database, changes, raw="[" * 100_000 + "]" * 100_000)
    assert "_changes" in said and f"nested deeper than {MAX_ANSWER_DEPTH}" in said, said
    for crafted in ({"results": "nope"}, [], {"results": [{"id": 5, "docs": {}}]}):
        said = await _refused_whole(ctx, b, database, bulk, body=crafted)
        assert "_bulk_get" in said, said
    deep_text = '{"results": [{"id": "threads:' + tid + '", "docs": [' + "[" * 100_000
    deep_text += "]" * 100_000 + "]}]}"
    said = await _refused_whole(ctx, b, database, bulk, raw=deep_text)
    assert "_bulk_get" in said, said
    report = await pull(b)  # the server answers well again: everything comes
    assert report["refused"] == [] and report["written"] == 3, report
    assert await _count(b) == await _count(a) == 3


async def case_documents_other_than_the_ones_asked_for_are_refused_by_id(ctx: Ctx) -> None:
    a, b, database, tid = await _pair(ctx)
    leaves = await _leaves(ctx, database)
    by_id = {d["_id"]: d for d in leaves}
    thread = dict(by_id[f"threads:{tid}"])
    thread["_rev"] = "1-" + "f" * 32  # a revision the feed never named
    node_ids = sorted(k for k in by_id if k.startswith("nodes:"))
    swapped = dict(by_id[node_ids[0]])
    swapped["_id"] = node_ids[1]  # the other node's document under this one's id
    crafted = _bulk_get([thread, swapped, by_id[node_ids[1]]])
    crafted["results"][1]["id"] = node_ids[0]
    await fault(ctx, f"^POST /{database}/_bulk_get", "body", body=crafted)
    try:
        report = await pull(b)
    finally:
        assert await clear_faults(ctx) == []
    reasons = {r["id"]: r["reason"] for r in report["refused"]}
    assert f"threads:{tid}" in reasons and node_ids[0] in reasons, reasons
    assert "asked" in reasons[f"threads:{tid}"] and "asked" in reasons[node_ids[0]], reasons
    assert await _count(b) == 0  # nothing of the thread: its nodes never land without it
    assert (await b.query("sync.status"))["documents"] == 0


async def case_records_the_domain_refuses_are_refused_by_id_and_the_rest_is_written(
    ctx: Ctx,
) -> None:
    a, b, database, tid = await _pair(ctx)
    leaves = {d["_id"]: d for d in await _leaves(ctx, database)}
    thread = leaves[f"threads:{tid}"]
    node = next(d for k, d in leaves.items() if k.startswith("nodes:"))

    def put_doc(doc_id: str, record: dict[str, Any], table: str) -> dict[str, Any]:
        doc = {"_id": doc_id, "table": table, "v": 1, "record": record}
        if table == "threads":
            doc["clocks"] = thread["clocks"]
        return doc

    long_title = {**thread["record"], "id": "t_long", "title": "x" * 301, "leafId": None}
    many_tags = {**thread["record"], "id": "t_tags", "tags": [f"t{i}" for i in range(51)]}
    many_tags["leafId"] = None
    nested: Any = "bottom"
    for _ in range(_DEEP):
        nested = {"n": nested}
    deep = {**node["record"], "id": "n_deep", "payload": {"content": [], "x": nested}}
    hostile = [
        put_doc("threads:t_long", long_title, "threads"),
        put_doc("threads:t_tags", many_tags, "threads"),
        put_doc("nodes:n_deep", deep, "nodes"),
        put_doc("nodes:n_seq", {**node["record"], "id": "n_seq", "seq": 2**60}, "nodes"),
    ]
    for doc in hostile:
        url = f"{server()}/{database}/{doc['_id']}"
        status, said = await http_json(ctx, "PUT", url, doc)
        assert status in (201, 202), (status, said)
    # A number JSON allows only as an extension (NaN), crafted in the _bulk_get answer.
    nan_node = {**node, "_id": "nodes:n_nan", "record": {**node["record"], "id": "n_nan"}}
    nan_node["record"]["payload"] = {"content": [{"type": "text", "text": "n"}], "x": "@NAN@"}
    nan_node.pop("_revisions", None)
    nan_node["_rev"] = "1-" + "a" * 32
    raw = json.dumps(_bulk_get([nan_node])).replace('"@NAN@"', "NaN")
    await fault(ctx, f"^GET /{database}/_changes", "body", body=_changes_with(nan_node["_rev"]))
    await fault(ctx, f"^POST /{database}/_bulk_get", "body", raw=raw)
    try:
        first = await pull(b)
    finally:
        await clear_faults(ctx)
    assert [r["id"] for r in first["refused"]] == ["nodes:n_nan"], first
    assert "NaN" in first["refused"][0]["reason"], first
    assert await _count(b) == 0
    report = await pull(b)
    reasons = {r["id"]: r["reason"] for r in report["refused"]}
    assert set(reasons) == {d["_id"] for d in hostile}, reasons
    assert f"nested deeper than {MAX_DOC_DEPTH}" in reasons["nodes:n_deep"], reasons
    assert all(reasons.values()), reasons
    for table, key in (("threads", "t_long"), ("threads", "t_tags"), ("nodes", "n_deep")):
        assert await b.db.table(table).get(key) is None, key
    assert await b.db.table("nodes").get("n_seq") is None
    assert await _count(b) == 3 and (await b.db.table("threads").get(tid)) is not None


def _changes_with(rev: str) -> dict[str, Any]:
    change = {"seq": 0, "id": "nodes:n_nan", "changes": [{"rev": rev}]}
    return {"results": [change], "last_seq": 0}  # the checkpoint stays at 0


async def case_an_answer_over_the_size_bound_fails_the_pull_and_writes_nothing(ctx: Ctx) -> None:
    a, b, database, tid = await _pair(ctx)
    await fault(ctx, f"^GET /{database}/_changes", "big", bytes=MAX_RESPONSE + 1024)
    try:
        error = await raises(NetworkError, pull(b))
    finally:
        assert await clear_faults(ctx) == []
    assert "_changes" in str(error) and "limit" in str(error), str(error)
    assert await _count(b) == 0 and (await b.query("sync.status"))["lastPull"] is None
    await fault(ctx, f"^POST /{database}/_bulk_get", "big", bytes=MAX_RESPONSE + 1024)
    try:
        error = await raises(NetworkError, pull(b))
    finally:
        assert await clear_faults(ctx) == []
    assert "_bulk_get" in str(error) and "limit" in str(error), str(error)
    assert await _count(b) == 0 and (await b.query("sync.status"))["lastPull"] is None
    report = await pull(b)
    assert report["written"] == 3 and report["refused"] == [], report
