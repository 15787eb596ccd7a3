"""Lone surrogates (U+D800..U+DFFF unpaired) wherever input enters the domain.

Free text (titles, tags, folder names, message text, tool details) keeps them exactly,
as a value and as an index key, through every read, the export and re-import, the
receipt replay and retention. Identifiers (client and submission ids, thread and
node ids, memory keys, skill ids, asset paths) and what goes to ``chrome.storage.local``
(settings, secrets) refuse them with a ValidationError naming the field, before
anything is written.
"""

from __future__ import annotations

import json
from typing import Any

from behavior import Ctx, raises
from behavior.attachments.cases_tool_details import result, setup
from behavior.payloads import answer, text
from panelot.attachments.records import read_bytes
from panelot.idb.errors import ValidationError
from panelot.lifecycle.retention import DAY_MS
from panelot.settings import MemoryStorageBackend
from panelot.settings.credentials import MemoryKeyStore
from panelot.store import PanelotStore
from panelot.tree.records import MAX_TITLE_CHARS

TITLE = "a\ud800b"
TAG = "t\udc00"
FOLDER = "f\udbff"
TEXT = "x\udfffy \ud83d end"


async def _thread(store: PanelotStore) -> tuple[str, str]:
    tid = await store.create_thread(TITLE, tags=[TAG, "plain"], folderId=FOLDER)
    node = await store.append(tid, "user_message", text(TEXT))
    await store.append(tid, "assistant_message", answer(f"re: {TEXT}"))
    return tid, node["nodeId"]


