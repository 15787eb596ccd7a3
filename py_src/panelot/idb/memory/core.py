"""The pure-Python memory core: IndexedDB semantics without a browser.

Used by CPython tests and tools, and as the reference model the browser core is
checked against. A :class:`MemoryFactory` plays the part of ``indexedDB``: databases
live in it across connections, so reopening, upgrading and deleting behave as in the
browser. Transactions run one at a time; every write records an undo step, and an
abort replays them backwards, so a failed body leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from panelot.idb.core import (
    Batch,
    Blobs,
    Count,
    Durability,
    GetMany,
    Mode,
    Mutate,
    MutateResult,
    Query,
    Request,
    describe_tables,
)
from panelot.idb.driver import Stepper
from panelot.idb.errors import (
    ConstraintError,
    DatabaseClosedError,
    DataError,
    NotFoundError,
    PanelotError,
    ReadOnlyError,
)
from panelot.idb.keys import KeyRange, key_path_value, signs_a_zero
from panelot.idb.memory.blobs import MEMORY_BLOBS
from panelot.idb.memory.store import MemoryStore, Undo, hashable_key
from panelot.idb.observe.changes import ObsSet, encode_set
from panelot.idb.observe.feed import ChangeFeed
from panelot.idb.schema import IndexSpec, SchemaVersion, TableSpec, declared_tables
from panelot.idb.upgrade import (
    CreateIndex,
    CreateStore,
    DeleteIndex,
    DeleteStore,
    SchemaDiff,
    Step,
    check_versions,
    compare_structure,
    patch_steps,
    plan_upgrade,
)
from panelot.idb.values import clone_values, project, resolve_primary_key, set_key_path

__all__ = ["MemoryChannel", "MemoryCore", "MemoryFactory"]

T = TypeVar("T")


@dataclass(slots=True)
class _Database:
    version: int = 0
    stores: dict[str, MemoryStore] = field(default_factory=dict)
    replaced: bool = False
    """Set once an upgrade or a delete replaced it: its connections are closed, as in IDB."""


def _describe_store(name: str, store: MemoryStore) -> dict[str, Any]:
    return {
        "name": name,
        "keyPath": store.key_path,
        "autoIncrement": store.auto_increment,
        "indexes": [
            {
                "name": i.spec.name,
                "keyPath": i.spec.key_path,
                "unique": i.spec.unique,
                "multiEntry": i.spec.multi_entry,
            }
            for i in store.indexes.values()
        ],
    }


class MemoryChannel:
    """The memory core's change channel: the other connections of the same factory.

    It plays the part of Dexie's ``x-storagemutated-1`` event and BroadcastChannel: a
    message published on one connection reaches every other connection to the same
    database name, on a later turn of the event loop, as the wire text it is.
    """

    def __init__(self, hub: list[MemoryChannel], feed: ChangeFeed) -> None:
        self._hub = hub
        self.on_message = feed.received
        hub.append(self)

    def publish(self, changes: ObsSet) -> None:
        """Deliver ``changes`` to the other channels of this database, as wire text."""
        message = encode_set(changes)
        loop = asyncio.get_event_loop()
        for other in list(self._hub):
            if other is not self:
                loop.call_soon(other.deliver, message)

    def later(self, delay: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` after ``delay`` seconds, on the event loop (not once closed)."""

        def fire() -> None:
            if self in self._hub:
                callback()

        asyncio.get_event_loop().call_later(delay, fire)

    def deliver(self, message: object) -> None:
        """Hand a message to this channel's connection (unless it has closed)."""
        if self in self._hub:
            self.on_message(message)

    def close(self) -> None:
        """Leave the hub."""
        if self in self._hub:
            self._hub.remove(self)


