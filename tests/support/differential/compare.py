"""Comparing Dexie's and panelot's outcomes: exact equality, deliberate differences, report.

Equality is exact: order included, ``-0`` apart from ``0``, ``true`` apart from ``1``,
a missing field apart from ``null``, and errors equal by name. A difference passes only
when an entry of :data:`DELIBERATE_DIFFERENCES` recognises it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Case = dict[str, Any]
"""One comparison: ``phase`` (query/write/stored/seed), ``spec``, ``dexie``, ``panelot``
(a write's outcome carries ``state``: its table after it), ``before`` (every table before
a write, both sides agreeing), ``seed_state`` and ``data``."""


def same(a: Any, b: Any) -> bool:
    """Exact equality of two tagged-JSON values (bool is not a number, int == float)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """Where two tagged values first differ: ``(path, a's part, b's part)``, or ``None``."""
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{path}.length", len(a), len(b)
        return None
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            found = first_difference(a[k], b[k], f"{path}.{k}")
            if found:
                return found
        return None
    return None if same(a, b) else (path, a, b)


def outcome_same(dexie: dict[str, Any], panelot: dict[str, Any]) -> bool:
    """Both succeeded with the same value, or both failed with the same error name."""
    if "error" in dexie or "error" in panelot:
        return dexie.get("error") == panelot.get("error")
    return same(dexie["ok"], panelot["ok"])


# -- helpers of the predicates -----------------------------------------------------------


