"""Seeded generators of data, query specs and write specs for the differential suite.

Everything comes from one ``random.Random(seed)``, so a seed names an example exactly.
Each operation kind is a generator of its own, and a kind is generated only when every
panelot feature it needs is there (``features``, from ``pyrun.probe`` in the page);
the rest are reported as not yet implemented.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from differential.pyrun import decode, encode
from panelot.idb.errors import DataError
from panelot.idb.keys import key_sort_key, validate_key

SCHEMA: dict[str, str] = {
    "items": "++id, name, n, *tags, &code, [name+n], meta.rank",
    "loose": ", v",
    "words": "w, len",
}
TABLES = list(SCHEMA)

STRINGS = [
    "", "a", "A", "ap", "Ap", "aP", "app", "APP", "apple", "Apple", "APPLE", "applesauce",
    "b", "banana", "Banana", "straße", "STRASSE", "Straße", "ß", "ẞ", "ss", "SS",
    "İ", "i", "I", "ı", "istanbul", "İstanbul", "ISTANBUL", "ÿ", "Ÿ", "ÿes", "Ÿes",
    "σ", "Σ", "ς", "ΣΊΣΥΦΟΣ", "σίσυφος", "Σίσυφος", "😀", "😀a", "a😀", "é", "É",
    "e\u0301", "zz", "\uffff", "Ω", "ω", "ﬀ", "FF", "ǅ", "ǆ", "\u212a", "k", "K",
]  # fmt: skip
PREFIXES = ["", "a", "A", "ap", "AP", "aP", "app", "b", "B", "s", "S", "st", "STR", "ß", "SS",
            "i", "İ", "I", "ı", "ÿ", "Ÿ", "σ", "Σ", "ς", "😀", "é", "É", "z", "\u212a", "ǅ", "f"]  # fmt: skip
NUMBERS: list[Any] = [
    0, -0.0, 1, -1, 1.5, 2, 3, 10, -2.5, 0.1, 1e-7, 123456789, 2**53 - 1, -(2**53 - 1),
    1e308, -1e308, 5e-324, -5e-324, math.inf, -math.inf,
]  # fmt: skip
DATES = [datetime(1970, 1, 1, tzinfo=UTC), datetime(2024, 2, 29, 12, 30, tzinfo=UTC),
         datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)]  # fmt: skip
BINARY = [b"", b"\x00", b"\x01", b"\x00\x01\xff", b"ab"]
LOOSE_KEYS: list[Any] = [1, "1", [1], [1, 2], "1,2", "a", "A", b"\x01", b"\x02", 2.5, -1,
                         "😀", DATES[0], [], ["a", 1], math.inf]  # fmt: skip

Spec = dict[str, Any]


class Gen:
    """The generators of one example: its data, and the specs to run on it."""

    def __init__(self, seed: int, features: dict[str, bool]) -> None:
        self.rng = random.Random(seed)
        self.features = features
        self.data_py = self._data()
        self.data = {
            name: {k: encode(v) for k, v in rows.items()} for name, rows in self.data_py.items()
        }

    def has(self, *names: str) -> bool:
        """Whether panelot has every named feature."""
        return all(self.features.get(n, False) for n in names)

    # -- data -------------------------------------------------------------------------------

    def _string(self) -> str:
        return self.rng.choice(STRINGS)

    def _number(self) -> Any:
        return self.rng.choice(NUMBERS) if self.rng.random() < 0.7 else self.rng.randint(-5, 5)

    def _key_like(self) -> Any:
        r = self.rng.random()
        if r < 0.5:
            return self._string()
        if r < 0.8:
            return self._number()
        if r < 0.9:
            return self.rng.choice(DATES)
        return self.rng.choice(BINARY)

    def item(self, i: int, codes: set[str]) -> dict[str, Any]:
        """One record of ``items``: often partial, sometimes with unindexable values."""
        rng = self.rng
        rec: dict[str, Any] = {}
        if rng.random() < 0.08:
            rec["id"] = rng.choice([1000 + i, 2.5 + i, -i - 1])
        r = rng.random()
        if r < 0.8:
            rec["name"] = self._string()
        elif r < 0.88:
            rec["name"] = rng.choice([None, True, 7, ["a"]])
        r = rng.random()
        if r < 0.75:
            rec["n"] = self._number()
        elif r < 0.85:
            rec["n"] = rng.choice([math.nan, "3", None, False, *DATES])
        r = rng.random()
        if r < 0.7:
            pool = [*PREFIXES[:8], *STRINGS[:12], 1, 2, -0.0, b"\x01", [1, 2]]
            rec["tags"] = [rng.choice(pool) for _ in range(rng.randint(0, 4))]
        elif r < 0.8:
            rec["tags"] = rng.choice(["a", 3, None])
        if rng.random() < 0.7:
            code = rng.choice(["c", "C", "code-", "ß", "😀", "İ"]) + str(rng.randint(0, 40))
            if code not in codes:
                codes.add(code)
                rec["code"] = code
        r = rng.random()
        if r < 0.6:
            meta: dict[str, Any] = {}
            if rng.random() < 0.8:
                meta["rank"] = self._key_like() if rng.random() < 0.9 else None
            if rng.random() < 0.3:
                meta["note"] = self._string()
            rec["meta"] = meta
        elif r < 0.7:
            rec["meta"] = rng.choice(["flat", 3, None, [1]])
        if rng.random() < 0.15:
            rec["bin"] = rng.choice(BINARY)
        if rng.random() < 0.15:
            rec["when"] = rng.choice(DATES) + timedelta(milliseconds=rng.randint(0, 999))
        return rec

    def _data(self) -> dict[str, dict[str, Any]]:
        rng = self.rng
        codes: set[str] = set()
        items = [self.item(i, codes) for i in range(rng.randint(10, 28))]
        for _ in range(rng.randint(0, 3)):  # duplicates but for the unique code
            copy = {k: v for k, v in rng.choice(items).items() if k not in ("id", "code")}
            items.append(copy)
        ids = [r["id"] for r in items if "id" in r]
        if len(set(ids)) != len(ids):
            for r in items:
                r.pop("id", None)
        self.item_ids = []  # the keys IndexedDB's key generator gives them
        current = 1
        for r in items:
            if "id" in r:
                self.item_ids.append(r["id"])
                if r["id"] >= current:
                    current = math.floor(r["id"]) + 1
            else:
                self.item_ids.append(current)
                current += 1
        keys = rng.sample(LOOSE_KEYS, rng.randint(4, len(LOOSE_KEYS)))
        loose_values = []
        for _ in keys:
            r = rng.random()
            if r < 0.6:
                loose_values.append({"v": self._key_like()} if rng.random() < 0.85 else {"x": 1})
            else:
                loose_values.append(rng.choice([self._string(), self._number(), [1, "a"], None]))
        words = [{"w": w, "len": len(w)} for w in rng.sample(STRINGS, rng.randint(8, 24))]
        return {
            "items": {"values": items},
            "loose": {"values": loose_values, "keys": keys},
            "words": {"values": words},
        }

    # -- keys of the data -------------------------------------------------------------------

    INDEXES = {
        "items": ["id", "name", "n", "tags", "code", "[name+n]", "meta.rank"],
        "loose": [":id", "v"],
        "words": ["w", "len"],
    }

    def _present(self, table: str, index: str) -> list[Any]:
        rows = self.data_py[table]["values"]
        if index == ":id" and table == "loose":
            return list(self.data_py["loose"]["keys"])
        path = {"id": "id", ":id": {"items": "id", "words": "w"}.get(table, "id")}.get(index, index)
        out: list[Any] = []
        for r in rows:
            if not isinstance(r, dict):
                continue
            if path == "[name+n]":
                if "name" in r and "n" in r:
                    out.append([r["name"], r["n"]])
                continue
            v: Any = r
            for part in path.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            if v is None:
                continue
            if isinstance(v, list) and path == "tags":
                out.extend(v)
            else:
                out.append(v)
        if path == "id":
            out.extend(self.item_ids)
        return out

    def key(self, table: str, index: str) -> Any:
        """A key for ``index``: mostly one the data holds, sometimes a neighbour."""
        rng = self.rng
        present = self._present(table, index)
        if index == "[name+n]":
            if present and rng.random() < 0.7:
                return rng.choice(present)
            return [self._string(), self._number()]
        if present and rng.random() < 0.65:
            return rng.choice(present)
        if index in ("name", "w", "code") or rng.random() < 0.4:
            return self._string()
        return self._key_like()

    def _bound(self, table: str, index: str) -> Any:
        if index == "[name+n]" and self.rng.random() < 0.4:
            return [self._string(), {"$k": self.rng.choice(["min", "max"])}]
        return self.key(table, index)

    # -- queries ----------------------------------------------------------------------------

    def _index(self, table: str) -> str:
        index = self.rng.choice(self.INDEXES[table])
        if index in ("id", "w") and self.rng.random() < 0.3:
            return ":id"
        if index == "[name+n]" and not self.has("form.compound"):
            return "name"
        return index

    def clause_args(self, table: str, index: str, clause: str) -> tuple[list[Any], Any]:
        """Arguments (tagged) and options for ``clause`` on ``index``."""
        rng = self.rng
        key = lambda: encode(self.key(table, index))  # noqa: E731
        strs = lambda: [rng.choice(PREFIXES + STRINGS) for _ in range(rng.randint(0, 4))]  # noqa: E731
        if clause in ("equals", "above", "aboveOrEqual", "below", "belowOrEqual", "notEqual"):
            return [key()], None
        if clause == "between":
            lo, hi = encode(self._bound(table, index)), encode(self._bound(table, index))
            if rng.random() < 0.3:
                lo, hi = hi, lo
            if rng.random() < 0.1:
                hi = lo
            flags = [rng.random() < 0.5 for _ in range(rng.choice([0, 2, 2]))]
            return [lo, hi, *flags], None
        if clause in ("anyOf", "noneOf"):
            return [[key() for _ in range(rng.randint(0, 4))]], None
        if clause == "startsWith":
            return [rng.choice(PREFIXES)], None
        if clause in ("equalsIgnoreCase", "startsWithIgnoreCase"):
            return [rng.choice(STRINGS + PREFIXES)], None
        if clause in ("anyOfIgnoreCase", "startsWithAnyOf", "startsWithAnyOfIgnoreCase"):
            return [strs()], None
        if clause == "inAnyRange":
            ranges = []
            for _ in range(rng.randint(0, 3)):
                pair = [encode(self._bound(table, index)), encode(self._bound(table, index))]
                if rng.random() < 0.85:  # mostly ordered: a reversed pair is an error
                    pair.sort(key=_order)
                ranges.append(pair)
            opts = {}
            if rng.random() < 0.5:
                opts["includeLowers"] = rng.random() < 0.5
            if rng.random() < 0.5:
                opts["includeUppers"] = rng.random() < 0.5
            return [ranges], opts
        raise ValueError(clause)

    def predicate(self, table: str) -> dict[str, Any]:
        """A filter in the predicate DSL."""
        rng = self.rng
        field = rng.choice(
            {
                "items": ["name", "n", "tags", "meta.rank", "code", "meta"],
                "loose": ["v", "x"],
                "words": ["w", "len"],
            }[table]  # fmt: skip
        )
        op = rng.choice(["==", "!=", ">", "<", "startsWith", "has", "exists"])
        if op in (">", "<"):
            value: Any = rng.choice([0, 1, 2, 3, -1, 1.5])
        elif op == "startsWith":
            value = rng.choice(PREFIXES)
        else:
            value = rng.choice([self._string(), self._number(), None])
        return {"field": field, "op": op, "value": encode(value)}

    def source(self, table: str) -> tuple[Spec, list[str]]:
        """A query's source (where/orderBy/toCollection) and the features it uses."""
        rng = self.rng
        r = rng.random()
        if r < 0.08 and self.has("table.orderBy"):
            index = self._index(table)
            return {"orderBy": index}, ["table.orderBy"]
        if r < 0.12 and self.has("table.toCollection"):
            return {}, ["table.toCollection"]
        if r < 0.18 and table == "items" and self.has("form.dict"):
            crit: dict[str, Any] = {}
            for field in rng.sample(["name", "n", "code", "meta.rank"], rng.randint(1, 2)):
                crit[field] = encode(self.key("items", field))
            return {"where": crit}, ["form.dict"]
        clauses = [c for c in _CLAUSES if self.has(f"where.{c}")]
        if not clauses:
            return {}, ["table.toCollection"]
        clause = rng.choice(clauses)
        index = self._index(table)
        if (
            table == "items"
            and index == "[name+n]"
            and self.has("form.list")
            and rng.random() < 0.5
        ):
            where: Any = ["name", "n"]
            feats = ["form.list"]
        else:
            where, feats = index, (["form.compound"] if index == "[name+n]" else [])
            if index == ":id":
                feats = ["form.primary"]
        args, opts = self.clause_args(table, index, clause)
        if clause == "between" and len(args) > 2:
            feats.append("between.flags")
        src = {"where": where, "clause": clause, "args": args}
        if opts is not None:
            src["opts"] = opts
        return src, [f"where.{clause}", *feats]

    def chain(self, table: str, src: Spec) -> tuple[list[Any], list[str]]:
        """Refining steps, each only when panelot has it."""
        rng = self.rng
        steps: list[Any] = []
        feats: list[str] = []
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
            op = rng.choice(
                ["reverse", "offset", "limit", "filter", "and", "until", "or", "distinct"]
            )
            if not self.has(f"collection.{op}"):
                continue
            if op == "or":
                if "clause" not in src:
                    continue
                clauses = [c for c in _CLAUSES if self.has(f"where.{c}")]
                if not clauses:
                    continue
                clause = rng.choice(clauses)
                index = self._index(table)
                if index == ":id":
                    continue
                args, opts = self.clause_args(table, index, clause)
                step: list[Any] = ["or", index, clause, args]
                if opts is not None:
                    step.append(opts)
                steps.append(step)
            elif op in ("offset", "limit"):
                steps.append([op, rng.choice([0, 1, 2, 3, 5, 8])])
            elif op in ("filter", "and"):
                steps.append([op, self.predicate(table)])
            elif op == "until":
                steps.append(["until", self.predicate(table), rng.random() < 0.5])
            else:
                steps.append([op])
            feats.append(f"collection.{op}")
        return steps, feats

    def query(self) -> Spec:
        """One read spec, with ``features``: every feature it uses, its report kinds."""
        rng = self.rng
        table = rng.choices(TABLES, [6, 2, 2])[0]
        r = rng.random()
        if r < 0.06:
            if table == "items" and self.has("table.getCriteria") and rng.random() < 0.4:
                fields = rng.sample(["name", "n", "code", "meta.rank"], rng.randint(1, 2))
                crit = {f: encode(self.key("items", f)) for f in fields}
                return {"table": table, "op": "get", "key": crit, "features": ["table.getCriteria"]}
            return {"table": table, "op": "get", "key": encode(self.key(table, _pk(table))),
                    "features": ["table.get"]}  # fmt: skip
        if r < 0.09:
            keys = [encode(self.key(table, _pk(table))) for _ in range(rng.randint(0, 4))]
            return {"table": table, "op": "bulkGet", "keys": keys, "features": ["table.bulkGet"]}
        if r < 0.1:
            return {"table": table, "op": "tcount", "features": ["table.tcount"]}
        src, feats = self.source(table)
        chain, more = self.chain(table, src)
        runs = [r for r in _RUNS if self.has(f"collection.{r}")] or ["toArray"]
        run = rng.choice(runs)
        spec: Spec = {"table": table, "source": src, "chain": chain, "run": run}
        if run == "sortBy":
            spec["keyPath"] = rng.choice(
                {
                    "items": ["name", "n", "meta.rank", "id", "code"],
                    "loose": ["v"],
                    "words": ["w", "len"],
                }[table]  # fmt: skip
            )
        spec["features"] = [*feats, *more, f"collection.{run}"]
        return spec

    # -- writes -----------------------------------------------------------------------------

    def changes(self, table: str) -> tuple[dict[str, Any], list[str]]:
        """A changes object for update/upsert/modify (tagged), and its features."""
        rng = self.rng
        out: dict[str, Any] = {}
        feats: list[str] = []
        for _ in range(rng.randint(1, 2)):
            if table != "items":
                field = rng.choice(["v", "extra.deep"] if table == "loose" else ["len", "note"])
                out[field] = encode(self._key_like())
                continue
            r = rng.random()
            if r < 0.15 and self.has("modification.add"):
                if rng.random() < 0.5:
                    out["n"] = {"$op": "add", "v": encode(rng.choice([1, -2, 0.5]))}
                else:
                    out["tags"] = {"$op": "add", "v": [rng.choice(PREFIXES), 1]}
                feats.append("modification.add")
            elif r < 0.27 and self.has("modification.remove"):
                if rng.random() < 0.5:
                    out["n"] = {"$op": "remove", "v": rng.choice([1, 2])}
                else:
                    out["tags"] = {"$op": "remove", "v": [rng.choice(PREFIXES[:8] + STRINGS[:12])]}
                feats.append("modification.remove")
            elif r < 0.37 and self.has("modification.replacePrefix"):
                out["name"] = {
                    "$op": "replacePrefix",
                    "a": rng.choice(PREFIXES),
                    "b": rng.choice(PREFIXES),
                }
                feats.append("modification.replacePrefix")
            elif r < 0.5:
                out["meta.rank"] = encode(self._key_like())
            elif r < 0.6:
                out[rng.choice(["name", "n"])] = encode(self._key_like())
            elif r < 0.7:
                out["tags"] = encode([rng.choice(PREFIXES) for _ in range(rng.randint(0, 3))])
            elif r < 0.78:
                out["code"] = encode(self.key("items", "code"))  # may collide: unique index
            elif r < 0.86:
                out["meta"] = encode(rng.choice([{"rank": 1}, "flat", None]))
            elif r < 0.92:
                out["extra.deep.x"] = 1
            elif r < 0.95:
                out["id"] = encode(self.key("items", "id"))  # moves the record, or collides
            else:
                out["name.inner"] = "x"  # a dotted path through a string
        return out, feats

    def collection_spec(self, table: str) -> tuple[Spec, list[str]]:
        """A collection to modify or delete (a query spec without ``run``)."""
        src, feats = self.source(table)
        chain, more = self.chain(table, src)
        return {"table": table, "source": src, "chain": chain}, [*feats, *more]

    def new_item(self) -> dict[str, Any]:
        """A record for items, sometimes with a code already taken."""
        codes: set[str] = set()
        rec = self.item(self.rng.randint(50, 99), codes)
        if self.rng.random() < 0.2:
            rec["code"] = self.key("items", "code")
        return rec

    def write(self) -> Spec:
        """One write spec, with its features."""
        rng = self.rng
        table = rng.choices(TABLES, [6, 2, 1])[0]
        kinds = [k for k in _WRITES if self.has(_WRITES[k])]
        kind = rng.choice(kinds)
        if kind == "clear" and rng.random() < 0.7:
            kind = rng.choice(kinds)
        feats = [_WRITES[kind]]
        op: Spec = {"op": kind, "table": table}
        pk = _pk(table)

        def value() -> Any:
            if table == "items":
                return self.new_item()
            if table == "words":
                return {"w": rng.choice(STRINGS + PREFIXES), "len": rng.randint(0, 3)}
            return {"v": self._key_like()} if rng.random() < 0.8 else self._string()

        def loose_key() -> Any:
            return rng.choice([*LOOSE_KEYS, "new", 99, ["b"]])

        if kind in ("put", "add"):
            op["value"] = encode(value())
            if table == "loose":
                op["key"] = encode(loose_key())
            elif table == "items" and rng.random() < 0.3:
                op["value"]["id"] = encode(self.key("items", "id"))
        elif kind in ("bulkPut", "bulkAdd"):
            n = rng.randint(0, 3)
            op["values"] = encode([value() for _ in range(n)])
            if table == "loose":
                op["keys"] = encode([loose_key() for _ in range(n)])
        elif kind in ("update", "upsert"):
            op["key"] = encode(self.key(table, pk))
            op["changes"], more = self.changes(table)
            feats += more
        elif kind == "bulkUpdate":
            op["updates"] = []
            for _ in range(rng.randint(1, 3)):
                changes, more = self.changes(table)
                op["updates"].append({"key": encode(self.key(table, pk)), "changes": changes})
                feats += more
        elif kind == "tdelete":
            op["key"] = encode(self.key(table, pk))
        elif kind == "bulkDelete":
            op["keys"] = [encode(self.key(table, pk)) for _ in range(rng.randint(0, 3))]
        elif kind in ("modify", "delete"):
            op["query"], more = self.collection_spec(table)
            feats += more
            if kind == "modify":
                op["changes"], more = self.changes(table)
                feats += more
        op["features"] = feats
        return op


