"""Attachment summaries: derived records, one pass per attachment and model, use in requests.

The summary's text is what the panel would get from the model; here the case writes it
with ``summary.store`` (no provider is involved: the rules are the store's).
"""

from __future__ import annotations

import json
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import answer, b64, text
from panelot.idb.blobs import blob_bytes
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.request.slimming import slim_context
from panelot.request.summaries import (
    PENDING_MS,
    PROMPT_CHARS,
    done_summaries,
    prompt_text,
    summarized,
)
from panelot.settings import MemoryStorageBackend, Settings
from panelot.settings.credentials import MemoryKeyStore
from panelot.store import PanelotStore

NOTES = ("line of notes\n" * 700).encode()  # 9,800 bytes
SMALL_PAGE = {"type": "page", "url": "https://ex.test/now", "text": "now"}


async def put(store: PanelotStore, tid: str, data: bytes, kind: str = "file", **extra: Any) -> str:
    payload = {
        "threadId": tid,
        "kind": kind,
        "mime": extra.pop("mime", "text/plain"),
        "dataBase64": b64(data),
        **extra,
    }
    return str((await store.command("attachment.put", payload))["attachmentId"])


async def claim(store: PanelotStore, aid: str, model: str = "m1", **extra: Any) -> Any:
    return await store.command("summary.claim", {"attachmentId": aid, "model": model, **extra})


async def finish(store: PanelotStore, aid: str, summary: str, model: str = "m1") -> Any:
    return await store.command(
        "summary.store", {"attachmentId": aid, "model": model, "text": summary}
    )


async def record(store: PanelotStore, ident: str) -> dict[str, Any]:
    row: dict[str, Any] = await store.db.table("attachments").get(ident)
    return row


async def candidates(store: PanelotStore, tid: str, model: str = "m1") -> list[str]:
    out = await store.query("summary.candidates", {"threadId": tid, "model": model})
    return [a["attachmentId"] for a in out["attachments"]]


async def stale_thread(store: PanelotStore, first: dict[str, Any]) -> str:
    """A thread whose first user message is followed by three user turns (stale)."""
    tid = await store.create_thread("summaries")
    await store.append(tid, "user_message", first)
    for n in range(3):
        await store.append(tid, "assistant_message", answer(f"a{n}"))
        await store.append(tid, "user_message", text(f"q{n}"))
    return tid


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