def js_string(key: Any) -> str:
    """``String(key)`` as JS writes it, for a tagged key (close enough to compare keys)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        if float(key).is_integer() and abs(key) < 1e21:
            return str(int(key))
        return repr(float(key))
    if isinstance(key, list):
        return ",".join(js_string(k) for k in key)
    if isinstance(key, dict) and "$b" in key:  # Dexie: '' + new Uint8Array(buffer)
        return ",".join(str(b) for b in bytes.fromhex(key["$b"]))
    if isinstance(key, dict) and "$n" in key:
        return {"-0": "0"}.get(key["$n"], key["$n"])
    return repr(key)


def _steps(spec: Case) -> list[str]:
    query = spec.get("query", spec)
    return [s[0] for s in query.get("chain", [])]


def _primary_keys(case: Case, table: str) -> list[Any]:
    state = case.get("before")
    if state is not None:
        return [k for k, _ in state[table]]
    return [k for k, _ in case["seed_state"][table]]


def _string_collision(case: Case) -> bool:
    table = case["spec"]["table"]
    strings = [js_string(k) for k in _primary_keys(case, table)]
    return len(set(strings)) < len(strings)


def _or_distinct_dedup(case: Case) -> bool:
    steps = _steps(case["spec"])
    if "or" not in steps and "distinct" not in steps:
        return False
    if not _string_collision(case):
        return False
    d, p = case["dexie"], case["panelot"]
    if case.get("core") == "browser":  # the browser core reads -0 as 0 (listed below)
        d = _zeroed(d)
    if "ok" not in d or "ok" not in p:
        return False
    if _is_count(d["ok"]) and _is_count(p["ok"]):  # count(), or modify()/delete()'s count
        return bool(d["ok"] < p["ok"])
    if case["phase"] == "write" or not isinstance(d["ok"], list) or not isinstance(p["ok"], list):
        return False
    it = iter(p["ok"])  # Dexie's rows: panelot's with some left out
    return len(d["ok"]) < len(p["ok"]) and all(any(same(x, y) for y in it) for x in d["ok"])


def _is_count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _valid_key(v: Any) -> bool:
    """Whether a tagged value is an IndexedDB key."""
    if isinstance(v, bool) or v is None:
        return False
    if isinstance(v, int | float | str):
        return True
    if isinstance(v, list):
        return all(_valid_key(x) for x in v)
    if isinstance(v, dict):
        return "$b" in v or "$d" in v or v.get("$n") in ("Infinity", "-Infinity", "-0")
    return False


def _holds(record: Any, index: str) -> bool:
    """Whether a tagged record has an entry in ``index`` (of the differential schema)."""
    if index.startswith("["):
        return all(_holds(record, part) for part in index[1:-1].split("+"))
    v = record
    for part in index.split("."):
        if not isinstance(v, dict) or part not in v or {"$b", "$d", "$n"} & v.keys():
            return False
        v = v[part]
    if index == "tags" and isinstance(v, list):
        return any(_valid_key(x) for x in v)
    return _valid_key(v)


def _order_by_delete(case: Case) -> bool:
    spec = case["spec"]
    if case["phase"] != "write" or spec.get("op") != "delete":
        return False
    query = spec["query"]
    src = query["source"]
    index = src.get("orderBy")
    if index is None and src.get("clause") == "noneOf" and src.get("args") == [[]]:
        index = src.get("where")  # noneOf([]) is every record of the index, as orderBy
    chain = query.get("chain", [])  # offset(0) leaves Dexie's collection a plain range,
    steps = {  # and so does distinct() on an index that is not multiEntry
        st[0]
        for st in chain
        if not (st[0] == "offset" and st[1] <= 0) and not (st[0] == "distinct" and index != "tags")
    }
    if not isinstance(index, str) or index in (":id", "id", "w") or steps - {"reverse"}:
        return False
    table = query["table"]
    d_state, p_state = case["dexie"].get("state", {}), case["panelot"].get("state", {})
    left = p_state.get(table) or []
    return d_state.get(table) == [] and bool(left) and not any(_holds(r, index) for _, r in left)


def _modify_multientry(case: Case) -> bool:
    spec = case["spec"]
    if case["phase"] != "write" or spec.get("op") not in ("modify", "delete"):
        return False
    query = spec["query"]
    indexes = [query["source"].get("where"), query["source"].get("orderBy")]
    indexes += [s[1] for s in query.get("chain", []) if s[0] == "or"]
    if "tags" not in indexes or query["table"] != "items" or "distinct" in _steps(spec):
        return False
    d, p = case["dexie"], case["panelot"]  # Dexie counted (and changed) a record twice
    dd = _zeroed(d) if case.get("core") == "browser" else d
    if spec["op"] == "delete" and not same(dd.get("state"), p.get("state")):
        return False  # a delete counts twice but deletes the same records
    return _is_count(d.get("ok")) and _is_count(p.get("ok")) and d["ok"] > p["ok"]


def _pk_move_loses(case: Case) -> bool:
    spec = case["spec"]
    if case["phase"] != "write" or spec.get("op") != "modify":
        return False
    table = spec["query"]["table"]
    pk = {"items": "id", "words": "w"}.get(table)
    if pk is None or pk not in spec["changes"]:
        return False
    before = case["before"][table]
    after = case["dexie"].get("state", {}).get(table, before)
    return len(after) < len(before)


def _bulk_all_or_nothing(case: Case) -> bool:
    spec = case["spec"]
    if case["phase"] != "write":
        return False
    if spec.get("op") not in ("bulkAdd", "bulkPut", "bulkUpdate", "bulkDelete", "modify"):
        return False
    d, p = case["dexie"], case["panelot"]
    if "error" not in d or d.get("error") != p.get("error"):
        return False
    table = spec["table"]
    before = case["before"][table]
    if case.get("core") == "browser":  # the browser core reads -0 as 0 (listed below)
        before = _zeroed(before)
    return same(p["state"][table], before) and not same(d["state"][table], before)


_KEYS_ONLY_RUNS = {"keys", "primaryKeys", "uniqueKeys", "firstKey", "lastKey"}


def _until_keys_only(case: Case) -> bool:
    spec = case["spec"]
    if case["phase"] == "query":
        if spec.get("run") not in _KEYS_ONLY_RUNS:
            return False
    elif spec.get("op") not in ("modify", "delete"):  # they collect primaryKeys() first
        return False
    steps = _steps(spec)  # Dexie reads keys only unless a filter() asked for values:
    if "until" not in steps:  # the collection's own filter, after its last or()
        return False
    own = steps[len(steps) - steps[::-1].index("or") :] if "or" in steps else steps
    return "filter" not in own and "and" not in own


def _error_swallowed_by_or(case: Case) -> bool:
    """Dexie keeps a clause's argument error in its collection; a later or() drops it."""
    spec = case["spec"]
    if case["phase"] not in ("query", "write") or "or" not in _steps(spec):
        return False  # a write's collection too (modify, delete)
    if case["phase"] == "write" and spec.get("op") not in ("modify", "delete"):
        return False
    p = case["panelot"]
    return p.get("error") in ("InvalidArgumentError", "DataError", "TypeError") and (
        "error" not in case["dexie"] or case["dexie"]["error"] != p["error"]
    )


