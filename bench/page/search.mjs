// The search benchmark's page (issue 38), driven by bench/search.py: `window.searchBench`.
// MiniSearch (vendor/minisearch.mjs, test/benchmark only) against the runtime's own
// search (`search.rebuild`, `search.messages`), on the corpus of search_corpus.mjs.
//
// Python's side is a hook: it runs only when the runtime answers `search.messages`
// (probed by name, like the panel's hasQuery); otherwise every Python figure is
// reported as "not available", never measured on something else.
//
// URL parameters: `?boot=1` boots the runtime on the corpus database (the seed step does
// not, so that seeding is plain IndexedDB and the runtime opens what is already there).
import { bootRuntime } from "/runtime.mjs";
import MiniSearch from "/vendor/minisearch.mjs";
import Dexie from "/vendor/dexie.mjs";
import { STORES, deleteNative, openNative, requestDone, seedNative, txDone } from "./data.mjs";
import { CORPUS_SIZES, makeQueries, makeSearchCorpus, nodeText } from "./search_corpus.mjs";

export const CORPUS_DB = "bench_search_corpus";
const MINI_DB = "bench_search_minisearch";
const LIMIT = 20;
/**
 * MiniSearch's serialized index is persisted in parts of this many characters: at full
 * size it is ~200 MB of JSON, over the largest value IndexedDB takes (~133 MB).
 */
const MINI_PART = 32 * 2 ** 20;
/** A word found nowhere in the corpus: every catch-up append carries it. */
export const CATCH_UP_WORD = "zephyrcatchup";

const params = new URLSearchParams(location.search);
const sb = { state: "starting", error: null, python: null };
window.searchBench = sb;
const setState = (state) => {
  sb.state = state;
  document.getElementById("state").textContent = state;
};

// --- the shared matching rules, for MiniSearch ------------------------------------------

/** NFKC, case folding, accents stripped: the contract's `fold` (panelot.search.text). */
export const fold = (s) =>
  s.normalize("NFKC").toLowerCase().normalize("NFD").replace(/\p{M}+/gu, "").normalize("NFC");

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const RUNS = /[\p{L}\p{N}\p{M}]+/gu;

/** Words, and CJK runs as character bigrams (a lone character as itself): as the contract. */
export function tokenize(text) {
  const out = [];
  for (const [run] of fold(text).matchAll(RUNS)) {
    if (!CJK.test(run)) {
      out.push(run);
      continue;
    }
    // Split a mixed run into its CJK and other parts.
    for (const [part] of run.matchAll(/(\p{Script=Han}|\p{Script=Hiragana}|\p{Script=Katakana}|\p{Script=Hangul})+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu)) {
      if (!CJK.test(part)) out.push(part);
      else if (part.length === 1) out.push(part);
      else for (let i = 0; i + 1 < part.length; i++) out.push(part.slice(i, i + 2));
    }
  }
  return out;
}

const MINI_OPTIONS = {
  fields: ["title", "text"],
  storeFields: ["threadId", "folderId", "tags", "pinned", "archived", "ts"],
  tokenize,
  processTerm: (term) => term,
};

/**
 * MiniSearch's query for one of ours: all words (AND), the last one as a prefix unless
 * the query is a phrase (MiniSearch has no phrase query: a phrase is its words, ANDed,
 * which asks it for less than ours), archived threads left out unless asked for, the
 * thread filters on the stored fields.
 */
function miniSearch(index, { text, filters = {} }) {
  const phrase = text.startsWith('"');
  const wanted = filters.archived ?? false;
  const results = index.search(phrase ? text.replaceAll('"', "") : text, {
    combineWith: "AND",
    prefix: phrase ? false : (_term, i, terms) => i === terms.length - 1,
    filter: (r) =>
      r.archived === wanted &&
      (filters.folder === undefined || r.folderId === filters.folder) &&
      (filters.tag === undefined || (r.tags ?? []).includes(filters.tag)) &&
      (filters.pinned === undefined || r.pinned === filters.pinned),
  });
  return { hits: results.slice(0, LIMIT), total: results.length };
}

// --- IndexedDB helpers ------------------------------------------------------------------

function openMiniDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(MINI_DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore("index");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** Every thread and node of the corpus database, in one read transaction. */
async function readCorpus() {
  const db = await openNative(CORPUS_DB);
  try {
    const tx = db.transaction(["threads", "nodes"], "readonly");
    const [threads, nodes] = await Promise.all([
      requestDone(tx.objectStore("threads").getAll()),
      requestDone(tx.objectStore("nodes").getAll()),
    ]);
    return { threads, nodes };
  } finally {
    db.close();
  }
}

// --- Python (the hook) ------------------------------------------------------------------

let panelot = null;

/** Whether the runtime answers `search.messages` (an unknown name says it does not). */
async function probePython() {
  try {
    await panelot.query("search.messages", { text: "probe" });
    return true;
  } catch (error) {
    return error?.name !== "UnknownCommandError";
  }
}

async function pySend(type, payload) {
  const submissionId = crypto.randomUUID();
  const out = await panelot.send({ type, clientId: "bench-search", submissionId, payload });
  if (out.status !== "completed") throw new Error(`${type}: ${JSON.stringify(out.error)}`);
  return out.response;
}

const wasmHeap = () => panelot.py._module.HEAP8.buffer.byteLength;

const pyQuery = ({ text, filters }) =>
  panelot.query("search.messages", { text, limit: LIMIT, ...(filters && { filters }) });

/**
 * Resolve once `search.status` says the index is neither building nor lagging (at once,
 * with null, when the runtime has no `search.status`: then `search.rebuild`'s answer is
 * taken as the end of the build).
 */
async function pySettled(timeoutMs = 1_800_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let status;
    try {
      status = await panelot.query("search.status", {});
    } catch (error) {
      if (error?.name === "UnknownCommandError") return null;
      throw error;
    }
    if (!status.building && !status.lagging) return status;
    if (performance.now() > deadline) throw new Error(`search.status: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const notAvailable = { available: false, reason: "the runtime has no search.messages" };

// --- the API bench/search.py calls ------------------------------------------------------

const sizeOf = (quick) => (quick ? CORPUS_SIZES.quick : CORPUS_SIZES.full);

/** Write the corpus into a fresh panelot_v1-shaped database; return its figures. */
sb.seed = async (quick) => {
  const corpus = makeSearchCorpus(sizeOf(quick));
  await deleteNative(CORPUS_DB);
  await deleteNative(MINI_DB);
  const db = await openNative(CORPUS_DB);
  try {
    await seedNative(db, { threads: corpus.threads });
    for (let i = 0; i < corpus.nodes.length; i += 5000) {
      await seedNative(db, { nodes: corpus.nodes.slice(i, i + 5000) });
    }
  } finally {
    db.close();
  }
  return corpus.stats;
};

/** The queries of `search_query` (the same on every page: seeded). */
sb.queries = (quick) => makeQueries(makeSearchCorpus(sizeOf(quick)), sizeOf(quick).queries);

/**
 * Wait until Python's index has settled (the start-up build of the index the runtime found
 * missing, on this page's thread): so that MiniSearch's build is not timed alongside it.
 */
sb.pySettle = async () => {
  if (sb.python) await pySettled();
  return true;
};

/** MiniSearch's build: read panelot_v1, addAll, persist the serialized index (in parts). */
sb.miniBuild = async () => {
  const started = performance.now();
  const { threads, nodes } = await readCorpus();
  const meta = new Map(threads.map((t) => [t.id, t]));
  const docs = [];
  for (const t of threads) {
    docs.push({
      id: `thread:${t.id}`,
      threadId: t.id,
      title: `${t.title} ${(t.tags ?? []).join(" ")}`,
      text: "",
      folderId: t.folderId,
      tags: t.tags,
      pinned: t.pinned,
      archived: t.archived,
      ts: t.updatedAt,
    });
  }
  for (const n of nodes) {
    if (n.payload.deleted) continue;
    const t = meta.get(n.threadId);
    docs.push({
      id: n.id,
      threadId: n.threadId,
      title: "",
      text: nodeText(n),
      folderId: t.folderId,
      tags: t.tags,
      pinned: t.pinned,
      archived: t.archived,
      ts: n.ts,
    });
  }
  const index = new MiniSearch(MINI_OPTIONS);
  index.addAll(docs);
  const json = JSON.stringify(index);
  const db = await openMiniDb();
  try {
    const tx = db.transaction("index", "readwrite");
    const store = tx.objectStore("index");
    const parts = Math.max(1, Math.ceil(json.length / MINI_PART));
    for (let i = 0; i < parts; i++) {
      store.put(json.slice(i * MINI_PART, (i + 1) * MINI_PART), `v1:${i}`);
    }
    store.put(parts, "v1:parts");
    await txDone(tx);
  } finally {
    db.close();
  }
  const ms = performance.now() - started;
  miniIndex = index;
  return { ms, docs: index.documentCount, bytes: json.length };
};

let miniIndex = null;

/** MiniSearch loaded from its persisted index (cold), then `query`: the whole time. */
sb.miniCold = async (query) => {
  const started = performance.now();
  const db = await openMiniDb();
  let json;
  try {
    const store = db.transaction("index").objectStore("index");
    const parts = await requestDone(store.get("v1:parts"));
    const texts = [];
    for (let i = 0; i < parts; i++) texts.push(requestDone(store.get(`v1:${i}`)));
    json = (await Promise.all(texts)).join("");
  } finally {
    db.close();
  }
  miniIndex = MiniSearch.loadJSON(json, MINI_OPTIONS);
  const result = miniSearch(miniIndex, query);
  return { ms: performance.now() - started, total: result.total };
};

/** Each query once on the loaded index (warm): `{ms: [...], totals: [...]}`. */
sb.miniWarm = async (queries) => {
  if (!miniIndex) throw new Error("miniWarm: no index loaded (miniBuild or miniCold first)");
  const ms = [];
  const totals = [];
  for (const query of queries) {
    const started = performance.now();
    const { total } = miniSearch(miniIndex, query);
    ms.push(performance.now() - started);
    totals.push(total);
  }
  return { ms, totals };
};

/** Whether the Python side exists in this build (set at boot). */
sb.pythonAvailable = () => sb.python;

/**
 * Python's build: `search.rebuild` until the index has settled, and the wasm heap. The
 * indexer first finishes the seed it heard (its own batches, not the build), untimed.
 * `wasm_boot` is the heap when the runtime was ready, before the start-up build (the
 * page opened a corpus with no index): the heap never shrinks, so the start-up build's
 * growth shows there, and a second build reuses that memory.
 */
sb.pyBuild = async () => {
  if (!sb.python) return notAvailable;
  await pySettled();
  const before = wasmHeap();
  const started = performance.now();
  const response = await pySend("search.rebuild", {});
  const status = await pySettled();
  const ms = performance.now() - started;
  return {
    available: true,
    ms,
    response,
    status,
    wasm_boot: sb.wasmBoot ?? null,
    wasm_before: before,
    wasm_after: wasmHeap(),
  };
};

/** The first Python query after a reload (the index on disk). */
sb.pyCold = async (query) => {
  if (!sb.python) return notAvailable;
  const started = performance.now();
  const result = await pyQuery(query);
  return { available: true, ms: performance.now() - started, total: result.total };
};

sb.pyWarm = async (queries) => {
  if (!sb.python) return notAvailable;
  const ms = [];
  const totals = [];
  for (const query of queries) {
    const started = performance.now();
    const { total } = await pyQuery(query);
    ms.push(performance.now() - started);
    totals.push(total);
  }
  return { available: true, ms, totals };
};

/**
 * `search_catch_up`, the writer (a page without the runtime: Dexie code, another
 * context): `count` appends to the latest unarchived thread, one transaction each,
 * every message carrying CATCH_UP_WORD. Returns the wall-clock time of the last commit (Date.now()).
 */
sb.catchUpWrite = async (count) => {
  const db = new Dexie(CORPUS_DB);
  db.version(1).stores(STORES);
  await db.open();
  try {
    // The latest thread that is not archived: a search finds archived threads only when
    // asked for (at full size the latest thread is archived, and nothing was found).
    const thread = await db.threads
      .orderBy("updatedAt")
      .reverse()
      .filter((t) => !t.archived)
      .first();
    let parentId = thread.leafId;
    const last = await db.nodes.get(parentId);
    let seq = last.seq;
    for (let i = 0; i < count; i++) {
      const id = `${thread.id}-catchup-${i}`;
      seq += 1;
      const node = {
        id,
        threadId: thread.id,
        parentId,
        seq,
        ts: Date.now(),
        type: "user_message",
        payload: { content: [{ type: "text", text: `${CATCH_UP_WORD} message ${i}` }] },
      };
      await db.transaction("rw", db.nodes, db.threads, async () => {
        await db.nodes.add(node);
        await db.threads.update(thread.id, { leafId: id, updatedAt: Date.now() });
      });
      parentId = id;
    }
    return { lastCommit: Date.now() };
  } finally {
    db.close();
  }
};

/** `search_catch_up`, the reader: poll until `count` hits hold CATCH_UP_WORD. */
sb.catchUpWait = async (count, timeoutMs) => {
  if (!sb.python) return notAvailable;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { total } = await panelot.query("search.messages", { text: CATCH_UP_WORD, limit: 1 });
    if (total >= count) return { available: true, findable: Date.now(), total };
    if (Date.now() > deadline) return { available: true, findable: null, total };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

// --- boot -------------------------------------------------------------------------------

try {
  if (params.get("boot") === "1") {
    setState("booting");
    panelot = bootRuntime({ dbName: CORPUS_DB });
    await panelot.ready;
    sb.wasmBoot = wasmHeap(); // before the start-up build of an index found missing
    sb.python = await probePython();
  }
  setState("ready");
} catch (error) {
  sb.error = String(error?.stack ?? error?.message ?? error);
  setState("error");
}