async def case_summary_is_claimed_once_per_attachment_and_model(ctx: Ctx) -> None:
    a = await ctx.store()
    tid = await a.create_thread("once")
    aid = await put(a, tid, NOTES, meta={"title": "notes.txt"})
    assert await candidates(a, tid) == [aid]
    listed = await a.query("summary.candidates", {"threadId": tid, "model": "m1"})
    assert listed["attachments"] == [
        {"attachmentId": aid, "name": "notes.txt", "kind": "file", "size": len(NOTES)}
    ]
    first = await claim(a, aid)
    assert first["claimed"] is True
    system, user = first["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert "'notes.txt'" in user["content"] and NOTES.decode() in user["content"]
    # the pending record: derived, like a thumbnail
    original, summary = await record(a, aid), await record(a, first["summaryId"])
    assert summary["sourceRef"] == f"summary:{aid}:m1"
    assert summary["createdAt"] == original["createdAt"]
    assert (summary["threadId"], summary["kind"], summary["mime"]) == (tid, "file", "text/plain")
    assert summary["meta"]["summaryOf"] == aid and summary["meta"]["state"] == "pending"
    assert summary["size"] == 0 and "refs" not in summary
    assert await candidates(a, tid) == []  # a claimed one is no candidate
    # the same context, another context on the same database: not claimed again
    assert await claim(a, aid) == {"claimed": False, "reason": "pending"}
    b = await PanelotStore.open(ctx.factory, ctx.host, a.db.name, clock=ctx.clock)
    ctx.dbs.append(b.db)
    assert await claim(b, aid) == {"claimed": False, "reason": "pending"}
    # another model is another pass
    assert await candidates(b, tid, "m2") == [aid]
    other = await claim(b, aid, "m2")
    assert other["claimed"] is True and other["summaryId"] != first["summaryId"]
    stored = await finish(b, aid, "Notes, summed up.")
    assert stored == {"summaryId": first["summaryId"], "size": len("Notes, summed up.")}
    assert await claim(a, aid) == {"claimed": False, "reason": "done"}
    # after a reopen: still done
    a.close()
    c = await PanelotStore.open(ctx.factory, ctx.host, b.db.name, clock=ctx.clock)
    ctx.dbs.append(c.db)
    assert await claim(c, aid) == {"claimed": False, "reason": "done"}
    assert await claim(c, aid, again=True) == {"claimed": False, "reason": "done"}
    got = await c.query("attachment.get", {"attachmentId": first["summaryId"]})
    assert got["dataBase64"] == b64(b"Notes, summed up.") and got["meta"]["state"] == "done"
    # a pending claim whose context died is claimed again after PENDING_MS, in place
    assert await claim(c, aid, "m2") == {"claimed": False, "reason": "pending"}
    assert await candidates(c, tid, "m2") == []
    ctx.now += PENDING_MS + 1
    assert await candidates(c, tid, "m2") == [aid]  # its claim died: a candidate again
    assert await candidates(c, tid, "m1") == []  # done
    again = await claim(c, aid, "m2")
    assert again["claimed"] is True and again["summaryId"] == other["summaryId"]
    listed_all = (await c.query("summary.list", {"threadId": tid}))["summaries"]
    assert sorted((s["model"], s["state"]) for s in listed_all) == [
        ("m1", "done"),
        ("m2", "pending"),
    ]


async def case_summary_is_never_made_for_an_image(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("images")
    image = await put(store, tid, b"\x89PNG" + b"\0" * 20_000, kind="image", mime="image/png")
    shot = await put(store, tid, b"x" * 20_000, kind="screenshot", mime="image/jpeg")
    pdf = await put(store, tid, b"%PDF" + b"\0" * 20_000, mime="application/pdf")
    small = await put(store, tid, b"s" * 7_999)
    page = await put(store, tid, b"t" * 8_000, kind="page_text")
    kept = await put(store, tid, b"r" * 9_000, kind="page_text", sourceRef="retention:summary")
    assert await candidates(store, tid) == [page]
    assert await claim(store, kept) == {"claimed": False, "reason": "not_text"}
    assert await claim(store, image) == {"claimed": False, "reason": "image"}
    assert await claim(store, shot) == {"claimed": False, "reason": "image"}
    assert await claim(store, pdf) == {"claimed": False, "reason": "not_text"}
    low = await store.query(
        "summary.candidates", {"threadId": tid, "model": "m1", "threshold": 1_000}
    )
    assert [x["attachmentId"] for x in low["attachments"]] == [small, page]
    made = await claim(store, page)
    # a derived record is never summarized itself
    assert await claim(store, made["summaryId"]) == {"claimed": False, "reason": "not_text"}
    assert (await store.query("summary.list", {"threadId": tid}))["summaries"] == [
        {"attachmentId": page, "summaryId": made["summaryId"], "model": "m1", "state": "pending",
         "size": 0},
    ]  # fmt: skip


async def case_stale_file_with_a_done_summary_is_sent_as_it(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("stale")
    notes = await put(store, tid, NOTES, meta={"title": "notes.txt"})
    stored = await put(store, tid, b"t" * 9_000, kind="page_text", meta={"title": "Stored"})
    first = {
        "content": [
            {"type": "text", "text": "read"},
            {"type": "file", "attachmentId": notes, "name": "notes.txt"},
        ],
        "attachedContext": [{"type": "page_text", "attachmentId": stored, "title": "Stored"}],
    }
    await store.append(tid, "user_message", first)
    for n in range(3):
        await store.append(tid, "assistant_message", answer(f"a{n}"))
        await store.append(tid, "user_message", {**text(f"q{n}"), "attachedContext": [SMALL_PAGE]})
    before = await store.request_context(tid, model="m1")
    assert before["slimming"]["staleStubs"] == 2 and before["slimming"]["summaries"] == []
    await claim(store, notes)
    await claim(store, notes, "m2")
    await claim(store, stored, "m2")
    pending = await store.request_context(tid, model="m1")
    assert dumps(pending) == dumps(before)  # a pending summary changes nothing
    await finish(store, notes, "Summary by m1.")
    await finish(store, notes, "Summary by m2.", "m2")
    await finish(store, stored, "Page, summed up.", "m2")
    out = await store.request_context(tid, model="m1")
    msg = out["messages"][0]
    assert msg["content"][1] == {
        "type": "text",
        "text": f"[Summary of notes.txt ({len(NOTES):,} bytes): Summary by m1.]",
        "summary": True,
        "attachmentId": notes,
    }
    assert msg["attachedContext"] == [
        {
            "type": "page_text",
            "title": "Stored",
            "text": "[Summary of page text: Stored (9,000 bytes): Page, summed up.]",
            "summary": True,
        }
    ]
    assert out["slimming"]["summaries"] == [stored, notes]  # entries, then blocks
    assert out["slimming"]["staleStubs"] == 0
    # byte for byte the same on a second build, and from another context
    again = await store.request_context(tid, model="m1")
    assert dumps(again) == dumps(out)
    other = await PanelotStore.open(ctx.factory, ctx.host, store.db.name, clock=ctx.clock)
    ctx.dbs.append(other.db)
    assert dumps(await other.request_context(tid, model="m1")) == dumps(out)
    # the request's model's summary first, else the done one with the lowest id
    by_m2 = await store.request_context(tid, model="m2")
    assert "Summary by m2." in by_m2["messages"][0]["content"][1]["text"]
    anyone = await store.request_context(tid)
    picked = min(
        [s for s in (await store.query("summary.list", {"threadId": tid}))["summaries"]
         if s["attachmentId"] == notes],
        key=lambda s: s["summaryId"],
    )  # fmt: skip
    assert f"Summary by {picked['model']}." in anyone["messages"][0]["content"][1]["text"]
    found = await done_summaries(store.db, tid, [notes, stored], "m1")
    assert found == {notes: "Summary by m1.", stored: "Page, summed up."}
    ids = await summarized(store.db, tid, [notes, stored, "no-such-id"], "m2")
    by_m2_id = [s for s in (await store.query("summary.list", {"threadId": tid}))["summaries"]
                if s["attachmentId"] == notes and s["model"] == "m2"][0]["summaryId"]  # fmt: skip
    assert ids[notes] == by_m2_id and set(ids) == {notes, stored}


async def case_an_image_block_survives_beside_a_summarized_file(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("both")
    png = b"\x89PNG" + b"\1" * 9_000
    image = await put(store, tid, png, kind="image", mime="image/png")
    notes = await put(store, tid, NOTES, meta={"title": "notes.txt"})
    first = {
        "content": [
            {"type": "text", "text": "both"},
            {"type": "image", "attachmentId": image},
            {"type": "file", "attachmentId": notes, "name": "notes.txt"},
        ]
    }
    later = [text("q0"), text("q1"), {**text("q2"), "attachedContext": [SMALL_PAGE]}]
    await store.append(tid, "user_message", first)
    for message in later:  # user turns only: the image is unseen, sent at full size
        await store.append(tid, "user_message", message)
    assert await claim(store, image) == {"claimed": False, "reason": "image"}
    await claim(store, notes)
    await finish(store, notes, "Short.")
    out = await store.request_context(tid, model="m1")
    blocks = out["messages"][0]["content"]
    assert blocks[1] == {"type": "image", "attachmentId": image}
    assert out["attachments"][image]["dataBase64"] == b64(png)
    assert blocks[2]["summary"] is True and blocks[2]["text"].endswith(": Short.]")
    assert out["slimming"]["summaries"] == [notes]
    # the plan never replaces an image, even given a "summary" for it
    context = {"messages": [{"role": "user", **m} for m in (first, *later)]}
    sizes = {image: {"size": 20_000}, notes: {"size": 20_000}}
    slim = slim_context(context, sizes, summaries={image: "no", notes: "yes"})
    assert slim.context["messages"][0]["content"][1] == {"type": "image", "attachmentId": image}
    assert slim.summaries == [notes]
    assert "(20,000 bytes): yes]" in slim.context["messages"][0]["content"][2]["text"]
    big = slim_context(context, {notes: {"size": 2_100_000}}, summaries={notes: "s"})
    assert big.context["messages"][0]["content"][2]["text"] == "[Summary of notes.txt (2.1 MB): s]"


async def case_summary_is_evicted_and_deleted_with_its_original(ctx: Ctx) -> None:
    store = await ctx.store()
    old = await store.create_thread("old")
    active = await store.create_thread("active")
    notes = await put(store, old, NOTES, meta={"title": "notes.txt"})
    mine = await put(store, active, b"a" * 100)
    await claim(store, notes)
    done = await finish(store, notes, "Gone soon.")
    await claim(store, notes, "m2")  # a pending one goes too
    out = await store.command("attachment.evict", {"budget": 0, "activeThreadId": active})
    assert out["evicted"] == 3
    assert await record(store, done["summaryId"]) is None
    assert (await store.query("summary.list", {"threadId": old}))["summaries"] == []
    assert await record(store, mine) is not None
    err = await raises(NotFoundError, finish(store, notes, "late", "m2"))
    assert err.field == "payload.attachmentId"
    # thread.delete removes a summary with its thread
    tid = await store.create_thread("deleted")
    doc = await put(store, tid, NOTES)
    made = await claim(store, doc)
    await finish(store, doc, "Deleted with it.")
    await store.command("thread.delete", {"threadId": tid})
    assert await record(store, doc) is None and await record(store, made["summaryId"]) is None
    err = await raises(NotFoundError, claim(store, doc))
    assert err.field == "payload.attachmentId"


async def case_summary_is_kept_through_backup_and_restore(ctx: Ctx) -> None:
    host = ctx.host.with_settings(MemoryStorageBackend(), MemoryKeyStore())
    a = await ctx.store(host)
    await put(a, await a.create_thread("another"), b"x")
    tid = await a.create_thread("backed up")
    doc = await put(a, tid, NOTES, meta={"title": "notes.txt"})
    file = {"type": "file", "attachmentId": doc, "name": "notes.txt"}
    await a.append(tid, "user_message", {"content": [{"type": "text", "text": "read"}, file]})
    for n in range(3):
        await a.append(tid, "user_message", {**text(f"q{n}"), "attachedContext": [SMALL_PAGE]})
    made = await claim(a, doc)
    await finish(a, doc, "Backed up summary.")
    await claim(a, doc, "m2")
    await a.command("summary.fail", {"attachmentId": doc, "model": "m2", "error": "offline"})
    expected = await a.request_context(tid, model="m1")
    assert expected["slimming"]["summaries"] == [doc]
    listed = await a.query("summary.list", {"threadId": tid})
    backup = await a.export_backup()
    b = await ctx.store(host)
    envelope = await b.restore_backup(backup.file, submission_id="restore-summaries")
    assert envelope["status"] == "completed", envelope
    assert await b.query("summary.list", {"threadId": tid}) == listed
    restored = await record(b, made["summaryId"])
    assert await blob_bytes(restored["bytes"]) == b"Backed up summary."
    assert dumps(await b.request_context(tid, model="m1")) == dumps(expected)
    assert await claim(b, doc) == {"claimed": False, "reason": "done"}
    assert await claim(b, doc, "m2") == {"claimed": False, "reason": "failed"}


async def case_failed_summary_is_claimed_again_only_when_asked(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("failed")
    doc = await put(store, tid, NOTES)
    made = await claim(store, doc)
    out = await store.command(
        "summary.fail", {"attachmentId": doc, "model": "m1", "error": "HTTP 503 " + "x" * 1_000}
    )
    assert out == {"summaryId": made["summaryId"]}
    (listed,) = (await store.query("summary.list", {"threadId": tid}))["summaries"]
    assert listed["state"] == "failed" and listed["error"] == ("HTTP 503 " + "x" * 1_000)[:300]
    assert await claim(store, doc) == {"claimed": False, "reason": "failed"}
    ctx.now += PENDING_MS * 10  # time alone never retries a failed one
    assert await claim(store, doc) == {"claimed": False, "reason": "failed"}
    assert await candidates(store, tid) == []
    again = await claim(store, doc, again=True)
    assert again["claimed"] is True and again["summaryId"] == made["summaryId"]
    assert again["messages"][1]["content"].endswith(NOTES.decode())
    (listed,) = (await store.query("summary.list", {"threadId": tid}))["summaries"]
    assert listed["state"] == "pending" and "error" not in listed
    await finish(store, doc, "Second time lucky.")
    # a late failure report never undoes a done summary
    await store.command("summary.fail", {"attachmentId": doc, "model": "m1", "error": "late"})
    (listed,) = (await store.query("summary.list", {"threadId": tid}))["summaries"]
    assert listed["state"] == "done" and "error" not in listed


async def case_summary_bad_input_names_the_field(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("bad")
    doc = await put(store, tid, NOTES)
    err = await raises(NotFoundError, claim(store, "no-such-attachment"))
    assert err.field == "payload.attachmentId"
    err = await raises(NotFoundError, finish(store, doc, "before any claim"))
    assert err.field == "payload.attachmentId"
    await claim(store, doc)
    for blank in ("", "   \n"):
        err = await raises(ValidationError, finish(store, doc, blank))
        assert err.field == "payload.text", err.field
    err = await raises(ValidationError, claim(store, doc, ""))
    assert err.field == "payload.model"
    err = await raises(
        ValidationError,
        store.query("summary.candidates", {"threadId": tid, "model": "m1", "threshold": -1}),
    )
    assert "threshold" in str(err.field)
    err = await raises(
        ValidationError, store.query("thread.request", {"threadId": tid, "model": ""})
    )
    assert "model" in str(err.field)
    settings = Settings(MemoryStorageBackend())
    connection = {"id": "c1", "kind": "openai", "baseUrl": "https://api.x.test/v1"}
    providers = await settings.set("providers", {"connections": [connection]})
    assert providers.connections[0].summaries is True
    assert providers.connections[0].summary_threshold == 8_000
    off = {**connection, "summaries": False, "summaryThreshold": 20_000}
    providers = await settings.set("providers", {"connections": [off]})
    assert (providers.connections[0].summaries, providers.connections[0].summary_threshold) == (
        False,
        20_000,
    )
    low = {**connection, "summaryThreshold": 999}
    err = await raises(ValidationError, settings.set("providers", {"connections": [low]}))
    assert err.field == "providers.connections[0].summaryThreshold", err.field


async def case_summary_prompt_is_bounded_head_and_tail(ctx: Ctx) -> None:
    long = "h" * 150_000 + "m" * 100_000 + "t" * 100_000
    cut = prompt_text(long)
    assert len(cut) < PROMPT_CHARS + 100
    assert cut.startswith("h" * 1000) and cut.endswith("t" * 1000)
    assert f"[… {len(long) - PROMPT_CHARS:,} characters left out …]" in cut
    assert prompt_text("short") == "short"
    store = await ctx.store()
    tid = await store.create_thread("long")
    doc = await put(store, tid, long.encode(), kind="page_text", meta={"url": "https://ex.test"})
    made = await claim(store, doc)
    assert "https://ex.test" in made["messages"][1]["content"]
    assert made["messages"][1]["content"].endswith("t" * 1000)


async def case_summaries_are_read_only_for_stale_items(ctx: Ctx) -> None:
    from panelot.request import build

    calls: list[list[str]] = []
    real = build.done_summaries

    async def counting(db: Any, thread_id: str, ids: Any, model: str | None) -> dict[str, str]:
        calls.append(list(ids))
        return await real(db, thread_id, ids, model)

    store = await ctx.store()
    tid = await store.create_thread("fresh")
    doc = await put(store, tid, NOTES, meta={"title": "notes.txt"})
    file = {"type": "file", "attachmentId": doc, "name": "notes.txt"}
    await store.append(tid, "user_message", {"content": [{"type": "text", "text": "read"}, file]})
    await store.append(tid, "user_message", {**text("q0"), "attachedContext": [SMALL_PAGE]})
    build.done_summaries = counting  # type: ignore[assignment]
    try:
        await store.request_context(tid, model="m1")  # the file is not stale yet
        assert calls == []
        for n in (1, 2):
            await store.append(
                tid, "user_message", {**text(f"q{n}"), "attachedContext": [SMALL_PAGE]}
            )
        stale = await store.request_context(tid, model="m1")
        assert calls == [[doc]] and stale["slimming"]["staleStubs"] == 1
    finally:
        build.done_summaries = real  # type: ignore[assignment]