def _pk_move_unique(case: Case) -> bool:
    """Dexie adds a moved record before deleting the old: its own unique value refuses.

    panelot deletes first, so the move succeeds.
    """
    spec = case["spec"]
    if case["phase"] != "write" or spec.get("op") not in ("modify", "update"):
        return False
    table = spec.get("table") or spec.get("query", {}).get("table")
    pk = {"items": "id", "words": "w"}.get(table or "")
    changes = spec.get("changes") or {}
    if pk is None or pk not in changes:
        return False
    return case["dexie"].get("error") == "ModifyError" and "error" not in case["panelot"]


def _bulk_update_propmod(case: Case) -> bool:
    """Dexie's bulkUpdate stores a property modification object instead of applying it."""
    spec = case["spec"]
    if case["phase"] != "write" or spec.get("op") != "bulkUpdate":
        return False
    return "@@propmod" in repr(case["dexie"].get("state", {}))


def _negative_zero(case: Case) -> bool:
    """The browser core reads a stored -0 as 0.

    Its JSON transport, and Pyodide's conversion of an integral number to an int, drop
    the sign.
    """
    if case.get("core") != "browser":
        return False
    d, p = case["dexie"], case["panelot"]
    if "'-0'" not in repr(d):
        return False
    dz = _zeroed(d)  # equal once Dexie's -0 are 0 (errors by name, as outcome_same)
    if not outcome_same(dz, p):
        return False
    return same(dz.get("state"), p.get("state"))


def _negative_zero_answer(case: Case) -> bool:
    """A write given a -0 key answers 0 (Dexie, as IndexedDB, answers the -0 given).

    Everything else must be equal: the state exactly (on the browser core, with Dexie's
    -0 read as 0, the other listed difference).
    """
    spec = case["spec"]
    if case["phase"] != "write" or spec.get("op") not in ("put", "add", "bulkPut", "bulkAdd"):
        return False
    d, p = case["dexie"], case["panelot"]
    if "ok" not in d or "'-0'" not in repr(d["ok"]):
        return False
    if case.get("core") == "browser":
        d = _zeroed(d)
    return same(_zeroed(d["ok"]), p.get("ok")) and same(d.get("state"), p.get("state"))


def _zeroed(v: Any) -> Any:
    if isinstance(v, dict):
        if v == {"$n": "-0"}:
            return 0
        return {k: _zeroed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_zeroed(x) for x in v]
    return v


def _non_key(v: Any) -> bool:
    """A tagged value that is no IndexedDB key (NaN, a boolean, null), nested or not."""
    if isinstance(v, list):
        return any(_non_key(x) for x in v)
    return not _valid_key(v) or (isinstance(v, dict) and v.get("$n") == "NaN")


def _set_clause_non_key(case: Case) -> bool:
    """Panelot refuses a value that is no key in a set clause; Dexie lets its cmp pass it.

    Only where Dexie answers: where it rejects, panelot must reject with its error name
    (issue 35, #12: ``anyOf`` a DataError, ``noneOf`` an InvalidArgumentError).
    """
    spec = case["spec"]
    query = spec.get("query", spec)
    src = query.get("source", {})
    if src.get("clause") not in ("anyOf", "noneOf", "notEqual", "inAnyRange"):
        return False
    if "error" in case["dexie"]:
        return False
    p = case["panelot"]
    if p.get("error") != "DataError" or "not a valid key" not in p.get("message", ""):
        return False
    return _non_key(src.get("args"))


