"""Dexie 4's version rules against real Dexie 4.4.7, in the same Chromium page.

A Dexie app upgrades the ``panelot_v1`` schema to its ``version(2)`` (a new table, a new
index, an upgrader that rewrites records): the Python layer, still declaring version 1,
opens it at native version 20, works with the tables it knows and reports the rest.
Python declaring an index Dexie's database lacks adds it by a version bump, and Dexie
opens the bumped database without a SchemaDiff of its own. A Dexie upgrade while a
Python connection is open is not blocked: Python closes on ``versionchange`` and its
next operation reopens at 20. Each test runs on a database of its own, deleted after.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from browser_harness import run_py
from panelot.schema import PANELOT_V1_STORES

V2_STORES = {
    "threads": PANELOT_V1_STORES["threads"] + ", title",
    "notes": "++id, threadId",
}

# Opens `name` with Dexie: version(1) is panelot_v1, version(2) (when `v2` is given) adds
# a table and an index and marks every thread in its upgrader. Writes `put` into
# threads, reads `title` through the index if asked; returns what Dexie saw.
DEXIE = """async ([name, v1, v2, put, title]) => {
  const { Dexie } = await import("/vendor/dexie.mjs");
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => { warnings.push(args.map(String).join(" ")); warn(...args); };
  try {
    const db = new Dexie(name);
    db.version(1).stores(v1);
    if (v2) {
      db.version(2).stores(v2).upgrade((tx) =>
        tx.table("threads").toCollection().modify((t) => { t.upgradedBy = "dexie"; }));
    }
    let blocked = false;
    db.on("blocked", () => { blocked = true; });
    await db.open();
    if (put) await db.table("threads").put(put);
    const out = {
      nativeVersion: db.backendDB().version,
      stores: Array.from(db.backendDB().objectStoreNames).sort(),
      threads: await db.table("threads").orderBy("id").toArray(),
      byTitle: title ? await db.table("threads").where("title").equals(title).primaryKeys() : null,
      warnings, blocked,
    };
    db.close();
    return out;
  } finally {
    console.warn = warn;
  }
}"""

# Python helpers in the page: open `name` with a declaration, catching SchemaDiffWarnings.
PRELUDE = """
import json, warnings
from panelot.idb import Database, SchemaDiffWarning, SchemaVersion
from panelot.idb.browser import BrowserFactory
from panelot.schema import PANELOT_VERSIONS
KEEP = globals().setdefault("KEEP", {})

async def dv_open(name, versions=PANELOT_VERSIONS):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        db = await Database(name, versions).open(BrowserFactory())
    return db, [str(w.message) for w in caught if issubclass(w.category, SchemaDiffWarning)]

def thread(tid, title):
    return {"id": tid, "title": title, "updatedAt": 1, "archived": 0, "pinned": 0}
"""


def _py(page: Page, code: str) -> Any:
    return run_py(page, PRELUDE + code)


def _dexie(
    page: Page,
    name: str,
    v2: dict[str, str] | None = None,
    put: dict[str, Any] | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    return page.evaluate(DEXIE, [name, PANELOT_V1_STORES, v2, put, title])  # type: ignore[no-any-return]


def test_python_works_on_the_database_dexie_upgraded_to_version_2(
    harness_page: Page, fresh_db: str
) -> None:
    first = _dexie(harness_page, fresh_db, put={"id": "t1", "title": "one", "updatedAt": 5})
    assert first["nativeVersion"] == 10
    upgraded = _dexie(harness_page, fresh_db, V2_STORES)
    assert upgraded["nativeVersion"] == 20 and "notes" in upgraded["stores"]
    assert upgraded["threads"][0]["upgradedBy"] == "dexie"
    seen = _py(
        harness_page,
        f"""
db, warned = await dv_open({fresh_db!r})
threads = db.table("threads")
old = await threads.get("t1")
await threads.put(thread("t2", "two"))
out = {{"version": db.version, "warned": warned, "describe": db.describe(), "old": old,
       "keys": await threads.order_by("updatedAt").primary_keys(),
       "tables": sorted(db.core.tables)}}
