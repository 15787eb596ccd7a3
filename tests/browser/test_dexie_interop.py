"""Interop with real Dexie 4.4.7 in the same Chromium page.

The Python layer and Dexie must create, open and query the very same IndexedDB
database: no version bump, no ``SchemaDiff`` warning, identical records and identical
query results in identical order.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from playwright.sync_api import Page

from browser_harness import run_py
from panelot.schema import PANELOT_V1_STORES

# Opens `name` with Dexie and the panelot_v1 declaration; returns what Dexie saw.
DEXIE_OPEN = """async ([name, stores]) => {
  const { Dexie } = await import("/vendor/dexie.mjs");
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => { warnings.push(args.map(String).join(" ")); warn(...args); };
  try {
    const db = new Dexie(name);
    db.version(1).stores(stores);
    await db.open();
    const native = db.backendDB();
    const out = { verno: db.verno, nativeVersion: native.version, warnings,
                  stores: Array.from(native.objectStoreNames).sort() };
    db.close();
    return out;
  } finally {
    console.warn = warn;
  }
}"""

DESCRIBE_PY = """
import json
from panelot.idb import Database
from panelot.idb.browser import BrowserFactory
from panelot.schema import PANELOT_VERSIONS
db = await Database({name!r}, PANELOT_VERSIONS).open(BrowserFactory())
d = db.describe()
db.close()
json.dumps(d)
"""


def _name() -> str:
    return f"interop-{uuid.uuid4().hex[:10]}"


def _describe(page: Page, name: str) -> dict[str, Any]:
    return run_py(page, DESCRIBE_PY.format(name=name))  # type: ignore[no-any-return]


def test_dexie_opens_python_database_unchanged(harness_page: Page, fresh_db: str) -> None:
    before = _describe(harness_page, fresh_db)
    assert before["version"] == 10
    seen = harness_page.evaluate(DEXIE_OPEN, [fresh_db, PANELOT_V1_STORES])
    assert seen["verno"] == 1
    assert seen["nativeVersion"] == 10, "Dexie bumped the version"
    assert not [w for w in seen["warnings"] if "SchemaDiff" in w or "schema" in w.lower()]
    assert seen["stores"] == sorted(PANELOT_V1_STORES)
    assert _describe(harness_page, fresh_db) == before


def test_python_opens_dexie_database_unchanged(harness_page: Page, fresh_db: str) -> None:
    seen = harness_page.evaluate(DEXIE_OPEN, [fresh_db, PANELOT_V1_STORES])
    assert seen["nativeVersion"] == 10
    described = _describe(harness_page, fresh_db)
    assert described["version"] == 10
    indexes = {s["name"]: [i["name"] for i in s["indexes"]] for s in described["stores"]}
    assert indexes["nodes"] == ["[threadId+seq]", "parentId", "threadId"]
    node_store = next(s for s in described["stores"] if s["name"] == "nodes")
    seq = next(i for i in node_store["indexes"] if i["name"] == "[threadId+seq]")
    assert seq["keyPath"] == ["threadId", "seq"]
    again = harness_page.evaluate(DEXIE_OPEN, [fresh_db, PANELOT_V1_STORES])
    assert again["nativeVersion"] == 10 and not again["warnings"]


RECORD = {
    "id": "n-1",
    "threadId": "t-1",
    "parentId": None,
    "seq": 1,
    "ts": 1700000000123,
    "type": "assistant_message",
    "payload": {
        "content": [{"type": "text", "text": "héllo <b>wörld</b> ✓"}],
        "usage": {"inputTokens": 10, "outputTokens": 2.5},
        "flags": [True, False, None],
        "nested": {"deep": {"deeper": []}},
    },
}


def test_records_read_identically_both_ways(harness_page: Page, fresh_db: str) -> None:
    harness_page.evaluate(DEXIE_OPEN, [fresh_db, PANELOT_V1_STORES])
    py_write = f"""
import json
from panelot.idb import Database
from panelot.idb.browser import BrowserFactory
from panelot.schema import PANELOT_VERSIONS
db = await Database({fresh_db!r}, PANELOT_VERSIONS).open(BrowserFactory())
await db.table("nodes").put(json.loads({json.dumps(json.dumps(RECORD))}))
await db.table("nodes").put({{"id": "bin", "threadId": "t-1", "seq": 2, "data": b"\\x00\\x01\\xff"}})
db.close()
json.dumps(True)
"""
    run_py(harness_page, py_write)
    from_dexie = harness_page.evaluate(
        """async ([name, stores]) => {
      const { Dexie } = await import("/vendor/dexie.mjs");
      const db = new Dexie(name);
      db.version(1).stores(stores);
      const rec = await db.table("nodes").get("n-1");
      const bin = await db.table("nodes").get("bin");
      const proto = Object.getPrototypeOf(rec) === Object.prototype;
      const parentIsNull = rec.parentId === null;
      const dataKind = Object.prototype.toString.call(bin.data);
      await db.table("nodes").put({ id: "from-dexie", threadId: "t-1", parentId: null, seq: 3,
        payload: { list: [1, "two", null, { x: true }], n: 0.5 } });
      db.close();
      return { rec, proto, parentIsNull, dataKind, data: Array.from(bin.data) };
    }""",
        [fresh_db, PANELOT_V1_STORES],
    )
    assert from_dexie["rec"] == RECORD
    assert from_dexie["proto"] and from_dexie["parentIsNull"]
    assert from_dexie["dataKind"] == "[object Uint8Array]"
    assert from_dexie["data"] == [0, 1, 255]
    py_read = f"""