def _memory_sort_by(case: Case) -> bool:
    """The memory core's sort_by of values Dexie's cmp cannot order is not V8's (a limit)."""
    spec = case["spec"]
    if case.get("core") != "memory" or case["phase"] != "query" or spec.get("run") != "sortBy":
        return False
    d, p = case["dexie"], case["panelot"]
    if "ok" not in d or "ok" not in p or len(d["ok"]) != len(p["ok"]):
        return False
    path = spec["keyPath"].split(".")

    def at(v: Any) -> Any:
        for part in path:
            if not isinstance(v, dict) or part not in v:
                return None
            v = v[part]
        return v

    values = [at(v) for v in d["ok"]]
    same_rows = sorted(map(repr, d["ok"])) == sorted(map(repr, p["ok"]))
    return same_rows and any(not _valid_key(v) for v in values)


def _upsert_of_falsy(case: Case) -> bool:
    """Dexie's upsert answers ``!!existing``: False when the stored value is 0 or ''."""
    spec = case["spec"]
    if case["phase"] != "write" or spec.get("op") != "upsert":
        return False
    d, p = case["dexie"], case["panelot"]
    if d.get("ok") is not False or p.get("ok") is not True:
        return False
    if not same(d.get("state"), p.get("state")):
        return False
    rows = d["state"][spec["table"]]
    return any(
        same(key, spec["key"]) and (type(value) in (int, float, str)) and not value
        for key, value in rows
    )


def _memory_array_properties(case: Case) -> bool:
    """Dexie counted records whose value is an array the memory core could not extend.

    An update of a key path on a record whose value is an array gives the array a named
    property in IndexedDB (structured clone keeps an array's own properties, and an
    index's key path reads them), which JSON does not show; the memory core holds the
    array as a Python list, which has none. A later delete or modify over that index
    then reaches more records on Dexie's side: exactly as many as the array-valued
    records the memory core kept (a delete) or left alone (a modify, same state).
    """
    if case.get("core") != "memory" or case["phase"] != "write":
        return False
    spec = case["spec"]
    if spec.get("op") not in ("delete", "modify") or "where" not in repr(spec.get("query")):
        return False
    d, p = case["dexie"], case["panelot"]
    extra = d.get("ok")
    if not isinstance(extra, int) or not isinstance(p.get("ok"), int) or extra <= p["ok"]:
        return False
    table = spec["table"]
    dexie_rows, mine = d["state"][table], p["state"][table]
    arrays = [v for _, v in (case.get("before") or {}).get(table, []) if isinstance(v, list)]
    if spec["op"] == "modify":
        return same(d["state"], p["state"]) and extra - p["ok"] <= len(arrays)
    kept = [(k, v) for k, v in mine if not any(same(k, dk) for dk, _ in dexie_rows)]
    gone = [(dk, dv) for dk, dv in dexie_rows if not any(same(dk, k) for k, _ in mine)]
    return not gone and len(kept) == extra - p["ok"] and all(isinstance(v, list) for _, v in kept)


@dataclass(frozen=True)
class Deliberate:
    """A difference panelot makes on purpose: why, and how to recognise it."""

    reason: str
    applies: Callable[[Case], bool]


