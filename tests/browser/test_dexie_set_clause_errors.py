"""Set clauses given a value that is no key reject as Dexie 4.4.7 does (issue 35, #12).

Dexie orders a set with its ``cmp``, which orders no such value; what follows names the
error: ``anyOf`` hands the set's ends to ``IDBKeyRange.bound`` (IndexedDB's
``DataError``), ``noneOf`` and ``notEqual`` build ranges that its ``inAnyRange`` check
refuses (``InvalidArgumentError``), as ``inAnyRange`` refuses such a pair, and
``startsWithAnyOf`` takes strings only (``TypeError``). One database, written by Dexie,
is queried by both, on a number index and a string index; panelot (the browser core)
must reject each with the same error name, and name the value in its message.
"""

from __future__ import annotations

import json

from playwright.sync_api import Page

from browser_harness import run_py

#: (Dexie's method, its arguments as JSON); null, booleans and objects are no keys.
CASES: list[tuple[str, list[object]]] = [
    ("anyOf", [[1, None]]),
    ("anyOf", [[None]]),
    ("anyOf", [[None, 1]]),
    ("anyOf", [1, None]),
    ("anyOf", [[1, True]]),
    ("anyOf", [["a1", {}]]),
    ("noneOf", [[1, None]]),
    ("noneOf", [[None]]),
    ("noneOf", [[True]]),
    ("noneOf", [["a1", {}]]),
    ("notEqual", [None]),
    ("notEqual", [False]),
    ("inAnyRange", [[[1, None]]]),
    ("inAnyRange", [[[None, 1]]]),
    ("inAnyRange", [[[1, 2], [None, None]]]),
    ("inAnyRange", [[[1, 2], [True, True]]]),
    ("startsWithAnyOf", [["a", None]]),
    ("startsWithAnyOf", [[1]]),
    ("startsWithAnyOf", [None]),
]

INDEXES = ["n", "s"]

DEXIE = """async ([name, cases, indexes]) => {
  const { Dexie } = await import("/vendor/dexie.mjs");
  const db = new Dexie(name);
  db.version(1).stores({ w: "id, n, s" });
  await db.w.bulkPut([0, 1, 2, 3, 4, 5].map((n) => ({ id: n, n, s: "a" + n })));
  const out = [];
  for (const [method, args] of cases) {
    for (const index of indexes) {
      try {
        out.push({ keys: await db.w.where(index)[method](...args).primaryKeys() });
      } catch (e) {
        out.push({ error: e.name });
      }
    }
  }
  db.close();
  return out;
}"""

PYTHON = """
import json
from panelot.idb import Database, PanelotError, SchemaVersion
from panelot.idb.browser import BrowserFactory
NAMES = {{"anyOf": "any_of", "noneOf": "none_of", "notEqual": "not_equal",
    "inAnyRange": "in_any_range", "startsWithAnyOf": "starts_with_any_of"}}
db = await Database({name!r}, [SchemaVersion(1, {{"w": "id, n, s"}})]).open(BrowserFactory())
out = []
for method, args in json.loads({cases!r}):
    for index in json.loads({indexes!r}):
        try:
            c = getattr(db.table("w").where(index), NAMES[method])(*args)
            out.append({{"keys": await c.primary_keys()}})
        except PanelotError as exc:
            out.append({{"error": exc.name, "message": str(exc)}})
db.close()
json.dumps(out)
"""


def test_set_clauses_reject_non_keys_with_dexies_error(harness_page: Page, fresh_db: str) -> None:
    dexie = harness_page.evaluate(DEXIE, [fresh_db, CASES, INDEXES])
    python = run_py(
        harness_page,
        PYTHON.format(name=fresh_db, cases=json.dumps(CASES), indexes=json.dumps(INDEXES)),
    )
    cases = [(m, a, index) for m, a in CASES for index in INDEXES]
    assert all("error" in r for r in dexie), dexie  # Dexie rejects every one of them
    mismatches = [
        (case, want["error"], got.get("error"), got.get("message"))
        for case, want, got in zip(cases, dexie, python, strict=True)
        if want["error"] != got.get("error")
    ]
    assert not mismatches, "\n".join(
        f"{c}: Dexie {w}, panelot {g} ({m})" for c, w, g, m in mismatches
    )
    # Each message names the value (None, True, False as Python writes them).
    for (method, args, _), got in zip(cases, python, strict=True):
        for js, py in (("null", "None"), ("true", "True"), ("false", "False")):
            if js in json.dumps(args):
                assert py in got["message"], (method, args, got["message"])
