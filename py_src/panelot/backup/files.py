"""Backing up everything into one file, and reading a backup for a restore.

:func:`export_backup` writes the whole ``panelot_v1`` database (every table, Blobs
included) in ``dexie-export-import``'s format, with the settings section
(:mod:`panelot.backup.section`) ahead of the rows. :func:`read_backup` is a restore's
first pass: it streams the file, checks every record (:mod:`panelot.backup.checks`)
and the section, and returns what the ``backup.restore`` command writes.
:func:`peek_backup` says what a file holds from its header alone. Nothing is written by
any of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from panelot.backup.checks import TreeCheck, check_row
from panelot.backup.section import SECTION_KEY, check_section, settings_section
from panelot.clock import Clock, now_ms
from panelot.host import Services
from panelot.idb import Database
from panelot.idb.blobs import blob_size
from panelot.idb.transfer import (
    ByteSource,
    ExportOptions,
    ExportProgress,
    ImportOptions,
    ImportPlan,
    ImportProgress,
    blob_source,
    export_db,
    read_header,
    read_import,
)

__all__ = [
    "BACKUP_OPTIONS",
    "META_KEY",
    "Backup",
    "RestoreInput",
    "export_backup",
    "peek_backup",
    "read_backup",
]

BACKUP_OPTIONS = ImportOptions(
    clear_tables_before_import=True,
    accept_name_diff=True,  # a backup may come from a store of another name (tests)
    accept_version_diff=True,  # the tables and every record are checked instead
)
"""How a restore writes: every table cleared, then the backup's rows added."""

META_KEY = "panelotBackup"
"""The header section saying the file is a panelot backup: ``{exportedAt, app}``."""


@dataclass(frozen=True, slots=True)
class Backup:
    """A finished backup: the file (a Blob), its size, rows by table, when it was made."""

    file: Any
    size: int
    tables: dict[str, int]
    exported_at: int

    def summary(self) -> dict[str, Any]:
        """Everything but the file, as JSON data."""
        return {"size": self.size, "tables": self.tables, "exportedAt": self.exported_at}


async def export_backup(
    db: Database,
    services: Services | None,
    progress: Callable[[ExportProgress], Any] | None = None,
    clock: Clock = now_ms,
) -> Backup:
    """Back up the whole database (and settings, unless ``services`` is None) as one file."""
    counts: dict[str, int] = {}
    sections: dict[str, Any] = {}
    if services is not None:
        sections[SECTION_KEY] = await settings_section(services)
    exported_at = clock()
    sections[META_KEY] = {"exportedAt": exported_at, "app": "panelot"}

    def count(p: ExportProgress) -> None:
        counts.update(p.row_counts)
        if progress is not None:
            progress(p)

    file = await export_db(db, ExportOptions(sections=sections, progress=count))
    return Backup(file, blob_size(file), counts, exported_at)


@dataclass(slots=True)
class RestoreInput:
    """A backup read and checked, staged for the ``backup.restore`` command."""

    plan: ImportPlan
    settings: dict[str, Any] | None
    credentials: list[str] = field(default_factory=list)
    receipt_id: str = ""
    progress: Callable[[ImportProgress], Any] | None = None
    """Where the writing reports its progress (the reading's callback)."""


async def read_backup(
    db: Database,
    source: ByteSource | Any,
    progress: Callable[[ImportProgress], Any] | None = None,
    chunk_size_bytes: int = 1024 * 1024,
) -> RestoreInput:
    """A restore's first pass: read and check the whole backup; nothing is written.

    ``source`` is a ByteSource, or bytes or a Blob of either core.
    """
    tree = TreeCheck()

    def check(table: str, value: Any, key: Any, where: str) -> Any:
        check_row(table, value, key, where)
        tree.add(table, value, where)
        return value

    options = replace(
        BACKUP_OPTIONS, chunk_size_bytes=chunk_size_bytes, progress=progress, check_row=check
    )
    plan = await read_import(db, source, options)
    tree.check()
    raw = plan.header.extra.get(SECTION_KEY)
    settings, refs = (None, []) if raw is None else check_section(raw)
    return RestoreInput(plan, settings, refs, progress=progress)


async def peek_backup(file: Any) -> dict[str, Any]:
    """What a backup file holds, from its header; nothing else of it is read.

    ``{databaseName, databaseVersion, tables: {name: rows}, exportedAt, settings, size}``
    (``exportedAt`` null for a file another app exported; ``settings``: whether it
    carries the settings section). ``file`` is a Blob of either core, or bytes.
    """
    source = blob_source(file)
    header = await read_header(source)
    meta = header.extra.get(META_KEY)
    return {
        "databaseName": header.database_name,
        "databaseVersion": header.database_version,
        "tables": {t.name: t.row_count for t in header.tables},
        "exportedAt": meta.get("exportedAt") if isinstance(meta, dict) else None,
        "settings": SECTION_KEY in header.extra,
        "size": source.size,
    }