DELIBERATE_DIFFERENCES: dict[str, Deliberate] = {
    "or_distinct_string_dedup": Deliberate(
        "Dexie's or() and distinct() de-duplicate by String(primaryKey), so 1, '1' and [1] "
        "(or any two binary keys) count as one record; panelot compares keys as IndexedDB does.",
        _or_distinct_dedup,
    ),
    "order_by_delete_clears_unindexed": Deliberate(
        "Dexie's orderBy(index).delete() is a deleteRange over the whole table, deleting "
        "records the index does not hold; panelot deletes only the collection's records.",
        _order_by_delete,
    ),
    "modify_multientry_double_apply": Deliberate(
        "Dexie's modify() over a multiEntry index visits a record once per index entry past "
        "its chunk size and applies the changes again; panelot applies them once per record.",
        _modify_multientry,
    ),
    "modify_primary_key_move_loses": Deliberate(
        "Dexie moves a record whose primary key modify() changes by delete + add, and loses "
        "it when a unique index refuses the add; panelot never loses the record.",
        _pk_move_loses,
    ),
    "set_clause_refuses_non_keys": Deliberate(
        "any_of, none_of, not_equal and in_any_range refuse a value that is no key with a "
        "DataError naming it where Dexie answers: its cmp lets such a value through (a NaN "
        "anywhere, a None inside an array key, any of them amid an any_of set), and then a "
        "NaN matches any key its walk meets. Where Dexie rejects, the error name is Dexie's.",
        _set_clause_non_key,
    ),
    "memory_core_sort_by_non_keys": Deliberate(
        "Known limit, not a choice: the memory core repeats V8's sort steps only for fewer "
        "than 64 values (as node's V8 takes them); the browser core asks V8 itself. Same "
        "records required.",
        _memory_sort_by,
    ),
    "memory_core_array_properties": Deliberate(
        "Known limit, not a choice: IndexedDB keeps a named property an update gives an "
        "array value (and indexes it); the memory core holds arrays as Python lists, which "
        "have none, so a later delete or modify over that index reaches fewer records "
        "there. The browser core and Dexie agree.",
        _memory_array_properties,
    ),
    "until_keys_only": Deliberate(
        "Dexie's keys(), primaryKeys(), uniqueKeys(), firstKey() and lastKey() walk a "
        "keys-only cursor unless a filter() asked for values, so until()'s predicate gets "
        "undefined; panelot's until() always sees the record.",
        _until_keys_only,
    ),
    "argument_error_dropped_by_or": Deliberate(
        "Dexie keeps a where-clause's argument error in its collection and a later or() "
        "drops it; panelot raises it at the call.",
        _error_swallowed_by_or,
    ),
    "primary_key_move_with_unique_value": Deliberate(
        "Dexie moves a record by add-then-delete, so the record's own unique value refuses "
        "the add (ModifyError); panelot deletes first, all-or-nothing, and the move succeeds.",
        _pk_move_unique,
    ),
    "bulk_update_applies_modifications": Deliberate(
        "Dexie's bulkUpdate stores add()/remove()/replacePrefix() objects as they are "
        "({'@@propmod': ...}); panelot applies them, as update() does.",
        _bulk_update_propmod,
    ),
    "negative_zero_read_as_zero": Deliberate(
        "The browser core reads a stored -0 back as 0 (its JSON transport and Pyodide's "
        "number conversion drop the sign); the memory core and Dexie keep it.",
        _negative_zero,
    ),
    "negative_zero_key_answered_as_zero": Deliberate(
        "put(), add(), bulkPut() and bulkAdd() answer a -0 key as 0, the key as it is "
        "stored and read back; IndexedDB and Dexie answer with the -0 they were given.",
        _negative_zero_answer,
    ),
    "upsert_answers_whether_it_existed": Deliberate(
        "upsert() answers whether a record existed; Dexie answers !!existing, so False "
        "for a stored 0 or '' it did not create (neither changes such a value).",
        _upsert_of_falsy,
    ),
    "bulk_all_or_nothing": Deliberate(
        "panelot's bulk writes and modify() outside a transaction are all-or-nothing "
        "(issue 21: 'keep the all-or-nothing rule, stricter than Dexie'); Dexie commits the "
        "operations that succeeded. Same error name required.",
        _bulk_all_or_nothing,
    ),
}


