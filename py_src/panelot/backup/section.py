"""The settings section of a backup, and applying it after a restore.

Settings live in ``chrome.storage.local``, not in the database, so a backup carries them
in a section of their own, ahead of the database's rows::

    "panelotSettings": {"format": "panelot.settings", "version": 1,
                        "groups": {"providers": {"version": 2, "value": {...}}, ...},
                        "credentials": [{"ref": "cred:...", "createdAt", "updatedAt"}]}

Credential *values* are never written: only their references, so a restored profile
knows which keys to ask for again. ``chrome.storage.local`` has no transactions, so a
restore applies the section after its database transaction commits, and stays crash
safe with a marker: the section is first stored under :data:`PENDING_KEY` with the
restore's receipt id; once the database transaction has committed it is applied (all
groups in one ``set``, which Chrome applies whole) and the marker removed. A store that
starts with a marker applies it if the receipt is in the database (the restore
committed) and drops it otherwise, so settings follow the database: old with old, new
with new.
"""

from __future__ import annotations

from typing import Any

from panelot.codec import encode
from panelot.host import Services
from panelot.idb import Database
from panelot.idb.errors import PanelotError, ValidationError
from panelot.settings.credentials import check_ref
from panelot.settings.groups import GROUPS, read_group, validate_group

__all__ = [
    "PENDING_KEY",
    "SECTION_FORMAT",
    "SECTION_KEY",
    "apply_pending",
    "check_section",
    "drop_pending",
    "missing_credentials",
    "settings_section",
    "stage_pending",
]

SECTION_KEY = "panelotSettings"
"""The backup file's top-level field holding the settings section."""
SECTION_FORMAT = "panelot.settings"
PENDING_KEY = "backup.pendingSettings"
"""``chrome.storage.local`` key of a restore's settings waiting for its commit."""
STALE_MS = 60 * 60 * 1000
"""A pending section this old whose restore never committed is dropped by any context."""
_NOTE = "Credential values are never included: enter the keys again after a restore."


async def settings_section(services: Services) -> dict[str, Any]:
    """The section for a backup: every group as stored (migrated and repaired), references."""
    values, _ = await services.settings.get_all()
    groups = {
        name: {"version": GROUPS[name].version, "value": encode(value)}
        for name, value in values.items()
    }
    refs = [
        {"ref": c["ref"], "createdAt": c.get("createdAt"), "updatedAt": c.get("updatedAt")}
        for c in await services.credentials.list()
    ]
    return {
        "format": SECTION_FORMAT,
        "version": 1,
        "note": _NOTE,
        "groups": groups,
        "credentials": refs,
    }


def _fail(field: str, message: str) -> ValidationError:
    return ValidationError(f"{field}: {message}", field=field)


def check_section(raw: Any) -> tuple[dict[str, Any], list[str]]:
    """The stored records of a section's groups (by storage key) and its references.

    Each group is read as a stored value would be (an older version migrated), then
    validated strictly: a field that would be dropped or repaired fails the restore,
    named ``panelotSettings.groups.<name>...``.
    """
    where = SECTION_KEY
    if not isinstance(raw, dict):
        raise _fail(where, "must be an object")
    if raw.get("format") != SECTION_FORMAT or raw.get("version") != 1:
        raise _fail(f"{where}.format", f"expected {SECTION_FORMAT!r} version 1")
    groups = raw.get("groups")
    if not isinstance(groups, dict):
        raise _fail(f"{where}.groups", "must be an object")
    records: dict[str, Any] = {}
    for name, stored in groups.items():
        path = f"{where}.groups.{name}"
        group = GROUPS.get(name)
        if group is None:
            raise _fail(path, f"unknown group (known: {sorted(GROUPS)})")
        value, problems = read_group(group, stored)
        if problems:
            raise _fail(f"{where}.groups.{problems[0].field}", problems[0].message)
        try:
            typed = validate_group(group, encode(value))
        except PanelotError as exc:
            raise _fail(f"{where}.groups.{exc.field or name}", exc.message) from None
        records[group.key] = {"version": group.version, "value": encode(typed)}
    refs = raw.get("credentials", [])
    if not isinstance(refs, list):
        raise _fail(f"{where}.credentials", "must be a list")
    names = []
    for i, entry in enumerate(refs):
        entry_where = f"{where}.credentials[{i}]"
        if not isinstance(entry, dict) or set(entry) - {"ref", "createdAt", "updatedAt"}:
            raise _fail(entry_where, "must be {ref, createdAt, updatedAt} (never a secret)")
        names.append(check_ref(entry.get("ref"), f"{entry_where}.ref"))
    return records, names


async def stage_pending(
    services: Services, receipt: str, records: dict[str, Any], now: int
) -> None:
    """Store a restore's settings under :data:`PENDING_KEY`, ahead of its transaction."""
    pending = {"receiptId": receipt, "settings": records, "stagedAt": now}
    await services.backend.set({PENDING_KEY: pending})


async def drop_pending(services: Services, receipt: str | None = None) -> None:
    """Forget a pending section (its restore failed); with ``receipt``, only that restore's."""
    if receipt is not None:
        pending = (await services.backend.get([PENDING_KEY])).get(PENDING_KEY)
        if not isinstance(pending, dict) or pending.get("receiptId") != receipt:
            return
    await services.backend.remove([PENDING_KEY])


async def apply_pending(
    services: Services, db: Database, now: int, owner: str | None = None
) -> bool:
    """Apply a pending section if its restore committed; return whether it was applied.

    An applied section's marker is removed. One whose restore has not committed is
    removed by the restoring context itself (``owner``, its receipt id: after its
    transaction failed or was answered from a receipt) or once it is :data:`STALE_MS`
    old; otherwise it is left for the restore still running in another context.
    """
    pending = (await services.backend.get([PENDING_KEY])).get(PENDING_KEY)
    if pending is None:
        return False
    if not isinstance(pending, dict):
        await drop_pending(services)
        return False
    receipt, records = pending.get("receiptId"), pending.get("settings")
    staged = pending.get("stagedAt")
    if isinstance(receipt, str) and isinstance(records, dict):
        found = await db.transaction(
            "r", ["commandReceipts"], lambda tx: tx.table("commandReceipts").get(receipt)
        )
        if found is not None:
            await services.backend.set(records)
            await drop_pending(services)
            return True
    stale = not isinstance(staged, int) or now - staged > STALE_MS
    if stale or (owner is not None and receipt == owner):
        await drop_pending(services)
    return False


async def missing_credentials(services: Services) -> list[str]:
    """References the provider settings name that this profile's credentials lack."""
    providers = await services.settings.get("providers")
    have = {c["ref"] for c in await services.credentials.list()}
    wanted = [c.credential_ref for c in providers.connections if c.credential_ref]
    return sorted({ref for ref in wanted if ref not in have})
