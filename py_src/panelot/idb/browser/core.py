"""The browser core: the only module that runs transactions on IndexedDB.

A transaction body is stepped by :class:`~panelot.idb.driver.Stepper` from inside the
IndexedDB callbacks: the success handler of one request converts its result and
resumes the body, which issues the next request before the handler returns. The
transaction therefore never idles and survives any number of sequential awaits.

Requests are issued by the small JS wiring helper ``panelot_js`` (``web/wiring.mjs``)
and never handed to Python: a JsProxy per ``IDBRequest`` was measured at ~100 µs,
against ~3 µs for a plain call. The helper calls back with the transaction id, the
request's position and the result as JSON text (UTF-8 bytes when large, or the raw
value when it is not plain JSON). Each connection owns its handler proxies, created
once, attached to the IDBDatabase once (``connect``) and destroyed on :meth:`close`, so
no proxy is created per operation and a request call carries only its own arguments.
A request that is one native request (a single ``get``, a query, a count) takes a
short path without the per-position bookkeeping of bulk requests. Bulk writes issue
every request at once and listen for success on the last one only, as Dexie does; an
error on any request is recorded by position (``preventDefault`` keeps the transaction
alive) and thrown into the body, which aborts unless the body catches it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Sequence
from functools import partial
from typing import Any, TypeVar

import js
from pyodide.ffi import JsException, JsProxy, create_proxy

from panelot.idb.browser.blobs import JS_BLOBS
from panelot.idb.browser.channel import BrowserChannel
from panelot.idb.browser.convert import (
    MANY_GETS,
    js_error,
    key_arg,
    keys_to_js,
    many_keys_json,
    query_arg,
    values_to_js,
    wiring_helper,
)
from panelot.idb.browser.opening import describe_native, open_native, request_to_future
from panelot.idb.browser.ops import (
    CLEARED,
    GET,
    VALUE,
    One,
    Op,
    Tx,
    convert,
    part_outcome,
    projection,
)
from panelot.idb.browser.pack import snapshot_values
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
    AbortError,
    DatabaseClosedError,
    DataError,
    PanelotError,
    error_from_name,
)
from panelot.idb.observe.feed import ChangeFeed
from panelot.idb.schema import SchemaVersion, TableSpec, declared_tables
from panelot.idb.sorting import tag_for_js
from panelot.idb.upgrade import SchemaDiff
from panelot.idb.values import EXTRA_STORABLE
from panelot.idb.waiter import Waiter

__all__ = ["BrowserCore", "BrowserFactory"]

T = TypeVar("T")
EXTRA_STORABLE.append(JsProxy)  # JS handles (Blobs) may be stored as they are


class BrowserFactory:
    """Opens IndexedDB databases in the page (``indexedDB`` by default)."""

    def __init__(self, idb_factory: Any = None) -> None:
        self._idb = idb_factory if idb_factory is not None else js.indexedDB

    async def open(self, name: str, versions: list[SchemaVersion]) -> BrowserCore:
        """Open ``name`` as Dexie 4 would (see :func:`~.opening.open_native`)."""
        db, diff = await open_native(self._idb, name, versions)
        return BrowserCore(name, db, declared_tables(versions), diff)

    async def delete(self, name: str) -> None:
        """Delete a whole database."""
        await request_to_future(self._idb.deleteDatabase(name))

    def channel(self, name: str, feed: ChangeFeed) -> BrowserChannel:
        """The change channel of this page (Dexie's protocol; see :mod:`.channel`)."""
        return BrowserChannel(feed)


class BrowserCore:
    """An open IndexedDB connection implementing the core protocol."""

    def __init__(
        self, name: str, db: JsProxy, tables: dict[str, TableSpec], diff: SchemaDiff
    ) -> None:
        self.name = name
        self.version = int(db.version)
        self.tables = tables
        self.diff = diff
        self.blobs: Blobs = JS_BLOBS
        """JS Blobs, and files built as JS Blobs of parts."""
        self.versionchanged = False
        """Set when another context's upgrade or delete closed the connection."""
        self._db: Any = db
        self._txs: dict[int, Tx] = {}
        self._next_id = 0
        helper = wiring_helper()
        # Bound once: reading a function off a JsProxy makes a new proxy on every access.
        self._get = helper.get
        self._get_many = helper.getMany
        self._sort_order = helper.sortOrder
        self._read = helper.read
        self._read_records = helper.readRecords
        self._read_key_entries = helper.readKeyEntries
        self._write_many = helper.writeMany
        self._unmarshal = helper.unmarshalValues
        self._begin = helper.begin
        self._commit = helper.commit
        self._abort_native = helper.abort
        self._source_of = helper.source
        self._ok = create_proxy(self._js_ok)
        self._fail = create_proxy(self._js_fail)
        self._on_complete = create_proxy(self._complete)
        self._on_abort = create_proxy(self._abort)
        self._on_versionchange = create_proxy(self._versionchange)
        helper.connect(db, self._ok, self._fail, self._on_complete, self._on_abort)
        db.onversionchange = self._on_versionchange
        self._has_records = hasattr(js.IDBObjectStore.prototype, "getAllRecords")
        self._released = False

    def _versionchange(self, _event: Any) -> None:
        """Another connection wants to upgrade or delete: close now, as Dexie does.

        Transactions already running finish; the next one, through the
        :class:`~panelot.idb.database.Database`, reopens at the new version.
        """
        self.versionchanged = True
        self.close()

    def snapshot(self, values: Sequence[Any]) -> Sequence[Any]:
        """The values built as JS objects now (see :mod:`panelot.idb.browser.pack`)."""
        return snapshot_values(values, self._unmarshal)

    def sort_order(self, values: list[Any], reverse: bool) -> list[int]:
        """The order V8's sort with Dexie's ``cmp`` puts ``values`` in (for ``sort_by``)."""
        text = self._sort_order(json.dumps([tag_for_js(v) for v in values]), reverse)
        order: list[int] = json.loads(str(text))
        return order

    def describe(self) -> dict[str, Any]:
        """Read the installed structure back from IndexedDB."""
        if self._db is None:
            raise DatabaseClosedError(f"{self.name}: the database connection is closed")
        return describe_tables(self.name, self.version, list(describe_native(self._db).values()))

    def close(self) -> None:
        """Close the connection (also done when another connection upgrades the database)."""
        if self._db is None:
            return
        self._db.onversionchange = None
        self._db.close()
        self._db = None
        if not self._txs:
            self._release()
        # Else transactions still running finish natively and report through the
        # handlers; the last one to settle releases them (see _settle_tx).

    def _release(self) -> None:
        """Destroy the connection's handler proxies once the current JS callback is over.

        ``close`` may run inside one of them (a task resumed from a complete event closes
        its database): destroying a proxy during its own call makes Pyodide throw in the
        event handler.
        """
        if self._released:
            return
        self._released = True
        proxies = (
            self._ok,
            self._fail,
            self._on_complete,
            self._on_abort,
            self._on_versionchange,
        )

        def destroy() -> None:
            for proxy in proxies:
                proxy.destroy()

        asyncio.get_event_loop().call_soon(destroy)

    async def run(
        self,
        mode: Mode,
        tables: Sequence[str],
        body: Coroutine[Any, Any, T],
        durability: Durability = "default",
    ) -> T:
        """Drive ``body`` inside one IndexedDB transaction; return its result after commit.

        ``durability`` goes to ``IDBDatabase.transaction(stores, mode, {durability})``.
        """
        if self._db is None:
            body.close()
            raise DatabaseClosedError(f"{self.name}: the database connection is closed")
        tx_id = self._next_id = self._next_id + 1
        try:
            native = self._begin(
                self._db,
                ",".join(tables),
                "readwrite" if mode == "rw" else "readonly",
                tx_id,
                durability,
            )
        except JsException as exc:
            body.close()
            raise js_error(exc) from None
        # Not loop.create_future(): Pyodide's loop adds a done callback to those (its
        # in-progress count), and resuming from a plain Future costs a hop through the
        # page's message queue. A Waiter resumes this task from the complete event.
        future: Waiter[T] = Waiter(asyncio.get_running_loop())
        tx = Tx(native, tx_id, future, mode != "rw")
        self._txs[tx_id] = tx
        tx.stepper = Stepper(body, partial(self._issue, tx), partial(self._finish, tx))
        tx.stepper.start()
        return await future

    # -- issuing requests ---------------------------------------------------------------

    def _issue(self, tx: Tx, req: Request) -> None:
        # The body is resumed after the except clauses, so an error it raises next does not
        # chain to (and keep alive) the one that failed the request.
        failure: BaseException | None = None
        try:
            kind = type(req)
            if kind is GetMany and len(req.keys) == 1:  # type: ignore[attr-defined]
                self._send_single(tx, One(req, GET))
            elif kind is Query or kind is Count:
                self._send_single(tx, One(req, VALUE))
            elif kind is Mutate and req.kind == "deleteRange":  # type: ignore[attr-defined]
                self._send_single(tx, One(req, CLEARED))
            else:
                op = Op(req)
                tx.op = op
                self._send(tx, op, req)
        except JsException as exc:
            failure = js_error(exc)
        except Exception as exc:  # a PanelotError, or a bug: the body gets it either way
            failure = exc
        if failure is not None:
            tx.op = None
            self._resume(tx, None, failure)

    def _send_single(self, tx: Tx, one: One) -> None:
        """Issue a one-native-request request; a synchronous failure resumes the body at once."""
        tx.op = one
        req = one.req
        if one.shape == GET:
            assert isinstance(req, GetMany)
            out = self._send_get(tx, req.table, req.keys[0], 0)
        else:
            out = self._send_one(tx, req, 0)
        if out is not None:
            tx.op = None
            pos, name, message = json.loads(str(out))[0]
            self._resume(tx, None, error_from_name(name, message))

    def _send(self, tx: Tx, op: Op, req: Request) -> None:
        """Issue ``req`` through the JS wiring helper; its callbacks complete the op."""
        parts = req.requests if isinstance(req, Batch) else [req]
        pos = 0
        for part in parts:
            if isinstance(part, Batch):
                raise DataError("a batch cannot hold another batch")
            if isinstance(part, Mutate) and part.kind in ("add", "put", "delete"):
                count = self._send_writes(tx, op, part, pos)
            elif isinstance(part, GetMany):
                keys_json = many_keys_json(part.keys) if len(part.keys) >= MANY_GETS else None
                if keys_json is not None:  # one call and one answer for all the keys
                    count = 1
                    op.expect.add(pos)
                    store = self._store(tx, part.table)
                    self._sync_failures(op, self._get_many(store, keys_json, pos))
                else:
                    count = len(part.keys)
                    for i, key in enumerate(part.keys):
                        op.expect.add(pos + i)
                        self._sync_failures(op, self._send_get(tx, part.table, key, pos + i))
            else:
                count = 1
                op.expect.add(pos)
                self._sync_failures(op, self._send_one(tx, part, pos))
            op.parts.append((part, pos, count))
            op.subs += [part] * count
            pos += count
        op.results += [None] * (pos - len(op.results))
        if not op.expect:
            self._complete_op(tx, op)

    def _sync_failures(self, op: Op, out: Any) -> None:
        """Record the synchronous failures the helper returned (JSON [[pos, name, msg]])."""
        if out is not None:
            for pos, name, message in json.loads(str(out)):
                op.failures[pos] = error_from_name(name, message)
                op.expect.discard(pos)

    def _send_get(self, tx: Tx, table: str, key: Any, pos: int) -> Any:
        """Issue ``get(key)``; return ``None``, or the helper's synchronous failure JSON."""
        js_key, as_json = key_arg(key)
        if as_json:
            return self._get(self._store(tx, table), js_key, pos, True)
        return self._get(self._store(tx, table), js_key, pos)

    def _send_one(self, tx: Tx, req: Request, pos: int) -> Any:
        """Issue a count, a query or a range delete; return as :meth:`_send_get` does."""
        read = self._read
        if isinstance(req, Count):
            source = self._source(tx, req.table, req.index)
            query, mode = query_arg(req.range)
            return read(source, "count", query, mode, None, pos)
        if isinstance(req, Mutate) and req.kind == "deleteRange":
            store = self._store(tx, req.table)
            if req.range is None or req.range.is_all:
                return read(store, "clear", None, "key", None, pos)
            query, mode = query_arg(req.range)
            return read(store, "delete", query, mode, None, pos)
        if isinstance(req, Query):
            source = self._source(tx, req.table, req.index)
            if req.want == "entries" and req.index is None and req.limit is None:
                query, mode = query_arg(req.range)
                return self._read_key_entries(source, query, mode, req.reverse, pos)
            if req.want == "records" or req.want == "entries" or req.reverse:
                if not self._has_records:
                    raise DataError("this browser lacks getAllRecords(); reverse queries need it")
                direction = "prev" if req.reverse else "next"
                pick = projection(req)
                query, _ = query_arg(req.range, ranges_only=True)
                return self._read_records(source, query, direction, req.limit, req.want, pos, pick)
            method = "getAll" if req.want == "values" else "getAllKeys"
            pick = projection(req) if method == "getAll" else None
            query, mode = query_arg(req.range)
            return read(source, method, query, mode, req.limit, pos, pick)
        raise DataError(f"{type(req).__name__} is not a request of this core")

    def _send_writes(self, tx: Tx, op: Op, req: Mutate, base: int) -> int:
        """Issue a write's native requests from position ``base``; return their count."""
        keys = req.keys
        if req.kind == "delete":
            count, values = len(keys or []), None
        else:
            count, values = len(req.values or []), values_to_js(req.values or [])
        if count == 0:
            return 0
        store = self._store(tx, req.table)
        js_keys = None if keys is None or all(k is None for k in keys) else keys_to_js(keys)
        listen_all = req.kind != "delete" and self.tables[req.table].primary_key.auto_increment
        out = self._write_many(store, req.kind, values, js_keys, listen_all, base)
        failed: set[int] = set()
        if isinstance(out, int):
            last = out
        else:
            failures, last = json.loads(str(out))
            for pos, name, message in failures:
                op.failures[pos] = error_from_name(name, message)
                failed.add(pos)
        if listen_all:
            op.expect.update(p for p in range(base, base + count) if p not in failed)
        elif last >= 0:
            op.expect.add(last)
        return count

    def _store(self, tx: Tx, table: str) -> Any:
        """The native object store of ``table`` in ``tx``, fetched once per transaction."""
        store = tx.stores.get(table)
        if store is None:
            store = tx.stores[table] = self._source_of(tx.native, table, None)
        return store

    def _source(self, tx: Tx, table: str, index: str | None) -> Any:
        if index is None:
            return self._store(tx, table)
        name = f"{table}\x00{index}"
        source = tx.stores.get(name)
        if source is None:
            source = tx.stores[name] = self._source_of(tx.native, table, index)
        return source

    # -- request events (called by the JS wiring helper) --------------------------------

    def _js_ok(self, tx_id: int, pos: int, data: Any, kind: int = 0) -> None:
        tx = self._txs.get(tx_id)
        if tx is None or tx.op is None:
            return
        op = tx.op
        try:
            if type(op) is One:
                tx.op = None
                try:
                    value = convert(op.req, data, kind)
                except PanelotError as exc:
                    self._resume(tx, None, exc)
                    return
                shape = op.shape
                if shape == GET:
                    value = [value]
                elif shape == CLEARED:
                    value = MutateResult([])
                self._resume(tx, value)
                return
            assert isinstance(op, Op)
            try:
                op.results[pos] = convert(op.subs[pos], data, kind)
            except PanelotError as exc:
                op.failures[pos] = exc
            self._settle_one(tx, op, pos)
        except Exception as exc:  # never let an error escape into the IndexedDB event loop
            self._fail_tx(tx, exc)

    def _js_fail(self, tx_id: int, pos: int, name: str, message: str) -> None:
        tx = self._txs.get(tx_id)
        if tx is None or tx.op is None:
            return
        op = tx.op
        try:
            error = error_from_name(str(name), str(message))
            if type(op) is One:
                tx.op = None
                self._resume(tx, None, error)
                return
            assert isinstance(op, Op)
            op.failures[pos] = error
            self._settle_one(tx, op, pos)
        except Exception as exc:  # never let an error escape into the IndexedDB event loop
            self._fail_tx(tx, exc)

    def _fail_tx(self, tx: Tx, exc: Exception) -> None:
        """An internal error while handling a request: end its transaction with that error."""
        if tx.stepper is not None:
            tx.stepper.done = True
        self._finish(tx, None, exc)

    def _settle_one(self, tx: Tx, op: Op, pos: int) -> None:
        if pos in op.expect:
            op.expect.discard(pos)
            if not op.expect:
                self._complete_op(tx, op)

    def _complete_op(self, tx: Tx, op: Op) -> None:
        req = op.req
        tx.op = None
        outcomes = [part_outcome(self.tables, op, *part) for part in op.parts]
        if isinstance(req, Batch):
            if req.settled:
                self._resume(tx, outcomes)
                return
            error = next((o for o in outcomes if isinstance(o, PanelotError)), None)
            self._resume(tx, None if error else outcomes, error)
        elif isinstance(outcomes[0], PanelotError):
            self._resume(tx, None, outcomes[0])
        else:
            self._resume(tx, outcomes[0])

    # -- resuming and finishing ---------------------------------------------------------

    def _resume(self, tx: Tx, value: Any, error: BaseException | None = None) -> None:
        if tx.stepper is not None:
            tx.stepper.resume(value, error)

    def _finish(self, tx: Tx, result: Any, error: BaseException | None) -> None:
        tx.result, tx.error = result, error
        if error is None:
            # False: already committing or finished; the complete/abort event decides.
            self._commit(tx.native)
            if tx.readonly and not tx.future.done():
                # Every read has delivered its result, and a readonly transaction has
                # nothing to commit: the caller need not wait for the complete event,
                # nor does the result stay alive until then.
                tx.future.set_result(result)
                tx.result = None
        elif not self._abort_native(tx.native):
            self._settle_tx(tx, error)

    def _complete(self, tx_id: int) -> None:
        tx = self._txs.get(tx_id)
        if tx is not None:
            self._settle_tx(tx, None)

    def _abort(self, tx_id: int, name: Any, message: Any) -> None:
        tx = self._txs.get(tx_id)
        if tx is None:
            return
        error = tx.error  # the body's own error when we aborted
        if error is None and isinstance(name, str):
            # The browser aborted (e.g. QuotaExceededError).
            error = error_from_name(str(name), str(message or ""))
        self._settle_tx(tx, error or AbortError("the transaction was aborted"))

    def _settle_tx(self, tx: Tx, error: BaseException | None) -> None:
        self._txs.pop(tx.tx_id, None)
        if self._db is None and not self._txs:
            self._release()  # closed while this one ran: it was the last
        if tx.stepper is not None and not tx.stepper.done:
            # The browser ended the transaction under a waiting body: stop the body.
            tx.stepper.done = True
            error = error or AbortError("the transaction ended before the body finished")
        fut = tx.future
        if fut.done():
            return
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(tx.result)
