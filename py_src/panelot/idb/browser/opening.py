"""Opening an IndexedDB database as Dexie 4 would, and reading its structure back.

``indexedDB.open(name, round(N*10))`` runs the upgrade plan of
:mod:`panelot.idb.upgrade` inside ``onupgradeneeded``; the opened structure is then
read back and checked against the declaration. A plan error aborts the upgrade
transaction, so a failed upgrade changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pyodide.ffi import JsProxy, create_proxy, jsnull, to_js

from panelot.idb.browser.convert import js_error
from panelot.idb.errors import AbortError, PanelotError, VersionError
from panelot.idb.schema import SchemaVersion
from panelot.idb.upgrade import (
    CreateIndex,
    CreateStore,
    DeleteIndex,
    DeleteStore,
    Step,
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


async def open_native(
    factory: JsProxy, name: str, versions: list[SchemaVersion], target: int
) -> JsProxy:
    """Open ``name`` at native version ``target``, running the Dexie upgrade plan if needed."""
    req = factory.open(name, target)
    upgrade_tx: list[Any] = []

    def upgrade(event: Any) -> None:
        db, tx = req.result, req.transaction
        upgrade_tx.append(tx)
        old = int(event.oldVersion)
        installed = describe_native(db, tx) if old else {}
        for step in plan_upgrade(old, installed, versions):
            _apply_step(db, tx, step)

    try:
        return await request_to_future(req, upgrade)
    except VersionError as exc:
        raise VersionError(
            f"{name}: the installed database is newer than the declared version {target}: "
            f"{exc.message}"
        ) from None
    except AbortError:
        # The upgrade transaction failed (e.g. a unique index over duplicates): report why.
        cause = upgrade_tx[0].error if upgrade_tx else None
        if cause is None or cause is jsnull:
            raise
        raise js_error(cause) from None
