// Benchmark page: boots the Panelot runtime, loads Dexie, and exposes `window.bench`,
// which bench/run.py drives one measurement at a time (see workloads.mjs, workloads.py).
import { bootRuntime } from "/runtime.mjs";
import Dexie, { liveQuery } from "/vendor/dexie.mjs";
import {
  STORES,
  deleteNative,
  makeMessages,
  makeRng,
  makeThread,
  openNative,
  seedNative,
} from "./data.mjs";
import { LIVE_NOTIFY, SHARED_CHECKS, WORKLOADS } from "./workloads.mjs";

const IMPLS = ["python", "dexie", "raw"];
const SEED = 20240601;
const PY_DIR = "/home/pyodide/bench";

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

/** A full GC of the JS heap when Chromium runs with --js-flags=--expose-gc. */
const collect = () => globalThis.gc?.();

// --- Python -----------------------------------------------------------------------------

let py = null;
let pyNs = null;

/** Evaluate Python `code` with extra globals `vars`; return its (string) result. */
async function pyCall(code, vars) {
  for (const [k, v] of Object.entries(vars)) pyNs.set(k, v);
  try {
    return await py.runPythonAsync(code, { globals: pyNs });
  } finally {
    for (const k of Object.keys(vars)) pyNs.delete(k);
  }
}

const measurePython = async (
  name,
  args,
  dbName,
  profile,
  variant = "on",
  memory = false,
  input = null,
) =>
  JSON.parse(
    await pyCall(
      "await _bench.measure(NAME, DB_NAME, ARGS_JSON, PROFILE, VARIANT, MEMORY, INPUT)",
      {
        NAME: name,
        DB_NAME: dbName,
        ARGS_JSON: JSON.stringify(args),
        PROFILE: profile,
        VARIANT: variant,
        MEMORY: memory,
        INPUT: input,
      },
    ),
  );

/** Live PyProxies allocated since boot and not destroyed (Pyodide's allocation tracing). */
const liveProxies = () => py._module.pyproxy_alloc_map.size;

const wasmHeapBytes = () => py._module.HEAP8.buffer.byteLength;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The JS heap in use (`performance.memory`, precise with --enable-precise-memory-info,
 * which refreshes it at most every 50 ms) and the wasm heap's size. With `full`, full
 * GCs first (a second and third one free what finalizers released) and a pause past
 * that refresh interval (outside any timing).
 */
async function heapMark(full) {
  if (full) {
    for (let i = 0; i < 3; i++) {
      collect();
      await sleep(20);
    }
    await sleep(60);
  }
  return { js: performance.memory?.usedJSHeapSize ?? 0, wasm: py ? wasmHeapBytes() : 0 };
}

/** A measurement's heap figures from the marks before run(), at its end, after a GC. */
const heapFigures = (before, end, retained) => ({
  js_before: before.js,
  js_end: end.js,
  js_retained: retained.js,
  wasm_before: before.wasm,
  wasm_end: end.wasm,
});

// --- Dexie and plain IndexedDB ----------------------------------------------------------

async function openDexie(name, durability = undefined) {
  // chromeTransactionDurability: Dexie passes it to every IDBDatabase.transaction call.
  const db = new Dexie(name, durability ? { chromeTransactionDurability: durability } : {});
  db.version(1).stores(STORES);
  await db.open();
  return db;
}

async function measureJs(open, impl, args, dbName, memory = false, input = null) {
  const db = await open(dbName);
  try {
    const ctx = impl.setup ? await impl.setup(db, args, input) : null;
    const before = memory ? await heapMark(true) : null;
    collect();
    const started = performance.now();
    const result = await impl.run(db, args, ctx);
    const ms = performance.now() - started;
    const heap = memory ? heapFigures(before, await heapMark(false), await heapMark(true)) : null;
    const check = impl.check ? await impl.check(db, args, result) : null;
    return heap ? { ms, check, heap } : { ms, check };
  } finally {
    // Let the last readonly transaction finish (Dexie and requestDone resolve on the
    // request's success), so deleting the database is not reported as blocked.
    await new Promise((resolve) => setTimeout(resolve, 0));
    db.close();
  }
}

/** A fresh database with the panelot_v1 schema and the workload's seed records. */
async function prepare(dbName, seed) {
  await deleteNative(dbName);
  const db = await openNative(dbName);
  try {
    await seedNative(db, seed);
  } finally {
    db.close();
  }
}