db.close()
json.dumps(out)
""",
    )
    assert seen["version"] == 20  # opened at Dexie's version: no VersionError, no bump
    assert len(seen["warned"]) == 1 and "newer" in seen["warned"][0], seen["warned"]
    assert seen["describe"]["version"] == 20
    assert seen["describe"]["schemaDiff"] == {
        "declaredVersion": 10,
        "foundVersion": 20,
        "newer": True,
        "extraTables": ["notes"],
        "extraIndexes": ["threads.title"],
        "changedIndexes": [],
        "added": [],
    }
    assert seen["old"]["upgradedBy"] == "dexie"  # what Dexie's upgrader wrote
    assert seen["keys"] == ["t2", "t1"]
    assert seen["tables"] == sorted(PANELOT_V1_STORES)
    # Dexie's version 2 opens it unchanged, and its new index covers Python's write
    again = _dexie(harness_page, fresh_db, V2_STORES, title="two")
    assert again["nativeVersion"] == 20
    assert not [w for w in again["warnings"] if "SchemaDiff" in w], again["warnings"]
    assert again["byTitle"] == ["t2"]


def test_python_adds_a_declared_index_by_a_bump_and_dexie_follows(
    harness_page: Page, fresh_db: str
) -> None:
    _dexie(harness_page, fresh_db, put={"id": "t1", "title": "one", "updatedAt": 5})
    stores = {**PANELOT_V1_STORES, "threads": PANELOT_V1_STORES["threads"] + ", title"}
    seen = _py(
        harness_page,
        f"""
db, warned = await dv_open({fresh_db!r}, [SchemaVersion(1, {stores!r})])
out = {{"version": db.version, "warned": warned, "diff": db.describe()["schemaDiff"],
       "byTitle": await db.table("threads").where("title").equals("one").primary_keys()}}
db.close()
json.dumps(out)
""",
    )
    assert seen["version"] == 11  # Dexie's SchemaDiff rule: the native version + 1
    assert len(seen["warned"]) == 1 and "threads.title" in seen["warned"][0]
    assert seen["diff"]["added"] == ["threads.title"] and seen["diff"]["newer"] is False
    assert seen["byTitle"] == ["t1"]  # the new index covers Dexie's record
    # Dexie's version(1) opens 11 as it is (its VersionError path): no SchemaDiff, no bump
    dexie = _dexie(harness_page, fresh_db, title="one")
    assert dexie["nativeVersion"] == 11
    assert not [w for w in dexie["warnings"] if "SchemaDiff" in w], dexie["warnings"]
    assert dexie["byTitle"] == ["t1"]
    # and the plain panelot declaration opens it with the extra index, no bump either
    plain = _py(
        harness_page,
        f"""
db, warned = await dv_open({fresh_db!r})
out = {{"version": db.version, "diff": db.describe().get("schemaDiff")}}
db.close()
json.dumps(out)
""",
    )
    assert plain["version"] == 11
    assert plain["diff"]["newer"] is False and plain["diff"]["extraIndexes"] == ["threads.title"]


def test_dexie_upgrade_while_python_is_open_is_not_blocked_and_python_reopens(
    harness_page: Page, fresh_db: str
) -> None:
    _py(
        harness_page,
        f"""
db, _ = await dv_open({fresh_db!r})
await db.table("threads").put(thread("t1", "one"))
KEEP[{fresh_db!r}] = db
json.dumps(db.version)
""",
    )
    upgraded = _dexie(harness_page, fresh_db, V2_STORES)
    assert upgraded["nativeVersion"] == 20 and not upgraded["blocked"]
    assert upgraded["threads"][0]["upgradedBy"] == "dexie"
    seen = _py(
        harness_page,
        f"""
db = KEEP.pop({fresh_db!r})
closed = db.core.versionchanged
with warnings.catch_warnings():
    warnings.simplefilter("ignore", SchemaDiffWarning)
    await db.table("threads").put(thread("t2", "two"))
out = {{"closed": closed, "version": db.version, "reopened": db.reopened,
       "newer": db.describe()["schemaDiff"]["newer"],
       "ids": [t["id"] for t in await db.table("threads").to_list()]}}
db.close()
json.dumps(out)
""",
    )
    assert seen == {
        "closed": True,
        "version": 20,
        "reopened": 1,
        "newer": True,
        "ids": ["t1", "t2"],
    }
    assert _dexie(harness_page, fresh_db, V2_STORES, title="two")["byTitle"] == ["t2"]
