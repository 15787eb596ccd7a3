"""Opening as Dexie does: the upgrade plan, and the check of an installed structure.

Both cores describe an installed database as plain data (the ``db.describe`` shape:
stores with ``keyPath``, ``autoIncrement`` and indexes with ``keyPath``, ``unique``,
``multiEntry``). :func:`plan_upgrade` turns that and the declared versions into the
steps Dexie 4 would take in ``onupgradeneeded``; :func:`verify_structure` checks that
every declared store and index exists as declared. Extra stores and indexes are
tolerated, as Dexie tolerates them; nothing undeclared is ever deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.idb.errors import SchemaError
from panelot.idb.schema import IndexSpec, SchemaVersion, TableSpec, declared_tables, parse_table

__all__ = [
    "CreateIndex",
    "CreateStore",
    "DeleteIndex",
    "DeleteStore",
    "Step",
    "check_versions",
    "plan_upgrade",
    "verify_structure",
]


@dataclass(frozen=True, slots=True)
class CreateStore:
    """Create an object store with its indexes."""

    table: TableSpec


@dataclass(frozen=True, slots=True)
class DeleteStore:
    """Delete an object store (declared ``None`` in a newer version)."""

    name: str


@dataclass(frozen=True, slots=True)
class CreateIndex:
    """Create one index on an existing store."""

    store: str
    index: IndexSpec


@dataclass(frozen=True, slots=True)
class DeleteIndex:
    """Delete one index from an existing store."""

    store: str
    name: str


Step = CreateStore | DeleteStore | CreateIndex | DeleteIndex


def check_versions(versions: list[SchemaVersion]) -> int:
    """Validate the declarations (parsable, distinct native versions); return the newest native."""
    if not versions:
        raise SchemaError("no schema version declared")
    natives = [v.native for v in versions]
    if len(set(natives)) != len(natives):
        raise SchemaError("two declared versions map to the same native version")
    for v in versions:
        for name, spec in v.stores.items():
            if spec is not None:
                parse_table(name, spec)
    return max(natives)


def _index_shape(idx: IndexSpec) -> dict[str, Any]:
    return {
        "name": idx.name,
        "keyPath": idx.key_path,
        "unique": idx.unique,
        "multiEntry": idx.multi_entry,
    }


def _same_primary(store: dict[str, Any], table: TableSpec) -> bool:
    pk = table.primary_key
    return bool(store["keyPath"] == pk.key_path and store["autoIncrement"] == pk.auto_increment)


def plan_upgrade(
    old_version: int, installed: dict[str, dict[str, Any]], versions: list[SchemaVersion]
) -> list[Step]:
    """Return the steps that take the installed stores to the newest declared version.

    A new database gets the newest version's tables directly. An existing one replays,
    in order, each declared version newer than ``old_version``: tables declared ``None``
    are deleted, new tables created, and for redeclared tables the indexes that changed
    are recreated and the ones no longer listed deleted. A changed primary key cannot
    be migrated and raises :class:`SchemaError` before anything changes.
    """
    if old_version == 0:
        return [CreateStore(t) for t in declared_tables(versions).values()]
    stores = {
        name: dict(s, indexes={i["name"]: i for i in s["indexes"]}) for name, s in installed.items()
    }
    steps: list[Step] = []
    for v in sorted(versions, key=lambda v: v.native):
        if v.native <= old_version:
            continue
        for name, spec in v.stores.items():
            if spec is None:
                if name in stores:
                    steps.append(DeleteStore(name))
                    del stores[name]
                continue
            table = parse_table(name, spec)
            if name not in stores:
                steps.append(CreateStore(table))
                stores[name] = {
                    "keyPath": table.primary_key.key_path,
                    "autoIncrement": table.primary_key.auto_increment,
                    "indexes": {i.name: _index_shape(i) for i in table.indexes},
                }
                continue
            if not _same_primary(stores[name], table):
                raise SchemaError(
                    f"{name}: changing the primary key of an existing table is not supported",
                    field=name,
                )
            steps.extend(_index_steps(name, stores[name]["indexes"], table))
    return steps


def _index_steps(name: str, have: dict[str, dict[str, Any]], table: TableSpec) -> list[Step]:
    steps: list[Step] = []
    wanted = {i.name: i for i in table.indexes}
    for idx_name in list(have):
        if idx_name not in wanted:
            steps.append(DeleteIndex(name, idx_name))
            del have[idx_name]
    for idx in table.indexes:
        shape = _index_shape(idx)
        if idx.name in have and have[idx.name] != shape:
            steps.append(DeleteIndex(name, idx.name))
            del have[idx.name]
        if idx.name not in have:
            steps.append(CreateIndex(name, idx))
            have[idx.name] = shape
    return steps


def verify_structure(installed: dict[str, dict[str, Any]], tables: dict[str, TableSpec]) -> None:
    """Raise :class:`SchemaError` unless every declared store and index exists as declared."""
    problems: list[str] = []
    for name, table in tables.items():
        store = installed.get(name)
        if store is None:
            problems.append(f"store {name!r} is missing")
            continue
        if not _same_primary(store, table):
            problems.append(
                f"store {name!r} has keyPath {store['keyPath']!r} autoIncrement "
                f"{store['autoIncrement']}, declared {table.primary_key.key_path!r} "
                f"autoIncrement {table.primary_key.auto_increment}"
            )
        have = {i["name"]: i for i in store["indexes"]}
        for idx in table.indexes:
            if idx.name not in have:
                problems.append(f"index {name}.{idx.name} is missing")
            elif have[idx.name] != _index_shape(idx):
                problems.append(
                    f"index {name}.{idx.name} is {have[idx.name]}, declared {_index_shape(idx)}"
                )
    if problems:
        raise SchemaError(
            "the installed database contradicts the declared schema and was left untouched: "
            + "; ".join(problems)
        )
