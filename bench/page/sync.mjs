// The sync benchmark's page (issue 39), driven by bench/sync.py: `window.syncBench`.
// The store's own replication (`sync.push`, `sync.pull`: sync_workloads.py, in the
// runtime's Pyodide) against PouchDB's (`PouchDB.replicate`, vendor/pouchdb.min.js, a
// classic script: window.PouchDB), both with the bench's test server.
//
// The data: threads of linear chains (data.mjs' makeChain) written into a
// panelot_v1-shaped database with plain IndexedDB, then attachments of seeded random
// bytes put through the store. PouchDB's local source holds the same documents: the
// ones the store pushed, copied from the server with their revisions (`new_edits:
// false`), so both sides must end with the same ids and revisions.
import { bootRuntime } from "/runtime.mjs";
import { deleteNative, makeChain, makeRng, openNative, seedNative } from "./data.mjs";

const PY_DIR = "/home/pyodide/bench";
const SEED = 20261204;

const sb = { state: "starting", error: null };
window.syncBench = sb;
const setState = (state) => {
  sb.state = state;
  document.getElementById("state").textContent = state;
};

let py = null;
let pyNs = null;

/** Evaluate Python `code` with extra globals `vars`; return its result, parsed from JSON. */
async function pyCall(code, vars) {
  for (const [k, v] of Object.entries(vars)) pyNs.set(k, v);
  try {
    return JSON.parse(await py.runPythonAsync(code, { globals: pyNs }));
  } finally {
    for (const k of Object.keys(vars)) pyNs.delete(k);
  }
}

/** `{count, digest}`: SHA-256 of the sorted `id rev` lines. */
async function digestOf(pairs) {
  const sorted = pairs.map(([id, rev]) => `${id} ${rev}`).sort();
  const bytes = new TextEncoder().encode(sorted.join("\n"));
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return { count: sorted.length, digest: [...hash].map((b) => b.toString(16).padStart(2, "0")).join("") };
}

/**
 * A fresh store database `name` holding `threads` chains of `nodes / threads` nodes and
 * `attachments` attachments of `size` bytes; `{threads, nodes, attachments, bytes}`.
 */
sb.seed = async (name, { threads, nodes, attachments, size }) => {
  await pyCall("await _sync.delete(NAME)", { NAME: name });
  await deleteNative(name);
  const rng = makeRng(SEED);
  const seed = { threads: [], nodes: [] };
  for (let i = 0; i < threads; i++) {
    const chain = makeChain(rng, Math.floor(nodes / threads));
    seed.threads.push(chain.thread);
    seed.nodes.push(...chain.nodes);
  }
  const db = await openNative(name);
  try {
    await seedNative(db, seed);
  } finally {
    db.close();
  }
  const ids = JSON.stringify(seed.threads.map((t) => t.id));
  await pyCall("await _sync.add_attachments(NAME, IDS, COUNT, SIZE)", {
    NAME: name,
    IDS: ids,
    COUNT: attachments,
    SIZE: size,
  });
  return { threads, nodes: seed.nodes.length, attachments, bytes: attachments * size };
};

/** Delete the store database `name` and its sync state. */
sb.deleteStore = (name) => pyCall("await _sync.delete(NAME)", { NAME: name });

/** The store's push of `name` to `server`/`database`: `{ms, report}`. */
sb.pyPush = (name, server, database) =>
  pyCall("await _sync.push(NAME, SERVER, DATABASE)", { NAME: name, SERVER: server, DATABASE: database });

/** The store's pull into the fresh store `name`: `{ms, report}`. */
sb.pyPull = async (name, server, database) => {
  await pyCall("await _sync.delete(NAME)", { NAME: name });
  return pyCall("await _sync.pull(NAME, SERVER, DATABASE)", { NAME: name, SERVER: server, DATABASE: database });
};

/** What the store `name` holds: `{records, count, digest}` (of its sync state's ids and revs). */
sb.pyHolds = async (name) => {
  const out = await pyCall("await _sync.holds(NAME)", { NAME: name });
  return { records: out.records, ...(await digestOf(out.pairs)) };
};

/** A server database's live documents: `{count, digest}`. */
sb.serverHolds = async (url) => {
  const res = await fetch(`${url}/_all_docs`);
  if (!res.ok) throw new Error(`${url}/_all_docs: HTTP ${res.status}`);
  const body = await res.json();
  return digestOf(body.rows.map((r) => [r.id, r.value.rev]));
};

/** A local PouchDB's live documents: `{count, digest}`. */
sb.pouchHolds = async (local) => {
  const all = await new PouchDB(local).allDocs();
  return digestOf(all.rows.map((r) => [r.id, r.value.rev]));
};

/** A fresh local PouchDB `local` holding the documents of the server database `url`, revisions kept. */
sb.pouchSource = async (url, local) => {
  await new PouchDB(local).destroy();
  const db = new PouchDB(local);
  const all = await new PouchDB(url).allDocs({ include_docs: true, attachments: true, binary: true });
  const docs = all.rows.map((r) => r.doc);
  const out = await db.bulkDocs(docs, { new_edits: false });
  const failed = out.filter((r) => r.error);
  if (failed.length) throw new Error(`pouchSource: ${JSON.stringify(failed.slice(0, 3))}`);
  return docs.length;
};

/** PouchDB replicates `source` into `target` (a local name or a server URL): `{ms, written}`. */
sb.pouchReplicate = async (source, target) => {
  const from = new PouchDB(source);
  const to = new PouchDB(target);
  const t0 = performance.now();
  const info = await PouchDB.replicate(from, to);
  const ms = performance.now() - t0;
  if (!info.ok) throw new Error(`replicate: ${JSON.stringify(info.errors)}`);
  return { ms, written: info.docs_written };
};

/** Destroy the local PouchDB `local`. */
sb.pouchDestroy = async (local) => {
  await new PouchDB(local).destroy();
  return true;
};

/** Two stores, one server database: commit on A to B's live query (sync_workloads.latency). */
sb.latency = async (server, database, commits, interval) => {
  const [a, b] = ["bench_sync_latency_a", "bench_sync_latency_b"];
  for (const name of [a, b]) await pyCall("await _sync.delete(NAME)", { NAME: name });
  const out = await pyCall("await _sync.latency(A, B, SERVER, DATABASE, COMMITS, INTERVAL)", {
    A: a,
    B: b,
    SERVER: server,
    DATABASE: database,
    COMMITS: commits,
    INTERVAL: interval,
  });
  out.a = await sb.pyHolds(a);
  out.b = await sb.pyHolds(b);
  for (const name of [a, b]) await pyCall("await _sync.delete(NAME)", { NAME: name });
  return out;
};

try {
  setState("booting");
  if (!window.PouchDB) throw new Error("vendor/pouchdb.min.js did not load");
  const panelot = bootRuntime({ dbName: "panelot_bench_sync_runtime" });
  await panelot.ready;
  py = panelot.py;
  const source = await fetch(new URL("./sync_workloads.py", import.meta.url));
  if (!source.ok) throw new Error(`sync_workloads.py: HTTP ${source.status}`);
  py.FS.mkdirTree(PY_DIR);
  py.FS.writeFile(`${PY_DIR}/bench_sync.py`, await source.text());
  pyNs = py.globals.get("dict")();
  py.runPython(
    `import sys\nsys.path.insert(0, ${JSON.stringify(PY_DIR)})\nimport bench_sync as _sync`,
    { globals: pyNs },
  );
  setState("ready");
} catch (error) {
  sb.error = String(error?.stack ?? error?.message ?? error);
  setState("error");
}
