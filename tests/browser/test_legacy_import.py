"""The browsa layout in a real extension's chrome.storage.local: migration and import."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from behavior.legacy.browsa_fixture import (
    DATED_KEYS,
    DATES,
    IMAGE_A,
    IMAGE_B,
    IMAGE_C,
    KEYS,
    UNDATED,
    WITH_BYTES,
    dated_storage,
    storage,
)
from browser_harness import query, run_py, wait_ready
from extension_pages import envelope, open_page, storage_remove, storage_set
from panelot.legacy.convert import parse_data_url
from panelot.legacy.importer import NAMESPACE

THREAD_IDS = [
    str(uuid.uuid5(NAMESPACE, key))
    for key in ("browsa:history", "browsa:session:s-legacy", "browsa:session:s-split")
]

IMAGE_SHAS = """
import json, hashlib
from panelot import runtime
from panelot.attachments.records import read_bytes
store = runtime.store()
out = []
for tid in json.loads(THREADS):
    ctx = await store.context(tid)
    for m in ctx["messages"]:
        for b in m.get("content", []):
            if b["type"] == "image":
                rec, data = await read_bytes(store.db, b["attachmentId"])
                out.append([tid, b["mime"], rec["kind"], rec.get("provenance"), hashlib.sha256(data).hexdigest()])
