"""Building a write request: the :class:`~panelot.idb.core.Mutate` of an ``add``/``put``.

What a table's writes, a collection's ``modify`` and the hooks middleware (which writes
what the hooks made of the values) all issue: the values captured by the core's
snapshot, the primary key each carries or is given, and, for a connection that
observes, the keys they give each index (what the change feed announces).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from panelot.idb.core import Core, Mutate
from panelot.idb.errors import DataError
from panelot.idb.keys import Key, index_keys, plain_string_keys
from panelot.idb.observe.track import EXACT_WRITES
from panelot.idb.schema import TableSpec
from panelot.idb.values import resolve_primary_key

__all__ = ["WritingDb", "prepare_write", "touched_index_keys"]


class _Hooks(Protocol):
    def of(self, table: str, event: str) -> list[Callable[..., Any]]:
        """The functions subscribed to ``event`` of ``table``."""
        ...


class WritingDb(Protocol):
    """What a write needs of its database (a :class:`~panelot.idb.database.Database`)."""

    @property
    def core(self) -> Core:
        """The open connection, whose snapshot captures the values."""
        ...

    @property
    def hooks(self) -> _Hooks:
        """The tables' hooks: a ``creating`` hook may give a record its key."""
        ...

    @property
    def observe(self) -> bool:
        """Whether the connection announces its writes (their index keys)."""
        ...


def prepare_write(
    db: WritingDb, spec: TableSpec, values: Sequence[Any], keys: Sequence[Key | None] | None
) -> Mutate:
    """A ``put`` of ``values`` into ``spec``'s table of ``db`` (the caller may make it an ``add``).

    ``keys`` are explicit out-of-line keys. The values are captured by the core's
    :meth:`~panelot.idb.core.Core.snapshot`. Raises
    :class:`~panelot.idb.errors.DataError` naming the value whose key is wrong.
    """
    if keys is not None and len(keys) != len(values):
        raise DataError("keys must be as many as values", field="keys")
    captured = db.core.snapshot(values)
    # Records keyed by a plain field holding a string, the common case, need no checks.
    plain = None if keys is not None else plain_string_keys(values, spec.primary_key.key_path)
    ks: list[Key | None] = _resolved_keys(db, spec, values, keys) if plain is None else [*plain]
    out_of_line = spec.primary_key.key_path is None
    # What the change feed announces of the write; a connection that does not
    # observe announces nothing, so it does not pay for them.
    observed = db.observe and len(values) < EXACT_WRITES
    touched = touched_index_keys(spec, values) if observed else None
    return Mutate(
        spec.name,
        "put",
        captured,
        ks if out_of_line else None,
        resolved=ks,
        index_keys=touched,
        source=values,
    )


def _resolved_keys(
    db: WritingDb, spec: TableSpec, values: Sequence[Any], keys: Sequence[Key | None] | None
) -> list[Key | None]:
    """Each value's primary key, checked; ``None`` where the store (or a hook) gives it."""
    ks: list[Key | None] = []
    # A creating hook may give a record its key: leave a missing one to the core.
    hooked = bool(db.hooks.of(spec.name, "creating"))
    for i, v in enumerate(values):  # the snapshot may be opaque; a key reads the same
        try:
            ks.append(resolve_primary_key(spec, v, None if keys is None else keys[i]))
        except DataError as exc:
            given = None if keys is None else keys[i]
            if hooked and given is None and not _has_key(spec, v):
                ks.append(None)
                continue
            raise DataError(
                f"values[{i}]: {exc.message}", field=f"values[{i}].{exc.field}"
            ) from None
    return ks


def _has_key(spec: TableSpec, value: Any) -> bool:
    path = spec.primary_key.key_path
    return isinstance(path, str) and isinstance(value, dict) and path in value


def touched_index_keys(spec: TableSpec, values: Sequence[Any]) -> dict[str, list[Key]]:
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
