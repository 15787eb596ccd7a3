"""A record as a document (docs/sync.md "The mapping").

The document's body is ``{"table", "v": 1, "record", "clocks"?}``: ``record`` is the
record as ``panelot_v1`` holds it minus what stays on the device (:func:`local_view`),
``clocks`` the merge clocks of the tables that merge by clock (:func:`thread_clocks`,
:func:`library_clocks`). Binary data (an attachment's Blob, a plugin asset's bytes, the
record's ``bytes`` field) never goes in ``record``: it is the document's CouchDB
attachment ``bytes`` (:func:`binary_of`, :func:`attachment_digest`).
"""

from __future__ import annotations

import base64
import copy
import hashlib
from collections.abc import Callable
from typing import Any

from panelot.canonical import canonical_json
from panelot.idb.blobs import is_blob

__all__ = [
    "ATTACHMENT",
    "CLOCKED_THREAD_FIELDS",
    "FORMAT",
    "LIBRARY_TABLES",
    "LOCAL_THREAD_FIELDS",
    "attachment_digest",
    "binary_of",
    "body_of",
    "clocked_fields",
    "content_digest",
    "library_clocks",
    "local_view",
    "thread_clocks",
]

FORMAT = 1
"""The body's ``v``."""

ATTACHMENT = "bytes"
"""The name of a document's one CouchDB attachment, and of the record field it holds."""

LOCAL_THREAD_FIELDS = ("deleting", "deletingSince", "shown", "stats", "requestCut", "scopeOrigins")
"""A thread's fields that stay on the device.

``scopeOrigins`` (the origins the user approved for this thread's page tools) is a grant
of this device's user, as an import treats it (``panelot.tree.transfer``): a server, or
another device, cannot approve an origin here.
"""

CLOCKED_THREAD_FIELDS = ("title", "pinned", "archived", "folderId", "tags", "preset", "leafId")
"""A thread's fields that merge field by field, each with its own clock."""

LIBRARY_TABLES = ("skills", "memories", "plugins", "pluginAssets")
"""The tables that merge by whole record, with one clock (``clocks.record``)."""

_BLOCK_LISTS = ("content", "contentForLlm")
_MISSING = object()


def _drop_evicted(value: Any, depth: int = 0) -> None:
    """Remove the local ``evicted`` flag from every object naming an attachment."""
    if depth > 64:
        return
    if isinstance(value, dict):
        if "attachmentId" in value:
            value.pop("evicted", None)
        for item in value.values():
            _drop_evicted(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _drop_evicted(item, depth + 1)


def local_view(table: str, record: dict[str, Any]) -> dict[str, Any]:
    """The part of ``record`` that syncs: a copy without local fields, flags and bytes."""
    kept = {k: v for k, v in record.items() if k != ATTACHMENT}
    if table == "threads":
        for name in LOCAL_THREAD_FIELDS:
            kept.pop(name, None)
    view = copy.deepcopy(kept)
    if table == "nodes" and isinstance(view.get("payload"), dict):
        payload = view["payload"]
        for name in _BLOCK_LISTS:
            _drop_evicted(payload.get(name))
        _drop_evicted(payload.get("details"))
    return view


def binary_of(record: dict[str, Any]) -> tuple[Any, str] | None:
    """``(value, content_type)`` of the record's binary data (bytes or a Blob), or none."""
    value = record.get(ATTACHMENT)
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview) or is_blob(value):
        mime = record.get("mime")
        return value, mime if isinstance(mime, str) and mime else "application/octet-stream"
    return None


def attachment_digest(data: bytes) -> str:
    """CouchDB's digest of an attachment's bytes: ``md5-<base64 of the MD5>``."""
    md5 = hashlib.md5(data, usedforsecurity=False).digest()
    return "md5-" + base64.b64encode(md5).decode()


def content_digest(view: dict[str, Any], attachment: str | None) -> str:
    """The digest of what a document carries of a record (its view and bytes' digest).

    Equal digests: the server already has this record as it is (a push sends nothing).
    """
    text = canonical_json({"record": view, "attachment": attachment})
    return hashlib.sha256(text).hexdigest()


def thread_clocks(
    record: dict[str, Any],
    last: dict[str, Any] | None,
    last_clocks: dict[str, str] | None,
    tick: Callable[[], str],
) -> dict[str, str]:
    """A thread's field clocks: a new clock for each field that differs from ``last``.

    ``last`` holds the clocked fields as last pushed (``None``: never pushed), with
    ``last_clocks`` their clocks.
    """
    clocks: dict[str, str] = {}
    for name in CLOCKED_THREAD_FIELDS:
        before = _MISSING if last is None else last.get(name, _MISSING)
        known = (last_clocks or {}).get(name)
        same = last is not None and before == record.get(name, _MISSING)
        clocks[name] = known if same and known is not None else tick()
    return clocks


def clocked_fields(record: dict[str, Any]) -> dict[str, Any]:
    """The clocked fields of a thread record, as :func:`thread_clocks` compares them."""
    return {name: record[name] for name in CLOCKED_THREAD_FIELDS if name in record}


def library_clocks(tick: Callable[[], str]) -> dict[str, str]:
    """A library record's clock: one, for the whole record (it changed)."""
    return {"record": tick()}


def body_of(table: str, view: dict[str, Any], clocks: dict[str, str] | None) -> dict[str, Any]:
    """The document body of a record's view (``_id``, ``_rev`` and attachments apart)."""
    body: dict[str, Any] = {"table": table, "v": FORMAT, "record": view}
    if clocks:
        body["clocks"] = clocks
    return body
