"""``search.messages`` finds attached text files and page text, bounded per attachment.

An attachment hit names the node that references it (the latest live one) and its
thread; a tombstoned message, an evicted attachment or a deleted thread never shows.
Each case waits for ``search.status`` to stop lagging, never for a guessed time.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import b64, text
from behavior.search.cases_index import find, node_ids, settled
from panelot.search.extract import ATT_CHARS
from panelot.search.reading import att_texts
from panelot.store import PanelotStore


async def send_files(
    store: PanelotStore, tid: str, words: str, files: list[tuple[str, str, bytes]], sub: str
) -> dict[str, Any]:
    """``message.send`` of ``words`` with ``files`` (``(name, mime, bytes)``) as file blocks."""
    content: list[dict[str, Any]] = [{"type": "text", "text": words}]
    content += [{"type": "file", "upload": i} for i in range(len(files))]
    uploads = [{"mime": m, "dataBase64": b64(d), "name": n} for n, m, d in files]
    out = await store.send(
        {
            "type": "message.send",
            "clientId": "panel",
            "submissionId": sub,
            "payload": {"threadId": tid, "content": content, "uploads": uploads},
        }
    )
    assert out["status"] == "completed", out
    response: dict[str, Any] = out["response"]
    return response


async def put_attachment(
    store: PanelotStore, tid: str, kind: str, mime: str, data: bytes, **extra: Any
) -> str:
    """``attachment.put``; the new attachment's id."""
    payload = {"threadId": tid, "kind": kind, "mime": mime, "dataBase64": b64(data), **extra}
    out = await store.command("attachment.put", payload)
    ident: str = out["attachmentId"]
    return ident


