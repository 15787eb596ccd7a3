"""The previous extension's (``browsa``) layout in ``chrome.storage.local``, and its migration.

Keys:

* ``history``: the global flat conversation, ``[{role, content, ...}]``; ``content`` is a
  string or parts ``[{type: 'text', text}, {type: 'image_url', image_url: {url}}]``.
* ``savedSessions``: the light index ``[{id, name, createdAt, pinned, textDigest}]``;
  each body lives under ``session_<id>``. In the **legacy** layout an entry holds its
  whole ``history`` inline.
* ``session_<id>``: a body, read by its own key only. This module writes the legacy
  entry itself (``{id, name, createdAt, pinned?, history}``); it reads that, or a bare
  history array.

:func:`read_session_index` is that extension's ``readSessionIndex()``: it migrates legacy
entries in place, writing **every body before rewriting the index**. It is idempotent
(a rerun finds nothing legacy, or rewrites identical bodies) and crash-safe: a crash
between the two writes leaves the inline index, still complete, and a rerun finishes.
The fault point ``legacy.migrate.index`` (:data:`panelot.faults.FAULTS`) sits between.
"""

from __future__ import annotations

from typing import Any

from panelot.faults import FAULTS
from panelot.legacy.bounds import Budget, check_history, check_sessions
from panelot.settings.backend import StorageBackend
from panelot.surrogates import well_formed

__all__ = [
    "BODY_PREFIX",
    "HISTORY_KEY",
    "INDEX_KEY",
    "TEXT_DIGEST_CAP",
    "body_key",
    "is_legacy",
    "light_entry",
    "message_text",
    "read_history",
    "read_session_bodies",
    "read_session_index",
    "text_digest",
    "usable",
]

HISTORY_KEY = "history"
INDEX_KEY = "savedSessions"
BODY_PREFIX = "session_"
TEXT_DIGEST_CAP = 100_000
"""``textDigest`` covers text only, at most this many characters per session."""


def body_key(session_id: str) -> str:
    """The storage key of a session body."""
    return f"{BODY_PREFIX}{session_id}"


def message_text(message: Any) -> str:
    """The text of one history entry: a string content, or its text parts joined."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return ""


def text_digest(history: Any) -> str:
    """Text only (no image bytes), joined by newlines, capped at 100,000 characters."""
    if not isinstance(history, list):
        return ""
    texts = (message_text(m) for m in history)
    return "\n".join(t for t in texts if t)[:TEXT_DIGEST_CAP]


def is_legacy(entry: Any) -> bool:
    """Whether an index entry still holds its history inline."""
    return isinstance(entry, dict) and isinstance(entry.get("history"), list)


def light_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """The light index entry of a (legacy or light) entry."""
    digest = entry.get("textDigest")
    if is_legacy(entry) or not isinstance(digest, str):
        digest = text_digest(entry.get("history"))
    return {
        "id": entry.get("id"),
        "name": entry.get("name"),
        "createdAt": entry.get("createdAt"),
        "pinned": bool(entry.get("pinned")),
        "textDigest": digest,
    }


def usable(entry: Any) -> bool:
    """Whether an index entry can be imported: an object with a non-empty, well-formed id.

    The id becomes a storage key (``session_<id>``) and the input of the thread's
    ``uuid5``, so an id holding a lone surrogate is as unusable as a missing one.
    """
    if not isinstance(entry, dict):
        return False
    session_id = entry.get("id")
    return isinstance(session_id, str) and bool(session_id) and well_formed(session_id)


async def read_session_index(
    backend: StorageBackend, migrate: bool = True
) -> tuple[list[dict[str, Any]], dict[str, list[Any]], int, int]:
    """Read ``savedSessions``; migrate legacy entries (bodies first, then the index).

    Returns the light entries, the inline histories of entries that are still legacy
    (only when ``migrate`` is false), how many entries were migrated, and how many were
    skipped as unusable (see :func:`usable`). An unusable entry is left in the index as
    it is, its inline history included.
    """
    raw = (await backend.get([INDEX_KEY])).get(INDEX_KEY)
    index = raw if isinstance(raw, list) else []
    check_sessions(index)
    legacy = [e for e in index if usable(e) and is_legacy(e)]
    moved = {id(e) for e in legacy}
    budget = Budget()  # bounded before the migration writes anything
    for i, entry in enumerate(index):
        if id(entry) in moved:
            check_history(entry["history"], f"{INDEX_KEY}[{i}].history", budget)
    inline: dict[str, list[Any]] = {}
    if legacy and migrate:
        await backend.set({body_key(e["id"]): e for e in legacy})  # 1. every body ...
        FAULTS.hit("legacy.migrate.index")
        rewritten = [light_entry(e) if id(e) in moved else e for e in index]
        await backend.set({INDEX_KEY: rewritten})  # 2. ... then the index
    elif legacy:
        inline = {e["id"]: e["history"] for e in legacy}
    light = [light_entry(e) for e in index if usable(e)]
    return light, inline, len(legacy) if migrate else 0, len(index) - len(light)


async def read_history(backend: StorageBackend) -> list[Any]:
    """The global flat ``history`` (an empty list when absent or not a list)."""
    raw = (await backend.get([HISTORY_KEY])).get(HISTORY_KEY)
    return raw if isinstance(raw, list) else []


async def read_session_bodies(
    backend: StorageBackend, ids: list[str], inline: dict[str, list[Any]] | None = None
) -> dict[str, list[Any]]:
    """The histories of sessions ``ids``: inline ones as given, others by their own keys."""
    inline = inline or {}
    out = {i: inline[i] for i in ids if i in inline}
    wanted = [body_key(i) for i in ids if i not in inline]
    stored = await backend.get(wanted) if wanted else {}
    for i in ids:
        if i in out:
            continue
        body = stored.get(body_key(i))
        if isinstance(body, dict):
            body = body.get("history", body.get("messages"))
        out[i] = body if isinstance(body, list) else []
    return out
