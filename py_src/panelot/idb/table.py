"""``Table``: Dexie's table API with Pythonic names, on the core protocol.

A table from ``db.table(name)`` runs each call in a transaction of its own; a table
from ``tx.table(name)`` runs its calls inside the transaction ``tx``. Bulk calls issue
all their requests together, as Dexie does, and report failures by position in a
:class:`~panelot.idb.errors.BulkError`; the enclosing transaction aborts unless the
body catches it. Outside a transaction it is all-or-nothing too (stricter than Dexie).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar, overload

from panelot.idb.collection import Collection
from panelot.idb.core import Count, Durability, GetMany, Mode, Mutate, MutateResult
from panelot.idb.errors import (
    BulkError,
    ConstraintError,
    DataError,
    InvalidArgumentError,
    SchemaError,
)
from panelot.idb.hooks import HOOKS_LEVEL, HookedDb, hooks_middleware
from panelot.idb.keys import Key, KeyRange, compare_keys, validate_key
from panelot.idb.middleware import Create, Middleware
from panelot.idb.modify import (
    apply_changes,
    check_changes,
    get_by_key_path,
    js_falsy,
    set_by_key_path,
)
from panelot.idb.schema import TableSpec
from panelot.idb.sorting import MISSING as _NONE
from panelot.idb.state import CollectionState
from panelot.idb.values import resolve_primary_key
from panelot.idb.where import WhereClause, criteria_collection
from panelot.idb.writes import prepare_write

__all__ = ["IndexRef", "Table", "TableDb", "TableTx", "WhereClause"]

T = TypeVar("T")


class TableTx(Protocol):
    """What a table needs of its transaction (a :class:`~panelot.idb.database.Transaction`)."""

    def table(self, name: str) -> Table:
        """Table ``name`` bound to this transaction."""
        ...

    def check_write(self, table: str) -> None:
        """Raise :class:`~panelot.idb.errors.ReadOnlyError` if this transaction cannot write."""
        ...


class TableDb(HookedDb, Protocol):
    """What a table needs of its database: the hooks' needs, middleware, transactions."""

    @property
    def _middleware(self) -> list[Middleware]: ...

    def use(self, create: Create, *, name: str = "", level: int = 0) -> object:
        """Add a middleware over the core protocol."""
        ...

    def transaction(
        self,
        mode: Mode,
        tables: str | Sequence[str],
        body: Callable[[TableTx], Awaitable[T]],
        *,
        durability: Durability | None = None,
    ) -> Awaitable[T]:
        """Run ``body(tx)`` in one transaction over ``tables``."""
        ...


@dataclass(frozen=True, slots=True)
class IndexRef:
    """An index as a where-clause names it, and the native index that serves it.

    ``native`` is the native index name (``None``: the primary key). ``virtual`` is
    set when a longer compound index serves a key path it starts with, as Dexie's
    virtual indexes do: ``(key length, parts dropped)``.
    """

    native: str | None
    virtual: tuple[int, int] | None = None
    multi_entry: bool = False


def _parts(key_path: Any) -> list[str]:
    return list(key_path) if isinstance(key_path, list | tuple) else [key_path]