json.dumps(out)
"""


DATED_IDS = {sid: str(uuid.uuid5(NAMESPACE, f"browsa:session:{sid}")) for sid in [*DATES, *UNDATED]}


def get_keys(page: Page, keys: list[str]) -> dict[str, Any]:
    """chrome.storage.local.get of an explicit key list."""
    result: dict[str, Any] = page.evaluate("(keys) => chrome.storage.local.get(keys)", keys)
    return result


def clean(page: Page) -> None:
    """Remove the fixture keys and any thread a previous import made."""
    storage_remove(page, [*KEYS, *DATED_KEYS])
    existing = {t["id"] for t in query(page, "thread.list", {"archived": None})}
    for tid in [*THREAD_IDS, *DATED_IDS.values()]:
        if tid in existing:
            assert envelope(page, "thread.delete", {"threadId": tid})["status"] == "completed"


@pytest.fixture
def panel(extension_context: tuple[BrowserContext, str]) -> Iterator[Page]:
    context, extension_id = extension_context
    page = open_page(context, extension_id)
    clean(page)
    storage_set(page, storage())
    yield page
    clean(page)
    page.close()


def test_import_legacy_and_split_sessions_with_images_and_pages(panel: Page) -> None:
    out = envelope(panel, "legacy.import", {}, "browsa-import-1")
    assert out["status"] == "completed", out
    r = out["response"]
    assert (r["threads"], r["sessions"], r["migrated"], r["images"], r["pageContexts"]) == (
        3,
        2,
        1,
        3,
        2,
    )
    assert r["imagesWithoutBytes"] == 0 and r["skippedEntries"] == 1
    assert sorted([r["threadIds"]["history"], *r["threadIds"]["sessions"].values()]) == sorted(
        THREAD_IDS
    )

    threads = {t["id"]: t for t in query(panel, "thread.list")}
    legacy = threads[r["threadIds"]["sessions"]["s-legacy"]]
    assert (legacy["title"], legacy["pinned"], legacy["createdAt"]) == (
        "Old pinned chat",
        True,
        1_690_000_000_000,
    )
    assert threads[r["threadIds"]["sessions"]["s-split"]]["title"] == "Split chat"

    history = query(panel, "thread.context", {"threadId": r["threadIds"]["history"]})["messages"]
    assert history[0]["attachedContext"][0]["title"] == "Lost in the Middle"
    assert history[0]["attachedContext"][0]["text"] == "p" * 9000
    assert history[4]["attachedContext"][0]["url"] == "https://video.test/v/1"

    import json

    shas = run_py(panel, f"THREADS = {json.dumps(json.dumps(THREAD_IDS))}\n" + IMAGE_SHAS)
    sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    assert [(s[1], s[2], s[3], s[4]) for s in shas] == [
        ("image/png", "image", "import", sha(IMAGE_A)),
        ("image/png", "image", "import", sha(IMAGE_B)),
        ("image/jpeg", "image", "import", sha(IMAGE_C)),
    ]

    # the source keys: history and bodies untouched; the index now in the split layout
    source = storage()
    now = get_keys(panel, KEYS)
    assert now["history"] == source["history"]
    assert now["session_s-split"] == source["session_s-split"]
    assert now["session_s-legacy"] == source["savedSessions"][0]
    assert [set(e) for e in now["savedSessions"]] == [
        {"id", "name", "createdAt", "pinned", "textDigest"}
    ] * 2
    assert now["activeProvider"] == "hermes"

    # twice imports once: the receipt replays; a new submission skips every thread
    assert envelope(panel, "legacy.import", {}, "browsa-import-1") == out
    again = envelope(panel, "legacy.import", {}, "browsa-import-2")["response"]
    assert (again["threads"], again["skippedThreads"], again["migrated"]) == (0, 3, 0)
    assert get_keys(panel, KEYS) == now


def test_migration_killed_between_writes_completes_on_rerun(panel: Page) -> None:
    source = storage()
    run_py(
        panel,
        'import json\nfrom panelot.faults import FAULTS\nFAULTS.arm("legacy.migrate.index")\njson.dumps(1)',
    )
    failed = envelope(panel, "legacy.import", {}, "killed")
    assert failed["status"] == "failed" and failed["error"]["name"] == "InjectedFault"
    half = get_keys(panel, KEYS)
    assert half["session_s-legacy"] == source["savedSessions"][0]  # the body was written ...
    assert half["savedSessions"] == source["savedSessions"]  # ... the index not yet
    assert not {t["id"] for t in query(panel, "thread.list")} & set(THREAD_IDS)

    panel.reload()  # the page dies; a new one boots
    wait_ready(panel)
    done = envelope(panel, "legacy.import", {}, "killed")
    assert done["status"] == "completed" and done["response"]["threads"] == 3
    assert done["response"]["migrated"] == 1
    now = get_keys(panel, KEYS)
    assert now["savedSessions"][0]["textDigest"] == "two images\nBoth seen."
    assert now["session_s-legacy"]["history"] == source["savedSessions"][0]["history"]
    msgs = query(panel, "thread.context", {"threadId": THREAD_IDS[1]})["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant"] and len(msgs[0]["content"]) == 3


@pytest.fixture
def dated_panel(extension_context: tuple[BrowserContext, str]) -> Iterator[Page]:
    context, extension_id = extension_context
    page = open_page(context, extension_id)
    clean(page)
    storage_set(page, dated_storage())
    yield page
    clean(page)
    page.close()


def test_sessions_keep_their_dates_and_wrapped_base64_images_their_bytes(
    dated_panel: Page,
) -> None:
    """Through real chrome.storage.local: dates, list order, and images in every form."""
    started = dated_panel.evaluate("() => Date.now()")
    out = envelope(dated_panel, "legacy.import", {}, f"browsa-dated-{uuid.uuid4()}")
    assert out["status"] == "completed", out
    r = out["response"]
    assert (r["threads"], r["images"], r["imagesWithoutBytes"], r["externalImages"]) == (
        len(DATED_IDS) + 1,
        len(WITH_BYTES),
        5,
        1,
    )
    listed = query(dated_panel, "thread.list")
    by_id = {t["id"]: t for t in listed}
    for sid, when in DATES.items():
        thread = by_id[DATED_IDS[sid]]
        assert (thread["createdAt"], thread["updatedAt"]) == (when, when), (sid, thread)
    dated = [t["id"] for t in listed if t["id"] in {DATED_IDS[s] for s in DATES}]
    assert dated == [DATED_IDS[s] for s in ("s-new", "s-mid", "s-old", "s-images")]
    for tid in [*(DATED_IDS[s] for s in UNDATED), r["threadIds"]["history"]]:
        assert by_id[tid]["updatedAt"] >= started, by_id[tid]

    threads = json.dumps(json.dumps([DATED_IDS["s-images"]]))
    shas = run_py(dated_panel, f"THREADS = {threads}\n" + IMAGE_SHAS)  # images with bytes
    assert [s[4] for s in shas] == [hashlib.sha256(x).hexdigest() for x in WITH_BYTES]
    export = query(dated_panel, "thread.export", {"threadId": DATED_IDS["s-images"]})
    node = export["data"]["nodes"][0]  # the user message with the images
    evicted = [b for b in node["payload"]["content"] if b.get("evicted")]
    assert len(evicted) == 5 and all(b["attachmentId"] == "" for b in evicted)
    assert node["ts"] == DATES["s-images"]


_B64 = base64.b64encode(bytes(range(256))).decode()
DATA_URLS = [
    f"data:image/png;base64,{_B64}",
    "data:image/png;base64," + "\n".join(_B64[i : i + 76] for i in range(0, len(_B64), 76)),
    "data:image/png;base64," + "\r\n".join(_B64[i : i + 64] for i in range(0, len(_B64), 64)),
    f"data:image/png;base64, {_B64[:8]} \t{_B64[8:]}\f",
    f"data:image/png;base64,{_B64.rstrip('=')}",
    "data:image/png;base64,AAAAA",
    "data:image/png;base64,AAA=A",
    "data:image/png;base64,AA=",
    "data:image/png;base64,AA==",
    "data:image/png;base64,AB==",
    "data:image/png;base64,A===",
    "data:image/png;base64,iVBOR!!!",
    "data:image/png;base64,-_-_",
    "data:image/png;base64,AAAA\x0bAAAA",
    "data:image/png;base64,",
    "data:image/png;base64",
    "DATA:image/PNG;BASE64,AAAA",
    "data:image/png; base64,AAAA",
    "data:image/png;base64 ,AAAA",
    "data:image/png;charset=x;base64,AAAA",
    "data:image/png;base64;x,AAAA",
    "data:image/png;base\n64,AAAA",
    "  data:image/png;base64,AAAA  ",
    "data:image/png;base64,AA%3D%3D",
    "data:image/png;base64,%41%41%41%41",
    "data:image/svg+xml,<svg>\n<g/></svg>",
    "data:image/svg+xml,%3Csvg%3E%20",
    "data:,hello",
]
"""Data URLs in the forms a stored image may take, valid and not."""

_FETCH = """async (urls) => Promise.all(urls.map(async (url) => {
  try {
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  } catch {
    return null;
  }
}))"""


def test_data_urls_decode_to_the_bytes_chromium_reads(page: Page) -> None:
    """parse_data_url gives the bytes Chromium's fetch gives, and fails where it fails."""
    seen = page.evaluate(_FETCH, DATA_URLS)
    ours = []
    for url in DATA_URLS:
        parsed = parse_data_url(url)
        assert parsed is not None, url
        ours.append(None if parsed[1] is None else parsed[1].hex())
    assert ours == seen
    assert seen[1] == bytes(range(256)).hex() and seen[5] is None  # both kinds are there
