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