class MemoryFactory:
    """Holds memory databases by name, like the browser's ``indexedDB``."""

    def __init__(self) -> None:
        self._databases: dict[str, _Database] = {}
        self._hubs: dict[str, list[MemoryChannel]] = {}

    def channel(self, name: str, feed: ChangeFeed) -> MemoryChannel:
        """A change channel among the connections to ``name`` opened from this factory."""
        return MemoryChannel(self._hubs.setdefault(name, []), feed)

    def broadcast(self, name: str, message: object) -> None:
        """Deliver ``message`` to every connection to ``name`` (as another context would)."""
        for channel in list(self._hubs.get(name, [])):
            channel.deliver(message)

    async def open(self, name: str, versions: list[SchemaVersion]) -> MemoryCore:
        """Open ``name`` as Dexie 4 would (see :mod:`panelot.idb.upgrade`).

        An older database is upgraded to the newest declared version; a newer one is
        opened at its own version. Whatever declared store or index is still missing is
        then added by a version bump of one. An upgrade or a bump replaces the database
        and so closes its other connections, as ``versionchange`` does in a browser
        (they reopen on their next transaction).
        """
        target = check_versions(versions)
        tables = declared_tables(versions)
        old = self._databases.get(name)
        db = old or _Database()
        found = db.version
        stores = db.stores
        version = db.version
        changed = False
        if db.version < target:
            installed = {n: _describe_store(n, s) for n, s in db.stores.items()}
            stores = copy.deepcopy(db.stores)  # a failing step must leave nothing changed
            for step in plan_upgrade(db.version, installed, versions):
                _apply(stores, step)
            version, changed = target, True
        comparison = compare_structure(_describe_stores(stores), tables)
        comparison.refuse_changed_primary()
        added: list[Step] = []
        if comparison.missing:  # Dexie's SchemaDiff path: add what is missing, by a bump
            if not changed:
                stores = copy.deepcopy(stores)
                version += 1
            added = patch_steps(comparison)
            for step in added:
                _apply(stores, step)
            comparison = compare_structure(_describe_stores(stores), tables)
            changed = True
        if changed:
            db = _Database(version, stores)
            if old is not None:
                old.replaced = True
            self._databases[name] = db
        diff = SchemaDiff.of(comparison, target, found, version, added)
        diff.report(name)
        return MemoryCore(name, db, tables, diff)

    async def delete(self, name: str) -> None:
        """Delete a database and all its data."""
        db = self._databases.pop(name, None)
        if db is not None:
            db.replaced = True

    def installed_version(self, name: str) -> int:
        """Return the installed native version of ``name`` (0 if absent)."""
        db = self._databases.get(name)
        return 0 if db is None else db.version


def _describe_stores(stores: dict[str, MemoryStore]) -> dict[str, dict[str, Any]]:
    return {n: _describe_store(n, s) for n, s in stores.items()}


def _apply(stores: dict[str, MemoryStore], step: Any) -> None:
    if isinstance(step, CreateStore):
        pk = step.table.primary_key
        store = MemoryStore(pk.key_path, pk.auto_increment)
        for idx in step.table.indexes:
            store.add_index(idx)
        stores[step.table.name] = store
    elif isinstance(step, DeleteStore):
        del stores[step.name]
    elif isinstance(step, CreateIndex):
        stores[step.store].add_index(step.index)
    elif isinstance(step, DeleteIndex):
        del stores[step.store].indexes[step.name]


class MemoryCore:
    """An open connection to a memory database; implements the core protocol."""

    def __init__(
        self, name: str, db: _Database, tables: dict[str, TableSpec], diff: SchemaDiff
    ) -> None:
        self.name = name
        self.version = db.version
        self.tables = tables
        self.diff = diff
        self.blobs: Blobs = MEMORY_BLOBS
        """MemoryBlob values, and files built as one MemoryBlob."""
        self._db = db
        self._closed = False

    @property
    def versionchanged(self) -> bool:
        """Whether another connection's upgrade or delete closed this one (not ``close()``)."""
        return self._db.replaced and not self._closed

    def describe(self) -> dict[str, Any]:
        """Return the installed structure in the ``db.describe`` shape."""
        stores = [_describe_store(n, s) for n, s in self._db.stores.items()]
        return describe_tables(self.name, self._db.version, stores)

    def snapshot(self, values: Sequence[Any]) -> list[Any]:
        """Deep copies of ``values`` (see :meth:`panelot.idb.core.Core.snapshot`)."""
        return clone_values(values)

    def close(self) -> None:
        """Close the connection; later transactions fail with DatabaseClosedError."""
        self._closed = True

    async def run(
        self,
        mode: Mode,
        tables: Sequence[str],
        body: Coroutine[Any, Any, T],
        durability: Durability = "default",
    ) -> T:
        """Drive ``body`` as one transaction; roll every write back if it fails.

        ``durability`` is accepted and has no effect: memory is never flushed.
        """
        if self._closed or self._db.replaced:
            body.close()
            raise DatabaseClosedError(f"{self.name}: the database connection is closed")
        tx = _MemoryTransaction(self._db, mode, tables)
        outcome: list[Any] = []
        stepper = Stepper(
            body, lambda req: stepper.resume(*tx.execute(req)), lambda r, e: outcome.extend((r, e))
        )
        stepper.start()
        result, error = outcome
        if error is not None:
            tx.rollback()
            raise error
        return result  # type: ignore[no-any-return]