async def case_attached_text_files_and_page_text_are_found(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Trip")
    notes = b"Packing list\nthe blue kayak and a thermos\n"
    sent = await send_files(
        store,
        tid,
        "see the files",
        [
            ("notes.txt", "text/plain", notes),
            ("data.bin", "application/octet-stream", b"kayak binary"),
            ("cyr.md", "application/octet-stream", "Привет, байдарка".encode()),
            ("bad.txt", "text/plain", b"\xff\xfe kayak \xff"),
        ],
        "s1",
    )
    node = sent["nodeId"]
    page = await store.append(tid, "user_message", text("read this page"))
    page_id = await put_attachment(
        store, tid, "page_text", "text/plain", b"Lighthouse opening hours",
        nodeId=page["nodeId"],
    )  # fmt: skip
    await put_attachment(
        store, tid, "page_text", "text/plain", b"kayak summary",
        sourceRef=f"summary:{page_id}:m", nodeId=page["nodeId"],
    )  # fmt: skip
    await put_attachment(store, tid, "image", "image/png", b"kayak", nodeId=node)
    await settled(store)
    found = await find(store, "kayak")
    assert node_ids(found) == [node], found  # notes.txt only: no binary, no image, no summary
    hit = found["hits"][0]
    assert hit["threadId"] == tid and hit["title"] == "Trip" and hit["onVisibleBranch"]
    start, end = hit["highlights"][0]
    assert hit["snippet"][start:end] == "kayak"
    assert node_ids(await find(store, '"blue kayak"')) == [node]
    assert node_ids(await find(store, '"kayak blue"')) == []
    assert node_ids(await find(store, "байдарка")) == [node]  # octet-stream named .md: text
    assert node_ids(await find(store, "lighthouse hou")) == [page["nodeId"]]
    att_texts(store.db).clear()  # another context's query: the Blob is read before its tx
    assert node_ids(await find(store, "thermos")) == [node]
    status = await store.query("search.status")
    assert status["docs"] == 1 + 2 + 3, status  # the title, two messages, three attachments


async def case_an_attachment_is_bounded_to_its_first_characters(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Big")
    filler = "lorem ipsum " * (ATT_CHARS // 12)
    body = "alpha " + filler[:ATT_CHARS] + " omega " + filler * 3  # ~1 M characters
    sent = await send_files(store, tid, "big file", [("big.txt", "text/plain", body.encode())], "s")
    await settled(store)
    assert node_ids(await find(store, "alpha")) == [sent["nodeId"]]
    assert (await find(store, "omega"))["hits"] == []  # past 200,000 characters
    wide = ("ёж " * 400_000).encode()  # 5 bytes a word: the bytes read end inside a letter
    cut = await send_files(store, tid, "wide", [("wide.txt", "text/plain", wide)], "w")
    await settled(store)
    assert node_ids(await find(store, "ёж")) == [cut["nodeId"]]


async def case_attachment_hits_never_lie(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Kept")
    other = await store.create_thread("Other")
    doomed = await store.create_thread("Doomed")
    a = await send_files(store, tid, "one", [("a.txt", "text/plain", b"quokka a")], "a")
    b = await send_files(store, other, "two", [("b.txt", "text/plain", b"quokka b")], "b")
    c = await send_files(store, doomed, "three", [("c.txt", "text/plain", b"quokka c")], "c")
    await settled(store)
    assert sorted(node_ids(await find(store, "quokka"))) == sorted(
        [a["nodeId"], b["nodeId"], c["nodeId"]]
    )
    assert store.search is not None
    async with store.search.paused():  # the index still holds all three
        await store.command("message.delete", {"threadId": tid, "nodeId": a["nodeId"]})
        evicted = await store.command("attachment.evict", {"budget": 0, "activeThreadId": doomed})
        assert evicted["evicted"] == 2, evicted  # a's and b's files; doomed's is spared
        await store.command("thread.delete", {"threadId": doomed})
        assert (await store.query("search.status"))["lagging"]
        assert (await find(store, "quokka"))["hits"] == []
    await settled(store)
    assert (await find(store, "quokka"))["hits"] == []
    status = await store.query("search.status")
    assert status["docs"] == 3, status  # the titles of Kept and Other, Other's message


async def case_an_attachment_hit_names_its_latest_live_referencing_node(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("T")
    first = await store.append(tid, "user_message", text("first"))
    ident = await put_attachment(
        store, tid, "page_text", "text/plain", b"wombat facts", nodeId=first["nodeId"]
    )
    await settled(store)
    assert node_ids(await find(store, "wombat")) == [first["nodeId"]]
    second = await store.append(tid, "user_message", text("second"))
    await store.command("attachment.attach", {"attachmentId": ident, "nodeId": second["nodeId"]})
    await settled(store)
    assert node_ids(await find(store, "wombat")) == [second["nodeId"]]
    await store.command("message.delete", {"threadId": tid, "nodeId": second["nodeId"]})
    await settled(store)
    assert node_ids(await find(store, "wombat")) == [first["nodeId"]]
    loose = await put_attachment(store, tid, "page_text", "text/plain", b"wombat loose")
    await settled(store)
    assert node_ids(await find(store, "loose")) == []  # no node references it: no hit
    await store.command("attachment.attach", {"attachmentId": loose, "nodeId": first["nodeId"]})
    await settled(store)
    assert node_ids(await find(store, "loose")) == [first["nodeId"]]


async def case_attachments_written_while_closed_are_caught_up(ctx: Ctx) -> None:
    store = await ctx.store()
    name = store.db.name
    tid = await store.create_thread("T")
    await store.append(tid, "user_message", text("hello"))
    await settled(store)
    store.close()
    blind = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock, search=False)
    sent = await send_files(blind, tid, "x", [("n.txt", "text/plain", b"okapi notes")], "s")
    blind.close()  # the reopened store's database has a memo of its own, empty
    again = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.stores.append(again)
    await settled(again)
    assert node_ids(await find(again, "okapi")) == [sent["nodeId"]]


async def case_a_message_and_its_attached_file_both_matching_are_one_hit(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Boats")
    sent = await send_files(
        store,
        tid,
        "the kayak plan is attached",
        [("plan.txt", "text/plain", b"Day one: kayak to the island, kayak back.\n")],
        "sub-both",
    )
    other = await store.append(tid, "user_message", text("a second kayak, borrowed"))
    await settled(store)
    found = await find(store, "kayak")
    ids = node_ids(found)
    assert sorted(ids) == sorted([sent["nodeId"], other["nodeId"]]), found
    assert found["total"] == 2, found
    # Its snippet is the better matching text's: the file says kayak twice.
    hit = next(h for h in found["hits"] if h["nodeId"] == sent["nodeId"])
    assert "island" in hit["snippet"], hit
