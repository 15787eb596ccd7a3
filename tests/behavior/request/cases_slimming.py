"""Request-side context slimming: seen images, the image budget, stale stubs.

Thumbnails here come from a fake thumbnailer (deterministic bytes) so that both cores
run every rule; the last case uses the default one: a real JPEG made by the browser in
Chromium, a clear error in CPython. tests/browser/test_slimming_browser.py covers real images.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import random
import struct
import zlib
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import answer, b64, text
from panelot.attachments.records import read_bytes
from panelot.host.thumbnails import Thumbnail, ThumbnailError, ThumbnailerUnavailableError
from panelot.idb.blobs import blob_bytes
from panelot.idb.errors import ValidationError
from panelot.request.build import thumbnail_ref
from panelot.request.slimming import SlimOptions, slim_context
from panelot.store import PanelotStore

NO_SEEN = SlimOptions(seen_images=False)


class FakeThumbnailer:
    """Deterministic stand-in: ``b"thumb:" + sha256(original)``, 16x12 pixels."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[int] = []
        self.fail = fail

    async def thumbnail(self, blob: Any, max_dim: int) -> Thumbnail:
        data = await blob_bytes(blob)
        self.calls.append(len(data))
        if self.fail:
            raise ThumbnailError("cannot decode")
        return Thumbnail(b"thumb:" + hashlib.sha256(data).digest(), "image/jpeg", 16, 12)


def noise_png(width: int, height: int, seed: int) -> bytes:
    """A valid RGB PNG of random pixels (incompressible, so about 3 bytes per pixel)."""
    rng = random.Random(seed)
    rows = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 1))
        + chunk(b"IEND", b"")
    )


async def put(store: PanelotStore, tid: str, data: bytes, kind: str = "image", **extra: Any) -> str:
    payload = {
        "threadId": tid,
        "kind": kind,
        "mime": extra.pop("mime", "image/png"),
        "dataBase64": base64.b64encode(data).decode("ascii"),
    }
    return str((await store.command("attachment.put", {**payload, **extra}))["attachmentId"])


def img(aid: str, name: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "image", "attachmentId": aid}
    if name is not None:
        block["name"] = name
    return block


def user(*blocks: dict[str, Any], words: str = "look") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": words}, *blocks]}


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def texts(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in message["content"] if b["type"] == "text"]


