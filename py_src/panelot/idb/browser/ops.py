"""The browser core's bookkeeping: the request a transaction waits on, and its outcome.

The wiring helper answers each native request by position; :class:`Op` collects those
answers for a request made of many (a bulk write, a :class:`Batch`), :class:`One`
stands for a request that is a single native one, and :class:`Tx` holds a running
transaction's state. The functions turn the helper's answers into what the body's
``await`` returns: :func:`convert` decodes one answer, :func:`part_outcome` and
:func:`mutate_result` assemble a request's result or its first error.
"""

from __future__ import annotations

from typing import Any

from panelot.idb.browser.convert import decode_json, decode_marshal, value_from_js
from panelot.idb.core import Count, GetMany, Mutate, MutateResult, Query, Request
from panelot.idb.driver import Stepper
from panelot.idb.errors import PanelotError
from panelot.idb.schema import TableSpec
from panelot.idb.values import resolve_primary_key
from panelot.idb.waiter import Waiter

__all__ = [
    "BYTES",
    "CLEARED",
    "GET",
    "MARSHAL",
    "RAW",
    "VALUE",
    "One",
    "Op",
    "Tx",
    "convert",
    "mutate_result",
    "part_outcome",
    "projection",
]

BYTES = 1  # how the helper passes a result: JSON text (0), UTF-8 JSON bytes, raw value
RAW = 2
MARSHAL = 3  # marshal bytes of a large plain result


class Op:
    """The request a transaction is waiting on, and what its native requests returned.

    A request becomes one or more native requests, numbered by position: one per key
    of a ``GetMany``, one per value or key of a write, one per read, all of them for
    each part of a :class:`Batch`. ``parts`` holds ``(request, first position, count)``;
    ``subs`` the request each position belongs to. ``expect`` holds the positions whose
    callback is still awaited: every read, and for a write either every item (generated
    keys wanted) or only its last item, since IndexedDB completes a transaction's
    requests in order and the last one's success means all are done.
    """

    __slots__ = ("expect", "failures", "parts", "req", "results", "subs")

    def __init__(self, req: Request) -> None:
        self.req = req
        self.parts: list[tuple[Request, int, int]] = []
        self.subs: list[Request] = []
        self.results: list[Any] = []
        self.failures: dict[int, PanelotError] = {}
        self.expect: set[int] = set()


class One:
    """A request that is exactly one native request, answered at position 0.

    ``shape`` says how its converted result resumes the body: ``GET`` wraps it in a list
    (a one-key :class:`GetMany`), ``CLEARED`` gives an empty :class:`MutateResult` (a
    ``deleteRange``), ``VALUE`` gives it as it is.
    """

    __slots__ = ("req", "shape")

    def __init__(self, req: Request, shape: int) -> None:
        self.req = req
        self.shape = shape


VALUE, GET, CLEARED = 0, 1, 2


def projection(req: Query) -> str | None:
    """A query's projection for the helper: ``"a,b"`` keeps those fields, ``"!a,b"`` drops them."""
    if req.fields is None:
        return None
    return ("!" if req.omit else "") + ",".join(req.fields)


class Tx:
    """State of one running native transaction."""

    __slots__ = (
        "error",
        "future",
        "native",
        "op",
        "readonly",
        "result",
        "stepper",
        "stores",
        "tx_id",
    )

    def __init__(self, native: Any, tx_id: int, future: Waiter[Any], readonly: bool) -> None:
        self.native = native
        self.tx_id = tx_id
        self.future = future
        self.readonly = readonly
        self.stores: dict[str, Any] = {}
        self.stepper: Stepper | None = None
        self.op: Op | One | None = None
        self.result: Any = None
        self.error: BaseException | None = None


def part_outcome(tables: dict[str, TableSpec], op: Op, req: Request, start: int, count: int) -> Any:
    """A part's result, or its error (the first failure among its positions)."""
    if isinstance(req, Mutate) and req.kind in ("add", "put", "delete"):
        return mutate_result(tables[req.table], req, op, start)
    if op.failures:
        failed = [p for p in range(start, start + count) if p in op.failures]
        if failed:
            return op.failures[failed[0]]
    if isinstance(req, GetMany):
        if count == 1 and len(req.keys) != 1:  # answered at once (getMany)
            return op.results[start]
        return op.results[start : start + count]
    if isinstance(req, Mutate):
        return MutateResult([])
    return op.results[start]


def mutate_result(spec: TableSpec, req: Mutate, op: Op, start: int) -> MutateResult:
    """A write's keys (``None`` where it failed) and failures, by item."""
    failures = {
        p - start: op.failures[p]
        for p in range(start, start + len(req.values or req.keys or []))
        if p in op.failures
    }
    if req.kind == "delete":
        return MutateResult(list(req.keys or []), failures)
    listen_all = spec.primary_key.auto_increment
    keys: list[Any] = []
    values = req.values or []
    for i in range(len(values)):
        if i in failures:
            keys.append(None)
        elif listen_all and op.results[start + i] is not None:
            keys.append(op.results[start + i])
        elif req.keys is not None and req.keys[i] is not None:
            keys.append(req.keys[i])
        elif req.resolved is not None:
            keys.append(req.resolved[i])
        else:
            keys.append(resolve_primary_key(spec, values[i], None))
    return MutateResult(keys, failures)


def convert(req: Request, data: Any, kind: int) -> Any:
    """A native result as Python data: JSON text, UTF-8 JSON bytes, or a raw JS value."""
    if kind == 0:
        value = decode_json(data)
    elif kind == MARSHAL:
        value = decode_marshal(data)
    elif kind == BYTES:
        value = decode_json(data.to_bytes().decode())
    else:
        value = value_from_js(data)
    rtype = type(req)
    if rtype is GetMany:
        return value
    if rtype is Query:
        if not isinstance(value, list):
            return []
        if req.want == "records" or req.want == "entries":  # type: ignore[attr-defined]
            return [tuple(row) for row in value]
        return value
    if rtype is Count:
        return int(value)
    if rtype is Mutate and req.kind != "put" and req.kind != "add":  # type: ignore[attr-defined]
        return None
    return value