def deliberate(case: Case) -> str | None:
    """The name of the deliberate difference that explains ``case``, or ``None``."""
    for name, entry in DELIBERATE_DIFFERENCES.items():
        try:
            if entry.applies(case):
                return name
        except (KeyError, TypeError, IndexError):
            continue
    return None


# -- the report ------------------------------------------------------------------------------


@dataclass
class Report:
    """Matches and mismatches per kind (every feature a spec uses), and the details."""

    core: str
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    deliberate: list[dict[str, Any]] = field(default_factory=list)
    not_implemented: list[str] = field(default_factory=list)
    examples: int = 0
    diverged: int = 0
    seconds: dict[str, float] = field(default_factory=lambda: {"dexie": 0.0, "panelot": 0.0})

    def tally(self, kinds: list[str], verdict: str) -> None:
        """Count one comparison under each of its kinds."""
        for kind in dict.fromkeys(kinds):
            row = self.kinds.setdefault(kind, {"match": 0, "mismatch": 0, "deliberate": 0})
            row[verdict] += 1

    def check(self, case: Case, kinds: list[str]) -> bool:
        """Compare one case; record it; return whether the two sides may go on together."""
        d, p = case["dexie"], case["panelot"]
        equal = outcome_same(d, p)
        if equal and case["phase"] == "write":
            equal = same(d["state"], p["state"])
        if equal:
            self.tally(kinds, "match")
            return True
        case.setdefault("core", self.core)
        reason = deliberate(case)
        where = first_difference(_short(d), _short(p))
        entry = {
            "first_difference": where and {"at": where[0], "dexie": where[1], "panelot": where[2]},
            "seed": case["seed"],
            "phase": case["phase"],
            "spec": case["spec"],
            "dexie": d,
            "panelot": p,
        }
        if reason is not None:
            self.tally(kinds, "deliberate")
            self.deliberate.append({"difference": reason, **entry})
        else:
            self.tally(kinds, "mismatch")
            self.mismatches.append(entry)
        return False

    def to_json(self) -> dict[str, Any]:
        """The whole report as JSON data."""
        total = {"match": 0, "mismatch": 0, "deliberate": 0}
        for row in self.kinds.values():
            for k in total:
                total[k] += row[k]
        return {
            "core": self.core,
            "examples": self.examples,
            "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
            "comparisons_by_kind": dict(sorted(self.kinds.items())),
            "kind_totals_note": "a comparison counts under every kind (feature) it uses",
            "diverged_write_ops_not_compared": self.diverged,
            "not_yet_implemented": self.not_implemented,
            "mismatches": self.mismatches,
            "deliberate": self.deliberate[:50],
            "deliberate_count": len(self.deliberate),
            "mismatch_cases": len(self.mismatches),
            "totals": total,
        }

    def table(self) -> str:
        """A short text table of the kinds."""
        lines = [
            f"differential ({self.core}): {self.examples} examples, "
            f"{len(self.mismatches)} unlisted mismatches, {len(self.deliberate)} deliberate; "
            + ", ".join(f"{k} {v:.1f} s" for k, v in self.seconds.items() if v)
        ]
        for kind, row in sorted(self.kinds.items()):
            lines.append(
                f"  {kind:38} match {row['match']:4}  mismatch {row['mismatch']:3}"
                f"  deliberate {row['deliberate']:3}"
            )
        if self.diverged:
            lines.append(f"  write ops after a difference (not compared): {self.diverged}")
        if self.not_implemented:
            lines.append("  not yet implemented: " + ", ".join(self.not_implemented))
        return "\n".join(lines)


def _short(outcome: dict[str, Any]) -> dict[str, Any]:
    """The compared part of an outcome (an error's message is not compared)."""
    return {k: v for k, v in outcome.items() if k != "message"}


def nan_safe(value: Any) -> Any:
    """``value`` with float NaN and infinities as text, for ``json.dumps(allow_nan=False)``."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, list):
        return [nan_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: nan_safe(v) for k, v in value.items()}
    return value
