"""The panelot side of the differential suite: the query/write DSL run on ``panelot.idb``.

Self-contained (it imports only the standard library and ``panelot.idb``): the browser
test copies this file into Pyodide as ``diffrun`` and runs it on the browser core; the
memory-core check imports it in CPython. The JS twin is ``jsrun.JS_RUNNER``; both must
read a spec the same way, see ``differential/__init__.py`` for the DSL.

Values cross the boundary as *tagged JSON*: plain JSON, with ``{"$n": "-0" | "NaN" |
"Infinity" | "-Infinity"}`` for the numbers JSON cannot hold, ``{"$b": hex}`` for
binary, ``{"$d": ms}`` for dates and ``{"$k": "min" | "max"}`` for Dexie's
``minKey``/``maxKey``; modifications are ``{"$op": "add" | "remove", "v": x}`` and
``{"$op": "replacePrefix", "a": a, "b": b}``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import panelot.idb as idb
from panelot.idb import Database, SchemaVersion
from panelot.idb.collection import Collection
from panelot.idb.table import Table, WhereClause

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# DSL name (Dexie's) -> Python name, per class. A name whose Python method is missing is
# "not yet implemented": the generators leave it out and the report lists it.
WHERE_CLAUSES = {
    "equals": "equals",
    "above": "above",
    "aboveOrEqual": "above_or_equal",
    "below": "below",
    "belowOrEqual": "below_or_equal",
    "between": "between",
    "anyOf": "any_of",
    "startsWith": "starts_with",
    "notEqual": "not_equal",
    "noneOf": "none_of",
    "equalsIgnoreCase": "equals_ignore_case",
    "anyOfIgnoreCase": "any_of_ignore_case",
    "startsWithIgnoreCase": "starts_with_ignore_case",
    "startsWithAnyOf": "starts_with_any_of",
    "startsWithAnyOfIgnoreCase": "starts_with_any_of_ignore_case",
    "inAnyRange": "in_any_range",
}
COLLECTION_METHODS = {
    "reverse": "reverse",
    "offset": "offset",
    "limit": "limit",
    "filter": "filter",
    "and": "and_",
    "or": "or_",
    "until": "until",
    "distinct": "distinct",
    "sortBy": "sort_by",
    "toArray": "to_list",
    "primaryKeys": "primary_keys",
    "keys": "keys",
    "uniqueKeys": "unique_keys",
    "first": "first",
    "last": "last",
    "firstKey": "first_key",
    "lastKey": "last_key",
    "count": "count",
    "each": "each",
    "modify": "modify",
    "delete": "delete",
}
TABLE_METHODS = {
    "get": "get",
    "bulkGet": "bulk_get",
    "put": "put",
    "add": "add",
    "bulkPut": "bulk_put",
    "bulkAdd": "bulk_add",
    "update": "update",
    "upsert": "upsert",
    "bulkUpdate": "bulk_update",
    "tdelete": "delete",
    "bulkDelete": "bulk_delete",
    "tcount": "count",
    "toCollection": "to_collection",
    "orderBy": "order_by",
    "clear": "clear",
}
MODIFICATIONS = {"add": "add", "remove": "remove", "replacePrefix": "replace_prefix"}


# -- tagged JSON ----------------------------------------------------------------------------


def decode(v: Any) -> Any:
    """Tagged JSON to a Python value (bytes, datetime, -0.0, infinities, MIN/MAX_KEY)."""
    if isinstance(v, list):
        return [decode(x) for x in v]
    if isinstance(v, dict):
        if len(v) == 1 or "$op" in v:
            if "$n" in v:
                return {"-0": -0.0, "NaN": math.nan, "Infinity": math.inf}.get(v["$n"], -math.inf)
            if "$b" in v:
                return bytes.fromhex(v["$b"])
            if "$d" in v:
                return _EPOCH + timedelta(milliseconds=v["$d"])
            if "$k" in v:
                return idb.MIN_KEY if v["$k"] == "min" else idb.MAX_KEY
            if "$op" in v:
                make = getattr(idb, MODIFICATIONS[v["$op"]])
                if v["$op"] == "replacePrefix":
                    return make(v["a"], v["b"])
                return make(decode(v["v"]))
        return {k: decode(x) for k, x in v.items()}
    return v


def encode(v: Any) -> Any:
    """A Python value (as panelot returns it) to tagged JSON."""
    if v is None or isinstance(v, bool | str):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return {"$n": "NaN"}
        if math.isinf(v):
            return {"$n": "Infinity" if v > 0 else "-Infinity"}
        if v == 0 and math.copysign(1.0, v) < 0:
            return {"$n": "-0"}
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    if isinstance(v, bytes | bytearray | memoryview):
        return {"$b": bytes(v).hex()}
    if isinstance(v, datetime):
        aware = v if v.tzinfo is not None else v.replace(tzinfo=UTC)
        return {"$d": round((aware - _EPOCH) / timedelta(milliseconds=1))}
    if isinstance(v, list | tuple):
        return [encode(x) for x in v]
    if isinstance(v, dict):
        return {str(k): encode(x) for k, x in v.items()}
    return {"$unknown": type(v).__name__}


# -- predicates (the same rules as jsrun's `pred`) ------------------------------------------

_MISSING = object()


def _get(record: Any, path: str) -> Any:
    v = record
    for part in path.split("."):
        if not isinstance(v, dict) or part not in v:
            return _MISSING
        v = v[part]
    return v


def _num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _eq(a: Any, b: Any) -> bool:
    if _num(a) and _num(b):
        return bool(a == b)
    if isinstance(a, bool) and isinstance(b, bool):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is None and b is None


def predicate(p: dict[str, Any]) -> Callable[[Any], bool]:
    """Compile ``{"field", "op", "value"}`` to a function of a record."""
    field, op, value = p["field"], p["op"], decode(p.get("value"))

    def test(record: Any) -> bool:
        a = _get(record, field)
        if op == "exists":
            return a is not _MISSING
        if a is _MISSING:
            return False
        if op == "==":
            return _eq(a, value)
        if op == "!=":
            return not _eq(a, value)
        if op in (">", "<"):
            return _num(a) and _num(value) and (a > value if op == ">" else a < value)
        if op == "startsWith":
            return isinstance(a, str) and isinstance(value, str) and a.startswith(value)
        if op == "has":
            return isinstance(a, list) and any(_eq(x, value) for x in a)
        raise ValueError(f"unknown predicate op {op!r}")

    return test


# -- features ---------------------------------------------------------------------------------


async def probe(schema: dict[str, str]) -> dict[str, bool]:
    """Which DSL features this panelot has: methods by name, the rest by trying them."""
    out: dict[str, bool] = {}
    for name, py in WHERE_CLAUSES.items():
        out[f"where.{name}"] = hasattr(WhereClause, py)
    for name, py in COLLECTION_METHODS.items():
        out[f"collection.{name}"] = hasattr(Collection, py)
    for name, py in TABLE_METHODS.items():
        out[f"table.{name}"] = hasattr(Table, py)
    for name, py in MODIFICATIONS.items():
        out[f"modification.{name}"] = hasattr(idb, py)
    db = await Database("diff-probe", [SchemaVersion(1, schema)]).open(idb.MemoryFactory())
    try:
        t = db.table("items")
        await t.bulk_add([{"name": "a", "n": 1, "code": "c1"}, {"name": "b", "n": 2}])
        out["form.dict"] = await _tries(lambda: t.where({"name": "a", "n": 1}).to_list(), 1)
        out["form.list"] = await _tries(
            lambda: t.where(["name", "n"]).equals(["a", 1]).to_list(), 1
        )
        out["form.compound"] = await _tries(
            lambda: t.where("[name+n]").equals(["a", 1]).to_list(), 1
        )
        out["form.primary"] = await _tries(lambda: t.where(":id").equals(1).to_list(), 1)
        out["table.getCriteria"] = await _tries(lambda: t.get({"code": "c1"}), None)
        out["between.flags"] = await _tries(
            lambda: t.where("n").between(1, 2, False, True).to_list(), 1
        )
    finally:
        db.close()
    return out


async def _tries(make: Callable[[], Any], rows: int | None) -> bool:
    try:
        got = await make()
    except Exception:  # noqa: BLE001 - any failure means "not there yet"
        return False
    return got is not None if rows is None else isinstance(got, list) and len(got) == rows


# -- running specs ----------------------------------------------------------------------------


async def _maybe(v: Any) -> Any:
    return await v if inspect.isawaitable(v) else v


def _clause(where: Any, name: str, args: list[Any], opts: dict[str, Any] | None) -> Any:
    method = getattr(where, WHERE_CLAUSES[name])
    if name == "inAnyRange":
        kw = {}
        if opts and "includeLowers" in opts:
            kw["include_lowers"] = opts["includeLowers"]
        if opts and "includeUppers" in opts:
            kw["include_uppers"] = opts["includeUppers"]
        return method(*args, **kw)
    return method(*args)


def collection(db: Database, spec: dict[str, Any]) -> Any:
    """The collection a query spec's ``source`` and ``chain`` describe."""
    t = db.table(spec["table"])
    src = spec["source"]
    if "where" in src:
        where = src["where"]
        if isinstance(where, dict):
            c: Any = t.where(decode(where))
        else:
            c = _clause(t.where(where), src["clause"], decode(src["args"]), src.get("opts"))
    elif "orderBy" in src:
        c = t.order_by(src["orderBy"])
    else:
        c = t.to_collection()
    for step in spec.get("chain", []):
        op = step[0]
        if op in ("reverse", "distinct"):
            c = getattr(c, op)()
        elif op in ("offset", "limit"):
            c = getattr(c, op)(step[1])
        elif op == "filter":
            c = c.filter(predicate(step[1]))
        elif op == "and":
            c = c.and_(predicate(step[1]))
        elif op == "until":
            c = c.until(predicate(step[1]), step[2])
        elif op == "or":
            c = _clause(
                c.or_(step[1]), step[2], decode(step[3]), step[4] if len(step) > 4 else None
            )
        else:
            raise ValueError(f"unknown chain step {op!r}")
    return c


