"""Chains whose answer depends on Dexie's iteration order, against Dexie 4.4.7.

Offsets, limits, filters and ``until`` in call order; an offset of a plain range
before a filter; ``or`` parts taking turns; ``distinct`` on a multiEntry index;
unique keys; ``sortBy`` with missing fields. One database written by Dexie; each
chain is written once in each language and must give the same answer.
"""

from __future__ import annotations

import json

from playwright.sync_api import Page

from browser_harness import run_py

STORES = {"r": "id, n, s, *tags, [n+s]"}

ROWS = [
    {"id": i, "n": i % 4, "s": "abcdefghij"[i % 10], "tags": [f"t{i % 3}", f"u{i % 2}"]}
    for i in range(24)
] + [{"id": 100, "s": "z"}, {"id": 61, "n": 1, "s": "a", "tags": ["t0", "t0"]}]

# (Python expression, JS expression, what to read: rows' ids, keys, or a count)
CHAINS: list[tuple[str, str, str]] = [
    ("t.to_collection().limit(10).offset(5)", "t.toCollection().limit(10).offset(5)", "ids"),
    ("t.to_collection().offset(5).limit(3)", "t.toCollection().offset(5).limit(3)", "ids"),
    ("t.to_collection().limit(3).offset(5)", "t.toCollection().limit(3).offset(5)", "ids"),
    (
        "t.order_by('n').offset(2).filter(lambda r: r['id'] % 2 == 0)",
        "t.orderBy('n').offset(2).filter((r) => r.id % 2 === 0)",
        "ids",
    ),
    (
        "t.order_by('n').offset(3).filter(lambda r: r['id'] % 3 == 0).limit(4)",
        "t.orderBy('n').offset(3).filter((r) => r.id % 3 === 0).limit(4)",
        "ids",
    ),
    (
        "t.order_by('n').filter(lambda r: r['id'] % 3 == 0).offset(3).limit(2)",
        "t.orderBy('n').filter((r) => r.id % 3 === 0).offset(3).limit(2)",
        "ids",
    ),
    (
        "t.to_collection().offset(2).until(lambda r: r['id'] == 9, True)",
        "t.toCollection().offset(2).until((r) => r.id === 9, true)",
        "ids",
    ),
    (
        "t.to_collection().until(lambda r: r['id'] == 3).offset(1)",
        "t.toCollection().until((r) => r.id === 3).offset(1)",
        "ids",
    ),
    (
        "t.to_collection().offset(4).until(lambda r: r['id'] > 2, True)",
        "t.toCollection().offset(4).until((r) => r.id > 2, true)",
        "ids",
    ),
    ("t.where('n').equals(1).or_('s').equals('c')", "t.where('n').equals(1).or('s').equals('c')", "ids"),
    (
        "t.where('n').any_of([0, 3]).or_('s').starts_with('b').or_('id').below(3)",
        "t.where('n').anyOf([0, 3]).or('s').startsWith('b').or('id').below(3)",
        "ids",
    ),
    (
        "t.where('s').equals_ignore_case('A').or_('n').above(2).limit(5)",
        "t.where('s').equalsIgnoreCase('A').or('n').above(2).limit(5)",
        "ids",
    ),
    (
        "t.where('n').equals(2).reverse().or_('tags').equals('t1').filter(lambda r: r['id'] > 4)",
        "t.where('n').equals(2).reverse().or('tags').equals('t1').filter((r) => r.id > 4)",
        "ids",
    ),
    (
        "t.where('n').equals(0).or_('s').any_of(['a', 'e']).offset(2)",
        "t.where('n').equals(0).or('s').anyOf(['a', 'e']).offset(2)",
        "ids",
    ),
    ("t.where('tags').any_of(['t0', 'u1'])", "t.where('tags').anyOf(['t0', 'u1'])", "ids"),
    ("t.where('tags').any_of(['t0', 'u1']).distinct()", "t.where('tags').anyOf(['t0', 'u1']).distinct()", "ids"),
    ("t.where('tags').starts_with('t').distinct().limit(7)", "t.where('tags').startsWith('t').distinct().limit(7)", "ids"),
    ("t.order_by('tags')", "t.orderBy('tags')", "unique_keys"),
    ("t.order_by('tags').reverse()", "t.orderBy('tags').reverse()", "unique_keys"),
    ("t.order_by('n').reverse()", "t.orderBy('n').reverse()", "ids"),
    ("t.where('n').between(1, 3)", "t.where('n').between(1, 3)", "count"),
    ("t.where('n').between(1, 3).filter(lambda r: r['id'] < 10).offset(1)", "t.where('n').between(1, 3).filter((r) => r.id < 10).offset(1)", "count"),
    ("t.where('n').not_equal(2).or_('s').equals('z')", "t.where('n').notEqual(2).or('s').equals('z')", "count"),
    ("t.where('s').in_any_range([['b', 'd'], ['h', 'j']]).reverse()", "t.where('s').inAnyRange([['b', 'd'], ['h', 'j']]).reverse()", "ids"),
    ("t.where('s').none_of(['a', 'b', 'z'])", "t.where('s').noneOf(['a', 'b', 'z'])", "ids"),
    ("t.where('n').above(1)", "t.where('n').above(1)", "sort_s"),
    ("t.to_collection().reverse()", "t.toCollection().reverse()", "sort_n"),
    ("t.where('[n+s]').between([1, 'a'], [2, 'c'])", "t.where('[n+s]').between([1, 'a'], [2, 'c'])", "keys"),
    ("t.where('n').equals(3).or_('s').equals('d')", "t.where('n').equals(3).or('s').equals('d')", "keys"),
]  # fmt: skip

