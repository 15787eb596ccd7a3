"""``legacy.import``: the browsa layout into Panelot threads, as a command with a receipt.

Payload ``{migrate?: true, includeHistory?: true}``. The prepare step reads and plans
(:func:`panelot.legacy.importer.plan_import`, outside any IndexedDB transaction); the
transaction writes the plan and the receipt, all or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.bus import Call, Env, Handler
from panelot.idb import Transaction
from panelot.legacy.importer import Plan, plan_import, write_plan

__all__ = ["COMMANDS"]


@dataclass(frozen=True, slots=True)
class LegacyImport:
    """``legacy.import``."""

    migrate: bool = True
    include_history: bool = True


async def _plan(env: Env, p: LegacyImport) -> Plan:
    return await plan_import(env.host.services.backend, p.migrate, p.include_history)


async def _write(tx: Transaction, call: Call[LegacyImport]) -> dict[str, Any]:
    return await write_plan(tx, call.prepared, call.clock)


COMMANDS: dict[str, Handler[Any]] = {
    "legacy.import": Handler(
        payload=LegacyImport,
        tables=("threads", "nodes", "attachments"),
        run=_write,
        prepare=_plan,
        durability="strict",
    ),
}
"""The legacy import command."""
