"""Request slimming with real images in Chromium: thumbnails made by the browser.

A thread holds real PNGs (made in Pyodide) and a real JPEG (made by the page's canvas),
more than the default 8 MB unseen-image budget. ``thread.request`` must send the
oldest unseen ones as JPEG thumbnails made with createImageBitmap + OffscreenCanvas,
cache them as derived attachments, keep the newest image at full size, leave every
stored original byte-for-byte as it was, and give the same request text every time.
The last test runs the same path inside the real extension (its CSP, its runtime).
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from browser_harness import run_py, wait_ready

_PNG = """
import random, struct, zlib

def png(width, height, seed):
    rng = random.Random(seed)
    rows = b"".join(b"\\x00" + rng.randbytes(width * 3) for _ in range(height))
    def chunk(kind, body):
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b""))
"""

_MAKE_JPEG = """async ([width, height]) => {
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext("2d");
  const pixels = ctx.createImageData(width, height);
  let x = 12345;
  for (let i = 0; i < pixels.data.length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    pixels.data[i] = i % 4 === 3 ? 255 : x >> 23;
  }
  ctx.putImageData(pixels, 0, 0);
  window.__slimJpeg = await canvas.convertToBlob({ type: "image/jpeg", quality: 0.95 });
  return window.__slimJpeg.size;
}"""

_SCENE = (
    _PNG
    + """
import hashlib, json, js
import panelot.runtime as rt
from panelot.attachments.budget import put_within_budget
from panelot.idb.blobs import blob_bytes

store = rt.store()  # the page's own store: what panelot.query reads
tid, other = await store.create_thread("slim"), await store.create_thread("other")
ids, sha, size = {}, {}, {}

async def put(label, data, mime="image/png", kind="image", title=None):
    meta = {"title": title} if title else None
    rec = await put_within_budget(store.db, tid, kind, mime, data, meta=meta,
                                  budget=store.host.storage.budget)
    raw = data if isinstance(data, bytes) else await blob_bytes(data)
    ids[label], sha[label], size[label] = rec["id"], hashlib.sha256(raw).hexdigest(), rec["size"]
    return {"type": "image", "attachmentId": rec["id"], "name": label + ".img"}

side = 1100
seen = await put("P1", png(side, side, 1), title="First figure")
await store.append(tid, "user_message", {"content": [{"type": "text", "text": "a"}, seen]})
await store.append(tid, "assistant_message",
                   {"content": [{"type": "text", "text": "ok"}], "model": "m", "connectionId": "c"})
p0 = await put("P0", png(side, side, 2))
j1 = await put("J1", js.window.__slimJpeg, mime="image/jpeg")
await store.append(tid, "user_message", {"content": [{"type": "text", "text": "b"}, p0, j1]})
for n, label in enumerate(("P2", "P3")):
    block = await put(label, png(side, side, 3 + n), kind="screenshot")
    call = {"itemId": f"i{n}", "toolName": "shot", "params": {}, "level": "L0"}
    await store.append(tid, "tool_call", call)
    await store.append(tid, "tool_result", {"itemId": f"i{n}", "ok": True, "contentForLlm": [block]})
json.dumps({"tid": tid, "other": other, "ids": ids, "sha": sha, "size": size,
            "db": store.db.name})