async def case_seen_images_become_numbered_placeholders(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("seen")
    a = await put(store, tid, b"A" * 300, meta={"title": "Quarterly\nchart"})
    b = await put(store, tid, b"B" * 200)
    c = await put(store, tid, b"C" * 100)
    await store.append(tid, "user_message", user(img(a, "a.png"), img(b, "b.png")))
    await store.append(tid, "assistant_message", answer("two pictures"))
    await store.append(tid, "user_message", user(img(b, "b.png"), img(c)))
    out = await store.request_context(tid)
    first, _, last = out["messages"]
    assert texts(first) == ["look", "[Figure 1: Quarterly chart]", "[Figure 2: b.png]"]
    assert first["content"][1] == {
        "type": "text",
        "text": "[Figure 1: Quarterly chart]",
        "seen": True,
        "attachmentId": a,
    }
    # Not yet answered: pixels kept, even for an image that was seen earlier (b).
    assert [blk["type"] for blk in last["content"]] == ["text", "image", "image"]
    assert set(out["attachments"]) == {b, c}
    assert base64.b64decode(out["attachments"][c]["dataBase64"]) == b"C" * 100
    assert out["attachments"][b]["size"] == 200 and out["attachments"][b]["mime"] == "image/png"
    assert out["slimming"]["seenImages"] == [a, b]
    assert out["slimming"]["unseenImageBytes"] == 300
    await store.append(tid, "assistant_message", answer("ok"))
    later = await store.request_context(tid)
    assert texts(later["messages"][2]) == ["look", "[Figure 2: b.png]", "[Figure 3: image]"]
    assert later["attachments"] == {} and later["messages"][:2] == out["messages"][:2]
    kept = await store.request_context(tid, options=NO_SEEN)
    assert set(kept["attachments"]) == {a, b, c} and kept["slimming"]["seenImages"] == []
    # The stored nodes still hold the image blocks.
    snap = await store.snapshot(tid)
    assert [blk["type"] for blk in snap["nodes"][0]["payload"]["content"]] == [
        "text",
        "image",
        "image",
    ]


async def case_only_a_final_assistant_message_answers_an_image(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("agent")
    a = await put(store, tid, b"a" * 10)
    shot = await put(store, tid, b"s" * 10, kind="screenshot")
    await store.append(tid, "user_message", user(img(a)))
    call = {"itemId": "i1", "toolName": "screenshot", "params": {}, "level": "L0"}
    await store.append(tid, "tool_call", call)
    result = {"itemId": "i1", "ok": True, "contentForLlm": [img(shot, "tab.png")]}
    await store.append(tid, "tool_result", result)
    mid = await store.request_context(tid)
    assert mid["slimming"]["seenImages"] == [] and list(mid["attachments"]) == [a, shot]
    await store.append(tid, "assistant_message", answer("done"))
    done = await store.request_context(tid)
    assert done["slimming"]["seenImages"] == [a, shot]
    assert done["messages"][2]["content"][0]["text"] == "[Figure 2: tab.png]"


async def case_budget_thumbnails_oldest_and_caches_them(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("budget")
    sizes = {"a": 5_000, "b": 5_000, "c": 5_000}
    ids = {k: await put(store, tid, k.encode() * n, sourceRef=k) for k, n in sizes.items()}
    for k in "abc":
        await store.append(tid, "user_message", user(img(ids[k], f"{k}.png")))
    options = SlimOptions(seen_images=False, image_budget=8_000)
    fake = FakeThumbnailer()
    out = await store.request_context(tid, options=options, thumbnailer=fake)
    assert out["slimming"]["thumbnails"] == [ids["a"], ids["b"]]
    assert out["slimming"]["unseenImageBytes"] == 15_000 and fake.calls == [5_000, 5_000]
    thumb = out["attachments"][ids["a"]]
    expected = b"thumb:" + hashlib.sha256(b"a" * 5_000).digest()
    assert base64.b64decode(thumb["dataBase64"]) == expected
    assert (thumb["thumbnail"], thumb["w"], thumb["h"], thumb["originalSize"]) == (
        True,
        16,
        12,
        5_000,
    )
    newest = out["attachments"][ids["c"]]
    assert "thumbnail" not in newest and base64.b64decode(newest["dataBase64"]) == b"c" * 5_000
    # Each thumbnail is a derived attachment of the original's thread; originals untouched.
    rows = (await store.query("attachment.list", {"threadId": tid}))["attachments"]
    originals = {r["id"]: r for r in rows}
    derived = [r for r in rows if r.get("sourceRef", "").startswith("thumbnail:")]
    assert sorted(r["sourceRef"] for r in derived) == sorted(thumbnail_ref(ids[k]) for k in "ab")
    for row in derived:
        source = originals[row["sourceRef"].rsplit(":", 1)[1]]
        assert (row["kind"], row["mime"], row["createdAt"]) == (
            source["kind"],
            "image/jpeg",
            source["createdAt"],
        )
        assert row["meta"] == {"w": 16, "h": 12} and "refs" not in row
    for k, n in sizes.items():
        assert (await read_bytes(store.db, ids[k]))[1] == k.encode() * n
    # The second build reads the cache: no new thumbnail, no new record, same request.
    again = await store.request_context(tid, options=options, thumbnailer=fake)
    assert fake.calls == [5_000, 5_000] and dumps(again) == dumps(out)
    assert len((await store.query("attachment.list", {"threadId": tid}))["attachments"]) == 5


async def case_budget_never_thumbnails_the_newest_message(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("newest")
    old = await put(store, tid, b"o" * 100)
    big = [await put(store, tid, bytes([i]) * 9_000) for i in range(2)]
    await store.append(tid, "user_message", user(img(old)))
    await store.append(tid, "user_message", user(*(img(i) for i in big)))
    fake = FakeThumbnailer()
    options = SlimOptions(seen_images=False, image_budget=8_000)
    out = await store.request_context(tid, options=options, thumbnailer=fake)
    # The old image goes first; the newest message stays at full size even over budget.
    assert out["slimming"]["thumbnails"] == [old]
    assert all("thumbnail" not in out["attachments"][i] for i in big)
    assert out["slimming"]["unseenImageBytes"] == 18_100
    under = await store.request_context(
        tid, options=SlimOptions(seen_images=False, image_budget=None), thumbnailer=fake
    )
    assert under["slimming"]["thumbnails"] == [] and len(fake.calls) == 1


async def case_thumbnail_failure_sends_full_size(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("fail")
    a, b = await put(store, tid, b"x" * 50), await put(store, tid, b"y" * 50)
    await store.append(tid, "user_message", user(img(a)))
    await store.append(tid, "user_message", user(img(b)))
    options = SlimOptions(seen_images=False, image_budget=60)
    out = await store.request_context(tid, options=options, thumbnailer=FakeThumbnailer(True))
    assert out["slimming"]["thumbnailFailures"] == [a] and out["slimming"]["thumbnails"] == []
    assert base64.b64decode(out["attachments"][a]["dataBase64"]) == b"x" * 50
    rows = (await store.query("attachment.list", {"threadId": tid}))["attachments"]
    assert len(rows) == 2  # nothing derived was stored


def page(title: str, n: int, url: str = "https://ex.test/p") -> dict[str, Any]:
    return {"type": "page", "url": url, "title": title, "text": "p" * n}


async def case_stale_context_becomes_a_stub(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("stale")
    doc = await put(store, tid, b"d" * 9_000, kind="file", mime="text/plain")
    small = await put(store, tid, b"s" * 7_999, kind="file", mime="text/plain")
    page_text = await put(store, tid, b"t" * 8_000, kind="page_text", mime="text/plain")
    first = {
        **user({"type": "file", "attachmentId": doc, "name": "notes.txt"}),
        "attachedContext": [
            page("Long read", 8_000),
            page("Short", 7_999),
            {"type": "page_text", "attachmentId": page_text, "title": "Stored"},
        ],
    }
    second = user({"type": "file", "attachmentId": small, "name": "small.txt"})
    await store.append(tid, "user_message", first)
    await store.append(tid, "assistant_message", answer("read"))
    await store.append(tid, "user_message", second)
    for n in range(2):
        await store.append(tid, "assistant_message", answer(f"a{n}"))
        await store.append(tid, "user_message", text(f"q{n}"))
    out = await store.request_context(tid)  # three user messages follow the first one
    msgs = out["messages"]
    assert out["slimming"]["staleStubs"] == 3
    assert msgs[0]["content"][1] == {
        "type": "text",
        "text": "[Earlier file omitted: notes.txt (9,000 bytes)]",
        "stale": True,
        "attachmentId": doc,
    }
    assert msgs[0]["attachedContext"] == [
        {
            "type": "page",
            "url": "https://ex.test/p",
            "title": "Long read",
            "text": "[Earlier page context omitted: Long read — https://ex.test/p (8,000 characters)]",
            "stale": True,
        },
        page("Short", 7_999),
        {
            "type": "page_text",
            "title": "Stored",
            "text": "[Earlier page text omitted: Stored (8,000 bytes)]",
            "stale": True,
        },
    ]
    # The second message's file is under the threshold and only 2 user turns back: it is
    # not a stub, and, being text, it is sent as its text.
    assert "stale" not in msgs[2]["content"][1]
    assert msgs[2]["content"][1]["text"] == "[file: small.txt]\n" + "s" * 7_999
    off = await store.request_context(tid, options=SlimOptions(stale_stubs=False))
    assert off["messages"][0]["attachedContext"][0] == page("Long read", 8_000)
    assert off["slimming"]["staleStubs"] == 0


async def case_stale_needs_three_user_turns_after_it(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("turns")
    await store.append(tid, "user_message", {**text("q0"), "attachedContext": [page("A", 9_000)]})
    await store.append(tid, "user_message", text("q1"))
    await store.append(tid, "user_message", {**text("q2"), "attachedContext": [page("B", 10)]})
    out = await store.request_context(tid)
    assert out["slimming"]["staleStubs"] == 0  # two user turns after it
    await store.append(tid, "user_message", text("q3"))
    stubbed = await store.request_context(tid)
    assert stubbed["slimming"]["staleStubs"] == 1
    stub = stubbed["messages"][0]["attachedContext"][0]["text"]
    assert stub == "[Earlier page context omitted: A — https://ex.test/p (9,000 characters)]"
    # Once made, the stub and the prefix never change as the conversation grows.
    await store.append(tid, "assistant_message", answer("fine"))
    await store.append(tid, "user_message", text("q4"))
    grown = await store.request_context(tid)
    assert dumps(grown["messages"][:4]) == dumps(stubbed["messages"])


async def case_stale_spares_the_newest_context(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("newest")
    await store.append(tid, "user_message", {**text("q0"), "attachedContext": [page("A", 9_000)]})
    for n in range(1, 5):
        await store.append(tid, "user_message", text(f"q{n}"))
    out = await store.request_context(tid)
    assert out["slimming"]["staleStubs"] == 0  # four turns back, but the newest context
    assert out["messages"][0]["attachedContext"] == [page("A", 9_000)]
    await store.append(tid, "user_message", {**text("q5"), "attachedContext": [page("B", 10)]})
    assert (await store.request_context(tid))["slimming"]["staleStubs"] == 1


class BarrierThumbnailer(FakeThumbnailer):
    """Holds each call until two have started, so both builds miss the cache."""

    def __init__(self) -> None:
        super().__init__()
        self.both = asyncio.Event()

    async def thumbnail(self, blob: Any, max_dim: int) -> Thumbnail:
        made = await super().thumbnail(blob, max_dim)
        if len(self.calls) == 2:
            self.both.set()
        await asyncio.wait_for(self.both.wait(), 60)  # a guard against hanging, not a timing
        return made


async def case_concurrent_builds_store_one_thumbnail(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("race")
    a, b = await put(store, tid, b"a" * 500), await put(store, tid, b"b" * 500)
    await store.append(tid, "user_message", user(img(a)))
    await store.append(tid, "user_message", user(img(b)))
    options = SlimOptions(seen_images=False, image_budget=600)
    fake = BarrierThumbnailer()
    one, two = await asyncio.gather(
        store.request_context(tid, options=options, thumbnailer=fake),
        store.request_context(tid, options=options, thumbnailer=fake),
    )
    assert len(fake.calls) == 2  # both missed the cache and made one...
    assert dumps(one) == dumps(two) and one["slimming"]["thumbnails"] == [a]
    rows = (await store.query("attachment.list", {"threadId": tid}))["attachments"]
    assert [r["sourceRef"] for r in rows if r.get("sourceRef")] == [thumbnail_ref(a)]  # ...one kept


async def case_same_tree_gives_the_same_request_byte_for_byte(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, other = await store.create_thread("same"), await store.create_thread("other")
    ids = [await put(store, tid, bytes([65 + i]) * 4_000) for i in range(3)]
    await store.append(tid, "user_message", user(img(ids[0], "seen.png")))
    await store.append(tid, "assistant_message", answer("seen"))
    old = {**text("ctx"), "attachedContext": [page("Old", 9_000)]}
    await store.append(tid, "user_message", old)
    for n in range(2):
        await store.append(tid, "assistant_message", answer(f"a{n}"))
        fork = await store.append(tid, "user_message", text(f"q{n}"))
    await store.append(tid, "assistant_message", answer("a2"))
    await store.append(
        tid, "user_message", {**user(img(ids[1])), "attachedContext": [page("New", 10)]}
    )
    call = {"itemId": "i1", "toolName": "shot", "params": {}, "level": "L0"}
    await store.append(tid, "tool_call", call)
    result = {"itemId": "i1", "ok": True, "contentForLlm": [img(ids[2])]}
    leaf = (await store.append(tid, "tool_result", result))["nodeId"]
    fake = FakeThumbnailer()
    options = SlimOptions(image_budget=5_000)
    built = await store.request_context(tid, leaf, options=options, thumbnailer=fake)
    first = dumps(built)
    assert built["slimming"]["thumbnails"] == [ids[1]] and len(fake.calls) == 1
    assert built["slimming"]["staleStubs"] == 1 and built["slimming"]["seenImages"] == [ids[0]]
    again = await store.request_context(tid, leaf, options=options, thumbnailer=fake)
    assert dumps(again) == first and len(fake.calls) == 1
    # Unrelated writes: another thread, its attachments, a branch off this path.
    await store.append(other, "user_message", text("elsewhere"))
    await put(store, other, b"z" * 7_000)
    await store.append(tid, "user_message", text("a sibling"), parentId=fork["nodeId"])
    same = await store.request_context(tid, leaf, options=options, thumbnailer=fake)
    assert dumps(same) == first and len(fake.calls) == 1


async def case_request_query_and_options(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("query")
    a = await put(store, tid, b"q" * 10)
    await store.append(tid, "user_message", user(img(a)))
    await store.append(tid, "assistant_message", answer("x"))
    out = await store.query("thread.request", {"threadId": tid})
    assert out["slimming"]["seenImages"] == [a] and out["attachments"] == {}
    kept = await store.query("thread.request", {"threadId": tid, "seenImages": False})
    assert list(kept["attachments"]) == [a] and kept["slimming"]["imageBudget"] == 8_000_000
    unbounded = await store.query("thread.request", {"threadId": tid, "imageBudget": None})
    assert unbounded["slimming"]["imageBudget"] is None
    for args, field in (
        ({"threadId": tid, "imageBudget": -1}, "imageBudget"),
        ({"threadId": tid, "imageBudget": "8MB"}, "imageBudget"),
        ({"threadId": tid, "seenImages": "yes"}, "seenImages"),
        ({"threadId": 5}, "threadId"),
    ):
        err = await raises(ValidationError, store.query("thread.request", args))
        assert getattr(err, "field", None) == field, (args, err)
    context = await store.query("thread.context", {"threadId": tid})
    assert context["messages"][0]["content"][1]["type"] == "image"  # thread.context unchanged


async def case_default_thumbnailer_is_real_in_the_browser_and_refuses_elsewhere(
    ctx: Ctx,
) -> None:
    store = await ctx.store()
    tid = await store.create_thread("real")
    ids = [await put(store, tid, noise_png(600, 400, seed)) for seed in (1, 2)]
    await store.append(tid, "user_message", user(img(ids[0])))
    await store.append(tid, "user_message", user(img(ids[1])))
    options = SlimOptions(seen_images=False, image_budget=1_000_000)
    if ctx.kind == "memory":
        err = await raises(ThumbnailerUnavailableError, store.request_context(tid, options=options))
        assert "createImageBitmap" in str(err)
        return
    out = await store.request_context(tid, options=options)
    thumb = out["attachments"][ids[0]]
    data = base64.b64decode(thumb["dataBase64"])
    assert data[:3] == b"\xff\xd8\xff" and thumb["mime"] == "image/jpeg"
    assert (thumb["w"], thumb["h"]) == (512, 341) and len(data) < thumb["originalSize"] // 4
    assert "thumbnail" not in out["attachments"][ids[1]]


async def case_missing_originals_are_reported_evicted(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("gone")
    kept = await put(store, tid, b"k" * 10)
    await store.append(tid, "user_message", user(img("no-such-attachment"), img(kept)))
    out = await store.request_context(tid)
    assert out["attachments"] == {
        "no-such-attachment": {"evicted": True},
        kept: {"mime": "image/png", "size": 10, "dataBase64": b64(b"k" * 10)},
    }


async def case_plan_is_pure_and_leaves_its_input_alone(ctx: Ctx) -> None:
    context = {
        "messages": [
            {"role": "user", "content": [img("a", "a.png")], "attachedContext": [page("P", 9000)]},
            {"role": "assistant", "content": [], "model": "m"},
            *({"role": "user", "content": [{"type": "text", "text": f"q{n}"}]} for n in range(3)),
            {"role": "user", "content": [img("b")], "attachedContext": [page("Q", 1)]},
        ],
        "turnContext": None,
        "path": ["n1"],
    }
    frozen = dumps(context)
    meta = {"a": {"size": 10, "meta": {"title": "A"}}, "b": {"size": 10}}
    first = slim_context(context, meta)
    assert dumps(context) == frozen  # the input is not changed
    again = slim_context(context, meta)
    assert dumps(first.context) == dumps(again.context)
    assert (first.seen, first.full, first.thumbnails, first.stale) == (["a"], ["b"], [], 1)
    assert first.context["messages"][0]["content"][0]["text"] == "[Figure 1: A]"