async def case_free_text_keeps_lone_surrogates_as_value_and_key(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, user = await _thread(store)
    meta = await store.query("thread.get", {"threadId": tid})
    assert (meta["title"], meta["tags"], meta["folderId"]) == (TITLE, [TAG, "plain"], FOLDER)
    # folderId is an index of threads: the lone surrogate is an IndexedDB key here
    by_index = await store.db.table("threads").where("folderId").equals(FOLDER).primary_keys()
    assert by_index == [tid]
    assert await store.db.table("threads").where("folderId").equals("f\ufffd").count() == 0
    listed = await store.query("thread.list", {"folderId": FOLDER, "tag": TAG})
    assert [t["id"] for t in listed] == [tid] and listed[0]["title"] == TITLE
    stored = await store.db.table("nodes").get(user)
    assert stored["payload"]["content"][0]["text"] == TEXT
    messages = (await store.context(tid))["messages"]
    assert [m["content"][0]["text"] for m in messages] == [TEXT, f"re: {TEXT}"]
    markdown = await store.markdown(tid)
    assert TITLE in markdown and TEXT in markdown


async def case_export_and_import_keep_lone_surrogates(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, _ = await _thread(store)
    data = (await store.query("thread.export", {"threadId": tid}))["data"]
    copied = await store.command("thread.import", {"data": data})
    meta = await store.query("thread.get", {"threadId": copied["threadId"]})
    assert (meta["title"], meta["tags"], meta["folderId"]) == (TITLE, [TAG, "plain"], FOLDER)
    texts = [m["content"][0]["text"] for m in (await store.context(copied["threadId"]))["messages"]]
    assert texts == [TEXT, f"re: {TEXT}"]


async def case_receipts_fingerprint_lone_surrogates(ctx: Ctx) -> None:
    store = await ctx.store()
    first = await store.command("thread.create", {"title": "\ud800"}, "sub-1")
    assert await store.command("thread.create", {"title": "\ud800"}, "sub-1") == first
    assert await store.db.table("threads").count() == 1  # the replay wrote nothing
    out = await store.send(
        {
            "type": "thread.create",
            "clientId": store.client_id,
            "submissionId": "sub-1",
            "payload": {"title": "\udc00"},  # another lone surrogate: another request
        }
    )
    assert out["status"] == "failed" and out["error"]["name"] == "ConflictError", out
    assert await store.db.table("threads").count() == 1


async def _refused(store: PanelotStore, command: dict[str, Any], field: str) -> None:
    before = await store.db.table("commandReceipts").count()
    out = await store.send({"clientId": "c", "submissionId": "s", **command})
    assert out["status"] == "failed", out
    assert (out["error"]["name"], out["error"]["field"]) == ("ValidationError", field), out
    assert await store.db.table("commandReceipts").count() == before


async def case_identifiers_refuse_lone_surrogates_and_write_nothing(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("ids")
    counts = {t: await store.db.table(t).count() for t in ("threads", "memories", "skills")}
    create = {"type": "thread.create", "payload": {"title": "ok"}}
    await _refused(store, {**create, "clientId": "c\ud800"}, "clientId")
    await _refused(store, {**create, "submissionId": "\udfff"}, "submissionId")
    append = {"threadId": f"{tid}\ud800", "type": "user_message", "payload": text("hi")}
    await _refused(store, {"type": "message.append", "payload": append}, "payload.threadId")
    await _refused(
        store, {"type": "memory.write", "payload": {"key": "k\ud800", "value": 1}}, "payload.key"
    )
    skill = {"id": "s\udc00", "name": "n", "body": "b"}
    await _refused(store, {"type": "skill.put", "payload": {"skill": skill}}, "payload.skill.id")
    assert {t: await store.db.table(t).count() for t in counts} == counts
    error = await raises(ValidationError, store.query("thread.get", {"threadId": "\ud800"}))
    assert error.field == "threadId"


async def case_settings_and_secrets_refuse_lone_surrogates(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    store = await ctx.store(host)
    await _refused(
        store,
        {"type": "settings.set", "payload": {"group": "ui", "value": {"language": "e\ud800"}}},
        "payload.value.language",
    )
    await _refused(
        store, {"type": "credential.set", "payload": {"secret": "sk-\udc00"}}, "payload.secret"
    )
    assert backend.dump() == {}
    # the same free text is stored where IndexedDB holds it: a thread title
    assert (await store.query("thread.get", {"threadId": await store.create_thread("e\ud800")}))[
        "title"
    ] == "e\ud800"


async def case_large_tool_details_keep_lone_surrogates(ctx: Ctx) -> None:
    store, tid = await setup(ctx)
    details = {"rows": ["\ud800" + "x" * 100 + "\udc00"] * 400}  # past the inline limit
    out = await store.append(tid, "tool_result", result(details))
    got = await store.query("node.details", {"nodeId": out["nodeId"]})
    assert got["stored"] == "attachment" and got["details"] == details


async def case_retention_archives_a_thread_with_lone_surrogates(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, _ = await _thread(store)
    ctx.now += 40 * DAY_MS
    out = await store.command("thread.archive_old", {"days": 30})
    assert [a["threadId"] for a in out["archived"]] == [tid]
    rows = (await store.query("attachment.list", {"threadId": tid}))["attachments"]
    summary = (await read_bytes(store.db, rows[0]["id"]))[1].decode("utf-8")  # valid UTF-8
    assert summary.startswith("# a\ufffdb") and "x\ufffdy \ufffd end" in summary
    assert rows[0]["meta"]["title"] == TITLE


async def case_legacy_sessions_with_lone_surrogate_ids_are_skipped_and_counted(
    ctx: Ctx,
) -> None:
    """Through a backend that returns lone surrogates (Chrome's stores U+FFFD instead).

    An index entry whose id holds one (a storage key, a ``uuid5`` input) is skipped and
    counted like one without an id; a name and message text keep theirs.
    """
    backend = MemoryStorageBackend()
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    store = await ctx.store(host)
    name = "n\udc00" + "x" * 400
    index = [{"id": "ok", "name": name}, {"id": "s\ud800", "name": "bad"}, {"id": 7}, "junk"]
    raw = {"savedSessions": index, "session_ok": [{"role": "user", "content": TEXT}]}
    for key, value in raw.items():  # as such a backend holds them
        backend.area.data[key] = json.dumps(value)
    before = dict(backend.area.data)
    out = await store.command("legacy.import", {"includeHistory": False})
    assert (out["threads"], out["sessions"], out["skippedSessions"]) == (1, 1, 3), out
    assert list(out["threadIds"]["sessions"]) == ["ok"]
    meta = await store.query("thread.get", {"threadId": out["threadIds"]["sessions"]["ok"]})
    assert meta["title"] == name[:MAX_TITLE_CHARS]
    messages = (await store.context(meta["id"]))["messages"]
    assert messages[0]["content"][0]["text"] == TEXT
    assert backend.area.data == before  # a split layout: the import changes no key


async def case_legacy_migration_keeps_unusable_inline_entries(ctx: Ctx) -> None:
    """The migration rewrites usable legacy entries only; any other keeps its history."""
    backend = MemoryStorageBackend()
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    store = await ctx.store(host)
    history = [{"role": "user", "content": "kept"}]
    unusable = {"id": 7, "name": "no id", "history": history}
    await backend.set({"savedSessions": [{"id": "a", "history": history}, unusable]})
    out = await store.command("legacy.import", {})
    assert (out["threads"], out["migrated"], out["skippedSessions"]) == (1, 1, 1), out
    stored = backend.dump()
    assert stored["savedSessions"][1] == unusable
    assert "history" not in stored["savedSessions"][0] and stored["session_a"]["history"] == history
