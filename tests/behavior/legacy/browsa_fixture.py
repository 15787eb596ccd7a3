"""Realistic browsa ``chrome.storage.local`` fixtures (legacy and split sessions, images, pages).

Plain data only, so the same fixture is written into a memory backend here and into a
real extension's ``chrome.storage.local`` by the browser tests.
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

PREFIX = "[Page context attached by browsa]"


def png(width: int, height: int, seed: int) -> bytes:
    """A valid, non-trivial RGB PNG (no pixel may change on import)."""
    rows = b"".join(
        b"\0" + bytes((x * 7 + y * 13 + seed) % 256 for x in range(width * 3))
        for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def data_url(data: bytes, mime: str = "image/png") -> str:
    """A base64 data URL."""
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


IMAGE_A = png(64, 48, 1)
IMAGE_B = png(33, 17, 99)
IMAGE_C = bytes(range(256)) * 3  # arbitrary bytes under a JPEG MIME type


def page_context(title: str, url: str, body: str) -> str:
    """A page-context entry's content, as browsa writes it."""
    return f"{PREFIX}\nTitle: {title}\nURL: {url}\n\n{body}"


def history() -> list[dict[str, Any]]:
    """The global flat history: a page context, an image question, a video."""
    return [
        {
            "role": "user",
            "content": page_context(
                "Lost in the Middle", "https://arxiv.org/abs/2307.03172", "p" * 9000
            ),
            "attachId": "att-1",
        },
        {"role": "user", "content": "Summarize this paper"},
        {"role": "assistant", "content": "It studies long contexts.", "model": "gpt-x"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this chart?"},
                {"type": "image_url", "image_url": {"url": data_url(IMAGE_A)}},
            ],
        },
        {"role": "assistant", "content": "A gradient.", "imagesSeen": True},
        {
            "role": "user",
            "content": page_context("A talk", "", "[00:01] hello"),
            "videoSrc": "https://video.test/v/1",
        },
        {"role": "user", "content": "Timestamps please"},
        {"role": "assistant", "content": "[00:01] greeting"},
        {"role": "system", "content": "ignored"},
    ]


def legacy_session(sid: str = "s-legacy", pinned: bool = True) -> dict[str, Any]:
    """A savedSessions entry in the legacy layout: the history inline."""
    return {
        "id": sid,
        "name": "Old pinned chat",
        "createdAt": 1_690_000_000_000,
        "pinned": pinned,
        "history": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "two images"},
                    {"type": "image_url", "image_url": {"url": data_url(IMAGE_B)}},
                    {"type": "image_url", "image_url": {"url": data_url(IMAGE_C, "image/jpeg")}},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Both seen."}]},
        ],
    }


def split_session(sid: str = "s-split") -> tuple[dict[str, Any], dict[str, Any]]:
    """A light index entry and its ``session_<id>`` body (the split layout)."""
    body_history = [
        {"role": "user", "content": "hello split"},
        {"role": "assistant", "content": "hi"},
    ]
    light = {
        "id": sid,
        "name": "Split chat",
        "createdAt": 1_700_000_000_000,
        "pinned": False,
        "textDigest": "hello split\nhi",
    }
    return light, {"id": sid, "name": "Split chat", "history": body_history}


def storage() -> dict[str, Any]:
    """Every key of the fixture: history, a mixed index (legacy + split), the split body."""
    light, body = split_session()
    return {
        "history": history(),
        "savedSessions": [legacy_session(), light],
        "session_s-split": body,
        "activeProvider": "hermes",
    }


KEYS = ["history", "savedSessions", "session_s-split", "session_s-legacy", "activeProvider"]
"""Every key the fixture (and its migration) can hold."""


# ---- dated sessions and images in every data URL form browsa may hold ----------------------

DAY_MS = 86_400_000
DATES = {
    "s-old": 1_750_000_000_000,  # 2025-06-15
    "s-mid": 1_755_000_000_000,
    "s-new": 1_760_000_000_000,
    "s-images": 1_745_000_000_000,
}
"""The sessions' ``createdAt``; the index holds them out of time order."""
UNDATED = {"s-undated": None, "s-text-date": "2025-01-01", "s-negative": -1}
"""Sessions whose ``createdAt`` is missing or not a time (the key is dropped for None)."""
WITH_BYTES = [IMAGE_A, IMAGE_B, IMAGE_C, IMAGE_A[:100], IMAGE_C]
"""The bytes of the images of ``s-images`` that must be imported, in order."""


def wrapped(data: bytes, mime: str = "image/png", width: int = 76, sep: str = "\n") -> str:
    """A base64 data URL whose body is broken into lines of ``width`` (as MIME encoders do)."""
    body = base64.b64encode(data).decode()
    lines = [body[i : i + width] for i in range(0, len(body), width)]
    return f"data:{mime};base64,{sep.join(lines)}"


def _image(url: str | None) -> dict[str, Any]:
    return (
        {"type": "image_url", "image_url": {"url": url}}
        if url is not None
        else {"type": "image_url"}
    )


def image_parts() -> list[dict[str, Any]]:
    """Five decodable images, five without bytes, one external, after a text part."""
    spaced = " ".join(base64.b64encode(IMAGE_C).decode()[i : i + 4] for i in range(0, 1024, 4))
    unpadded = base64.b64encode(IMAGE_A[:100]).decode().rstrip("=")
    percent = base64.b64encode(IMAGE_C).decode().replace("+", "%2B").replace("/", "%2F")
    return [
        {"type": "text", "text": "all these pictures"},
        _image(wrapped(IMAGE_A)),  # lines of 76, LF
        _image(wrapped(IMAGE_B, sep="\r\n")),  # CRLF
        _image(f"data:image/jpeg;base64,\t{spaced}\n"),  # spaces and tabs
        _image(f"data:image/png;base64,{unpadded}"),  # padding left out
        _image(f"data:image/jpeg;base64,{percent}"),  # percent-encoded + and /
        _image("data:image/png;base64,iVBORw0KGgo!!!!"),  # not base64: no bytes
        _image("data:image/png;base64,AAAAA"),  # 5 characters: no bytes
        _image("data:image/gif;base64,"),  # empty: no bytes
        _image(None),  # no URL at all: no bytes
        _image(""),  # an empty URL: no bytes
        _image("https://img.test/cat.png"),  # external: text
    ]


def dated_storage() -> dict[str, Any]:
    """A split layout whose sessions carry dates (and some no usable date), with images."""
    index: list[dict[str, Any]] = []
    out: dict[str, Any] = {"history": [{"role": "user", "content": "still open"}]}
    order = ["s-mid", "s-new", "s-undated", "s-old", "s-text-date", "s-images", "s-negative"]
    for sid in order:
        entry: dict[str, Any] = {"id": sid, "name": f"Chat {sid}", "pinned": False}
        when = DATES.get(sid, UNDATED.get(sid))
        if when is not None:
            entry["createdAt"] = when
        index.append(entry)
        question: Any = image_parts() if sid == "s-images" else f"question of {sid}"
        history = [
            {"role": "user", "content": question},
            {"role": "assistant", "content": f"answer of {sid}"},
        ]
        out[f"session_{sid}"] = {"id": sid, "name": entry["name"], "history": history}
    out["savedSessions"] = index
    return out


DATED_KEYS = ["history", "savedSessions", *(f"session_{s}" for s in [*DATES, *UNDATED])]
"""Every key of :func:`dated_storage`."""
