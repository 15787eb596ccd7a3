"""Opening as Dexie 4 does: the upgrade plan, the installed structure against the declared.

Both cores describe an installed database as plain data (the ``db.describe`` shape:
stores with ``keyPath``, ``autoIncrement`` and indexes with ``keyPath``, ``unique``,
``multiEntry``). :func:`plan_upgrade` turns that and the declared versions into the
steps Dexie 4 would take in ``onupgradeneeded``. After the open,
:func:`compare_structure` sets the installed structure against the declared tables, as
Dexie's ``verifyInstalledSchema`` does:

- extra stores and indexes are tolerated (a newer database, made by a Dexie app's
  ``version(2)``, is opened at its own version and worked with as it is);
- a declared store or index that is missing is added by a native version bump of one
  (:func:`patch_steps`; Dexie's "SchemaDiff" path), and only added: nothing installed
  is changed or deleted;
- an index installed with other flags or another key path than declared is left as it
  is and reported (Dexie warns "Unable to patch indexes" and carries on);
- a changed primary key is refused with :class:`~panelot.idb.errors.UpgradeError`,
  naming the table (Dexie refuses it in an upgrade; it cannot be migrated in place).

What differs is reported as a :class:`SchemaDiff`: a :class:`SchemaDiffWarning` and the
``schemaDiff`` entry of ``db.describe()``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from panelot.idb.errors import SchemaError, UpgradeError
from panelot.idb.schema import IndexSpec, SchemaVersion, TableSpec, declared_tables, parse_table

__all__ = [
    "META_STORE",
    "Comparison",
    "CreateIndex",
    "CreateStore",
    "DeleteIndex",
    "DeleteStore",
    "SchemaDiff",
    "SchemaDiffWarning",
    "Step",
    "check_versions",
    "compare_structure",
    "patch_steps",
    "plan_upgrade",
]

META_STORE = "$meta"
"""Dexie 4's own bookkeeping store (written by its SchemaDiff path): never reported."""