import json
from panelot.idb import Database
from panelot.idb.browser import BrowserFactory
from panelot.schema import PANELOT_VERSIONS
db = await Database({fresh_db!r}, PANELOT_VERSIONS).open(BrowserFactory())
rec = await db.table("nodes").get("from-dexie")
binrec = await db.table("nodes").get("bin")
db.close()
json.dumps({{"rec": rec, "bin": list(binrec["data"]), "bin_type": type(binrec["data"]).__name__}})
"""
    back = run_py(harness_page, py_read)
    assert back["rec"] == {
        "id": "from-dexie",
        "threadId": "t-1",
        "parentId": None,
        "seq": 3,
        "payload": {"list": [1, "two", None, {"x": True}], "n": 0.5},
    }
    assert back["bin"] == [0, 1, 255] and back["bin_type"] == "bytes"


# Each query: (python collection expression on table `t`, Dexie expression on table `t`).
QUERIES: list[tuple[str, str]] = [
    (
        't.where("[threadId+seq]").between(["t1", MIN_KEY], ["t1", MAX_KEY])',
        't.where("[threadId+seq]").between(["t1", Dexie.minKey], ["t1", Dexie.maxKey])',
    ),
    (
        't.where("[threadId+seq]").between(["t1", 5], ["t1", 12])',
        't.where("[threadId+seq]").between(["t1", 5], ["t1", 12])',
    ),
    (
        't.where("[threadId+seq]").between(["t1", 5], ["t1", 12], True, True).reverse()',
        't.where("[threadId+seq]").between(["t1", 5], ["t1", 12], true, true).reverse()',
    ),
    (
        't.where("[threadId+seq]").between(["t2", MIN_KEY], ["t2", MAX_KEY]).reverse().offset(2).limit(5)',
        't.where("[threadId+seq]").between(["t2", Dexie.minKey], ["t2", Dexie.maxKey]).reverse().offset(2).limit(5)',
    ),
    (
        't.where("threadId").any_of(["t3", "t1", "nope"])',
        't.where("threadId").anyOf(["t3", "t1", "nope"])',
    ),
    ('t.where("id").starts_with("n-1")', 't.where("id").startsWith("n-1")'),
    ('t.where("parentId").equals("n-t1-3")', 't.where("parentId").equals("n-t1-3")'),
    ('t.where("threadId").above("t1").limit(7)', 't.where("threadId").above("t1").limit(7)'),
    (
        't.where("threadId").below_or_equal("t2").offset(10).limit(3)',
        't.where("threadId").belowOrEqual("t2").offset(10).limit(3)',
    ),
    (
        't.order_by("[threadId+seq]").reverse().limit(4)',
        't.orderBy("[threadId+seq]").reverse().limit(4)',
    ),
    (
        't.where("threadId").equals("t2").filter(lambda r: r["seq"] % 3 == 0)',
        't.where("threadId").equals("t2").filter((r) => r.seq % 3 === 0)',
    ),
]


def test_same_queries_same_rows_same_order(harness_page: Page, fresh_db: str) -> None:
    nodes = [
        {
            "id": f"n-{t}-{i}",
            "threadId": t,
            "parentId": None if i == 0 else f"n-{t}-{i - 1}",
            "seq": i,
            "payload": {"text": f"{t} {i}"},
        }
        for t in ("t1", "t2", "t3")
        for i in range(20)
    ]
    exprs = [q[0] for q in QUERIES]
    py = f"""
import json
from panelot.idb import Database, MIN_KEY, MAX_KEY
from panelot.idb.browser import BrowserFactory
from panelot.schema import PANELOT_VERSIONS
db = await Database({fresh_db!r}, PANELOT_VERSIONS).open(BrowserFactory())
t = db.table("nodes")
await t.bulk_put(json.loads({json.dumps(json.dumps(nodes))}))
out = []
for expr in json.loads({json.dumps(json.dumps(exprs))}):
    out.append([r["id"] for r in await eval(expr).to_list()])
db.close()
json.dumps(out)
"""
    python_rows = run_py(harness_page, py)
    dexie_rows = harness_page.evaluate(
        """async ([name, stores, exprs]) => {
      const { Dexie } = await import("/vendor/dexie.mjs");
      const db = new Dexie(name);
      db.version(1).stores(stores);
      const t = db.table("nodes");
      const out = [];
      for (const expr of exprs) {
        const coll = new Function("t", "Dexie", "return " + expr)(t, Dexie);
        out.push((await coll.toArray()).map((r) => r.id));
      }
      db.close();
      return out;
    }""",
        [fresh_db, PANELOT_V1_STORES, [q[1] for q in QUERIES]],
    )
    for (py_expr, _), got, want in zip(QUERIES, python_rows, dexie_rows, strict=True):
        assert got == want, py_expr
    assert any(len(rows) > 5 for rows in dexie_rows)


def test_control_dexie_detects_a_missing_index(harness_page: Page, fresh_db: str) -> None:
    """The detector above can fail: a database lacking one index makes Dexie upgrade and warn."""
    stores = dict(PANELOT_V1_STORES, nodes="id, threadId, [threadId+seq]")
    run_py(
        harness_page,
        f"""
import json
from panelot.idb import Database, SchemaVersion
from panelot.idb.browser import BrowserFactory
db = await Database({fresh_db!r}, [SchemaVersion(1, json.loads({json.dumps(json.dumps(stores))}))]).open(BrowserFactory())
db.close()
json.dumps(True)
""",
    )
    seen = harness_page.evaluate(DEXIE_OPEN, [fresh_db, PANELOT_V1_STORES])
    assert seen["nativeVersion"] != 10
    assert any("SchemaDiff" in w for w in seen["warnings"]), seen["warnings"]
