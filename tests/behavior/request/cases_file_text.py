"""Attached text files reach the model as their text, within the request's bounds."""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from behavior.payloads import b64
from panelot.attachments.records import read_bytes
from panelot.idb.errors import ValidationError
from panelot.request.file_text import FILE_TEXT_CHARS, REQUEST_TEXT_CHARS, is_text_like
from panelot.store import PanelotStore


async def say(store: PanelotStore, tid: str | None, files: list[tuple[str, str, bytes]]) -> Any:
    """Send a user message carrying ``files`` (name, mime, bytes); return the response."""
    payload: dict[str, Any] = {
        "content": [
            {"type": "text", "text": "see attached"},
            *({"type": "file", "upload": i} for i in range(len(files))),
        ],
        "uploads": [{"name": n, "mime": m, "dataBase64": b64(d)} for n, m, d in files],
    }
    payload.update({"threadId": tid} if tid else {"thread": {"title": "files"}})
    return await store.command("message.send", payload)


def file_texts(request: dict[str, Any]) -> list[str]:
    return [
        b["text"]
        for m in request["messages"]
        for b in m["content"]
        if b.get("type") == "text" and b.get("file")
    ]


async def case_text_files_are_sent_as_text_and_others_stay_references(ctx: Ctx) -> None:
    store = await ctx.store()
    sent = await say(
        store,
        None,
        [
            ("notes.txt", "text/plain", "first line\nsecond ✓\n".encode()),
            ("data.json", "application/json", b'{"a": 1}'),
            ("script.py", "application/octet-stream", b"print('hi')\n"),  # untyped: by name
            ("photo.bin", "application/octet-stream", b"\x00\xff\x10"),
            ("latin.txt", "text/plain", "caf\xe9".encode("latin-1")),  # not UTF-8
        ],
    )
    tid = sent["threadId"]
    request = await store.query("thread.request", {"threadId": tid})
    assert file_texts(request) == [
        "[file: notes.txt]\nfirst line\nsecond ✓\n",
        '[file: data.json]\n{"a": 1}',
        "[file: script.py]\nprint('hi')\n",
    ]
    kept = [b for b in request["messages"][0]["content"] if b.get("type") == "file"]
    assert [b["name"] for b in kept] == ["photo.bin", "latin.txt"]
    ids = [a["attachmentId"] for a in sent["attachments"]]
    assert request["slimming"]["textFiles"] == ids[:3]
    assert request["slimming"]["textFilesCut"] == []
    _, stored = await read_bytes(store.db, ids[0])
    assert stored == "first line\nsecond ✓\n".encode()  # the bytes are never changed
    again = await store.query("thread.request", {"threadId": tid})
    assert again == request  # the same tree gives the same request


async def case_text_files_are_bounded_per_file_and_per_request(ctx: Ctx) -> None:
    store = await ctx.store()
    big = ("a" * (FILE_TEXT_CHARS + 5)).encode()
    sent = await say(store, None, [("big.md", "text/markdown", big)])
    tid = sent["threadId"]
    request = await store.query("thread.request", {"threadId": tid})
    (only,) = file_texts(request)
    assert only.startswith("[file: big.md]\n" + "a" * FILE_TEXT_CHARS + "\n[… 5 more characters")
    assert request["slimming"]["textFilesCut"] == [sent["attachments"][0]["attachmentId"]]
    # files past the request's budget are named, not sent; the newest message goes first
    per_message = REQUEST_TEXT_CHARS // FILE_TEXT_CHARS
    full = ("b" * FILE_TEXT_CHARS).encode()
    await say(store, tid, [(f"f{i}.txt", "text/plain", full) for i in range(per_message)])
    request = await store.query("thread.request", {"threadId": tid})
    texts = file_texts(request)
    assert texts[0].startswith("[file: big.md, ") and "not sent" in texts[0]
    assert all(t.endswith("b" * 100) for t in texts[1:])
    assert sum(len(t) for t in texts[1:]) <= REQUEST_TEXT_CHARS + 100 * per_message


async def case_what_counts_as_a_text_file(ctx: Ctx) -> None:
    yes = [
        ("text/plain", "a"),
        ("text/csv; charset=utf-8", "a"),
        ("application/json", "a"),
        ("application/vnd.api+json", "a"),
        ("image/svg+xml", "a"),
        ("", "README.md"),
        ("application/octet-stream", "main.rs"),
    ]
    no = [("image/png", "a.txt"), ("application/pdf", "a.md"), ("", "archive.zip"), (None, None)]
    assert all(is_text_like(m, n) for m, n in yes)
    assert not any(is_text_like(m, n) for m, n in no)


async def case_file_readable_answers_by_the_same_rule(ctx: Ctx) -> None:
    # The panel asks it when a file is attached, to say when the model sees only a name.
    store = await ctx.store()
    for mime, name in [("text/plain", "notes.txt"), ("", "main.rs"), ("application/json", "a")]:
        answer = await store.query("file.readable", {"name": name, "mime": mime})
        assert answer["readable"] is True, (mime, name)
        assert answer["maxChars"] == FILE_TEXT_CHARS, (mime, name)
    for mime, name in [
        ("application/x-msdownload", "setup.exe"),
        ("application/octet-stream", "setup.exe"),
        ("application/pdf", "report.md"),
    ]:
        answer = await store.query("file.readable", {"name": name, "mime": mime})
        assert answer["readable"] is False, (mime, name)
    assert (await store.query("file.readable", {"name": "notes.txt"}))["readable"] is True
    error = await raises(ValidationError, store.query("file.readable", {"mime": "text/plain"}))
    assert getattr(error, "field", None) == "name"