class SchemaDiffWarning(UserWarning):
    """The installed database differs from the declaration, and was opened anyway."""


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
                raise UpgradeError(
                    f"{name}: changing the primary key of an existing table is not supported "
                    f"(installed {_primary_text(stores[name])}, declared "
                    f"{_declared_primary_text(table)}); Dexie refuses it too",
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


def _primary_text(store: dict[str, Any]) -> str:
    auto = " autoIncrement" if store["autoIncrement"] else ""
    return f"keyPath {store['keyPath']!r}{auto}"


def _declared_primary_text(table: TableSpec) -> str:
    pk = table.primary_key
    return f"keyPath {pk.key_path!r}{' autoIncrement' if pk.auto_increment else ''}"


@dataclass(slots=True)
class Comparison:
    """The installed structure set against the declared tables (see the module text)."""

    missing_tables: list[TableSpec] = field(default_factory=list)
    missing_indexes: list[tuple[str, IndexSpec]] = field(default_factory=list)
    changed_primary: list[tuple[str, str]] = field(default_factory=list)
    """``(table, what differs)`` for each table whose primary key is not the declared one."""
    changed_indexes: list[dict[str, Any]] = field(default_factory=list)
    extra_tables: list[str] = field(default_factory=list)
    extra_indexes: list[str] = field(default_factory=list)

    @property
    def missing(self) -> bool:
        """Whether something declared must be added (by a version bump)."""
        return bool(self.missing_tables or self.missing_indexes)

    def refuse_changed_primary(self) -> None:
        """Raise :class:`UpgradeError` naming the tables whose primary key changed."""
        if self.changed_primary:
            raise UpgradeError(
                "changing the primary key of an existing table is not supported; Dexie "
                "refuses it too, and nothing was changed: "
                + "; ".join(f"table {name!r}: {what}" for name, what in self.changed_primary),
                field=self.changed_primary[0][0],
            )


def compare_structure(
    installed: dict[str, dict[str, Any]], tables: dict[str, TableSpec]
) -> Comparison:
    """Set the installed stores against the declared tables (Dexie's getSchemaDiff)."""
    out = Comparison()
    for name, table in tables.items():
        store = installed.get(name)
        if store is None:
            out.missing_tables.append(table)
            continue
        if not _same_primary(store, table):
            out.changed_primary.append(
                (
                    name,
                    f"installed {_primary_text(store)}, declared {_declared_primary_text(table)}",
                )
            )
            continue
        have = {i["name"]: i for i in store["indexes"]}
        for idx in table.indexes:
            shape = _index_shape(idx)
            if idx.name not in have:
                out.missing_indexes.append((name, idx))
            elif have[idx.name] != shape:
                out.changed_indexes.append(
                    {
                        "table": name,
                        "index": idx.name,
                        "installed": have[idx.name],
                        "declared": shape,
                    }
                )
        wanted = {i.name for i in table.indexes}
        out.extra_indexes.extend(f"{name}.{i}" for i in sorted(have) if i not in wanted)
    out.extra_tables = sorted(n for n in installed if n not in tables and n != META_STORE)
    return out


def patch_steps(comparison: Comparison) -> list[Step]:
    """The steps of Dexie's SchemaDiff bump: create what is missing, change nothing else."""
    steps: list[Step] = [CreateStore(t) for t in comparison.missing_tables]
    steps.extend(CreateIndex(store, idx) for store, idx in comparison.missing_indexes)
    return steps


def _step_text(step: Step) -> str:
    if isinstance(step, CreateStore):
        return step.table.name
    if isinstance(step, CreateIndex):
        return f"{step.store}.{step.index.name}"
    return repr(step)


@dataclass(frozen=True, slots=True)
class SchemaDiff:
    """How the opened database differs from the declaration (``db.describe()["schemaDiff"]``).

    ``declared_version`` is the newest declared native version, ``found_version`` the
    native version installed when the open began, ``version`` the one opened (higher
    than found after a SchemaDiff bump). ``added`` names what the bump created
    (``table`` or ``table.index``).
    """

    declared_version: int
    found_version: int
    version: int
    extra_tables: tuple[str, ...] = ()
    extra_indexes: tuple[str, ...] = ()
    changed_indexes: tuple[dict[str, Any], ...] = ()
    added: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        comparison: Comparison,
        declared: int,
        found: int,
        version: int,
        added: list[Step] | tuple[Step, ...] = (),
    ) -> SchemaDiff:
        """The report of an open that ended at ``version`` with ``comparison``."""
        return cls(
            declared_version=declared,
            found_version=found,
            version=version,
            extra_tables=tuple(comparison.extra_tables),
            extra_indexes=tuple(comparison.extra_indexes),
            changed_indexes=tuple(comparison.changed_indexes),
            added=tuple(_step_text(s) for s in added),
        )

    @property
    def newer(self) -> bool:
        """Whether the installed database was newer than the declaration (another app's).

        Dexie declares ``version(N)`` as native ``N * 10``; a SchemaDiff bump adds one.
        So a version above the declared one but below the next multiple of ten (11 for
        a declared 10) is the same declaration, bumped, not a newer one.
        """
        return self.found_version // 10 * 10 > self.declared_version

    @property
    def differs(self) -> bool:
        """Whether there is anything to report."""
        return bool(
            self.newer
            or self.extra_tables
            or self.extra_indexes
            or self.changed_indexes
            or self.added
        )

    def to_json(self) -> dict[str, Any]:
        """The ``schemaDiff`` entry of ``db.describe()``."""
        return {
            "declaredVersion": self.declared_version,
            "foundVersion": self.found_version,
            "newer": self.newer,
            "extraTables": list(self.extra_tables),
            "extraIndexes": list(self.extra_indexes),
            "changedIndexes": [dict(c) for c in self.changed_indexes],
            "added": list(self.added),
        }

    def message(self, name: str) -> str:
        """One sentence for the warning."""
        parts = []
        if self.newer:
            parts.append(
                f"the installed database (native version {self.found_version}) is newer than "
                f"the declared one ({self.declared_version}): opened at version {self.version}"
            )
        if self.added:
            parts.append(
                f"added what the declaration has and the database lacked, by a version bump "
                f"to {self.version}: {', '.join(self.added)}"
            )
        if self.extra_tables:
            parts.append(f"undeclared tables: {', '.join(self.extra_tables)}")
        if self.extra_indexes:
            parts.append(f"undeclared indexes: {', '.join(self.extra_indexes)}")
        if self.changed_indexes:
            changed = ", ".join(f"{c['table']}.{c['index']}" for c in self.changed_indexes)
            parts.append(f"indexes installed otherwise than declared, left as they are: {changed}")
        return f"{name}: Dexie SchemaDiff: " + "; ".join(parts)

    def report(self, name: str) -> None:
        """Warn (a :class:`SchemaDiffWarning`) if there is anything to report."""
        if self.differs:
            warnings.warn(self.message(name), SchemaDiffWarning, stacklevel=2)
