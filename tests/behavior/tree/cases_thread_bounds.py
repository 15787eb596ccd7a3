"""Limits on titles, tags and folder names: the same on every write path.

At the limit a write is accepted, one over it is refused with a ValidationError naming
the field, and nothing is written (no thread, no change, no receipt). A stored record
already over a limit still lists, loads, exports and takes patches that leave it alone.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import text
from panelot.store import PanelotStore
from panelot.tree.records import MAX_FOLDER_CHARS, MAX_TAG_CHARS, MAX_TAGS, MAX_TITLE_CHARS


async def _tables(store: PanelotStore) -> tuple[Any, ...]:
    threads = sorted((await store.db.table("threads").to_list()), key=lambda t: t["id"])
    return threads, await store.db.table("commandReceipts").count()


async def _refused(store: PanelotStore, kind: str, payload: dict[str, Any], field: str) -> None:
    before = await _tables(store)
    out = await store.send({"type": kind, "clientId": "c", "submissionId": "s", "payload": payload})
    assert out["status"] == "failed", out
    assert out["error"]["field"] == field, out
    assert out["error"]["name"] in ("ValidationError", "ImportError"), out
    assert await _tables(store) == before


def _tags(n: int) -> list[str]:
    return [str(i) for i in range(n)]


async def case_create_bounds_title_tags_and_folder(ctx: Ctx) -> None:
    store = await ctx.store()
    longest = {
        "title": "t" * MAX_TITLE_CHARS,
        "tags": [f"{i:02d}" + "g" * (MAX_TAG_CHARS - 2) for i in range(MAX_TAGS)],
        "folderId": "f" * MAX_FOLDER_CHARS,
    }
    tid = (await store.command("thread.create", longest))["threadId"]
    meta = await store.query("thread.get", {"threadId": tid})
    assert [meta[k] for k in longest] == list(longest.values())
    astral = await store.command("thread.create", {"title": "😀" * MAX_TITLE_CHARS})
    assert astral["threadId"]  # code points are counted, not UTF-16 units
    over_tag = [*longest["tags"][:3], "x" * (MAX_TAG_CHARS + 1)]
    for payload, field in [
        ({"title": "t" * (MAX_TITLE_CHARS + 1)}, "payload.title"),
        ({"title": "a", "tags": _tags(MAX_TAGS + 1)}, "payload.tags"),
        ({"title": "a", "tags": over_tag}, "payload.tags[3]"),
        ({"title": "a", "folderId": "f" * (MAX_FOLDER_CHARS + 1)}, "payload.folderId"),
    ]:
        await _refused(store, "thread.create", payload, field)


async def case_update_bounds_what_the_patch_changes(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("short")
    at_limit = {
        "title": "t" * MAX_TITLE_CHARS,
        "tags": ["g" * MAX_TAG_CHARS] * MAX_TAGS,
        "folderId": "f" * MAX_FOLDER_CHARS,
    }
    await store.command("thread.update", {"threadId": tid, "patch": at_limit})
    meta = await store.query("thread.get", {"threadId": tid})
    assert [meta[k] for k in at_limit] == list(at_limit.values())
    for patch, field in [
        ({"title": "t" * 200_000}, "payload.patch.title"),
        ({"title": "t" * (MAX_TITLE_CHARS + 1)}, "payload.patch.title"),
        ({"tags": ["a"] * (MAX_TAGS + 1)}, "payload.patch.tags"),
        ({"tags": ["a", "b", "c", "g" * (MAX_TAG_CHARS + 1)]}, "payload.patch.tags[3]"),
        ({"folderId": "f" * (MAX_FOLDER_CHARS + 1)}, "payload.patch.folderId"),
    ]:
        await _refused(store, "thread.update", {"threadId": tid, "patch": patch}, field)
    assert await store.query("thread.get", {"threadId": tid}) == meta


async def case_import_applies_the_same_bounds(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t" * MAX_TITLE_CHARS, tags=["g" * MAX_TAG_CHARS])
    await store.append(tid, "user_message", text("hi"))
    data = (await store.query("thread.export", {"threadId": tid}))["data"]
    copied = await store.command("thread.import", {"data": data})
    assert (await store.query("thread.get", {"threadId": copied["threadId"]}))["title"] == (
        "t" * MAX_TITLE_CHARS
    )
    for change, field in [
        ({"title": "t" * (MAX_TITLE_CHARS + 1)}, "payload.data.thread.title"),
        ({"tags": ["a", "g" * (MAX_TAG_CHARS + 1)]}, "payload.data.thread.tags[1]"),
        ({"tags": ["a"] * (MAX_TAGS + 1)}, "payload.data.thread.tags"),
        ({"folderId": "f" * (MAX_FOLDER_CHARS + 1)}, "payload.data.thread.folderId"),
    ]:
        bad = {**data, "thread": {**data["thread"], **change}}
        await _refused(store, "thread.import", {"data": bad}, field)
    assert await store.db.table("nodes").count() == 2  # the original and the one copy


async def case_stored_records_over_the_limits_still_load(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("short")
    await store.append(tid, "user_message", text("hi"))
    raw = await store.db.table("threads").get(tid)
    huge = {"title": "t" * 200_000, "tags": ["g" * 100] * 60, "folderId": "f" * 500}
    await store.db.table("threads").put({**raw, **huge})
    listed = await store.query("thread.list", {"folderId": huge["folderId"]})
    assert [t["id"] for t in listed] == [tid] and listed[0]["title"] == huge["title"]
    meta = await store.query("thread.get", {"threadId": tid})
    assert [meta[k] for k in huge] == list(huge.values())
    assert (await store.context(tid))["messages"][0]["content"][0]["text"] == "hi"
    assert (await store.query("thread.check", {"threadId": tid}))["ok"]
    # a patch that leaves the long fields alone, or repeats them, is accepted ...
    await store.command("thread.update", {"threadId": tid, "patch": {"pinned": True}})
    await store.command("thread.update", {"threadId": tid, "patch": {**huge, "archived": True}})
    meta = await store.query("thread.get", {"threadId": tid})
    assert meta["pinned"] and meta["archived"] and meta["title"] == huge["title"]
    # ... one that changes them is held to the limits
    patch = {"title": huge["title"] + "!"}
    await _refused(store, "thread.update", {"threadId": tid, "patch": patch}, "payload.patch.title")
    exported = (await store.query("thread.export", {"threadId": tid}))["data"]
    assert exported["thread"]["title"] == huge["title"]
    await _refused(store, "thread.import", {"data": exported}, "payload.data.thread.title")


async def case_legacy_import_cuts_long_session_names(ctx: Ctx) -> None:
    from panelot.settings import MemoryStorageBackend
    from panelot.settings.credentials import MemoryKeyStore

    backend = MemoryStorageBackend()
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    store = await ctx.store(host)
    name = "n" * (MAX_TITLE_CHARS + 50)
    session = {"id": "long", "name": name, "history": [{"role": "user", "content": "q"}]}
    await backend.set({"savedSessions": [session]})
    out = await store.command("legacy.import", {"includeHistory": False})
    meta = await store.query("thread.get", {"threadId": out["threadIds"]["sessions"]["long"]})
    assert meta["title"] == name[:MAX_TITLE_CHARS] and meta["tags"] == ["imported:browsa"]
