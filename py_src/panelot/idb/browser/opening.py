"""Opening an IndexedDB database as Dexie 4 would, and reading its structure back.

``indexedDB.open(name, round(N*10))`` runs the upgrade plan of
:mod:`panelot.idb.upgrade` inside ``onupgradeneeded``; a newer database is opened at
its own version; the opened structure is then read back and set against the
declaration, and what is missing is added by a version bump. A plan error aborts the
upgrade transaction, so a failed upgrade changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pyodide.ffi import JsProxy, create_proxy, jsnull, to_js

from panelot.idb.browser.convert import js_error
from panelot.idb.errors import AbortError, PanelotError, SchemaError, VersionError
from panelot.idb.schema import SchemaVersion, declared_tables
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

__all__ = ["describe_native", "open_native", "request_to_future"]


def _key_path(kp: Any) -> Any:
    if kp is None or kp is jsnull:
        return None
    if isinstance(kp, str):
        return kp
    return [str(p) for p in kp.to_py()]


def describe_native(db: JsProxy, tx: JsProxy | None = None) -> dict[str, dict[str, Any]]:
    """Read every store's keyPath, autoIncrement and indexes from an open database."""
    names = [str(n) for n in db.objectStoreNames.to_py()] if db.objectStoreNames.length else []
    if not names:
        return {}
    own_tx = tx is None
    if tx is None:
        tx = db.transaction(to_js(names), "readonly")
    out: dict[str, dict[str, Any]] = {}
    try:
        for name in names:
            store = tx.objectStore(name)
            indexes = []
            for idx_name in store.indexNames.to_py():
                idx = store.index(idx_name)
                indexes.append(
                    {
                        "name": str(idx.name),
                        "keyPath": _key_path(idx.keyPath),
                        "unique": bool(idx.unique),
                        "multiEntry": bool(idx.multiEntry),
                    }
                )
            out[name] = {
                "name": name,
                "keyPath": _key_path(store.keyPath),
                "autoIncrement": bool(store.autoIncrement),
                "indexes": indexes,
            }
    finally:
        if own_tx:
            tx.abort()  # read only; nothing to commit
    return out


def _apply_step(db: JsProxy, tx: JsProxy, step: Step) -> None:
    if isinstance(step, CreateStore):
        pk = step.table.primary_key
        opts: dict[str, Any] = {"autoIncrement": pk.auto_increment}
        if pk.key_path is not None:
            opts["keyPath"] = pk.key_path
        store = db.createObjectStore(step.table.name, to_js(opts, dict_converter=_from_entries))
        for idx in step.table.indexes:
            _create_index(store, idx)
    elif isinstance(step, DeleteStore):
        db.deleteObjectStore(step.name)
    elif isinstance(step, CreateIndex):
        _create_index(tx.objectStore(step.store), step.index)
    elif isinstance(step, DeleteIndex):
        tx.objectStore(step.store).deleteIndex(step.name)


def _from_entries(entries: Any) -> Any:
    import js

    return js.Object.fromEntries(entries)


def _create_index(store: JsProxy, idx: Any) -> None:
    opts = to_js(
        {"unique": idx.unique, "multiEntry": idx.multi_entry}, dict_converter=_from_entries
    )
    store.createIndex(idx.name, to_js(idx.key_path), opts)


def request_to_future(
    req: JsProxy, on_upgrade: Callable[[Any], None] | None = None
) -> asyncio.Future[Any]:
    """Return a future for an open/delete request, destroying its handler proxies after."""
    fut: asyncio.Future[Any] = asyncio.get_event_loop().create_future()
    proxies: list[Any] = []

    def settle(ok: bool, value: Any) -> None:
        for p in proxies:
            p.destroy()
        proxies.clear()
        req.onsuccess = req.onerror = req.onupgradeneeded = req.onblocked = None
        if fut.done():
            return
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def on_success(_event: Any) -> None:
        settle(True, req.result)

    def on_error(event: Any) -> None:
        event.preventDefault()
        settle(False, js_error(req.error))

    def on_upgrade_event(event: Any) -> None:
        try:
            if on_upgrade is not None:
                on_upgrade(event)
        except PanelotError as exc:
            req.transaction.abort()
            settle(False, exc)

    for attr, fn in (
        ("onsuccess", on_success),
        ("onerror", on_error),
        ("onupgradeneeded", on_upgrade_event),
    ):
        proxy = create_proxy(fn)
        proxies.append(proxy)
        setattr(req, attr, proxy)
    return fut


async def _open_request(
    factory: JsProxy, name: str, version: int | None, on_upgrade: Callable[[Any, Any, int], None]
) -> Any:
    """``indexedDB.open(name[, version])``; ``on_upgrade(db, tx, oldVersion)`` in an upgrade."""
    req = factory.open(name) if version is None else factory.open(name, version)
    upgrade_tx: list[Any] = []

    def upgrade(event: Any) -> None:
        upgrade_tx.append(req.transaction)
        on_upgrade(req.result, req.transaction, int(event.oldVersion))

    try:
        return await request_to_future(req, upgrade)
    except AbortError:
        # The upgrade transaction failed (e.g. a unique index over duplicates): say why.
        cause = upgrade_tx[0].error if upgrade_tx else None
        if cause is None or cause is jsnull:
            raise
        raise js_error(cause) from None


async def open_native(
    factory: JsProxy, name: str, versions: list[SchemaVersion]
) -> tuple[JsProxy, SchemaDiff]:
    """Open ``name`` as Dexie 4 would; return the connection and how it differs.

    At the newest declared native version, running the upgrade plan if the database is
    older; at the installed version if it is newer (IndexedDB's ``VersionError`` is
    Dexie's cue to open without a version). A declared store or index still missing
    is then added by reopening at the installed version + 1 (Dexie's SchemaDiff path).
    A changed primary key raises :class:`~panelot.idb.errors.UpgradeError`, with
    nothing changed.
    """
    target = check_versions(versions)
    tables = declared_tables(versions)
    found: list[int] = []
    added: list[Step] = []

    def patch(db: Any, tx: Any) -> None:
        comparison = compare_structure(describe_native(db, tx), tables)
        comparison.refuse_changed_primary()
        steps = patch_steps(comparison)
        for step in steps:
            _apply_step(db, tx, step)
        added.extend(steps)

    def upgrade(db: Any, tx: Any, old: int) -> None:
        found.append(old)
        installed = describe_native(db, tx) if old else {}
        for step in plan_upgrade(old, installed, versions):
            _apply_step(db, tx, step)
        patch(db, tx)

    def bump(db: Any, tx: Any, old: int) -> None:
        patch(db, tx)

    try:
        db = await _open_request(factory, name, target, upgrade)
    except VersionError:
        db = await _open_request(factory, name, None, bump)
    if not found:
        found.append(int(db.version))
    for _ in range(_BUMPS):
        comparison = compare_structure(describe_native(db), tables)
        if comparison.changed_primary:
            db.close()
            comparison.refuse_changed_primary()
        if not comparison.missing:
            break
        version = int(db.version) + 1
        db.close()
        try:
            db = await _open_request(factory, name, version, bump)
        except VersionError:  # another context bumped it meanwhile: look again
            db = await _open_request(factory, name, None, bump)
    else:
        db.close()
        raise SchemaError(f"{name}: the declared stores could not be added in {_BUMPS} tries")
    diff = SchemaDiff.of(comparison, target, found[0], int(db.version), added)
    diff.report(name)
    return db, diff


_BUMPS = 5
"""How many SchemaDiff bumps an open tries before giving up (others may bump too)."""