class Table:
    """One table, either standalone (auto transactions) or bound to a transaction."""

    def __init__(self, db: TableDb, spec: TableSpec, tx: TableTx | None) -> None:
        self.db = db
        self.spec = spec
        self.name = spec.name
        self.tx = tx

    async def run(self, mode: Mode, fn: Callable[[Table], Awaitable[T]]) -> T:
        """Run ``fn`` with this table inside a transaction (the bound one, or a new one)."""
        if self.tx is not None:
            if mode == "rw":
                self.tx.check_write(self.name)
            return await fn(self)
        return await self.db.transaction(mode, [self.name], lambda tx: fn(tx.table(self.name)))

    # -- reads --------------------------------------------------------------------------

    async def get(self, key: Key | dict[str, Any]) -> Any:
        """Return the record under primary key ``key``, or ``None``.

        With a dict of criteria (``get({"name": "x"})``), the first record matching
        them, as :meth:`where` with the same dict finds it.
        """
        if isinstance(key, dict):
            return await criteria_collection(self, key).first()
        k = validate_key(key)
        read = self.db.hooks.reader(self.name)
        if read is not None:
            found = (await self.run("r", lambda t: GetMany(t.name, [k])))[0]
            return None if found is None else read(found)
        if self.tx is not None:  # the common case inside a body: no extra coroutine
            return (await GetMany(self.name, [k]))[0]
        return (await self.run("r", lambda t: GetMany(t.name, [k])))[0]

    async def bulk_get(self, keys: Sequence[Key]) -> list[Any]:
        """Return the records under ``keys`` in order, ``None`` for missing ones."""
        ks = [validate_key(k, f"keys[{i}]") for i, k in enumerate(keys)]
        found = list(await self.run("r", lambda t: GetMany(t.name, ks)))
        read = self.db.hooks.reader(self.name)
        return found if read is None else [None if v is None else read(v) for v in found]

    # -- hooks --------------------------------------------------------------------------

    def hook(self, event: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Subscribe ``fn`` to ``creating``, ``reading``, ``updating`` or ``deleting``.

        Returns ``fn``. See :mod:`panelot.idb.hooks` for what each hook is given. The
        write hooks are a middleware, installed on the database with the first one.
        """
        self.db.hooks.add(self.name, event, fn)
        if event != "reading" and not any(m.name == "hooks" for m in self.db._middleware):
            self.db.use(hooks_middleware(self.db), name="hooks", level=HOOKS_LEVEL)
        return fn

    def unhook(self, event: str, fn: Callable[..., Any]) -> None:
        """Unsubscribe ``fn`` from ``event`` (Dexie's ``hook(event).unsubscribe(fn)``)."""
        self.db.hooks.remove(self.name, event, fn)

    async def count(self) -> int:
        """Count all records."""
        return int(await self.run("r", lambda t: Count(t.name, None, KeyRange())))

    # -- writes -------------------------------------------------------------------------

    def _prepare(self, values: Sequence[Any], keys: Sequence[Key | None] | None) -> Mutate:
        return prepare_write(self.db, self.spec, values, keys)

    async def _write(
        self, op: str, values: Sequence[Any], keys: Sequence[Key | None] | None
    ) -> list[Key]:
        req = self._prepare(values, keys)
        req.kind = "add" if op in ("add", "bulk_add") else "put"

        if self.tx is not None:  # inside a body: no extra coroutine
            self.tx.check_write(self.name)
            return _keys_or_raise(op, await req, len(values))

        async def body(t: Table) -> list[Key]:
            # Raised inside the transaction, so an uncaught failure aborts all of it: a bulk
            # call outside a transaction is all-or-nothing too (stricter than Dexie, which
            # commits the items that succeeded). Catch BulkError in a body to keep them.
            return _keys_or_raise(op, await req, len(values))

        return await self.run("rw", body)

    async def add(self, value: Any, key: Key | None = None) -> Key:
        """Insert a new record; raise ConstraintError if its key exists. Return its key.

        As Dexie's, a generated in-line key is also set in ``value`` itself.
        """
        found = (await self._write("add", [value], None if key is None else [key]))[0]
        self._key_back(value, found)
        return found

    async def put(self, value: Any, key: Key | None = None) -> Key:
        """Insert or replace a record. Return its key (set in ``value`` too, as ``add``)."""
        found = (await self._write("put", [value], None if key is None else [key]))[0]
        self._key_back(value, found)
        return found

    def _key_back(self, value: Any, key: Key) -> None:
        path = self.spec.primary_key.key_path
        if isinstance(path, str) and isinstance(value, dict) and key is not None:
            set_by_key_path(value, path, key)

    @overload
    async def bulk_add(
        self,
        values: Sequence[Any],
        keys: Sequence[Key | None] | None = None,
        *,
        all_keys: Literal[True] = True,
    ) -> list[Key]: ...

    @overload
    async def bulk_add(
        self,
        values: Sequence[Any],
        keys: Sequence[Key | None] | None = None,
        *,
        all_keys: Literal[False],
    ) -> Key: ...

    async def bulk_add(
        self,
        values: Sequence[Any],
        keys: Sequence[Key | None] | None = None,
        *,
        all_keys: bool = True,
    ) -> list[Key] | Key:
        """Insert several records at once; return their keys. Raises BulkError on failures.

        With ``all_keys=False``, only the last key (``None`` for no values), as Dexie's
        ``bulkAdd`` returns by default; returning every key is the default here.
        """
        return _bulk_result(await self._write("bulk_add", values, keys), all_keys)

    @overload
    async def bulk_put(
        self,
        values: Sequence[Any],
        keys: Sequence[Key | None] | None = None,
        *,
        all_keys: Literal[True] = True,
    ) -> list[Key]: ...

    @overload
    async def bulk_put(
        self,
        values: Sequence[Any],
        keys: Sequence[Key | None] | None = None,
        *,
        all_keys: Literal[False],
    ) -> Key: ...

    async def bulk_put(
        self,
        values: Sequence[Any],
        keys: Sequence[Key | None] | None = None,
        *,
        all_keys: bool = True,
    ) -> list[Key] | Key:
        """Insert or replace several records at once; return their keys.

        With ``all_keys=False``, only the last key (``None`` for no values), as Dexie's
        ``bulkPut`` returns by default; returning every key is the default here.
        """
        return _bulk_result(await self._write("bulk_put", values, keys), all_keys)

    async def update(self, key: Key | dict[str, Any], changes: Any) -> int:
        """Apply changes to one record; return 1, or 0 if there is none under ``key``.

        ``changes`` is an update spec (``{"key.path": value}``, values may be
        :func:`~panelot.idb.modify.add`, :func:`~panelot.idb.modify.remove` or
        :func:`~panelot.idb.modify.replace_prefix`) or a function, as for
        :meth:`Collection.modify`. ``key`` may also be a record holding its primary key.
        A change of the primary key moves the record, as in Dexie.
        """
        path = self.spec.primary_key.key_path
        # Dexie takes any object but an array for a record holding its key: a date or
        # binary key is one too, on a table with in-line keys (it holds no key field).
        if isinstance(key, dict) or (
            isinstance(path, str) and isinstance(key, datetime | bytes | bytearray)
        ):
            found = get_by_key_path(key, path) if isinstance(path, str) else None
            if found is None or found is _NONE:
                raise InvalidArgumentError(
                    "update(): the object does not hold its primary key", field="key"
                )
            key = found
        if not callable(changes):
            check_changes(changes)
        return await self.where(":id").equals(validate_key(key)).modify(changes)

    async def upsert(self, key: Key, changes: dict[str, Any]) -> bool:
        """Apply changes to the record under ``key``, creating it if absent.

        Returns whether the record existed. A new record starts as ``{}`` with its
        in-line primary key set to ``key``, as in Dexie.
        """
        k = validate_key(key)
        check_changes(changes)

        async def body(t: Table) -> bool:
            existing = (await GetMany(t.name, [k]))[0]
            value = {} if existing is None else existing
            apply_changes(value, changes)
            path = t.spec.primary_key.key_path
            if isinstance(path, str):
                set_by_key_path(value, path, k)
            inline = path is not None
            _keys_or_raise("put", await t._prepare([value], None if inline else [k]), 1)
            return existing is not None

        return await self.run("rw", body)

    async def bulk_update(self, updates: Sequence[dict[str, Any]]) -> int:
        """Apply ``{"key": k, "changes": {...}}`` entries; return how many records existed.

        As in Dexie, a stored value JS takes for false (``0``, ``""``, ``false``, NaN,
        null) is left alone and not counted.

        A failure raises :class:`BulkError` by entry position, and nothing is written.
        Unlike Dexie's ``bulkUpdate``, property modifications (``add`` and its kin) are
        applied rather than stored as they are.
        """
        keys: list[Key] = []
        specs: list[dict[str, Any]] = []
        for i, entry in enumerate(updates):
            if not isinstance(entry, dict) or set(entry) != {"key", "changes"}:
                raise DataError(
                    f"updates[{i}] must be {{'key': ..., 'changes': {{...}}}}",
                    field=f"updates[{i}]",
                )
            keys.append(validate_key(entry["key"], f"updates[{i}].key"))
            check_changes(entry["changes"])
            specs.append(entry["changes"])

        async def body(t: Table) -> int:
            current = await GetMany(t.name, keys)
            inline = t.spec.primary_key.key_path is not None
            values, vkeys, where = [], [], []
            for i, (k, value, spec) in enumerate(zip(keys, current, specs, strict=True)):
                if js_falsy(value):
                    continue  # as Dexie's `if (obj)`: absent, or a stored 0, "", false, NaN
                apply_changes(value, spec, f"updates[{i}].changes")
                if inline and compare_keys(resolve_primary_key(t.spec, value, None), k):
                    raise ConstraintError(
                        "bulk_update() cannot change a primary key", field=f"updates[{i}].changes"
                    )
                values.append(value)
                vkeys.append(k)
                where.append(i)
            if not values:
                return 0
            result = await t._prepare(values, None if inline else vkeys)
            if result.failures:
                failures = {where[p]: e for p, e in result.failures.items()}
                raise BulkError(
                    f"bulk_update: {len(failures)} of {len(values)} operations failed", failures
                )
            return len(values)

        return await self.run("rw", body)

    async def delete(self, key: Key) -> None:
        """Delete the record under ``key`` (no error if absent)."""
        k = validate_key(key)
        await self.run("rw", lambda t: Mutate(t.name, "delete", keys=[k]))

    async def bulk_delete(self, keys: Sequence[Key]) -> None:
        """Delete the records under ``keys``."""
        ks: list[Key | None] = [validate_key(k, f"keys[{i}]") for i, k in enumerate(keys)]
        await self.run("rw", lambda t: Mutate(t.name, "delete", keys=ks))

    async def clear(self) -> None:
        """Delete every record."""
        await self.run("rw", lambda t: Mutate(t.name, "deleteRange", range=KeyRange()))

    # -- queries ------------------------------------------------------------------------

    def resolve(self, index: str | Sequence[str]) -> IndexRef:
        """Resolve an index name or key path to the native index serving it.

        ``":id"`` and the primary key's name are the primary key. A key path no index
        has is served by a compound index starting with it (Dexie's virtual index:
        ``where("a")`` on ``[a+b]``); otherwise it is a :class:`SchemaError`.
        """
        if isinstance(index, str):
            name = index
        elif isinstance(index, Sequence) and index and all(isinstance(p, str) for p in index):
            name = "[" + "+".join(index) + "]"
        else:
            raise DataError("an index is a name or a list of key paths", field="index")
        pk = self.spec.primary_key
        if name == ":id" or name == pk.name:
            return IndexRef(None)
        spec = self.spec.index(name)
        if spec is not None:
            return IndexRef(name, None, spec.multi_entry)
        want = name[1:-1].split("+") if name.startswith("[") and name.endswith("]") else [name]
        best: tuple[int, str | None] | None = None
        for ix in (pk, *self.spec.indexes):
            parts = _parts(ix.key_path)
            if ix.key_path is None or len(parts) <= len(want) or parts[: len(want)] != want:
                continue
            tail = len(parts) - len(want)
            if best is None or tail < best[0]:
                best = (tail, None if ix is pk else ix.name)
        if best is None:
            raise SchemaError(f"{self.name}: {name!r} is not indexed", field=name)
        return IndexRef(best[1], (len(want), best[0]))

    def index_name(self, index: str | Sequence[str]) -> str | None:
        """The native index name a real (not virtual) index has (``None`` = primary key)."""
        ref = self.resolve(index)
        if ref.virtual is not None:
            raise SchemaError(
                f"{self.name}: {index!r} is not an index of its own", field=str(index)
            )
        return ref.native

    @overload
    def where(self, index: dict[str, Any]) -> Collection: ...

    @overload
    def where(self, index: str | Sequence[str]) -> WhereClause: ...

    def where(self, index: str | Sequence[str] | dict[str, Any]) -> WhereClause | Collection:
        """Start a query on an index (or the primary key, ``":id"``).

        ``index`` is a name, a compound key path (``"[a+b]"`` or ``["a", "b"]``), or a
        dict of equality criteria (``{"a": 1, "b": 2}``), which returns a collection at
        once: see :func:`~panelot.idb.where.criteria_collection`.
        """
        if isinstance(index, dict):
            return criteria_collection(self, index)
        return self._where(index, None)

    def _where(self, index: str | Sequence[str], or_prev: Collection | None) -> WhereClause:
        return WhereClause(self, self.resolve(index), or_prev)

    def order_by(self, index: str | Sequence[str]) -> Collection:
        """Return every record ordered by ``index``."""
        return self.where(index).all()

    def to_collection(self) -> Collection:
        """Return every record in primary-key order."""
        return Collection(self, CollectionState(self.name, None, (KeyRange(),)))

    def filter(self, fn: Callable[[Any], bool]) -> Collection:
        """Return the records for which ``fn(record)`` is true, in primary-key order."""
        return self.to_collection().filter(fn)

    def reverse(self) -> Collection:
        """Return every record in descending primary-key order."""
        return self.to_collection().reverse()

    def limit(self, n: int) -> Collection:
        """Return at most ``n`` records in primary-key order."""
        return self.to_collection().limit(n)

    def offset(self, n: int) -> Collection:
        """Skip the first ``n`` records in primary-key order."""
        return self.to_collection().offset(n)

    async def to_list(self) -> list[Any]:
        """Return every record in primary-key order."""
        return await self.to_collection().to_list()


def _bulk_result(keys: list[Key], all_keys: bool) -> list[Key] | Key:
    """A bulk write's answer: every key, or Dexie's default, the last (``None`` if none)."""
    if all_keys:
        return keys
    return keys[-1] if keys else None


def _keys_or_raise(op: str, result: MutateResult, total: int) -> list[Key]:
    if result.failures and op in ("add", "put"):
        raise result.failures[0]
    if result.failures:
        first = next(iter(sorted(result.failures.items())))
        raise BulkError(
            f"{op}: {len(result.failures)} of {total} operations failed "
            f"(first: #{first[0]} {first[1].name}: {first[1].message})",
            result.failures,
        )
    return result.keys
