"""Dexie stores strings, parsed into table and index specs, and versioned declarations.

``parse_stores("id, threadId, [threadId+seq]")`` gives exactly the object stores and
indexes Dexie 4 would create: the first entry is the primary key (``++`` auto-increment,
``''`` out-of-line), ``&`` marks unique, ``*`` multiEntry, ``[a+b]`` a compound index
named ``"[a+b]"`` with key path ``["a", "b"]``, and dotted paths stay dotted strings.
``db.version(N)`` is native IndexedDB version ``round(N * 10)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from panelot.idb.errors import SchemaError
from panelot.idb.keys import KeyPath

__all__ = [
    "IndexSpec",
    "SchemaVersion",
    "TableSpec",
    "declared_tables",
    "native_version",
    "parse_stores",
    "parse_table",
]

_NAME = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$")


@dataclass(frozen=True, slots=True)
class IndexSpec:
    """One index (or the primary key) as Dexie declares it.

    ``name`` is the native index name (``"[a+b]"`` for compound), ``key_path`` the
    native key path (``None`` for an out-of-line primary key), ``src`` the stores-string
    entry it came from.
    """

    name: str
    key_path: KeyPath
    unique: bool = False
    multi_entry: bool = False
    auto_increment: bool = False
    src: str = ""

    @property
    def compound(self) -> bool:
        """True for a compound key path such as ``[threadId+seq]``."""
        return isinstance(self.key_path, list)


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One object store: its primary key and its secondary indexes."""

    name: str
    primary_key: IndexSpec
    indexes: tuple[IndexSpec, ...] = ()

    def index(self, name: str) -> IndexSpec | None:
        """Return the secondary index called ``name``, or ``None``."""
        for idx in self.indexes:
            if idx.name == name:
                return idx
        return None


def _parse_entry(entry: str, table: str, primary: bool) -> IndexSpec:
    src = entry.strip()
    body = src
    auto = unique = multi = False
    while body[:2] == "++" or body[:1] in ("&", "*"):
        if body.startswith("++"):
            auto, body = True, body[2:]
        elif body[0] == "&":
            unique, body = True, body[1:]
        else:
            multi, body = True, body[1:]
    key_path: KeyPath
    if body.startswith("["):
        if not body.endswith("]"):
            raise SchemaError(f"{table}: unbalanced brackets in index {src!r}", field=table)
        parts = [p.strip() for p in body[1:-1].split("+")]
        if len(parts) < 2 or not all(_NAME.match(p) for p in parts):
            raise SchemaError(f"{table}: invalid compound index {src!r}", field=table)
        key_path, name = parts, "[" + "+".join(parts) + "]"
    elif body == "":
        if not primary:
            raise SchemaError(f"{table}: empty index name", field=table)
        key_path, name = None, ""
    else:
        if not _NAME.match(body):
            raise SchemaError(f"{table}: invalid index name {src!r}", field=table)
        key_path, name = body, body
    if multi and (primary or isinstance(key_path, list)):
        raise SchemaError(f"{table}: {src!r} cannot be multiEntry", field=table)
    if auto and not primary:
        raise SchemaError(f"{table}: '++' is only allowed on the primary key", field=table)
    if auto and isinstance(key_path, list):
        raise SchemaError(f"{table}: a compound primary key cannot auto-increment", field=table)
    return IndexSpec(
        name=name,
        key_path=key_path,
        unique=unique or primary,
        multi_entry=multi,
        auto_increment=auto,
        src=src,
    )


def parse_table(name: str, stores: str) -> TableSpec:
    """Parse one table's stores string (``"id, threadId, [threadId+seq]"``)."""
    if not name or not isinstance(stores, str):
        raise SchemaError(f"invalid declaration for table {name!r}", field=name)
    entries = stores.split(",")
    primary = _parse_entry(entries[0], name, primary=True)
    indexes: list[IndexSpec] = []
    for entry in entries[1:]:
        if entry.strip() == "":
            raise SchemaError(f"{name}: empty index entry in {stores!r}", field=name)
        idx = _parse_entry(entry, name, primary=False)
        if any(i.name == idx.name for i in indexes) or idx.name == primary.name:
            raise SchemaError(f"{name}: index {idx.name!r} declared twice", field=name)
        indexes.append(idx)
    return TableSpec(name=name, primary_key=primary, indexes=tuple(indexes))


def parse_stores(stores: Mapping[str, str]) -> dict[str, TableSpec]:
    """Parse a whole ``{table: stores string}`` mapping, as given to Dexie's ``stores()``."""
    return {name: parse_table(name, spec) for name, spec in stores.items()}


def native_version(version: float) -> int:
    """Return the native IndexedDB version Dexie opens for ``db.version(version)``."""
    if version <= 0:
        raise SchemaError(f"version must be positive, got {version!r}")
    return math.floor(version * 10 + 0.5)  # JS Math.round: halves go up, not to even


@dataclass(frozen=True, slots=True)
class SchemaVersion:
    """One ``db.version(N).stores({...})`` declaration; a ``None`` value deletes the table."""

    version: float
    stores: Mapping[str, str | None] = field(default_factory=dict)

    @property
    def native(self) -> int:
        """The native IndexedDB version number."""
        return native_version(self.version)


def declared_tables(
    versions: list[SchemaVersion], up_to: int | None = None
) -> dict[str, TableSpec]:
    """Return the tables in force after every version (up to native version ``up_to``)."""
    tables: dict[str, TableSpec] = {}
    for v in sorted(versions, key=lambda v: v.native):
        if up_to is not None and v.native > up_to:
            break
        for name, spec in v.stores.items():
            if spec is None:
                tables.pop(name, None)
            else:
                tables[name] = parse_table(name, spec)
    return tables