"""
)

_REQUEST = """async (threadId) =>
  JSON.stringify(await window.panelot.query("thread.request", { threadId }))"""

_DECODE = """async (b64) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const bitmap = await createImageBitmap(new Blob([bytes]));
  const size = [bitmap.width, bitmap.height];
  bitmap.close();
  return size;
}"""

_RAW = """async (name) => {
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const rows = await new Promise((resolve, reject) => {
    const req = db.transaction("attachments").objectStore("attachments").getAll();
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  db.close();
  const out = [];
  for (const r of rows) {
    const digest = await crypto.subtle.digest("SHA-256", await r.bytes.arrayBuffer());
    const sha = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    out.push({ id: r.id, threadId: r.threadId, kind: r.kind, mime: r.mime, size: r.size,
               createdAt: r.createdAt, sourceRef: r.sourceRef ?? null, meta: r.meta ?? null,
               isBlob: r.bytes instanceof Blob, blobType: r.bytes.type, sha });
  }
  return out;
}"""


@pytest.fixture()
def page(browser: Browser, web_server: str) -> Iterator[Page]:
    """A harness page in a fresh browser context (its own storage)."""
    context: BrowserContext = browser.new_context()
    page = context.new_page()
    page.goto(f"{web_server}index.html")
    wait_ready(page)
    yield page
    context.close()


def request_text(page: Page, thread_id: str) -> str:
    return str(page.evaluate(_REQUEST, thread_id))


def build_scene(page: Page) -> dict[str, Any]:
    jpeg_size = page.evaluate(_MAKE_JPEG, [1500, 1100])
    assert jpeg_size > 1_000_000, jpeg_size  # big enough to matter for the budget
    scene: dict[str, Any] = run_py(page, _SCENE)
    return scene


def test_thumbnails_over_the_default_budget_are_real_cached_and_deterministic(
    page: Page,
) -> None:
    scene = build_scene(page)
    ids, size, name = scene["ids"], scene["size"], scene["db"]
    before = page.evaluate(_RAW, name)
    text = request_text(page, scene["tid"])
    request = json.loads(text)
    slim = request["slimming"]

    # Seen: the answered PNG is a placeholder, numbered by first appearance.
    assert request["messages"][0]["content"][1]["text"] == "[Figure 1: First figure]"
    assert slim["seenImages"] == [ids["P1"]]
    # Budget: the unseen P0, J1, P2, P3 exceed 8 MB; the oldest two become thumbnails.
    unseen = sum(size[k] for k in ("P0", "J1", "P2", "P3"))
    assert slim["unseenImageBytes"] == unseen > slim["imageBudget"] == 8_000_000
    assert unseen - size["P0"] - size["J1"] <= 8_000_000 < unseen - size["P0"]
    assert slim["thumbnails"] == [ids["P0"], ids["J1"]] and slim["thumbnailFailures"] == []
    for label in ("P0", "J1"):
        entry = request["attachments"][ids[label]]
        data = base64.b64decode(entry["dataBase64"])
        assert data[:3] == b"\xff\xd8\xff" and entry["mime"] == "image/jpeg"
        assert entry["thumbnail"] is True and entry["originalSize"] == size[label]
        assert len(data) == entry["size"] < size[label] // 4
        assert page.evaluate(_DECODE, entry["dataBase64"]) == [entry["w"], entry["h"]]
        assert max(entry["w"], entry["h"]) == 512
    assert [request["attachments"][ids["J1"]][k] for k in ("w", "h")] == [512, 375]
    # P2 full size; P3, the newest image, full size: the stored bytes exactly.
    for label in ("P2", "P3"):
        entry = request["attachments"][ids[label]]
        data = base64.b64decode(entry["dataBase64"])
        assert "thumbnail" not in entry and hashlib.sha256(data).hexdigest() == scene["sha"][label]

    # Thumbnails are derived attachments; originals untouched byte for byte.
    after = page.evaluate(_RAW, name)
    originals = {r["id"]: r for r in before}
    assert {r["id"]: r for r in after if r["id"] in originals} == originals
    for label, digest in scene["sha"].items():
        assert originals[ids[label]]["sha"] == digest
    derived = sorted((r for r in after if r["id"] not in originals), key=lambda r: r["sourceRef"])
    assert [r["sourceRef"] for r in derived] == sorted(
        f"thumbnail:512:{ids[k]}" for k in ("P0", "J1")
    )
    for row in derived:
        source = originals[row["sourceRef"].rsplit(":", 1)[1]]
        assert row["isBlob"] and row["blobType"] == "image/jpeg" == row["mime"]
        assert (row["threadId"], row["kind"], row["createdAt"]) == (
            source["threadId"],
            source["kind"],
            source["createdAt"],
        )
        entry = request["attachments"][source["id"]]
        assert row["size"] == entry["size"]
        assert row["sha"] == hashlib.sha256(base64.b64decode(entry["dataBase64"])).hexdigest()

    # Deterministic: again, and after unrelated writes, the same text; no new thumbnail.
    assert request_text(page, scene["tid"]) == text
    run_py(
        page,
        f"""
import json
import panelot.runtime as rt
await rt.store().append({scene["other"]!r}, "user_message",
                       {{"content": [{{"type": "text", "text": "elsewhere"}}]}})
from panelot.attachments.budget import put_within_budget
await put_within_budget(rt.store().db, {scene["other"]!r}, "image", "image/png", b"x" * 5000,
                        budget=rt.store().host.storage.budget)
json.dumps(True)
""",
    )
    assert request_text(page, scene["tid"]) == text
    assert len(page.evaluate(_RAW, name)) == len(after) + 1


def test_thumbnails_in_the_extension(extension_context: tuple[BrowserContext, str]) -> None:
    context, extension_id = extension_context
    page = context.new_page()
    page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
    wait_ready(page)
    name = f"slim-ext-{uuid.uuid4().hex[:8]}"
    code = (
        _PNG
        + f"""
import base64, hashlib, json
from panelot.attachments.records import read_bytes
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.request.slimming import SlimOptions
from panelot.store import PanelotStore
store = await PanelotStore.open(BrowserFactory(), browser_host(), {name!r})
tid = await store.create_thread("ext")
images = [png(900, 600, 7), png(300, 200, 8)]
ids = []
for data in images:
    put = {{"threadId": tid, "kind": "image", "mime": "image/png",
           "dataBase64": base64.b64encode(data).decode()}}
    ids.append((await store.command("attachment.put", put))["attachmentId"])
    block = {{"type": "image", "attachmentId": ids[-1]}}
    await store.append(tid, "user_message", {{"content": [block]}})
out = await store.request_context(tid, options=SlimOptions(image_budget=len(images[1])))
thumb = out["attachments"][ids[0]]
stored = [hashlib.sha256((await read_bytes(store.db, i))[1]).hexdigest() for i in ids]
store.close()
json.dumps({{"thumb": {{k: v for k, v in thumb.items() if k != "dataBase64"}},
            "head": base64.b64decode(thumb["dataBase64"])[:3].hex(),
            "slim": out["slimming"], "ids": ids,
            "same": stored == [hashlib.sha256(d).hexdigest() for d in images],
            "newest": base64.b64decode(out["attachments"][ids[1]]["dataBase64"]) == images[1]}})
"""
    )
    try:
        result = run_py(page, code)
    finally:
        page.close()
    assert result["slim"]["thumbnails"] == [result["ids"][0]]
    assert result["head"] == "ffd8ff" and result["thumb"]["mime"] == "image/jpeg"
    assert (result["thumb"]["w"], result["thumb"]["h"]) == (512, 341)
    assert result["same"] and result["newest"]
