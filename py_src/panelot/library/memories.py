"""The memories repository (``memories: 'id, key, updatedAt'``), for ``memory_write``.

A stored memory is ``{id, key, value, createdAt, updatedAt}``; ``value`` is plain
JSON data of at most :data:`MAX_MEMORY_VALUE_BYTES` (compact UTF-8 JSON). There is one
record per key: :func:`memory_write` upserts through the ``key`` index, keeping the
record's ``id`` and ``createdAt`` and moving ``updatedAt``. Should other code have
left several records under one key, a write keeps the oldest and deletes the rest.
:func:`memory_list` reads the ``updatedAt`` index backwards: most recent first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.clock import Clock, new_id, now_ms
from panelot.codec import Id, decode, encode
from panelot.idb import Transaction
from panelot.library.common import MAX_ID_CHARS, Target, check_json, check_limit, check_text, within
from panelot.surrogates import check_well_formed

__all__ = [
    "DEFAULT_MEMORY_LIST_LIMIT",
    "MAX_MEMORY_KEY_CHARS",
    "MAX_MEMORY_LIST_LIMIT",
    "MAX_MEMORY_VALUE_BYTES",
    "MEMORY_TABLES",
    "Memory",
    "check_key",
    "memory_delete",
    "memory_from_record",
    "memory_list",
    "memory_read",
    "memory_to_wire",
    "memory_write",
]

MEMORY_TABLES = ("memories",)
"""The tables a memory transaction needs."""

MAX_MEMORY_KEY_CHARS = MAX_ID_CHARS
"""Longest memory key."""
MAX_MEMORY_VALUE_BYTES = 256 * 1024
"""Largest memory value: 256 KiB of compact UTF-8 JSON."""
DEFAULT_MEMORY_LIST_LIMIT = 100
"""How many memories :func:`memory_list` returns unless told otherwise."""
MAX_MEMORY_LIST_LIMIT = 1_000
"""The most memories one :func:`memory_list` call returns."""


@dataclass(slots=True)
class Memory:
    """A stored memory."""

    id: Id
    key: str
    value: Any
    created_at: int
    updated_at: int


def memory_to_wire(memory: Memory) -> dict[str, Any]:
    """The wire form of a memory (camelCase)."""
    out: dict[str, Any] = encode(memory)
    return out


def memory_from_record(record: Any) -> Memory:
    """Validate a stored memory record and return it as a :class:`Memory`."""
    rid = record.get("id") if isinstance(record, dict) else None
    return decode(Memory, record, f"memories[{rid!r}]")


def check_key(key: Any, path: str = "key") -> str:
    """Return ``key`` if it is a memory key: 1 to MAX_MEMORY_KEY_CHARS, no lone surrogates."""
    return check_well_formed(check_text(key, path, MAX_MEMORY_KEY_CHARS), path)


def _age(record: dict[str, Any]) -> tuple[int, str]:
    created = record.get("createdAt")
    return (created if isinstance(created, int) else 0, str(record.get("id")))


async def memory_write(
    target: Target, key: str, value: Any, clock: Clock = now_ms, *, path: str = ""
) -> Memory:
    """Upsert the memory under ``key``; return the stored memory.

    ``path`` prefixes the field names of validation errors (``"payload."`` on the bus).
    """
    check_key(key, f"{path}key")
    data = check_json(value, f"{path}value", MAX_MEMORY_VALUE_BYTES)

    async def body(tx: Transaction) -> Memory:
        table = tx.table("memories")
        rows = await table.where("key").equals(key).to_list()
        rows.sort(key=_age)
        if len(rows) > 1:
            await table.bulk_delete([r["id"] for r in rows[1:]])
        now = clock()
        kept = rows[0] if rows else {}
        created = kept.get("createdAt")
        memory = Memory(
            id=kept.get("id") or new_id(),
            key=key,
            value=data,
            created_at=created if isinstance(created, int) else now,
            updated_at=now,
        )
        await table.put(memory_to_wire(memory))
        return memory

    return await within(target, "rw", MEMORY_TABLES, body)


async def memory_read(target: Target, key: str) -> Memory | None:
    """Return the memory under ``key``, or ``None``."""
    check_key(key)

    async def body(tx: Transaction) -> Any:
        return await tx.table("memories").where("key").equals(key).first()

    record = await within(target, "r", MEMORY_TABLES, body)
    return None if record is None else memory_from_record(record)


async def memory_delete(target: Target, key: str) -> bool:
    """Delete the memory under ``key``; return whether there was one."""
    check_key(key)

    async def body(tx: Transaction) -> int:
        return await tx.table("memories").where("key").equals(key).delete()

    return await within(target, "rw", MEMORY_TABLES, body) > 0


async def memory_list(target: Target, limit: int | None = None) -> list[Memory]:
    """Memories most recently updated first, at most ``limit`` (default 100, at most 1000)."""
    n = check_limit(limit, "limit", DEFAULT_MEMORY_LIST_LIMIT, MAX_MEMORY_LIST_LIMIT)

    async def body(tx: Transaction) -> list[Any]:
        return await tx.table("memories").order_by("updatedAt").reverse().limit(n).to_list()

    return [memory_from_record(r) for r in await within(target, "r", MEMORY_TABLES, body)]
