// Benchmark page: boots the Panelot runtime, loads Dexie, and exposes `window.bench`,
// which bench/run.py drives one measurement at a time (see workloads.mjs).
import { bootRuntime } from "/runtime.mjs";
import Dexie from "/vendor/dexie.mjs";
import { STORES, WORKLOADS, makeRng } from "./workloads.mjs";

const IMPLS = ["python", "dexie", "raw"];
const SEED = 20240601;
const NATIVE_VERSION = 10; // Dexie's version(1)

const stateEl = document.getElementById("state");
const logEl = document.getElementById("log");
const log = (line) => {
  logEl.textContent += `${line}\n`;
};

const bench = { state: "starting", error: null };
window.bench = bench;
const setState = (state) => {
  bench.state = state;
  stateEl.textContent = state;
};

// --- Python -----------------------------------------------------------------------------

/** Run once per workload namespace, before the workload's own code. */
const PY_PRELUDE = String.raw`
import json
import time

from panelot.idb import Database
from panelot.idb.browser import BrowserFactory
from panelot.schema import PANELOT_VERSIONS

async def setup(db, data):
    return None

async def check(db, data, result):
    return None
`;

/** One measurement; DATA_JSON and DB_NAME are set in the namespace beforehand. */
const PY_MEASURE = String.raw`
async def _bench_measure():
    data = json.loads(DATA_JSON)
    factory = BrowserFactory()
    await factory.delete(DB_NAME)
    db = await Database(DB_NAME, PANELOT_VERSIONS).open(factory)
    try:
        ctx = await setup(db, data)
        started = time.perf_counter()
        result = await run(db, data, ctx)
        ms = (time.perf_counter() - started) * 1000
        checked = await check(db, data, result)
    finally:
        db.close()
        await factory.delete(DB_NAME)
    return json.dumps({"ms": ms, "check": checked})

await _bench_measure()
`;

let py = null;
const pyNamespaces = new Map();

function pyNamespace(workload) {
  let ns = pyNamespaces.get(workload.name);
  if (!ns) {
    ns = py.globals.get("dict")();
    py.runPython(PY_PRELUDE + workload.python, { globals: ns });
    pyNamespaces.set(workload.name, ns);
  }
  return ns;
}

async function measurePython(workload, data, dbName) {
  const ns = pyNamespace(workload);
  ns.set("DATA_JSON", JSON.stringify(data));
  ns.set("DB_NAME", dbName);
  try {
    return JSON.parse(await py.runPythonAsync(PY_MEASURE, { globals: ns }));
  } finally {
    ns.delete("DATA_JSON");
  }
}

// --- Dexie and plain IndexedDB ----------------------------------------------------------

const dexieBackend = {
  async open(name) {
    await Dexie.delete(name);
    const db = new Dexie(name);
    db.version(1).stores(STORES);
    await db.open();
    return db;
  },
  async close(db, name) {
    db.close();
    await Dexie.delete(name);
  },
};

function deleteNative(name) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(name);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
    // "blocked" only means a closed connection still finishes a transaction: wait on.
  });
}

/** Create the stores and indexes Dexie would make for STORES (names and key paths alike). */
function createSchema(db) {
  for (const [table, spec] of Object.entries(STORES)) {
    const [primary, ...indexes] = spec.split(",").map((s) => s.trim());
    const store = db.createObjectStore(table, { keyPath: primary });
    for (const entry of indexes) {
      const flags = entry.match(/^[&*]*/)[0];
      const name = entry.slice(flags.length);
      const keyPath = name.startsWith("[") ? name.slice(1, -1).split("+") : name;
      store.createIndex(name, keyPath, {
        unique: flags.includes("&"),
        multiEntry: flags.includes("*"),
      });
    }
  }
}

const rawBackend = {
  async open(name) {
    await deleteNative(name);
    return new Promise((resolve, reject) => {
      const req = indexedDB.open(name, NATIVE_VERSION);
      req.onupgradeneeded = () => createSchema(req.result);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  },
  async close(db, name) {
    db.close();
    await deleteNative(name);
  },
};

async function measureJs(backend, impl, data, dbName) {
  const db = await backend.open(dbName);
  try {
    const ctx = impl.setup ? await impl.setup(db, data) : null;
    const started = performance.now();
    const result = await impl.run(db, data, ctx);
    const ms = performance.now() - started;
    const check = impl.check ? await impl.check(db, data, result) : null;
    return { ms, check };
  } finally {
    // Let the last readonly transaction finish (Dexie and requestDone resolve on the
    // request's success), so deleting the database is not reported as blocked.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await backend.close(db, dbName);
  }
}

// --- the API run.py calls ---------------------------------------------------------------

const byName = new Map(WORKLOADS.map((w) => [w.name, w]));

bench.info = () => ({
  pyodide: py.version,
  dexie: Dexie.semVer,
  userAgent: navigator.userAgent,
  workloads: WORKLOADS.map((w) => ({ name: w.name, sizes: w.sizes })),
  impls: IMPLS,
});

/** One timed measurement: `{ms, check}`. Every call uses a fresh database. */
bench.measure = async (name, impl, run, quick) => {
  const workload = byName.get(name);
  if (!workload) throw new Error(`unknown workload ${name}`);
  const size = quick ? workload.sizes.quick : workload.sizes.full;
  const data = workload.data(size, makeRng(SEED));
  const dbName = `bench_${name}_${impl}_${run}`;
  let out;
  if (impl === "python") out = await measurePython(workload, data, dbName);
  else if (impl === "dexie") out = await measureJs(dexieBackend, workload.dexie, data, dbName);
  else if (impl === "raw") out = await measureJs(rawBackend, workload.raw, data, dbName);
  else throw new Error(`unknown implementation ${impl}`);
  log(`${name} ${impl} #${run}: ${out.ms.toFixed(1)} ms`);
  return out;
};

// --- boot -------------------------------------------------------------------------------

try {
  setState("booting");
  const panelot = bootRuntime({ dbName: "panelot_bench_runtime" });
  await panelot.ready;
  py = panelot.py;
  // The Dexie schema must be the one the Python layer declares, index string for index string.
  const declared = JSON.parse(
    py.runPython(
      "import json\nfrom panelot.schema import PANELOT_V1_STORES\njson.dumps(PANELOT_V1_STORES)",
    ),
  );
  if (JSON.stringify(declared) !== JSON.stringify(STORES)) {
    throw new Error(
      `bench STORES differ from panelot.schema.PANELOT_V1_STORES: ${JSON.stringify(declared)}`,
    );
  }
  for (const w of WORKLOADS) pyNamespace(w);
  setState("ready");
} catch (error) {
  bench.error = String(error?.stack ?? error?.message ?? error);
  log(bench.error);
  setState("error");
}
