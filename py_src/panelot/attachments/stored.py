"""The ``attachments`` table's record, and what a put of one takes.

:class:`Attachment` is the stored record, read through :mod:`panelot.codec`
(:func:`attachment_from_record`); the table holds its camelCase wire form, which Dexie
code reads too. Dexie code may add keys of its own: the reader reads past them, and
updates keep them (they change the stored object, never rebuild it from the dataclass).
:class:`AttachmentInput` is the one value :func:`~panelot.attachments.records.put_attachment`
takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

from panelot.codec import Id, Natural, Raw, decode, invalid, open_record
from panelot.idb.blobs import blob_size, is_blob

__all__ = [
    "KINDS",
    "PROVENANCES",
    "TRUST_LEVELS",
    "Attachment",
    "AttachmentInput",
    "AttachmentMeta",
    "AttachmentRefs",
    "Kind",
    "Provenance",
    "Trust",
    "attachment_from_record",
]

Kind: TypeAlias = Literal["image", "file", "page_snapshot", "screenshot", "page_text"]
Trust: TypeAlias = Literal["trusted", "untrusted"]
Provenance: TypeAlias = Literal["user", "page", "mcp", "tool", "import", "plugin"]

KINDS: tuple[str, ...] = get_args(Kind)
"""Allowed ``kind`` values."""
TRUST_LEVELS: tuple[str, ...] = get_args(Trust)
"""Allowed ``trust`` values."""
PROVENANCES: tuple[str, ...] = get_args(Provenance)
"""Allowed ``provenance`` values."""


@open_record
@dataclass(slots=True)
class AttachmentRefs:
    """What references an attachment: ``{nodeIds?, runIds?, pluginId?}``."""

    node_ids: list[Id] | None = None
    run_ids: list[Id] | None = None
    plugin_id: Id | None = None


@open_record
@dataclass(slots=True)
class AttachmentMeta:
    """Display metadata: ``{url?, title?, w?, h?}``."""

    url: str | None = None
    title: str | None = None
    w: int | None = None
    h: int | None = None


@open_record
@dataclass(slots=True)
class Attachment:
    """A stored attachment record.

    ``bytes`` is a Blob (checked by :func:`attachment_from_record`, with ``size`` its
    byte size); only a record being evicted (``deleting: true``) may have none.
    """

    id: Id
    thread_id: Id
    created_at: Natural
    kind: Kind
    mime: str
    size: Natural
    bytes: Raw = None
    trust: Trust | None = None
    provenance: Provenance | None = None
    source_ref: str | None = None
    refs: AttachmentRefs | None = None
    deleting: bool | None = None
    meta: AttachmentMeta | None = None


def attachment_from_record(value: Any, where: str = "attachment") -> Attachment:
    """Read a stored attachment record; ValidationError names the field under ``where``."""
    record = decode(Attachment, value, where)
    data = record.bytes
    if data is None:
        if record.deleting is not True:
            raise invalid(f"{where}.bytes", "must be a Blob (only a record being deleted has none)")
    elif not is_blob(data):
        raise invalid(f"{where}.bytes", "must be a Blob")
    elif blob_size(data) != record.size:
        raise invalid(f"{where}.size", f"is {record.size}, the Blob has {blob_size(data)} bytes")
    return record


@dataclass(slots=True, kw_only=True)
class AttachmentInput:
    """What :func:`~panelot.attachments.records.put_attachment` stores.

    ``data`` is bytes, or a Blob handle kept as it is. ``attachment_id`` (default: a new
    id) lets a caller reference the record before writing it. The rest become the
    record's optional fields; ``node_ids``, ``run_ids`` and ``plugin_id`` its ``refs``.
    """

    thread_id: str
    kind: str
    mime: str
    data: Any
    meta: dict[str, Any] | None = None
    trust: str | None = None
    provenance: str | None = None
    source_ref: str | None = None
    node_ids: list[str] | None = None
    run_ids: list[str] | None = None
    plugin_id: str | None = None
    attachment_id: str | None = None
