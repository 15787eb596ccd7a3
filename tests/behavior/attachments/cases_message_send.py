"""``message.send``: a message, its files and its thread in one command, all or nothing."""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, b64, text
from panelot.attachments.records import read_bytes
from panelot.store import PanelotStore


async def send_message(
    store: PanelotStore, payload: dict[str, Any], sub: str = "s"
) -> dict[str, Any]:
    return await store.send(
        {"type": "message.send", "clientId": "panel", "submissionId": sub, "payload": payload}
    )


async def dump_sent_tables(store: PanelotStore) -> dict[str, Any]:
    """Every record of the tables message.send writes (Blobs left out)."""
    out: dict[str, Any] = {}
    for table in ("threads", "nodes", "attachments", "commandReceipts"):
        rows = await store.db.table(table).to_collection().omit("bytes").to_list()
        out[table] = sorted(rows, key=lambda r: str(r["id"]))
    return out


PNG, NOTES = b"\x89PNG\r\n\x1a\nfake", b"line one\nline two\n"


async def case_a_first_message_creates_its_thread_with_files(ctx: Ctx) -> None:
    store = await ctx.store()
    first = {
        "thread": {"title": ""},
        "content": [
            {"type": "text", "text": "Look at these"},
            {"type": "image", "upload": 0},
            {"type": "file", "upload": 1},
        ],
        "uploads": [
            {"mime": "image/png", "dataBase64": b64(PNG), "name": "shot.png"},
            {"mime": "text/plain", "dataBase64": b64(NOTES), "name": "notes.txt"},
        ],
        "autoTitle": {"title": "Look at these", "when": ["", "New chat"]},
    }
    out = await send_message(store, first)
    assert out["status"] == "completed", out
    r = out["response"]
    tid, node_id = r["threadId"], r["nodeId"]
    thread = await store.query("thread.get", {"threadId": tid})
    assert thread["title"] == r["title"] == "Look at these" and thread["leafId"] == node_id
    image, notes = (a["attachmentId"] for a in r["attachments"])
    snap = (await store.snapshot(tid))["nodes"]
    assert [n["id"] for n in snap] == [node_id]
    assert snap[0]["payload"]["content"] == [
        {"type": "text", "text": "Look at these"},
        {"type": "image", "attachmentId": image, "mime": "image/png", "name": "shot.png"},
        {"type": "file", "attachmentId": notes, "mime": "text/plain", "name": "notes.txt",
         "size": len(NOTES)},
    ]  # fmt: skip
    for ident, data in ((image, PNG), (notes, NOTES)):
        meta, stored = await read_bytes(store.db, ident)
        assert stored == data and meta["threadId"] == tid
        assert meta["refs"]["nodeIds"] == [node_id] and meta["provenance"] == "user"
    again = await send_message(store, first)
    assert again["response"] == r  # the receipt answers a replay: no second thread
    other = await send_message(store, {"thread": {}, "content": [{"type": "text", "text": "x"}]})
    assert other["error"]["name"] == "ConflictError"  # the same submission, another message
    assert len(await store.query("thread.list", {})) == 1


