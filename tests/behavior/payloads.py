"""Values the cases write: node payloads and attachment data.

Shared by the cases of every section (and by ``tests/browser/test_bridge.py``); like
the cases, it imports nothing but the standard library, so it runs unchanged in the page.
"""

from __future__ import annotations

import base64
from typing import Any


def text(t: str) -> dict[str, Any]:
    """A message payload of one text block."""
    return {"content": [{"type": "text", "text": t}]}


def answer(t: str, tokens: int = 0, cost: float = 0.0) -> dict[str, Any]:
    """An assistant reply's payload: one text block, model ``m1``, connection ``c1``, usage."""
    usage = {"inputTokens": tokens, "outputTokens": tokens, "costUsd": cost}
    return {
        "content": [{"type": "text", "text": t}],
        "model": "m1",
        "connectionId": "c1",
        "usage": usage,
    }


def b64(data: bytes) -> str:
    """``data`` as base64 text (what ``attachment.put`` takes as ``dataBase64``)."""
    return base64.b64encode(data).decode("ascii")
