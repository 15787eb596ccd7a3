"""The browser core: the only module that runs transactions on IndexedDB.

A transaction body is stepped by :class:`~panelot.idb.driver.Stepper` from inside the
IndexedDB callbacks: the success handler of one request converts its result and
resumes the body, which issues the next request before the handler returns. The
transaction therefore never idles and survives any number of sequential awaits.

Each connection owns four long-lived handler proxies (request success and error,
transaction complete and abort), created once and destroyed on :meth:`close`. A
request finds its transaction's state through an id stamped on the native
transaction, so no proxy is created per operation. Bulk writes issue every request
at once and listen for success on the last one only, as Dexie does; an error on any
request is recorded by position (``preventDefault`` keeps the transaction alive) and
thrown into the body, which aborts unless the body catches it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import js
from pyodide.ffi import JsException, JsProxy, create_proxy, jsnull, to_js

from .browser_convert import (
    js_error,
    key_range_to_js,
    key_to_js,
    records_from_js,
    value_from_js,
    values_to_js,
)
from .browser_open import describe_native, open_native, request_to_future
from .core import Batch, Count, GetMany, Mode, Mutate, MutateResult, Query, Request, describe_tables
from .driver import Stepper
from .errors import AbortError, DataError, InvalidStateError, PanelotError
from .keys import KeyRange
from .schema import SchemaVersion, TableSpec, declared_tables
from .upgrade import check_versions, verify_structure
from .values import EXTRA_STORABLE, resolve_primary_key

__all__ = ["BrowserCore", "BrowserFactory"]

T = TypeVar("T")
EXTRA_STORABLE.append(JsProxy)  # JS handles (Blobs) may be stored as they are

_TX_ID = "__panelotTx"
_POS = "__panelotPos"


class BrowserFactory:
    """Opens IndexedDB databases in the page (``indexedDB`` by default)."""

    def __init__(self, idb_factory: Any = None) -> None:
        self._idb = idb_factory if idb_factory is not None else js.indexedDB

    async def open(self, name: str, versions: list[SchemaVersion]) -> BrowserCore:
        """Open ``name``, creating or upgrading it as Dexie 4 would, then verify it."""
        target = check_versions(versions)
        db = await open_native(self._idb, name, versions, target)
        tables = declared_tables(versions)
        try:
            verify_structure(describe_native(db), tables)
        except PanelotError:
            db.close()
            raise
        return BrowserCore(name, db, tables)

    async def delete(self, name: str) -> None:
        """Delete a whole database."""
        await request_to_future(self._idb.deleteDatabase(name))


@dataclass(slots=True)
class _Op:
    """The request a transaction is waiting on, and what its native requests returned.

    With ``listen_all`` every native request reports success; otherwise (bulk writes
    whose keys are known) only the last one does, and since IndexedDB completes the
    requests of a transaction in order, its success means all are done.
    """

    req: Request
    results: list[Any] = field(default_factory=list)
    failures: dict[int, PanelotError] = field(default_factory=dict)
    listen_all: bool = True
    pending: int = 0
    last: int = -1


@dataclass(slots=True)
class _Tx:
    """State of one running native transaction."""

    native: Any
    tx_id: int = 0
    stores: dict[str, Any] = field(default_factory=dict)
    stepper: Stepper | None = None
    future: asyncio.Future[Any] | None = None
    op: _Op | None = None
    result: Any = None
    error: BaseException | None = None


class BrowserCore:
    """An open IndexedDB connection implementing the core protocol."""

    def __init__(self, name: str, db: JsProxy, tables: dict[str, TableSpec]) -> None:
        self.name = name
        self.version = int(db.version)
        self.tables = tables
        self._db: Any = db
        self._txs: dict[int, _Tx] = {}
        self._next_id = 0
        self._on_success = create_proxy(self._success)
        self._on_error = create_proxy(self._error)
        self._on_complete = create_proxy(self._complete)
        self._on_abort = create_proxy(self._abort)
        self._on_versionchange = create_proxy(lambda _e: self.close())
        db.onversionchange = self._on_versionchange
        self._has_records = hasattr(js.IDBObjectStore.prototype, "getAllRecords")

    def describe(self) -> dict[str, Any]:
        """Read the installed structure back from IndexedDB."""
        return describe_tables(self.name, self.version, list(describe_native(self._db).values()))

    def close(self) -> None:
        """Close the connection (also done when another connection upgrades the database)."""
        if self._db is None:
            return
        self._db.onversionchange = None
        self._db.close()
        self._db = None
        for proxy in (
            self._on_success,
            self._on_error,
            self._on_complete,
            self._on_abort,
            self._on_versionchange,
        ):
            proxy.destroy()

    async def run(self, mode: Mode, tables: Sequence[str], body: Coroutine[Any, Any, T]) -> T:
        """Drive ``body`` inside one IndexedDB transaction; return its result after commit."""
        if self._db is None:
            body.close()
            raise InvalidStateError(f"{self.name}: the database connection is closed")
        try:
            native = self._db.transaction(
                to_js(list(tables)), "readwrite" if mode == "rw" else "readonly"
            )
        except JsException as exc:
            body.close()
            raise js_error(exc) from None
        tx_id = self._next_id = self._next_id + 1
        tx = _Tx(native, tx_id, future=asyncio.get_event_loop().create_future())
        setattr(native, _TX_ID, tx_id)
        native.oncomplete = self._on_complete
        native.onabort = self._on_abort
        self._txs[tx_id] = tx
        tx.stepper = Stepper(
            body, lambda req: self._issue(tx, req), lambda r, e: self._finish(tx, r, e)
        )
        tx.stepper.start()
        assert tx.future is not None
        return await tx.future  # type: ignore[no-any-return]

    # -- issuing requests ---------------------------------------------------------------

    def _issue(self, tx: _Tx, req: Request) -> None:
        op = _Op(req)
        tx.op = op
        try:
            calls, listen_all = self._plan(tx, req)
        except JsException as exc:
            self._resume(tx, None, js_error(exc))
            return
        except Exception as exc:  # a PanelotError, or a bug: the body gets it either way
            self._resume(tx, None, exc)
            return
        self._launch(tx, op, calls, listen_all)

    def _plan(self, tx: _Tx, req: Request) -> tuple[list[tuple[Any, tuple[Any, ...]]], bool]:
        """Return the native calls that make up ``req``, and whether each must report."""
        if isinstance(req, Batch):
            return [self._native_call(tx, sub) for sub in req.requests], True
        if isinstance(req, GetMany):
            store = self._store(tx, req.table)
            return [(store.get, (key_to_js(k),)) for k in req.keys], True
        if isinstance(req, Mutate) and req.kind in ("add", "put", "delete"):
            store = self._store(tx, req.table)
            if req.kind == "delete":
                return [(store.delete, (key_to_js(k),)) for k in req.keys or []], False
            values = req.values or []
            js_values = values_to_js(values)
            write = store.add if req.kind == "add" else store.put
            keys = req.keys or [None] * len(values)
            calls = [
                (write, (js_values[i],) if k is None else (js_values[i], key_to_js(k)))
                for i, k in enumerate(keys)
            ]
            return calls, self.tables[req.table].primary_key.auto_increment
        return [self._native_call(tx, req)], True

    def _native_call(self, tx: _Tx, req: Request) -> tuple[Any, tuple[Any, ...]]:
        if isinstance(req, GetMany) and len(req.keys) == 1:
            return self._store(tx, req.table).get, (key_to_js(req.keys[0]),)
        if isinstance(req, Query):
            return self._query_call(tx, req)
        if isinstance(req, Count):
            return self._source(tx, req.table, req.index).count, (key_range_to_js(req.range),)
        if isinstance(req, Mutate) and req.kind == "deleteRange":
            rng = req.range or KeyRange()
            store = self._store(tx, req.table)
            return (store.clear, ()) if rng.is_all else (store.delete, (key_range_to_js(rng),))
        raise DataError(f"{type(req).__name__} cannot be part of a batch")

    def _store(self, tx: _Tx, table: str) -> Any:
        """The native object store of ``table`` in ``tx``, fetched once per transaction."""
        store = tx.stores.get(table)
        if store is None:
            store = tx.stores[table] = tx.native.objectStore(table)
        return store

    def _source(self, tx: _Tx, table: str, index: str | None) -> Any:
        store = self._store(tx, table)
        return store if index is None else store.index(index)

    def _query_call(self, tx: _Tx, req: Query) -> tuple[Any, tuple[Any, ...]]:
        source = self._source(tx, req.table, req.index)
        rng = key_range_to_js(req.range)
        if req.want == "records" or req.reverse:
            if not self._has_records:
                raise DataError("this browser lacks getAllRecords(); reverse queries need it")
            opts = js.Object.new()
            opts.query = rng
            opts.direction = "prev" if req.reverse else "next"
            if req.limit is not None:
                opts.count = req.limit
            return source.getAllRecords, (opts,)
        getter = source.getAll if req.want == "values" else source.getAllKeys
        return getter, (rng,) if req.limit is None else (rng, req.limit)

    def _launch(
        self, tx: _Tx, op: _Op, calls: list[tuple[Any, tuple[Any, ...]]], listen_all: bool
    ) -> None:
        op.results = [None] * len(calls)
        op.listen_all = listen_all
        last_native = None
        for pos, (fn, args) in enumerate(calls):
            try:
                native = fn(*args)
            except JsException as exc:  # a synchronous failure concerns that item only
                op.failures[pos] = js_error(exc)
                continue
            if len(calls) > 1:
                setattr(native, _POS, pos)
            native.onerror = self._on_error
            if listen_all:
                native.onsuccess = self._on_success
            op.pending += 1
            op.last, last_native = pos, native
        if not listen_all and last_native is not None:
            last_native.onsuccess = self._on_success
            op.pending = 1
        if op.pending == 0:
            self._complete_op(tx, op)

    # -- request events -----------------------------------------------------------------

    def _op_of(self, native: Any) -> tuple[_Tx, _Op, int] | None:
        # Each JS property read costs a crossing; skip the ones the state makes needless.
        if len(self._txs) == 1:
            tx: _Tx | None = next(iter(self._txs.values()))
        else:
            tx = self._txs.get(getattr(native.transaction, _TX_ID, -1))
        if tx is None or tx.op is None:
            return None
        pos = 0 if len(tx.op.results) == 1 else int(getattr(native, _POS))
        return tx, tx.op, pos

    def _success(self, event: Any) -> None:
        try:
            self._on_request_success(event)
        except Exception as exc:  # never let an error escape into the IndexedDB event loop
            self._fail_from_callback(event, exc)

    def _on_request_success(self, event: Any) -> None:
        found = self._op_of(event.target)
        if found is None:
            return
        tx, op, pos = found
        try:
            op.results[pos] = self._convert(op.req, pos, event.target.result)
        except PanelotError as exc:
            op.failures[pos] = exc
        self._settle_one(tx, op, pos)

    def _error(self, event: Any) -> None:
        event.preventDefault()  # keep the transaction alive; the body decides what follows
        event.stopPropagation()
        try:
            self._on_request_error(event)
        except Exception as exc:  # never let an error escape into the IndexedDB event loop
            self._fail_from_callback(event, exc)

    def _fail_from_callback(self, event: Any, exc: Exception) -> None:
        """An internal error while handling a request: end its transaction with that error."""
        tx = self._txs.get(getattr(event.target.transaction, _TX_ID, -1))
        if tx is None:
            return
        if tx.stepper is not None:
            tx.stepper.done = True
        self._finish(tx, None, exc)

    def _on_request_error(self, event: Any) -> None:
        found = self._op_of(event.target)
        if found is None:
            return
        tx, op, pos = found
        op.failures[pos] = js_error(event.target.error)
        self._settle_one(tx, op, pos)

    def _settle_one(self, tx: _Tx, op: _Op, pos: int) -> None:
        if op.listen_all:
            op.pending -= 1
            if op.pending == 0:
                self._complete_op(tx, op)
        elif pos == op.last:
            self._complete_op(tx, op)

    def _complete_op(self, tx: _Tx, op: _Op) -> None:
        req = op.req
        tx.op = None
        if isinstance(req, Mutate) and req.kind in ("add", "put", "delete"):
            self._resume(tx, self._mutate_result(req, op))
        elif op.failures:
            self._resume(tx, None, op.failures[min(op.failures)])
        elif isinstance(req, Batch | GetMany):
            self._resume(tx, op.results)
        elif isinstance(req, Mutate):
            self._resume(tx, MutateResult([]))
        else:
            self._resume(tx, op.results[0])

    def _mutate_result(self, req: Mutate, op: _Op) -> MutateResult:
        if req.kind == "delete":
            return MutateResult(list(req.keys or []), dict(op.failures))
        spec = self.tables[req.table]
        values = req.values or []
        keys: list[Any] = []
        for i, value in enumerate(values):
            if i in op.failures:
                keys.append(None)
            elif op.results[i] is not None:
                keys.append(op.results[i])
            elif req.keys is not None and req.keys[i] is not None:
                keys.append(req.keys[i])
            else:
                keys.append(resolve_primary_key(spec, value, None))
        return MutateResult(keys, dict(op.failures))

    def _convert(self, req: Request, pos: int, result: Any) -> Any:
        if isinstance(req, Batch):
            return self._convert(req.requests[pos], 0, result)
        if isinstance(req, Count):
            return int(result)
        if isinstance(req, Query):
            return self._convert_query(req, result)
        if isinstance(req, Mutate) and req.kind in ("delete", "deleteRange"):
            return None
        return value_from_js(result)

    def _convert_query(self, req: Query, result: Any) -> list[Any]:
        if req.want == "records" or req.reverse:
            return records_from_js(result, req.want)
        out = value_from_js(result)
        return out if isinstance(out, list) else []

    # -- resuming and finishing ---------------------------------------------------------

    def _resume(self, tx: _Tx, value: Any, error: BaseException | None = None) -> None:
        if tx.stepper is not None:
            tx.stepper.resume(value, error)

    def _finish(self, tx: _Tx, result: Any, error: BaseException | None) -> None:
        tx.result, tx.error = result, error
        if error is None:
            try:
                tx.native.commit()
            except JsException:
                pass  # already committing or finished; the complete/abort event decides
            return
        try:
            tx.native.abort()
        except JsException:
            self._settle_tx(tx, error)

    def _complete(self, event: Any) -> None:
        tx = self._txs.get(getattr(event.target, _TX_ID, -1))
        if tx is not None:
            self._settle_tx(tx, None)

    def _abort(self, event: Any) -> None:
        tx = self._txs.get(getattr(event.target, _TX_ID, -1))
        if tx is None:
            return
        native_error = event.target.error
        error = tx.error  # the body's own error when we aborted
        if error is None and native_error is not None and native_error is not jsnull:
            error = js_error(native_error)  # the browser aborted (e.g. QuotaExceededError)
        self._settle_tx(tx, error or AbortError("the transaction was aborted"))

    def _settle_tx(self, tx: _Tx, error: BaseException | None) -> None:
        self._txs.pop(tx.tx_id, None)
        tx.native.oncomplete = tx.native.onabort = None
        if tx.stepper is not None and not tx.stepper.done:
            # The browser ended the transaction under a waiting body: stop the body.
            tx.stepper.done = True
            error = error or AbortError("the transaction ended before the body finished")
        fut = tx.future
        if fut is None or fut.done():
            return
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(tx.result)