// --- the API run.py calls ---------------------------------------------------------------

const byName = new Map(WORKLOADS.map((w) => [w.name, w]));
/** Workloads with a Python implementation in this build (blob needs panelot.attachments.records). */
let available = [];

bench.info = () => ({
  pyodide: py.version,
  dexie: Dexie.semVer,
  userAgent: navigator.userAgent,
  workloads: WORKLOADS.filter((w) => available.includes(w.name)).map((w) => ({
    name: w.name,
    sizes: w.sizes,
    unit: w.unit,
    ...(w.label && { labels: { full: w.label(w.sizes.full), quick: w.label(w.sizes.quick) } }),
    impls: w.variants ?? w.impls ?? IMPLS,
    memory: Boolean(w.memory),
  })),
  impls: IMPLS,
  live: { name: LIVE_NOTIFY.name, sizes: LIVE_NOTIFY.sizes, unit: LIVE_NOTIFY.unit },
});

/**
 * One timed measurement: `{ms, check, proxies?, profile?}`. Every call uses a fresh
 * database; a Python measurement also reports the live PyProxy count after it.
 */
bench.measure = async (name, impl, run, quick, profile = false) => {
  const workload = byName.get(name);
  if (!workload) throw new Error(`unknown workload ${name}`);
  const size = quick ? workload.sizes.quick : workload.sizes.full;
  const data = workload.data(size, makeRng(SEED));
  const { seed, args } = data;
  const memory = Boolean(workload.memory);
  if (workload.impls && !workload.impls.includes(impl)) {
    throw new Error(`${name}: no ${impl} implementation`);
  }
  const dbName = `bench_${name}_${impl}_${run}`;
  const input = workload.input ? await workload.input(data) : null;
  await prepare(dbName, seed);
  let out;
  try {
    if (workload.variants) {
      if (!workload.variants.includes(impl)) throw new Error(`${name}: unknown variant ${impl}`);
      out = await measurePython(name, args, dbName, profile, impl);
    } else if (impl === "python") {
      out = await measurePython(name, args, dbName, profile, "on", memory, input);
    } else if (impl === "dexie") {
      const open = (n) => openDexie(n, workload.durability);
      out = await measureJs(open, workload.dexie, args, dbName, memory, input);
    } else if (impl === "raw") {
      out = await measureJs(openNative, workload.raw, args, dbName, memory, input);
    } else throw new Error(`unknown implementation ${impl}`);
  } finally {
    await deleteNative(dbName);
  }
  // Counted once the database is deleted: a closed connection keeps its five handler
  // proxies until its last transaction completes, which a read-only one may do after
  // the body has returned.
  if (impl === "python" || workload.variants) out.proxies = liveProxies();
  log(`${name} ${impl} #${run}: ${out.ms.toFixed(1)} ms`);
  return out;
};

// --- live_notify: a commit here (page A), its live query result in page B -----------------
//
// bench/run.py drives two bench pages of one browser context: A seeds the database and
// writes one node at a time (liveWrite), B holds the live query (liveOpen) and stamps
// the arrival of every node id it has not seen (liveWait answers that stamp). Times are
// performance.timeOrigin + performance.now(). The two pages' clocks can disagree by a few
// milliseconds (each renderer turns its monotonic clock into wall time on its own, and
// the machine's clock may be adjusted in between), as much as the latency measured:
// clockOffset measures page A's clock against page B's, NTP-style, so that run.py can
// move A's commit times into B's clock.

const wallNow = () => performance.timeOrigin + performance.now();
let live = null;

// One channel object per page for both roles: a channel never hears its own posts.
const clock = new BroadcastChannel("panelot-bench-clock");
const pongs = new Map();
let pings = 0;
clock.onmessage = ({ data }) => {
  if (data.ping !== undefined) clock.postMessage({ pong: data.ping, t: wallNow() });
  else if (data.pong !== undefined) pongs.get(data.pong)?.(data.t);
};

/** One round trip to the other page: `[sent, its time, received]` in this page's clock. */
function ping() {
  const id = ++pings;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pongs.delete(id);
      reject(new Error("bench clock: the other bench page did not answer"));
    }, 5000);
    const sent = wallNow();
    pongs.set(id, (t) => {
      clearTimeout(timer);
      pongs.delete(id);
      resolve([sent, t, wallNow()]);
    });
    clock.postMessage({ ping: id });
  });
}

