"""``panelot_sync_v1``: what the sync section keeps of its own (docs/sync.md).

It sits beside ``panelot_v1`` on the same core factory, like the search index
(a store opened on another database name gets ``<name>-sync``), and is never in a
backup. Unlike the search index it cannot be rebuilt from ``panelot_v1``: losing it
costs a full comparison with the server, never data.

Tables (Dexie syntax)::

    docs: "id, table, threadId"
          {id: "<table>:<key>", table, threadId?, rev, digest, deleted?,
           attachment?: {digest, length, content_type, revpos},
           fields?: {...}, clocks?: {...}, keptLeaf?,
           onServer?: true}                       (what the server last had of a record;
                                                   onServer: pulled without its bytes;
                                                   keptLeaf: the leaf a thread kept here
                                                   while the server's leaf had no node,
                                                   written by a pull and by a push)
    outbox: "id"                                   (version 2)
          {id: "<table>:<key>", n: "<random>"}   (changed here since the last push;
                                                   id "*": a change of unknown keys,
                                                   the next push compares everything)
    meta: "key"
          {key: "device", value: "<random id>"}
          {key: "clock", value: "<last HLC>"}
          {key: "config", value: {server, database, user?, ref?}}
          {key: "push", value: {id: "_local/<replication id>", seq, at, pushed}}
          {key: "pull", value: {id: "_local/<replication id>", since, at, refused}}
          {key: "sent", value: {"<table>:<key>": {parent, digest, clocks, rev, ids,
                                                  fields?, threadId?}}}
                                                  (revisions sent without an answer yet,
                                                   written strict: a push after a lost
                                                   answer sends the same revision, a
                                                   change or a deletion since is its
                                                   child, never a sibling)
          {key: "progress", value: {phase, done, total, at, source, id}}
                                                  (a push or pull in flight, any context:
                                                   :mod:`panelot.sync.progress`)
          {key: "failure", value: {source, name, message, field?, at, nextTry}}
                                                  (the last failure of a loop or a
                                                   background sync:
                                                   :mod:`panelot.sync.failure`)
          {key: "restoreSeen", value: {at, ids}}  (the backup restores acknowledged:
                                                   every completed restore receipt created
                                                   at ``at`` or later is in ``ids``; one
                                                   that is not pauses sync, see
                                                   :mod:`panelot.sync.pause`)

``config.ref`` names the password in the encrypted credential store; the password
itself is never here.
"""

from __future__ import annotations

from typing import Any

from panelot.idb import Database, SchemaVersion, Transaction
from panelot.schema import DB_NAME

__all__ = [
    "STATE_NAME",
    "STATE_OUTBOX",
    "STATE_STORES",
    "STATE_TABLES",
    "read_meta",
    "record_docs",
    "state_database",
    "state_name",
    "write_meta",
]

STATE_NAME = "panelot_sync_v1"
"""The sync state database of ``panelot_v1``."""

STATE_STORES: dict[str, str | None] = {"docs": "id, table, threadId", "meta": "key"}
"""``db.version(1).stores({...})`` of the state database."""

STATE_OUTBOX: dict[str, str | None] = {"outbox": "id"}
"""``db.version(2).stores({...})``: the outbox of continuous sync."""

STATE_TABLES = ("docs", "meta", "outbox")


def state_name(db_name: str) -> str:
    """The state database's name for the store database ``db_name``."""
    return STATE_NAME if db_name == DB_NAME else f"{db_name}-sync"


def state_database(db_name: str) -> Database:
    """An unopened state database for the store database ``db_name``."""
    versions = [SchemaVersion(1, STATE_STORES), SchemaVersion(2, STATE_OUTBOX)]
    return Database(state_name(db_name), versions)


async def read_meta(tx: Transaction, key: str) -> Any:
    """The value of meta ``key`` (``None`` if unset)."""
    row = await tx.table("meta").get(key)
    return row.get("value") if isinstance(row, dict) else None


async def write_meta(tx: Transaction, key: str, value: Any) -> None:
    """Set meta ``key`` to ``value``."""
    await tx.table("meta").put({"key": key, "value": value})


async def record_docs(
    state: Database, rows: list[dict[str, Any]], clock: str, sent: dict[str, Any] | None = None
) -> None:
    """Record what the server now has (``docs`` rows) and the device's last clock, at once.

    ``sent``: the revisions still sent without an answer (meta ``sent``), when given.
    """

    async def write(tx: Transaction) -> None:
        if rows:
            await tx.table("docs").bulk_put(rows)
        await write_meta(tx, "clock", clock)
        if sent is not None:
            await write_meta(tx, "sent", sent)

    await state.transaction("rw", list(STATE_TABLES), write)
