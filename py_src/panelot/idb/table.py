"""``Table`` and ``WhereClause``: Dexie's table API with Pythonic names, on the core protocol.

A table from ``db.table(name)`` runs each call in a transaction of its own; a table
from ``tx.table(name)`` runs its calls inside the transaction ``tx``. Bulk calls issue
all their requests together, as Dexie does, and report failures by position in a
:class:`~panelot.idb.errors.BulkError`; the enclosing transaction aborts unless the
body catches it. Outside a transaction it is all-or-nothing too (stricter than Dexie).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from panelot.idb.collection import Collection
from panelot.idb.core import Count, GetMany, Mode, Mutate, MutateResult
from panelot.idb.errors import BulkError, DataError, SchemaError
from panelot.idb.keys import Key, KeyRange, compare_keys, index_keys, key_sort_key, validate_key
from panelot.idb.observe.track import EXACT_WRITES
from panelot.idb.schema import TableSpec
from panelot.idb.values import clone_value, resolve_primary_key

if TYPE_CHECKING:
    from panelot.idb.database import Database, Transaction

__all__ = ["Table", "WhereClause", "apply_changes"]

T = TypeVar("T")


def apply_changes(value: dict[str, Any], changes: dict[str, Any], field: str = "changes") -> None:
    """Apply Dexie-style ``{"a.b": new}`` changes to ``value`` in place."""
    for path, new in changes.items():
        parts = path.split(".")
        target = value
        for part in parts[:-1]:
            nxt = target.get(part)
            if not isinstance(nxt, dict):
                nxt = {}
                target[part] = nxt
            target = nxt
        target[parts[-1]] = clone_value(new, f"{field}.{path}")


class Table:
    """One table, either standalone (auto transactions) or bound to a transaction."""

    def __init__(self, db: Database, spec: TableSpec, tx: Transaction | None) -> None:
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

    async def get(self, key: Key) -> Any:
        """Return the record under primary key ``key``, or ``None``."""
        k = validate_key(key)
        if self.tx is not None:  # the common case inside a body: no extra coroutine
            return (await GetMany(self.name, [k]))[0]
        return (await self.run("r", lambda t: GetMany(t.name, [k])))[0]

    async def bulk_get(self, keys: Sequence[Key]) -> list[Any]:
        """Return the records under ``keys`` in order, ``None`` for missing ones."""
        ks = [validate_key(k, f"keys[{i}]") for i, k in enumerate(keys)]
        return list(await self.run("r", lambda t: GetMany(t.name, ks)))

    async def count(self) -> int:
        """Count all records."""
        return int(await self.run("r", lambda t: Count(t.name, None, KeyRange())))

    # -- writes -------------------------------------------------------------------------

    def _prepare(self, values: Sequence[Any], keys: Sequence[Key | None] | None) -> Mutate:
        if keys is not None and len(keys) != len(values):
            raise DataError("keys must be as many as values", field="keys")
        snapshot = self.db.core.snapshot(values)
        ks: list[Key | None] = []
        for i, v in enumerate(values):  # the snapshot may be opaque; a key reads the same
            try:
                ks.append(resolve_primary_key(self.spec, v, None if keys is None else keys[i]))
            except DataError as exc:
                raise DataError(
                    f"values[{i}]: {exc.message}", field=f"values[{i}].{exc.field}"
                ) from None
        out_of_line = self.spec.primary_key.key_path is None
        touched = _index_keys(self.spec, values) if len(values) < EXACT_WRITES else None
        return Mutate(
            self.name, "put", snapshot, ks if out_of_line else None, resolved=ks, index_keys=touched
        )

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
        """Insert a new record; raise ConstraintError if its key exists. Return its key."""
        return (await self._write("add", [value], None if key is None else [key]))[0]

    async def put(self, value: Any, key: Key | None = None) -> Key:
        """Insert or replace a record. Return its key."""
        return (await self._write("put", [value], None if key is None else [key]))[0]

    async def bulk_add(
        self, values: Sequence[Any], keys: Sequence[Key | None] | None = None
    ) -> list[Key]:
        """Insert several records at once; return their keys. Raises BulkError on failures."""
        return await self._write("bulk_add", values, keys)

    async def bulk_put(
        self, values: Sequence[Any], keys: Sequence[Key | None] | None = None
    ) -> list[Key]:
        """Insert or replace several records at once; return their keys."""
        return await self._write("bulk_put", values, keys)

    async def update(self, key: Key, changes: dict[str, Any]) -> int:
        """Apply ``{"key.path": value}`` changes to one record; return 1, or 0 if absent."""
        k = validate_key(key)

        async def body(t: Table) -> int:
            current = (await GetMany(t.name, [k]))[0]
            if current is None:
                return 0
            apply_changes(current, changes)
            inline = t.spec.primary_key.key_path is not None
            mutate = t._prepare([current], None if inline else [k])
            if inline and compare_keys(resolve_primary_key(t.spec, current, None), k):
                raise DataError("update() cannot change the primary key", field="changes")
            _keys_or_raise("put", await mutate, 1)
            return 1

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

    def index_name(self, index: str | Sequence[str]) -> str | None:
        """Resolve an index name or key path to the native index name (``None`` = primary key)."""
        name = index if isinstance(index, str) else "[" + "+".join(index) + "]"
        if name.startswith(":") or name == self.spec.primary_key.name:
            return None
        if self.spec.index(name) is None:
            raise SchemaError(f"{self.name}: {name!r} is not indexed", field=name)
        return name

    def where(self, index: str | Sequence[str]) -> WhereClause:
        """Start a query on an index (or the primary key)."""
        return WhereClause(self, self.index_name(index))

    def order_by(self, index: str | Sequence[str]) -> Collection:
        """Return every record ordered by ``index``."""
        return Collection(self, self.index_name(index), (KeyRange(),))

    def to_collection(self) -> Collection:
        """Return every record in primary-key order."""
        return Collection(self, None, (KeyRange(),))

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


def _index_keys(spec: TableSpec, values: Sequence[Any]) -> dict[str, list[Key]]:
    """The keys ``values`` give each index of ``spec`` (for the change feed)."""
    out: dict[str, list[Key]] = {}
    for index in spec.indexes:
        keys: list[Key] = []
        path, multi = index.key_path, index.multi_entry
        if path is None:
            continue
        for value in values:
            keys.extend(index_keys(value, path, multi))
        out[index.name] = keys
    return out


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


class WhereClause:
    """A pending ``where(index)``: each method returns a :class:`Collection`."""

    def __init__(self, table: Table, index: str | None) -> None:
        self.table = table
        self.index = index

    def _range(self, *ranges: KeyRange) -> Collection:
        return Collection(self.table, self.index, tuple(ranges))

    def equals(self, key: Key) -> Collection:
        """Records whose index key equals ``key``."""
        return self._range(KeyRange.only(key))

    def between(
        self, lower: Key, upper: Key, include_lower: bool = True, include_upper: bool = False
    ) -> Collection:
        """Records between two keys; by default the lower bound is in, the upper out (Dexie)."""
        lo, hi = validate_key(lower, "lower"), validate_key(upper, "upper")
        c = compare_keys(lo, hi)
        if c > 0 or (c == 0 and not (include_lower and include_upper)):
            return self._range()
        return self._range(KeyRange(lo, hi, not include_lower, not include_upper))

    def above(self, key: Key) -> Collection:
        """Records whose index key is greater than ``key``."""
        return self._range(KeyRange(validate_key(key), None, True, False))

    def above_or_equal(self, key: Key) -> Collection:
        """Records whose index key is at least ``key``."""
        return self._range(KeyRange(validate_key(key), None, False, False))

    def below(self, key: Key) -> Collection:
        """Records whose index key is less than ``key``."""
        return self._range(KeyRange(None, validate_key(key), False, True))

    def below_or_equal(self, key: Key) -> Collection:
        """Records whose index key is at most ``key``."""
        return self._range(KeyRange(None, validate_key(key), False, False))

    def any_of(self, keys: Sequence[Key]) -> Collection:
        """Records whose index key is any of ``keys`` (in key order, each key once)."""
        ks = sorted((validate_key(k, f"keys[{i}]") for i, k in enumerate(keys)), key=key_sort_key)
        distinct = [k for i, k in enumerate(ks) if i == 0 or compare_keys(ks[i - 1], k)]
        return self._range(*(KeyRange(k, k) for k in distinct))

    def starts_with(self, prefix: str) -> Collection:
        """Records whose string index key starts with ``prefix``."""
        if not isinstance(prefix, str):
            raise DataError("starts_with() needs a string", field="prefix")
        return self._range(KeyRange(prefix, prefix + "\uffff", False, False))

    def all(self) -> Collection:
        """Every record, in index order."""
        return self._range(KeyRange())
