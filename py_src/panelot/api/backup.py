"""``backup.export`` and ``backup.restore``: everything in one file, and back.

``backup.export`` (a query, ``{settings?: true}``) returns ``{file, size, tables,
exportedAt}`` with ``file`` a Blob in ``dexie-export-import``'s format
(:mod:`panelot.backup.files`).

``backup.restore`` (a command with a receipt, ``{sha256, size, settings?: true}``)
replaces every table with a backup's rows in one transaction. The file itself cannot
travel in a JSON payload: the caller reads and checks it first
(:meth:`panelot.store.PanelotStore.restore_backup`, ``panelot.backup.restore`` in JS),
which stages it under its SHA-256, and the payload names that digest, so the receipt's
fingerprint covers the file's contents. The prepare step takes the staged backup and
parks its settings section under a marker; the transaction clears every table, writes
the rows and the receipt; after it the store applies the settings, or drops its marker
if the transaction failed (:mod:`panelot.backup.section`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from panelot.backup.files import BACKUP_OPTIONS, RestoreInput, export_backup
from panelot.backup.section import stage_pending
from panelot.bus import Call, Env, Handler, Query
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.idb.transfer import write_import
from panelot.schema import PANELOT_V1_STORES

__all__ = ["COMMANDS", "QUERIES"]

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class BackupExport:
    """``backup.export``: ``settings`` puts the settings section in the file."""

    settings: bool = True


@dataclass(frozen=True, slots=True)
class BackupRestore:
    """``backup.restore``: the staged file's digest and size; ``settings`` restores them too."""

    sha256: str
    size: int
    settings: bool = True


async def _export(env: Env, args: BackupExport) -> dict[str, Any]:
    backup = await export_backup(
        env.db, env.host.services if args.settings else None, None, env.clock
    )
    return {"file": backup.file, **backup.summary()}


async def _take(env: Env, p: BackupRestore) -> RestoreInput:
    if not _SHA256.match(p.sha256):
        raise ValidationError("sha256: must be a SHA-256 in lowercase hex", field="sha256")
    staged: RestoreInput = env.inputs.take(p.sha256, "sha256")
    if staged.plan.size != p.size:
        raise ValidationError(
            f"size: the staged backup has {staged.plan.size} bytes, not {p.size}", field="size"
        )
    if p.settings and staged.settings is not None:
        await stage_pending(env.host.services, staged.receipt_id, staged.settings, env.clock())
    return staged


async def _restore(tx: Transaction, call: Call[BackupRestore]) -> dict[str, Any]:
    staged: RestoreInput = call.prepared
    written = await write_import(tx, staged.plan, replace(BACKUP_OPTIONS, progress=staged.progress))
    return {
        "restored": {name: written.get(name, 0) for name in PANELOT_V1_STORES},
        "rows": sum(written.values()),
        "size": staged.plan.size,
        "sha256": staged.plan.sha256,
        "settings": call.payload.settings and staged.settings is not None,
        "credentials": staged.credentials,
    }


COMMANDS: dict[str, Handler[Any]] = {
    "backup.restore": Handler(
        payload=BackupRestore,
        tables=tuple(t for t in PANELOT_V1_STORES if t != "commandReceipts"),
        run=_restore,
        prepare=_take,
        durability="strict",
    ),
}
"""The restore command."""

QUERIES: dict[str, Query[Any]] = {
    "backup.export": Query(args=BackupExport, run=_export),
}
"""The export query."""