async def case_a_message_goes_under_the_parent_the_user_saw(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    u1 = (await store.append(tid, "user_message", text("one")))["nodeId"]
    seen = (await store.append(tid, "assistant_message", answer("reply one")))["nodeId"]
    # another context edits the first message meanwhile: the leaf moves to its branch
    await store.command("message.edit", {"threadId": tid, "nodeId": u1, "payload": text("1b")})
    out = await send_message(
        store, {"threadId": tid, "parentId": seen, "content": text("follow")["content"]}
    )
    node = out["response"]["nodeId"]
    context = await store.context(tid)
    assert context["path"] == [u1, seen, node]  # the branch this user was reading


async def case_the_auto_title_keeps_a_rename_made_meanwhile(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("New chat")
    await store.command("thread.update", {"threadId": tid, "patch": {"title": "Renamed"}})
    out = await send_message(
        store,
        {
            "threadId": tid,
            "parentId": None,
            "content": text("first words")["content"],
            "autoTitle": {"title": "first words", "when": ["", "New chat"]},
        },
    )
    assert out["response"]["title"] == "Renamed"
    assert (await store.query("thread.get", {"threadId": tid}))["title"] == "Renamed"
    untitled = await store.create_thread("New chat")
    out = await send_message(
        store,
        {
            "threadId": untitled,
            "content": text("hello there")["content"],
            "autoTitle": {"title": "hello there", "when": ["", "New chat"]},
        },
        "s2",
    )
    assert (await store.query("thread.get", {"threadId": untitled}))["title"] == "hello there"


async def case_a_refused_message_writes_nothing(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    before = await dump_sent_tables(store)
    good = {"mime": "image/png", "dataBase64": b64(PNG)}
    bad_payloads = [
        ({"threadId": tid, "content": [{"type": "image", "upload": 1}], "uploads": [good]},
         "payload.content[0].upload"),
        ({"threadId": tid, "content": [{"type": "text", "text": "x"}], "uploads": [good]},
         "payload.uploads"),
        ({"threadId": tid, "content": [{"type": "image", "upload": 0}],
          "uploads": [{"mime": "image/png", "dataBase64": "not base64!"}]},
         "payload.uploads[0].dataBase64"),
        ({"threadId": tid, "content": [{"type": "image", "upload": 0}],
          "uploads": [{"dataBase64": b64(PNG)}]}, "payload.uploads[0].mime"),
        # the last check fails after the files were stored in the transaction
        ({"threadId": tid, "content": [{"type": "image", "upload": 0}, {"type": "video"}],
          "uploads": [good]}, "payload.content[1].type"),
        ({"threadId": tid, "parentId": "no-such-node", "content": text("x")["content"]},
         "payload.parentId"),
        ({"thread": {"title": 5}, "content": text("x")["content"]}, "payload.thread.title"),
    ]  # fmt: skip
    for i, (payload, field) in enumerate(bad_payloads):
        out = await send_message(store, payload, f"bad{i}")
        assert out["status"] == "failed", (i, out)
        assert out["error"]["field"] == field, (i, out["error"])
        assert await dump_sent_tables(store) == before, i


async def case_a_thread_being_deleted_takes_no_message(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    await store.db.table("threads").update(tid, {"deleting": True})
    out = await send_message(
        store,
        {
            "threadId": tid,
            "content": [{"type": "image", "upload": 0}],
            "uploads": [{"mime": "image/png", "dataBase64": b64(PNG)}],
        },
    )
    assert out["status"] == "failed" and out["error"]["name"] == "AdmissionError"
    assert await store.db.table("attachments").count() == 0


async def case_thread_update_refuses_a_stale_view(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Seen")
    await store.command("thread.update", {"threadId": tid, "patch": {"pinned": True}})
    stale = await store.send(
        {
            "type": "thread.update",
            "clientId": "panel",
            "submissionId": "pin",
            "payload": {"threadId": tid, "patch": {"pinned": True}, "expect": {"pinned": False}},
        }
    )
    assert stale["status"] == "failed"
    assert stale["error"]["name"] == "ConflictError"
    assert stale["error"]["field"] == "payload.expect.pinned"
    fresh = {"threadId": tid, "patch": {"title": "New"}, "expect": {"title": "Seen"}}
    assert (await store.command("thread.update", fresh))["thread"]["title"] == "New"
    bad = {"threadId": tid, "patch": {"title": "x"}, "expect": {"leafId": None}}
    out = await store.send({"type": "thread.update", "clientId": "p", "submissionId": "b",
                            "payload": bad})  # fmt: skip
    assert out["error"]["field"] == "payload.expect.leafId"
    assert (await store.query("thread.get", {"threadId": tid}))["title"] == "New"


async def case_a_new_chat_reuses_an_empty_one(ctx: Ctx) -> None:
    store = await ctx.store()
    first = await store.command("thread.create", {"title": "New chat", "reuseEmpty": True})
    again = await store.command("thread.create", {"title": "New chat", "reuseEmpty": True})
    assert again == {"threadId": first["threadId"], "reused": True}
    assert len(await store.query("thread.list", {})) == 1
    # once it holds a message it is no longer empty: the next one is new
    await store.append(first["threadId"], "user_message", text("hi"))
    third = await store.command("thread.create", {"title": "New chat", "reuseEmpty": True})
    assert third["threadId"] != first["threadId"] and "reused" not in third
    # a differently titled, pinned or tagged empty thread is not taken
    pinned = await store.create_thread("New chat")
    await store.command("thread.update", {"threadId": pinned, "patch": {"pinned": True}})
    assert (await store.command("thread.create", {"title": "New chat", "reuseEmpty": True}))[
        "threadId"
    ] == third["threadId"]
    other = await store.command("thread.create", {"title": "Other", "reuseEmpty": True})
    assert other["threadId"] not in (first["threadId"], third["threadId"], pinned)


async def case_a_file_over_the_message_limit_is_refused_from_any_caller(ctx: Ctx) -> None:
    """``message.send`` holds each upload to MAX_SEND_BYTES, as the panel's composer does."""
    from panelot.attachments.records import MAX_SEND_BYTES

    assert MAX_SEND_BYTES == 20 * 1024 * 1024
    store = await ctx.store()
    answer_ = await store.query("file.readable", {"name": "disk.iso"})
    assert answer_["maxUploadBytes"] == MAX_SEND_BYTES  # what the panel checks against
    before = await dump_sent_tables(store)
    over = {
        "thread": {"title": "too big"},
        "content": [{"type": "text", "text": "x"}, {"type": "file", "upload": 1}],
        "uploads": [
            {"mime": "text/plain", "dataBase64": b64(NOTES), "name": "notes.txt"},
            {"mime": "text/plain", "dataBase64": b64(bytes(MAX_SEND_BYTES + 1)), "name": "a.iso"},
        ],
    }
    over["content"].insert(1, {"type": "file", "upload": 0})
    out = await send_message(store, over, "over")
    assert out["status"] == "failed" and out["error"]["name"] == "ValidationError", out
    assert out["error"]["field"] == "payload.uploads[1].dataBase64", out["error"]
    message = out["error"]["message"]
    assert f"at most {MAX_SEND_BYTES} bytes (20 MiB)" in message, message
    assert f"this one is {MAX_SEND_BYTES + 1} bytes" in message, message
    assert await dump_sent_tables(store) == before  # no thread, no file, no message, no receipt
    at_limit = {
        "thread": {"title": "just fits"},
        "content": [{"type": "file", "upload": 0}],
        "uploads": [{"mime": "text/plain", "dataBase64": b64(bytes(MAX_SEND_BYTES)), "name": "b"}],
    }
    ok = await send_message(store, at_limit, "at-limit")
    assert ok["status"] == "completed", ok
    assert [a["size"] for a in ok["response"]["attachments"]] == [MAX_SEND_BYTES]