def _order(tagged: Any) -> Any:
    """A sort key of a tagged key (invalid keys first)."""
    try:
        key = validate_key(decode(tagged))
    except DataError:
        return (0, 0)
    return (1, key_sort_key(key))


def _pk(table: str) -> str:
    return {"items": "id", "loose": ":id", "words": "w"}[table]


_CLAUSES = [
    "equals", "above", "aboveOrEqual", "below", "belowOrEqual", "between", "anyOf",
    "startsWith", "notEqual", "noneOf", "equalsIgnoreCase", "anyOfIgnoreCase",
    "startsWithIgnoreCase", "startsWithAnyOf", "startsWithAnyOfIgnoreCase", "inAnyRange",
]  # fmt: skip
_RUNS = [
    "toArray", "toArray", "primaryKeys", "keys", "uniqueKeys", "first", "last", "firstKey",
    "lastKey", "count", "each", "sortBy",
]  # fmt: skip
_WRITES: dict[str, str] = {
    "put": "table.put", "add": "table.add", "bulkPut": "table.bulkPut",
    "bulkAdd": "table.bulkAdd", "update": "table.update", "upsert": "table.upsert",
    "bulkUpdate": "table.bulkUpdate", "tdelete": "table.tdelete",
    "bulkDelete": "table.bulkDelete", "clear": "table.clear", "modify": "collection.modify",
    "delete": "collection.delete",
}  # fmt: skip