class _MemoryTransaction:
    """The state of one memory transaction: its scope and its undo log."""

    def __init__(self, db: _Database, mode: Mode, tables: Sequence[str]) -> None:
        self.db = db
        self.mode = mode
        self.scope = set(tables)
        self.undo: list[Undo] = []

    def rollback(self) -> None:
        """Undo every write of this transaction, newest first."""
        for undo in reversed(self.undo):
            undo()
        self.undo.clear()

    def store(self, name: str, write: bool) -> MemoryStore:
        """Return a store in scope, checking the mode for writes.

        A database replaced under the running transaction (another connection's
        upgrade or delete, opened from inside the body: the memory core's stand-in for
        a connection the browser closed by force) aborts it, as IndexedDB aborts the
        transactions of a closed connection: nothing is written into a database no
        connection will see again.
        """
        if self.db.replaced:
            raise DatabaseClosedError(
                f"table {name!r}: the database connection was closed while the transaction ran"
            )
        if name not in self.scope or name not in self.db.stores:
            raise NotFoundError(f"table {name!r} is not part of this transaction")
        if write and self.mode != "rw":
            raise ReadOnlyError(f"cannot write to {name!r} in a readonly transaction")
        return self.db.stores[name]

    def execute(self, req: Request) -> tuple[Any, PanelotError | None]:
        """Run one request; return ``(result, None)`` or ``(None, error)``."""
        try:
            return self._dispatch(req), None
        except PanelotError as exc:
            return None, exc

    def _dispatch(self, req: Request) -> Any:
        if isinstance(req, GetMany):
            store = self.store(req.table, False)
            return [store.get(k) for k in req.keys]
        if isinstance(req, Mutate):
            return self._mutate(req)
        if isinstance(req, Query):
            return self._query(req)
        if isinstance(req, Count):
            store = self.store(req.table, False)
            return sum(1 for _ in store.scan(req.index, req.range))
        if isinstance(req, Batch):
            if any(isinstance(r, Batch) for r in req.requests):
                raise DataError("a batch cannot hold another batch")
            if not req.settled:
                return [self._dispatch(r) for r in req.requests]
            return [
                result if error is None else error
                for result, error in map(self.execute, req.requests)
            ]
        raise DataError(f"unknown request {type(req).__name__}")

    def _query(self, req: Query) -> list[Any]:
        store = self.store(req.table, False)
        if req.index is not None and req.index not in store.indexes:
            raise NotFoundError(f"table {req.table!r} has no index {req.index!r}")
        pairs = list(store.scan(req.index, req.range))
        if req.reverse:
            pairs.reverse()  # IndexedDB "prev": index keys and then primary keys descending
        if req.limit is not None:
            pairs = pairs[: req.limit]
        if req.want == "primaryKeys":
            return [p for _, p in pairs]
        if req.want == "entries":
            return pairs
        if req.fields is not None:
            fields, omit = req.fields, req.omit

            def pick(v: Any) -> Any:
                return project(v, fields, omit)

            if req.want == "values":
                return [pick(store.value(p)) for _, p in pairs]
            return [(k, p, pick(store.value(p))) for k, p in pairs]
        if req.want == "values":
            return [store.value(p) for _, p in pairs]
        return [(k, p, store.value(p)) for k, p in pairs]

    def _mutate(self, req: Mutate) -> MutateResult:
        store = self.store(req.table, True)
        if req.kind == "deleteRange":
            rng = req.range or KeyRange()
            for _, pkey in list(store.scan(None, rng)):
                self._push(store.remove(pkey))
            return MutateResult([])
        if req.kind == "delete":
            for key in req.keys or []:
                self._push(store.remove(key))
            return MutateResult(list(req.keys or []))
        spec = self.db_table_spec(req.table, store)
        values = req.values or []
        keys = req.keys or [None] * len(values)
        result = MutateResult([None] * len(values))
        for pos, (value, key) in enumerate(zip(values, keys, strict=True)):
            try:
                result.keys[pos] = self._write_one(store, spec, req.kind, value, key)
            except PanelotError as exc:
                result.failures[pos] = exc
        return result

    def _write_one(
        self, store: MemoryStore, spec: TableSpec, kind: str, value: Any, key: Any
    ) -> Any:
        pkey = resolve_primary_key(spec, value, key)
        if pkey is None:
            before = store.generator
            pkey = store.next_key()
            self._push(lambda: setattr(store, "generator", before))
            if isinstance(spec.primary_key.key_path, str):
                set_key_path(value, spec.primary_key.key_path, pkey)
        else:
            self._push(store.bump_generator(pkey) if spec.primary_key.auto_increment else None)
            path = spec.primary_key.key_path
            if (
                spec.primary_key.auto_increment
                and isinstance(path, str)
                and signs_a_zero(key_path_value(value, path))
            ):
                # A -0 key is stored as 0, and a store with a generator injects the key
                # into the value it reads back (measured in Chromium): the value reads 0.
                set_key_path(value, path, pkey)
        if kind == "add" and hashable_key(pkey) in store.records:
            raise ConstraintError(f"{spec.name}: a record with key {pkey!r} already exists")
        store.check_unique(pkey, value)
        self._push(store.write(pkey, value))
        return pkey

    def db_table_spec(self, name: str, store: MemoryStore) -> TableSpec:
        """Return the installed spec of a store (its key path and generator, its indexes)."""
        pk = IndexSpec("", store.key_path, True, False, store.auto_increment)
        return TableSpec(name, pk, tuple(i.spec for i in store.indexes.values()))

    def _push(self, undo: Undo | None) -> None:
        if undo is not None:
            self.undo.append(undo)