async def _run_query(db: Database, spec: dict[str, Any]) -> Any:
    if "op" in spec:  # a table read
        t = db.table(spec["table"])
        op = spec["op"]
        if op == "get":
            return await t.get(decode(spec["key"]))
        if op == "bulkGet":
            return await t.bulk_get(decode(spec["keys"]))
        if op == "tcount":
            return await t.count()
        raise ValueError(f"unknown table read {op!r}")
    c = collection(db, spec)
    run = spec["run"]
    if run == "each":
        seen: list[Any] = []
        await _maybe(c.each(lambda value: seen.append(value)))
        return seen
    if run == "sortBy":
        return await _maybe(c.sort_by(spec["keyPath"]))
    return await getattr(c, COLLECTION_METHODS[run])()


def _error(exc: BaseException) -> dict[str, Any]:
    name = getattr(exc, "name", None)  # a PanelotError's Dexie-style name (TypeError...)
    return {
        "error": name if isinstance(name, str) else type(exc).__name__,
        "message": str(exc)[:300],
    }


async def run_queries(db: Database, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run each read spec; ``{"ok": tagged}`` or ``{"error": name, "message": ...}``."""
    out = []
    for spec in specs:
        try:
            out.append({"ok": encode(await _run_query(db, spec))})
        except Exception as exc:  # noqa: BLE001 - compared with Dexie's error
            out.append(_error(exc))
    return out


async def _write(db: Database, op: dict[str, Any]) -> Any:
    name = op["op"]
    if name in ("modify", "delete"):
        c = collection(db, op["query"])
        if name == "delete":
            return await c.delete()
        return await c.modify(decode(op["changes"]))
    t = db.table(op["table"])
    if name in ("put", "add"):
        args = [decode(op["value"])] + ([decode(op["key"])] if "key" in op else [])
        return await getattr(t, name)(*args)
    if name in ("bulkPut", "bulkAdd"):
        args = [decode(op["values"])] + ([decode(op["keys"])] if "keys" in op else [])
        # Dexie returns the last key; panelot all of them unless asked (a documented default)
        return await getattr(t, TABLE_METHODS[name])(*args, all_keys=False)
    if name in ("update", "upsert"):
        return await getattr(t, name)(decode(op["key"]), decode(op["changes"]))
    if name == "bulkUpdate":
        items = [{"key": decode(u["key"]), "changes": decode(u["changes"])} for u in op["updates"]]
        return await t.bulk_update(items)
    if name == "tdelete":
        return await t.delete(decode(op["key"]))
    if name == "bulkDelete":
        return await t.bulk_delete(decode(op["keys"]))
    if name == "clear":
        return await t.clear()
    raise ValueError(f"unknown write {name!r}")


async def dump(db: Database, tables: list[str]) -> dict[str, Any]:
    """Every table's ``[primary key, record]`` pairs in primary-key order, tagged."""
    out = {}
    for name in tables:
        c = db.table(name).to_collection()
        keys, values = await c.primary_keys(), await c.to_list()
        out[name] = encode([[k, v] for k, v in zip(keys, values, strict=True)])
    return out


async def run_writes(
    db: Database, ops: list[dict[str, Any]], tables: list[str]
) -> list[dict[str, Any]]:
    """Run each write; its outcome and its table's state after it (``tables``: all of them)."""
    out = []
    for op in ops:
        try:
            result: dict[str, Any] = {"ok": encode(await _write(db, op))}
        except Exception as exc:  # noqa: BLE001 - compared with Dexie's error
            result = _error(exc)
        result["state"] = await dump(db, [op["query"]["table"] if "query" in op else op["table"]])
        out.append(result)
    return out


async def seed(db: Database, data: dict[str, Any]) -> None:
    """Write the generated records with ``bulk_add`` (keys given for out-of-line tables)."""
    for name, rows in data.items():
        values = decode(rows["values"])
        if "keys" in rows:
            await db.table(name).bulk_add(values, decode(rows["keys"]))
        else:
            await db.table(name).bulk_add(values)


async def session(factory: Any, schema: dict[str, str], job: dict[str, Any]) -> dict[str, Any]:
    """One example's panelot side.

    Queries on the Dexie-seeded database, a panelot-seeded copy, and each write sequence
    on its own Dexie-seeded database (without ``query_db``, on copies panelot seeds).
    """
    versions = [SchemaVersion(1, schema)]
    tables = list(schema)
    out: dict[str, Any] = {}
    if job.get("query_db"):
        db = await Database(job["query_db"], versions).open(factory)
        try:
            out["queries"] = await run_queries(db, job["queries"])
        finally:
            db.close()
    db = await Database(job["seed_db"], versions).open(factory)
    try:
        await seed(db, job["data"])
        out["seeded"] = await dump(db, tables)
        if not job.get("query_db"):  # the memory core queries its own copy
            out["queries"] = await run_queries(db, job["queries"])
    finally:
        db.close()
    out["writes"] = []
    for name, ops in zip(job["write_dbs"], job["writes"], strict=True):
        db = await Database(name, versions).open(factory)
        try:
            if not job.get("query_db"):
                await seed(db, job["data"])
            out["writes"].append(await run_writes(db, ops, tables))
        finally:
            db.close()
    return out
