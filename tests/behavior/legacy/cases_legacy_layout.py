"""The browsa layout: legacy → split migration and ``legacy.import`` (memory backend)."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from behavior import Ctx, raises
from behavior.legacy.browsa_fixture import (
    IMAGE_A,
    IMAGE_B,
    IMAGE_C,
    KEYS,
    data_url,
    legacy_session,
    storage,
)
from panelot.attachments.records import read_bytes
from panelot.faults import FAULTS, InjectedFault
from panelot.legacy.layout import TEXT_DIGEST_CAP, read_session_index, text_digest
from panelot.settings import MemoryStorageBackend
from panelot.settings.credentials import MemoryKeyStore


async def _backend(data: dict[str, Any]) -> MemoryStorageBackend:
    backend = MemoryStorageBackend()
    await backend.set(copy.deepcopy(data))
    return backend


async def case_legacy_migration_bodies_first_and_idempotent(ctx: Ctx) -> None:
    source = storage()
    backend = await _backend(source)
    changed: list[list[str]] = []
    backend.subscribe(lambda changes: changed.append(sorted(changes)))
    FAULTS.arm("legacy.migrate.index")
    try:
        await raises(InjectedFault, read_session_index(backend))
    finally:
        FAULTS.disarm()
    half = backend.dump()
    # crashed between the writes: the body is there, the index is still the full legacy one
    assert half["session_s-legacy"] == source["savedSessions"][0]
    assert half["savedSessions"] == source["savedSessions"]
    entries, inline, migrated, _ = await read_session_index(backend)
    assert migrated == 1 and inline == {}
    done = backend.dump()
    light = done["savedSessions"][0]
    assert light == {
        "id": "s-legacy",
        "name": "Old pinned chat",
        "createdAt": 1_690_000_000_000,
        "pinned": True,
        "textDigest": "two images\nBoth seen.",
    }
    assert done["savedSessions"][1] == source["savedSessions"][1]
    assert done["session_s-legacy"]["history"] == source["savedSessions"][0]["history"]
    assert (
        done["history"] == source["history"]
        and done["session_s-split"] == source["session_s-split"]
    )
    # a third run writes nothing at all
    await read_session_index(backend)
    assert backend.dump() == done
    assert [e["id"] for e in entries] == ["s-legacy", "s-split"]


async def case_legacy_text_digest_text_only_and_capped(ctx: Ctx) -> None:
    hist = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a" * 60_000},
                {"type": "image_url", "image_url": {"url": data_url(IMAGE_A)}},
            ],
        },
        {"role": "assistant", "content": "b" * 60_000},
    ]
    digest = text_digest(hist)
    assert len(digest) == TEXT_DIGEST_CAP and "base64" not in digest
    assert digest.startswith("a" * 60_000 + "\n" + "b")


async def case_legacy_migration_off_reads_inline(ctx: Ctx) -> None:
    backend = await _backend({"savedSessions": [legacy_session()]})
    before = backend.dump()
    entries, inline, migrated, _ = await read_session_index(backend, migrate=False)
    assert migrated == 0 and list(inline) == ["s-legacy"] and backend.dump() == before


async def _sha(store: Any, attachment_id: str) -> str:
    _, data = await read_bytes(store.db, attachment_id)
    return hashlib.sha256(data).hexdigest()


async def case_legacy_import_threads_images_contexts(ctx: Ctx) -> None:
    backend = await _backend(storage())
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    store = await ctx.store(host)
    out = await store.command("legacy.import", {}, "import-1")
    assert out["threads"] == 3 and out["skippedThreads"] == 0 and out["sessions"] == 2
    assert out["migrated"] == 1 and out["historyImported"] is True
    assert (out["images"], out["imagesWithoutBytes"], out["pageContexts"]) == (3, 0, 2)
    assert out["skippedEntries"] == 1 and out["messages"] == 6 + 2 + 2
    ids = out["threadIds"]
    listed = {t["id"]: t for t in await store.query("thread.list")}
    legacy_thread = listed[ids["sessions"]["s-legacy"]]
    assert legacy_thread["title"] == "Old pinned chat" and legacy_thread["pinned"] is True
    assert legacy_thread["createdAt"] == 1_690_000_000_000
    assert listed[ids["sessions"]["s-split"]]["pinned"] is False
    assert listed[ids["history"]]["title"] == "Summarize this paper"
    # the global history: page contexts attached to the following user message
    hist = await store.context(ids["history"])
    msgs = hist["messages"]
    assert [m["role"] for m in msgs] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    page = msgs[0]["attachedContext"][0]
    assert (
        page["title"] == "Lost in the Middle" and page["url"] == "https://arxiv.org/abs/2307.03172"
    )
    assert page["text"] == "p" * 9000
    assert msgs[4]["attachedContext"][0]["url"] == "https://video.test/v/1"
    image_block = msgs[2]["content"][1]
    assert image_block["type"] == "image" and image_block["mime"] == "image/png"
    assert await _sha(store, image_block["attachmentId"]) == hashlib.sha256(IMAGE_A).hexdigest()
    blocks = (await store.context(ids["sessions"]["s-legacy"]))["messages"][0]["content"]
    got = [await _sha(store, b["attachmentId"]) for b in blocks if b["type"] == "image"]
    assert got == [hashlib.sha256(x).hexdigest() for x in (IMAGE_B, IMAGE_C)]
    # once: the same submission replays, a new one skips every thread
    assert await store.command("legacy.import", {}, "import-1") == out
    again = await store.command("legacy.import", {}, "import-2")
    assert again["threads"] == 0 and again["skippedThreads"] == 3 and again["messages"] == 0
    assert len(await store.query("thread.list")) == 3
    # the source: history and bodies as they were (only the seed's migration changed the index)
    now = await backend.get(KEYS)
    source = storage()
    assert now["history"] == source["history"]
    assert now["session_s-split"] == source["session_s-split"]
    assert now["session_s-legacy"]["history"] == source["savedSessions"][0]["history"]


async def case_legacy_import_interrupted_then_rerun(ctx: Ctx) -> None:
    backend = await _backend(storage())
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    store = await ctx.store(host)
    command = {"type": "legacy.import", "clientId": "c", "submissionId": "once", "payload": {}}
    FAULTS.arm("legacy.migrate.index")
    try:
        failed = await store.send(command)
    finally:
        FAULTS.disarm()
    assert failed["status"] == "failed" and failed["error"]["name"] == "InjectedFault"
    assert await store.query("thread.list") == []
    done = await store.send(command)
    assert done["status"] == "completed" and done["response"]["threads"] == 3
    assert done["response"]["migrated"] == 1