/**
 * Page B: `{offset, rtt}`: the other page's clock minus this one's (ms), from the fastest
 * of `n` round trips (its error is at most half that round trip, `rtt`).
 */
bench.clockOffset = async (n = 25) => {
  let best = null;
  for (let i = 0; i < n; i++) {
    const [sent, theirs, received] = await ping();
    const rtt = received - sent;
    if (best === null || rtt < best.rtt) best = { rtt, offset: theirs - (sent + received) / 2 };
  }
  return best;
};

/** Page A: a fresh seeded database for one measurement; returns its name and the args. */
bench.liveSetup = async (impl, run, quick) => {
  const size = quick ? LIVE_NOTIFY.sizes.quick : LIVE_NOTIFY.sizes.full;
  const { seed, args } = LIVE_NOTIFY.data(size, makeRng(SEED + run));
  const dbName = `bench_live_notify_${impl}_${run}`;
  await prepare(dbName, seed);
  return { dbName, args };
};

/** Page A: open the writing connection (Python's or Dexie's). */
bench.liveWriterOpen = async (impl, dbName) => {
  if (impl === "dexie") live = { db: await openDexie(dbName) };
  else await pyCall("await _bench.live_writer_open(DB_NAME)", { DB_NAME: dbName });
};

// Page A: when Dexie last announced a commit in this page (its x-storagemutated-1 event,
// dispatched from the transaction's complete event, before the write's promise resolves).
let announcedAt = null;
addEventListener("x-storagemutated-1", () => {
  announcedAt = wallNow();
});

/**
 * Page A: append one message; `{id, t0, t1, tc}`: before the write, once it returned,
 * and the commit (Python: when the commit reached the feed, before it is announced;
 * Dexie: when Dexie announced it in this page).
 */
bench.liveWrite = async (impl, threadId, message) => {
  if (impl !== "dexie") {
    return JSON.parse(
      await pyCall("await _bench.live_write(THREAD_ID, MESSAGE_JSON)", {
        THREAD_ID: threadId,
        MESSAGE_JSON: JSON.stringify(message),
      }),
    );
  }
  announcedAt = null;
  const t0 = wallNow();
  const { nodeId } = await LIVE_NOTIFY.dexieAppend(live.db, threadId, message);
  const t1 = wallNow();
  if (announcedAt === null) throw new Error("live_notify: Dexie announced no commit");
  return { id: nodeId, t0, t1, tc: announcedAt };
};

bench.liveWriterClose = async (impl, dbName) => {
  if (impl === "dexie") live.db.close();
  else await pyCall("_bench.live_writer_close()", {});
  live = null;
  await deleteNative(dbName);
};

/** Page B: stamp the ids not seen before (called by both live queries, stamp first). */
function liveMark(ids, t, count) {
  live.results += 1;
  live.count = count;
  for (const id of ids) {
    if (live.seen.has(id)) continue;
    live.seen.set(id, t);
    live.waiters.get(id)?.(t);
    live.waiters.delete(id);
  }
}

/** Page B: open the live query on the thread's nodes; resolves with its first result. */
bench.liveOpen = async (impl, dbName, threadId, interval) => {
  let first;
  const ready = new Promise((resolve) => {
    first = resolve;
  });
  live = { impl, seen: new Map(), waiters: new Map(), results: 0, count: 0, error: null };
  const mark = (idsJson, t, count) => {
    liveMark(JSON.parse(idsJson), t, count);
    first();
  };
  if (impl === "dexie") {
    live.db = await openDexie(dbName);
    live.sub = liveQuery(LIVE_NOTIFY.dexieNodes(live.db, threadId)).subscribe({
      next: (rows) => {
        const t = wallNow();
        liveMark(
          rows.map((r) => r.id),
          t,
          rows.length,
        );
        first();
      },
      error: (e) => {
        live.error = String(e);
      },
    });
  } else {
    await pyCall("await _bench.live_reader_open(DB_NAME, THREAD_ID, INTERVAL, MARK)", {
      DB_NAME: dbName,
      THREAD_ID: threadId,
      INTERVAL: interval,
      MARK: mark,
    });
  }
  await ready;
  return live.count;
};