DEXIE = """async ([name, stores, rows, chains]) => {
  const { Dexie } = await import("/vendor/dexie.mjs");
  const db = new Dexie(name);
  db.version(1).stores(stores);
  await db.r.bulkPut(rows);
  const t = db.r;
  const out = [];
  for (const [expr, read] of chains) {
    const c = new Function("t", "return " + expr)(t);
    if (read === "ids") out.push((await c.toArray()).map((r) => r.id));
    else if (read === "keys") out.push(await c.keys());
    else if (read === "unique_keys") out.push(await c.uniqueKeys());
    else if (read === "count") out.push(await c.count());
    else out.push((await c.sortBy(read.slice(5))).map((r) => r.id));
  }
  db.close();
  return out;
}"""

PYTHON = """
import json
from panelot.idb import Database, SchemaVersion
from panelot.idb.browser import BrowserFactory
db = await Database({name!r}, [SchemaVersion(1, {stores!r})]).open(BrowserFactory())
t = db.table("r")
out = []
for expr, read in json.loads({chains!r}):
    c = eval(expr)
    if read == "ids":
        out.append([r["id"] for r in await c.to_list()])
    elif read == "keys":
        out.append(await c.keys())
    elif read == "unique_keys":
        out.append(await c.unique_keys())
    elif read == "count":
        out.append(await c.count())
    else:
        out.append([r["id"] for r in await c.sort_by(read[5:])])
db.close()
json.dumps(out)
"""


def test_chains_answer_as_dexie(harness_page: Page, fresh_db: str) -> None:
    js = [[c[1], c[2]] for c in CHAINS]
    py = json.dumps([[c[0], c[2]] for c in CHAINS])
    dexie = harness_page.evaluate(DEXIE, [fresh_db, STORES, ROWS, js])
    python = run_py(harness_page, PYTHON.format(name=fresh_db, stores=STORES, chains=py))
    mismatches = [
        (c[0], want, got) for c, want, got in zip(CHAINS, dexie, python, strict=True) if want != got
    ]
    assert not mismatches, "\n".join(f"{c}: Dexie {w}, panelot {g}" for c, w, g in mismatches)
    # The order-sensitive chains are not trivially empty.
    assert all(x for x in dexie[:2]) and dexie[2] == []


SORT_JS = """async () => {
  const { cmp } = await import("/vendor/dexie.mjs");
  let a = 7;
  const rng = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pool = [null, "__missing", true, 0, 1, 2, 3, "a", "b", "1", [1], [null], 2.5];
  const out = [];
  for (let s = 0; s < 200; s++) {
    const n = 1 + Math.floor(rng() * (s % 4 === 0 ? 140 : 40));
    const vals = Array.from({ length: n }, () => pool[Math.floor(rng() * pool.length)]);
    for (const dir of [1, -1]) {
      const items = vals.map((v, i) => ({ i, v: v === "__missing" ? undefined : v }));
      out.push({ vals, dir, order: items.slice().sort((x, y) => cmp(x.v, y.v) * dir).map((x) => x.i) });
    }
  }
  return JSON.stringify(out);
}"""

SORT_PY = """
import json
from panelot.idb.browser import BrowserFactory
from panelot.idb import Database, SchemaVersion
from panelot.idb.sorting import sort_by_path
db = await Database("sort-order", [SchemaVersion(1, {{"s": "id"}})]).open(BrowserFactory())
native = db.core.sort_order
bad = []
for c in json.loads({cases!r}):
    recs = [dict(i=i, **({{}} if v == "__missing" else {{"v": v}})) for i, v in enumerate(c["vals"])]
    got = [r["i"] for r in sort_by_path(recs, "v", c["dir"] == -1, native)]
    if got != c["order"]:
        bad.append([len(recs), c["dir"], c["vals"], got, c["order"]])
db.close()
json.dumps(bad)
"""


def test_sort_by_orders_as_v8_sorts_with_dexies_cmp(harness_page: Page) -> None:
    """Dexie's sortBy over values its cmp cannot order (null, booleans, missing fields).

    Their order is whatever V8's sort makes of the NaN comparisons; the browser core asks
    V8 itself (its ``sort_order``), so every order is Chromium's, long lists included.
    """
    cases = harness_page.evaluate(SORT_JS)
    assert sum(len(c["vals"]) >= 64 for c in json.loads(cases)) > 20
    bad = run_py(harness_page, SORT_PY.format(cases=cases))
    assert bad == [], f"{len(bad)} orders differ from V8's: {bad[:3]}"