/** Page B: when the result holding node `id` arrived (waits up to `timeoutMs`). */
bench.liveWait = (id, timeoutMs) => {
  if (live.error) throw new Error(live.error);
  const t = live.seen.get(id);
  if (t !== undefined) return t;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      live.waiters.delete(id);
      reject(new Error(`live_notify: no result with node ${id} within ${timeoutMs} ms`));
    }, timeoutMs);
    live.waiters.set(id, (at) => {
      clearTimeout(timer);
      resolve(at);
    });
  });
};

/** Page B: close the live query and its connection; `{results, count}` it delivered. */
bench.liveClose = async () => {
  const out = { results: live.results, count: live.count };
  if (live.impl === "dexie") {
    live.sub.unsubscribe();
    live.db.close();
  } else {
    out.runs = JSON.parse(await pyCall("_bench.live_reader_close()", {}));
  }
  live = null;
  return out;
};

bench.proxies = liveProxies;

/** Heap marks for Python's measure (see heapMark). */
bench.heap = heapMark;

/** Checks both implementations of a workload share (Python calls them, JSON in and out). */
bench.checks = SHARED_CHECKS;

/** Allocation stacks of the live traced PyProxies (to find a leak). */
bench.proxyStacks = () => [...py._module.pyproxy_alloc_map.values()].map(String);

/**
 * Wasm heap (and Python allocation) figures around `count` appends through the tree
 * layer, one per transaction, with the size of the data they stored.
 */
bench.memory = async (count) => {
  const rng = makeRng(SEED);
  const thread = makeThread(rng);
  const messages = makeMessages(rng, 500);
  const dbName = "bench_memory";
  await prepare(dbName, { threads: [thread] });
  try {
    const pyBefore = JSON.parse(await pyCall("json.dumps(_bench.python_memory())", {}));
    const heapBefore = wasmHeapBytes();
    const proxiesBefore = liveProxies();
    const { ms } = JSON.parse(
      await pyCall("await _bench.append_many(DB_NAME, THREAD_ID, MESSAGES_JSON, COUNT)", {
        DB_NAME: dbName,
        THREAD_ID: thread.id,
        MESSAGES_JSON: JSON.stringify(messages),
        COUNT: count,
      }),
    );
    const pyAfter = JSON.parse(await pyCall("json.dumps(_bench.python_memory())", {}));
    const heapAfter = wasmHeapBytes();
    const db = await openNative(dbName);
    const tx = db.transaction("nodes", "readonly");
    const nodes = await new Promise((resolve, reject) => {
      const req = tx.objectStore("nodes").getAll();
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    db.close();
    const dataBytes = nodes.reduce((s, n) => s + JSON.stringify(n).length, 0);
    return {
      appends: count,
      nodes_stored: nodes.length,
      data_json_bytes: dataBytes,
      append_ms: Math.round(ms),
      wasm_heap_before_bytes: heapBefore,
      wasm_heap_after_bytes: heapAfter,
      wasm_heap_growth_bytes: heapAfter - heapBefore,
      python_gc_objects_before: pyBefore.gc_objects,
      python_gc_objects_after: pyAfter.gc_objects,
      live_pyproxies_before: proxiesBefore,
      live_pyproxies_after: liveProxies(),
    };
  } finally {
    await deleteNative(dbName);
  }
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
  const source = await fetch(new URL("./workloads.py", import.meta.url));
  if (!source.ok) throw new Error(`workloads.py: HTTP ${source.status}`);
  py.FS.mkdirTree(PY_DIR);
  py.FS.writeFile(`${PY_DIR}/bench_workloads.py`, await source.text());
  pyNs = py.globals.get("dict")();
  py.runPython(
    `import sys, json\nsys.path.insert(0, ${JSON.stringify(PY_DIR)})\nimport bench_workloads as _bench`,
    { globals: pyNs },
  );
  available = JSON.parse(py.runPython("json.dumps(list(_bench.WORKLOADS))", { globals: pyNs }));
  // runPythonAsync allocates a PyProxy of its own on first use: let it do so now.
  await py.runPythonAsync("None", { globals: pyNs });
  // From here on, every PyProxy created and not destroyed is counted (see liveProxies).
  py._module.enable_pyproxy_allocation_tracing();
  setState("ready");
} catch (error) {
  bench.error = String(error?.stack ?? error?.message ?? error);
  log(bench.error);
  setState("error");
}
