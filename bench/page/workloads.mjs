// Benchmark workloads: one entry per workload, each with three implementations.
//
// To add a workload, append an object to WORKLOADS:
//
//   name    key in bench/results/*.json
//   sizes   {full, quick}: the size handed to data() (quick is the smoke-test size)
//   unit    what the size counts (for the Markdown table)
//   data    (size, rng) => {seed, args}: identical for all implementations; `args` is
//           plain JSON, `seed` may hold Blobs (it never leaves the page).
//           `seed` ({table: [records]}) is written with plain IndexedDB before the
//           implementation opens the database; `args` is handed to setup/run/check.
//           Generating and seeding are not timed.
//   python  nothing here: bench/page/workloads.py defines WORKLOADS[name] with
//           `run(db, args, ctx)` (timed) and optional `setup(db, args)` / `check(...)`
//   dexie   {setup?, run, check?} with the same signatures; `db` is an open Dexie instance
//   raw     {setup?, run, check?}; `db` is an open IDBDatabase
//   impls   optional: the implementations measured (default all three)
//   label   optional: size => the size as the Markdown table shows it (default "size unit")
//   input   optional: async ({seed, args, ...}) => a JS value made before the database
//           is seeded (untimed), handed to setup(db, args, input) (Python: args["input"])
//   memory  optional: true to record the JS heap (and Python's wasm heap) around run()
//   durability  optional: "strict" opens every read-write transaction of run() so on
//           all three sides (Dexie's chromeTransactionDurability, raw IndexedDB's option,
//           Python's chrome_transaction_durability in workloads.py); see strictly()
//
// Only run() is timed, from the call until its promise (or coroutine) resolves. check()
// returns a JSON value that must be equal for all three implementations of a run.
import Dexie from "/vendor/dexie.mjs";
import { exportDB, importInto } from "/vendor/dexie-export-import.mjs";
import {
  STORES,
  applyStats,
  canonical,
  contextCheck,
  deleteNative,
  fingerprint,
  makeChain,
  makeMessages,
  makeNodesFlat,
  makeThread,
  makeThreads,
  makeTree,
  openNative,
  pick,
  receiptRecord,
  requestDone,
  seedNative,
  sessionContext,
  txDone,
  uuid,
} from "./data.mjs";
import { QUERY_WORKLOADS } from "./queries.mjs";

export { STORES, makeRng } from "./data.mjs";

// --- small helpers ----------------------------------------------------------------------

const rawCount = (db, table = "nodes") =>
  requestDone(db.transaction(table, "readonly").objectStore(table).count());

const rawGetAll = (db, table = "nodes") =>
  requestDone(db.transaction(table, "readonly").objectStore(table).getAll());

const sumTs = (rows) => rows.reduce((s, n) => s + n.ts, 0);
const lengthAndSeqSum = (rows) => [rows.length, rows.reduce((s, n) => s + n.seq, 0)];

/** [count, seq sum, turns, total tokens, leaf is the highest seq] of a thread after appends. */
function appendCheck(thread, nodes) {
  let top = null;
  for (const n of nodes) if (!top || n.seq > top.seq) top = n;
  return [
    nodes.length,
    nodes.reduce((s, n) => s + n.seq, 0),
    thread.stats.turns,
    thread.stats.totalTokens,
    top !== null && thread.leafId === top.id,
  ];
}

async function dexieAppendCheck(db, args) {
  const thread = await db.threads.get(args.threadId);
  return appendCheck(thread, await db.nodes.where("threadId").equals(args.threadId).toArray());
}

async function rawAppendCheck(db, args) {
  const tx = db.transaction(["threads", "nodes"], "readonly");
  const thread = await requestDone(tx.objectStore("threads").get(args.threadId));
  const nodes = await requestDone(
    tx.objectStore("nodes").index("threadId").getAll(args.threadId),
  );
  return appendCheck(thread, nodes);
}


// --- eviction helpers ------------------------------------------------------------------

/** `size` threads, each with attachments referenced by one user message apiece. */
function evictData(size, rng) {
  const threads = [];
  const nodes = [];
  const attachments = [];
  const perThread = Math.max(1, Math.floor(size / 5));
  for (let i = 0; i < size; i++) {
    if (i % perThread === 0) threads.push(makeThread(rng, { leafId: null }));
    const thread = threads[threads.length - 1];
    const id = uuid(rng);
    attachments.push({
      id, threadId: thread.id, createdAt: 1_700_000_000_000 + i, kind: "image",
      mime: "image/png", size: 4096, meta: { title: `image ${i}` },
    });
    nodes.push({
      id: uuid(rng), threadId: thread.id, parentId: null, seq: i + 1, ts: 1_700_000_000_000 + i,
      type: "user_message",
      payload: { content: [{ type: "text", text: `look at ${i}` }, { type: "image", attachmentId: id, name: `${i}.png` }] },
    });
  }
  return { seed: { threads, nodes, attachments }, args: {} };
}

/** The oldest records to evict until the total is within `budget` (as panelot plans). */
function planVictims(rows, budget) {
  let total = rows.reduce((sum, r) => sum + (r.deleting ? 0 : r.size), 0);
  const victims = [];
  for (const r of rows) {
    if (total <= budget) break;
    if (r.deleting) continue;
    victims.push(r);
    total -= r.size;
  }
  return victims;
}

/** Mark the node's image/file blocks naming `ids` evicted; true if it changed. */
function markEvicted(node, ids) {
  let changed = false;
  for (const block of node.payload?.content ?? []) {
    if ((block.type === "image" || block.type === "file") && ids.has(block.attachmentId) && block.evicted !== true) {
      block.evicted = true;
      changed = true;
    }
  }
  return changed;
}

/** [evicted, attachments left, nodes with an evicted block]. */
function evictCheck(evicted, left, nodes) {
  const marked = nodes.filter((n) => (n.payload?.content ?? []).some((b) => b.evicted === true)).length;
  return [evicted, left, marked];
}

class NotFound extends Error {}

const BLOB_MIME = "image/png";

/** `n` pseudo-random bytes (the contents do not matter, only that they do not compress). */
function randomBytes(n) {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, i + 65536));
  return out;
}

const blobRecord = (threadId, bytes) => ({
  id: crypto.randomUUID(),
  threadId,
  createdAt: Date.now(),
  kind: "image",
  mime: BLOB_MIME,
  bytes,
  size: bytes.size,
});

const blobCheck = (sizes, count) => [sizes.length, sizes.reduce((s, n) => s + n, 0), count];

// --- Dexie: the operations, written as the Dexie docs would -----------------------------

/** message.append's effect inside a running Dexie transaction (threads, nodes). */
async function dexieAppendIn(db, threadId, type, payload) {
  const thread = await db.threads.get(threadId);
  if (!thread) throw new NotFound(`thread ${threadId}`);
  const parentId = thread.leafId;
  if (parentId !== null) {
    const parent = await db.nodes.get(parentId);
    if (!parent || parent.threadId !== threadId) throw new NotFound(`parent ${parentId}`);
  }
  const last = await db.nodes
    .where("[threadId+seq]")
    .between([threadId, Dexie.minKey], [threadId, Dexie.maxKey])
    .last();
  const now = Date.now();
  const node = {
    id: crypto.randomUUID(),
    threadId,
    parentId,
    seq: (last ? last.seq : 0) + 1,
    ts: now,
    type,
    payload,
  };
  await db.nodes.add(node);
  thread.leafId = node.id;
  thread.updatedAt = now;
  applyStats(thread, type, payload);
  await db.threads.put(thread);
  return { nodeId: node.id, seq: node.seq, leafId: node.id };
}

/**
 * A bus command with its receipt in one transaction: a replay answers the stored
 * response, a new submission runs `effect` and adds the receipt.
 */
async function dexieCommand(db, tables, command, effect, status = "completed") {
  const fp = await fingerprint(command);
  const id = JSON.stringify([command.clientId, command.submissionId]);
  return db.transaction("rw", ["commandReceipts", ...tables], async () => {
    const receipt = await db.commandReceipts.get(id);
    if (receipt) {
      if (receipt.requestFingerprint !== fp) throw new Error("ConflictError");
      return receipt.response;
    }
    const response = await effect();
    await db.commandReceipts.add(receiptRecord(command, fp, response, Date.now(), status));
    return response;
  });
}

async function dexieThreadUpdate(db, threadId, patch) {
  const thread = await db.threads.get(threadId);
  if (!thread) throw new NotFound(`thread ${threadId}`);
  if (thread.deleting) throw new Error("AdmissionError");
  const merged = { ...thread, ...patch, updatedAt: Date.now() };
  await db.threads.put(merged);
  return { thread: merged };
}

/** Children of `parentId` in the thread, by seq (roots: through threadId). */
async function dexieChildren(db, threadId, parentId) {
  const rows =
    parentId === null
      ? (await db.nodes.where("threadId").equals(threadId).toArray()).filter(
          (r) => r.parentId === null,
        )
      : (await db.nodes.where("parentId").equals(parentId).toArray()).filter(
          (r) => r.threadId === threadId,
        );
  return rows.sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const ACTIVE_RUN_STATES = [
  "queued",
  "preparing",
  "running",
  "awaiting_approval",
  "awaiting_interaction",
];
const CASCADE = ["attachments", "runs", "approvals", "interactions"];

// --- plain IndexedDB: hand-written, one request after another ---------------------------

const lastSeqRange = (threadId) => IDBKeyRange.bound([threadId, -Infinity], [threadId, []]);

async function rawAppendIn(tx, threadId, type, payload) {
  const threads = tx.objectStore("threads");
  const nodes = tx.objectStore("nodes");
  const thread = await requestDone(threads.get(threadId));
  if (!thread) throw new NotFound(`thread ${threadId}`);
  const parentId = thread.leafId;
  if (parentId !== null) {
    const parent = await requestDone(nodes.get(parentId));
    if (!parent || parent.threadId !== threadId) throw new NotFound(`parent ${parentId}`);
  }
  const cursor = await requestDone(
    nodes.index("[threadId+seq]").openCursor(lastSeqRange(threadId), "prev"),
  );
  const now = Date.now();
  const node = {
    id: crypto.randomUUID(),
    threadId,
    parentId,
    seq: (cursor ? cursor.value.seq : 0) + 1,
    ts: now,
    type,
    payload,
  };
  nodes.add(node);
  thread.leafId = node.id;
  thread.updatedAt = now;
  applyStats(thread, type, payload);
  await requestDone(threads.put(thread));
  return { nodeId: node.id, seq: node.seq, leafId: node.id };
}

async function rawCommand(db, tables, command, effect, status = "completed") {
  const fp = await fingerprint(command);
  const id = JSON.stringify([command.clientId, command.submissionId]);
  const tx = db.transaction(["commandReceipts", ...tables], "readwrite");
  const done = txDone(tx);
  const receipts = tx.objectStore("commandReceipts");
  const receipt = await requestDone(receipts.get(id));
  let response;
  if (receipt) {
    if (receipt.requestFingerprint !== fp) throw new Error("ConflictError");
    response = receipt.response;
  } else {
    response = await effect(tx);
    receipts.add(receiptRecord(command, fp, response, Date.now(), status));
  }
  await done;
  return response;
}

async function rawThreadUpdate(tx, threadId, patch) {
  const threads = tx.objectStore("threads");
  const thread = await requestDone(threads.get(threadId));
  if (!thread) throw new NotFound(`thread ${threadId}`);
  if (thread.deleting) throw new Error("AdmissionError");
  const merged = { ...thread, ...patch, updatedAt: Date.now() };
  threads.put(merged);
  return { thread: merged };
}

async function rawChildren(tx, threadId, parentId) {
  const nodes = tx.objectStore("nodes");
  const rows =
    parentId === null
      ? (await requestDone(nodes.index("threadId").getAll(threadId))).filter(
          (r) => r.parentId === null,
        )
      : (await requestDone(nodes.index("parentId").getAll(parentId))).filter(
          (r) => r.threadId === threadId,
        );
  return rows.sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function rawPutAll(db, records) {
  const tx = db.transaction("nodes", "readwrite");
  const store = tx.objectStore("nodes");
  for (const r of records) store.put(r);
  return txDone(tx, records.length);
}

// --- shared parts of workloads ---------------------------------------------------------

const CLIENT = "bench-client";

/** Receipt workload: `size` thread.update commands, then the same commands replayed. */
function receiptCommands(args) {
  return args.titles.map((title, i) => ({
    type: "thread.update",
    clientId: CLIENT,
    submissionId: args.submissionIds[i],
    payload: { threadId: args.threadId, patch: { title } },
  }));
}

async function runReceipts(send, args) {
  const commands = receiptCommands(args);
  const first = [];
  for (const c of commands) first.push(await send(c));
  let same = 0;
  for (let i = 0; i < commands.length; i++) {
    const again = await send(commands[i]);
    if (JSON.stringify(again) === JSON.stringify(first[i])) same += 1;
  }
  return same;
}

const receiptCheck = async (threadTitle, receipts, same) => [same, threadTitle, receipts];

// --- change feed: publishing cost (Python only) and cross-context notify ---------------------

/** What observing costs a Python workload: `variants` instead of Dexie/raw (see workloads.py). */
const OBSERVE_VARIANTS = ["off", "on", "live_other", "live_same"];

/** `base`'s data plus a 100-node thread nobody writes (the unrelated live query reads it). */
const withOtherThread = (base, threadIdOf) => (size, rng) => {
  const { seed, args } = base(size, rng);
  const other = makeChain(rng, 100);
  return {
    seed: {
      ...seed,
      threads: [...(seed.threads ?? []), other.thread],
      nodes: [...(seed.nodes ?? []), ...other.nodes],
    },
    args: { ...args, threadId: threadIdOf(args), otherThreadId: other.thread.id },
  };
};

/**
 * live_notify (driven by bench/run.py across two pages, not by bench.measure): a thread of
 * 200 nodes, and `size` messages page A appends to it one at a time while page B's live
 * query on the thread's nodes waits for each new node.
 */
export const LIVE_NOTIFY = {
  name: "live_notify",
  unit: "commits per run",
  sizes: { full: 40, quick: 8 },
  data: (size, rng) => {
    const { thread, nodes } = makeChain(rng, 200);
    return {
      seed: { threads: [thread], nodes },
      args: { threadId: thread.id, messages: makeMessages(rng, size), seeded: nodes.length },
    };
  },
  /** One append in a Dexie transaction; resolves once it committed. */
  dexieAppend: (db, threadId, { type, payload }) =>
    db.transaction("rw", db.threads, db.nodes, () => dexieAppendIn(db, threadId, type, payload)),
  /** The live query's querier: the same read as Python's. */
  dexieNodes: (db, threadId) => () => db.nodes.where("threadId").equals(threadId).toArray(),
};

// --- backup and restore: dexie-export-import's file format --------------------------------
//
// `backup` exports a panelot_v1 database of `size` nodes in threads of varying length
// (branched trees, as makeTree writes them) and attachments as the store writes them
// (a Blob in `bytes`, `size`, `kind`, `mime`, `meta`, `refs` to the user message whose
// image block names it). `restore` imports such a file, made by the addon's exportDB
// before the clock starts, into a database holding other data. The checks are shared
// by both implementations (Python calls them through `window.bench.checks`): they read
// the file, or the database after the restore, and digest every row order-free, with
// each Blob replaced by its type, size and SHA-256.

/**
 * Python and Dexie only. A raw IndexedDB twin would be a third writer and reader of the
 * addon's format (Typeson, streamed JSON), not a floor under the same work, so the
 * table shows "—" for it.
 */
const BACKUP_IMPLS = ["python", "dexie"];

const KiB = 1024;
const MiB = 1024 * KiB;
const BACKUP_BASE_TS = 1_700_000_000_000;

/** What `size` nodes come with: threads, attachments, bytes per attachment. */
function backupShape(size) {
  const full = size >= 10_000;
  return {
    threads: Math.max(2, Math.round(size / 250)),
    attachments: full ? 50 : 3,
    bytes: full ? MiB : 64 * KiB,
  };
}

const byteLabel = (n) => (n >= MiB ? `${n / MiB} MiB` : `${n / KiB} KiB`);

function backupLabel(size) {
  const s = backupShape(size);
  const nodes = `${size.toLocaleString("en-US")} nodes in ${s.threads} threads`;
  return `${nodes} + ${s.attachments} × ${byteLabel(s.bytes)} attachments`;
}

const restoreLabel = (size) =>
  `file of ${backupLabel(size)}, over ${Math.ceil(size / 5).toLocaleString("en-US")} other nodes`;

/** `n` bytes of xorshift32 noise seeded from `rng`: deterministic, incompressible. */
function noiseBytes(rng, n) {
  const words = new Uint32Array(Math.ceil(n / 4));
  let x = (Math.floor(rng() * 0xffffffff) | 1) >>> 0;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x;
  }
  return new Uint8Array(words.buffer, 0, n);
}

/** `total` split into `parts` counts of at least 1, of random weights. */
function splitCounts(rng, total, parts) {
  const weights = Array.from({ length: parts }, () => 0.25 + rng());
  const sum = weights.reduce((s, w) => s + w, 0);
  const counts = weights.map((w) => Math.max(1, Math.floor((total * w) / sum)));
  let left = total - counts.reduce((s, c) => s + c, 0);
  for (let i = 0; left !== 0; i = (i + 1) % parts) {
    if (left > 0) {
      counts[i] += 1;
      left -= 1;
    } else if (counts[i] > 1) {
      counts[i] -= 1;
      left += 1;
    }
  }
  return counts;
}

/**
 * A panelot_v1 database: `nodes` nodes in `threads` threads, and `attachments` image
 * attachments of `bytes` each, referenced by a user message of their thread. Returns
 * `{seed, expected}` (rows per table).
 */
function backupDataset(rng, { nodes: size, threads: threadCount, attachments, bytes }) {
  const threads = [];
  const nodes = [];
  const users = [];
  for (const [i, count] of splitCounts(rng, size, threadCount).entries()) {
    const tree = makeTree(rng, count);
    tree.thread.updatedAt = BACKUP_BASE_TS + (i + 1) * 60_000;
    threads.push(tree.thread);
    nodes.push(...tree.nodes);
    users.push(tree.nodes.filter((n) => n.type === "user_message" && !n.payload.deleted));
  }
  const records = [];
  for (let k = 0; k < attachments; k++) {
    const t = k % threads.length;
    const id = uuid(rng);
    const record = {
      id,
      threadId: threads[t].id,
      createdAt: BACKUP_BASE_TS + k * 1000,
      kind: "image",
      mime: "image/png",
      bytes: new Blob([noiseBytes(rng, bytes)], { type: "image/png" }),
      size: bytes,
      provenance: "user",
      meta: { title: `screenshot ${k}`, w: 1280, h: 800 },
    };
    const node = users[t].length ? pick(rng, users[t]) : null;
    if (node) {
      node.payload.content.push({
        type: "image",
        attachmentId: id,
        mime: "image/png",
        name: `screenshot-${k}.png`,
        w: 1280,
        h: 800,
      });
      record.refs = { nodeIds: [node.id] };
    }
    records.push(record);
  }
  return {
    seed: { threads, nodes, attachments: records },
    expected: { threads: threads.length, nodes: nodes.length, attachments: records.length },
  };
}

/** The data a restore replaces: a fifth of the nodes, a few attachments and receipts. */
function restoreTarget(rng, size) {
  const shape = backupShape(size);
  const { seed } = backupDataset(rng, {
    nodes: Math.ceil(size / 5),
    threads: Math.max(1, Math.round(shape.threads / 5)),
    attachments: Math.max(2, Math.round(shape.attachments / 10)),
    bytes: shape.bytes / 4,
  });
  seed.commandReceipts = Array.from({ length: 20 }, (_, i) => {
    const submissionId = uuid(rng);
    const command = { type: "thread.update", clientId: CLIENT, submissionId, payload: {} };
    return receiptRecord(command, "0".repeat(64), { ok: true }, BACKUP_BASE_TS + i);
  });
  return seed;
}

/** A Dexie instance on `name` with the panelot_v1 schema. */
async function openDexieDb(name) {
  const db = new Dexie(name);
  db.version(1).stores(STORES);
  await db.open();
  return db;
}

/** The addon's export of a scratch database seeded with `seed` (the restore's file). */
async function exportedFile(seed) {
  const name = "bench_restore_source";
  await deleteNative(name);
  const native = await openNative(name);
  try {
    await seedNative(native, seed);
  } finally {
    native.close();
  }
  const db = await openDexieDb(name);
  try {
    return await exportDB(db);
  } finally {
    db.close();
    await deleteNative(name);
  }
}

const hex = (buffer) =>
  Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
const sha256 = async (data) => hex(await crypto.subtle.digest("SHA-256", data));

function fromBase64(text) {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(text);
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** The stand-in of a Blob's contents in a digested row. */
const blobDigest = async (type, bytes) => ({
  blob: type,
  size: bytes.byteLength,
  sha256: await sha256(bytes),
});

/**
 * The order-free summary both implementations must agree on: rows per table (all of
 * panelot_v1's), the bytes of every attachment, and one SHA-256 over every table's rows
 * as canonical JSON, sorted. `tables` maps a table to its rows, each Blob already
 * replaced by blobDigest's stand-in. Throws if the rows are not the `expected` counts.
 */
async function digestTables(tables, expected) {
  const rows = {};
  const texts = [];
  let attachmentBytes = 0;
  for (const name of Object.keys(STORES).sort()) {
    const list = tables[name] ?? [];
    rows[name] = list.length;
    const lines = list.map(canonical).sort();
    texts.push(`${name}\n${lines.join("\n")}`);
    if (name === "attachments") for (const r of list) attachmentBytes += r.bytes?.size ?? 0;
  }
  for (const name of Object.keys(STORES)) {
    if (rows[name] !== (expected[name] ?? 0)) {
      throw new Error(`${name}: ${rows[name]} rows, expected ${expected[name] ?? 0}`);
    }
  }
  const sha = await sha256(new TextEncoder().encode(texts.join("\n\n")));
  return { rows, attachmentBytes, sha256: sha.slice(0, 16) };
}

/** The check of an exported file: its rows, Typeson's blob2 decoded back. */
export async function backupFileCheck(file, expected) {
  const doc = JSON.parse(await file.text());
  const listed = Object.fromEntries(doc.data.tables.map((t) => [t.name, t.rowCount]));
  const tables = {};
  for (const { tableName, inbound, rows } of doc.data.data) {
    if (!inbound) throw new Error(`${tableName}: panelot_v1 has inbound keys only`);
    if (rows.length !== listed[tableName]) {
      throw new Error(`${tableName}: ${rows.length} rows, the header says ${listed[tableName]}`);
    }
    tables[tableName] = await Promise.all(
      rows.map(async (row) => {
        const types = row.$types;
        if (!types) return row;
        const { $types, ...value } = row;
        for (const [path, kind] of Object.entries(types)) {
          // The addon's Typeson marks every array so; it stays the array it is.
          if (kind === "arrayNonindexKeys" && Array.isArray(Dexie.getByKeyPath(value, path))) {
            continue;
          }
          if (kind !== "blob2" || path.includes(".")) {
            throw new Error(`${tableName}: $types ${path}: ${kind}`);
          }
          const { type, data } = value[path];
          value[path] = await blobDigest(type, fromBase64(data));
        }
        return value;
      }),
    );
  }
  return digestTables(tables, expected);
}

/**
 * The check of a restored database (read with plain IndexedDB): the restore's own
 * receipt left out (Python's restore is a bus command and writes one; the addon's
 * import writes none).
 */
export async function restoredDbCheck(dbName, expected) {
  const db = await openNative(dbName);
  const names = Object.keys(STORES);
  let all;
  try {
    const tx = db.transaction(names, "readonly");
    all = await Promise.all(names.map((n) => requestDone(tx.objectStore(n).getAll())));
  } finally {
    db.close();
  }
  const tables = Object.fromEntries(names.map((n, i) => [n, all[i]]));
  tables.commandReceipts = tables.commandReceipts.filter((r) => r.commandType !== "backup.restore");
  for (const record of tables.attachments) {
    if (record.bytes instanceof Blob) {
      const bytes = new Uint8Array(await record.bytes.arrayBuffer());
      record.bytes = await blobDigest(record.bytes.type, bytes);
    }
  }
  return digestTables(tables, expected);
}

/** The shared checks as Python calls them (JSON in, JSON out: no PyProxy crosses). */
export const SHARED_CHECKS = {
  backupFile: async (file, expectedJson) =>
    JSON.stringify(await backupFileCheck(file, JSON.parse(expectedJson))),
  restoredDb: async (dbName, expectedJson) =>
    JSON.stringify(await restoredDbCheck(dbName, JSON.parse(expectedJson))),
};

// --- workloads --------------------------------------------------------------------------

/**
 * `workload` again, named `<name>_strict`, with every read-write transaction of its run()
 * committed with durability "strict" (reported committed once flushed to disk) instead
 * of Chrome's default (relaxed since Chrome 121): what strict costs, on all three sides.
 */
function strictly(workload) {
  const raw = workload.raw;
  return {
    ...workload,
    name: `${workload.name}_strict`,
    durability: "strict",
    raw: {
      ...raw,
      run: (db, args, ctx) => {
        // The plain IDBDatabase's transactions, each opened with {durability: "strict"}.
        const strictDb = { transaction: (stores, mode) => db.transaction(stores, mode, { durability: "strict" }) };
        return raw.run(strictDb, args, ctx);
      },
    },
  };
}

export const WORKLOADS = [
  {
    name: "append",
    unit: "appends",
    sizes: { full: 1_000, quick: 50 },
    data: (size, rng) => {
      const thread = makeThread(rng);
      return { seed: { threads: [thread] }, args: { threadId: thread.id, messages: makeMessages(rng, size) } };
    },
    dexie: {
      run: async (db, args) => {
        for (const { type, payload } of args.messages) {
          await db.transaction("rw", db.threads, db.nodes, () =>
            dexieAppendIn(db, args.threadId, type, payload),
          );
        }
      },
      check: dexieAppendCheck,
    },
    raw: {
      run: async (db, args) => {
        for (const { type, payload } of args.messages) {
          const tx = db.transaction(["threads", "nodes"], "readwrite");
          const done = txDone(tx);
          await rawAppendIn(tx, args.threadId, type, payload);
          await done;
        }
      },
      check: rawAppendCheck,
    },
  },

  {
    name: "append_bus",
    unit: "appends",
    sizes: { full: 1_000, quick: 50 },
    data: (size, rng) => {
      const thread = makeThread(rng);
      return {
        seed: { threads: [thread] },
        args: {
          threadId: thread.id,
          messages: makeMessages(rng, size),
          submissionIds: Array.from({ length: size }, () => uuid(rng)),
        },
      };
    },
    dexie: {
      run: async (db, args) => {
        for (const [i, { type, payload }] of args.messages.entries()) {
          const command = {
            type: "message.append",
            clientId: CLIENT,
            submissionId: args.submissionIds[i],
            payload: { threadId: args.threadId, type, payload },
          };
          await dexieCommand(db, ["threads", "nodes"], command, () =>
            dexieAppendIn(db, args.threadId, type, payload),
          );
        }
      },
      check: async (db, args) => [...(await dexieAppendCheck(db, args)), await db.commandReceipts.count()],
    },
    raw: {
      run: async (db, args) => {
        for (const [i, { type, payload }] of args.messages.entries()) {
          const command = {
            type: "message.append",
            clientId: CLIENT,
            submissionId: args.submissionIds[i],
            payload: { threadId: args.threadId, type, payload },
          };
          await rawCommand(db, ["threads", "nodes"], command, (tx) =>
            rawAppendIn(tx, args.threadId, type, payload),
          );
        }
      },
      check: async (db, args) => [
        ...(await rawAppendCheck(db, args)),
        await rawCount(db, "commandReceipts"),
      ],
    },
  },

  {
    name: "bulk",
    unit: "nodes",
    sizes: { full: 10_000, quick: 300 },
    data: (size, rng) => {
      const { thread, nodes } = makeChain(rng, size);
      return { seed: {}, args: { thread, nodes } };
    },
    dexie: {
      run: (db, args) =>
        db.transaction("rw", db.threads, db.nodes, async () => {
          await db.threads.add(args.thread);
          await db.nodes.bulkAdd(args.nodes);
        }),
      check: async (db) => [await db.threads.count(), await db.nodes.count()],
    },
    raw: {
      run: (db, args) => {
        const tx = db.transaction(["threads", "nodes"], "readwrite");
        tx.objectStore("threads").add(args.thread);
        const nodes = tx.objectStore("nodes");
        for (const n of args.nodes) nodes.add(n);
        return txDone(tx);
      },
      check: async (db) => [await rawCount(db, "threads"), await rawCount(db, "nodes")],
    },
  },

  {
    name: "context",
    unit: "nodes",
    sizes: { full: 10_000, quick: 300 },
    data: (size, rng) => {
      const { thread, nodes } = makeTree(rng, size);
      return { seed: { threads: [thread], nodes }, args: { threadId: thread.id } };
    },
    dexie: {
      run: async (db, args) => {
        const [thread, nodes] = await db.transaction("r", db.threads, db.nodes, () =>
          Promise.all([
            db.threads.get(args.threadId),
            db.nodes.where("threadId").equals(args.threadId).toArray(),
          ]),
        );
        return sessionContext(thread, nodes);
      },
      check: (db, args, ctx) => contextCheck(ctx),
    },
    raw: {
      run: async (db, args) => {
        const tx = db.transaction(["threads", "nodes"], "readonly");
        const [thread, nodes] = await Promise.all([
          requestDone(tx.objectStore("threads").get(args.threadId)),
          requestDone(tx.objectStore("nodes").index("threadId").getAll(args.threadId)),
        ]);
        return sessionContext(thread, nodes);
      },
      check: (db, args, ctx) => contextCheck(ctx),
    },
  },

  {
    name: "walk",
    unit: "steps",
    sizes: { full: 2_000, quick: 100 },
    data: (size, rng) => {
      const { thread, nodes } = makeChain(rng, size);
      const other = makeChain(rng, Math.ceil(size / 4)).nodes;
      return { seed: { nodes: [...nodes, ...other] }, args: { leafId: thread.leafId } };
    },
    dexie: {
      run: (db, args) =>
        db.transaction("r", db.nodes, async () => {
          let steps = 0;
          let last = null;
          for (let id = args.leafId; id !== null; ) {
            const node = await db.nodes.get(id);
            steps += 1;
            last = node.id;
            id = node.parentId;
          }
          return [steps, last];
        }),
      check: (db, args, result) => result,
    },
    raw: {
      run: async (db, args) => {
        const nodes = db.transaction("nodes", "readonly").objectStore("nodes");
        let steps = 0;
        let last = null;
        for (let id = args.leafId; id !== null; ) {
          const node = await requestDone(nodes.get(id));
          steps += 1;
          last = node.id;
          id = node.parentId;
        }
        return [steps, last];
      },
      check: (db, args, result) => result,
    },
  },

  {
    name: "list",
    unit: "threads",
    sizes: { full: 1_000, quick: 100 },
    data: (size, rng) => ({ seed: { threads: makeThreads(rng, size) }, args: { limit: 50 } }),
    dexie: {
      run: async (db, args) => {
        const rows = await db.threads.orderBy("updatedAt").reverse().toArray();
        const active = rows.filter((t) => !t.archived);
        return [...active.filter((t) => t.pinned), ...active.filter((t) => !t.pinned)].slice(
          0,
          args.limit,
        );
      },
      check: (db, args, rows) => rows.map((t) => t.id),
    },
    raw: {
      run: async (db, args) => {
        const tx = db.transaction("threads", "readonly");
        const rows = await requestDone(tx.objectStore("threads").index("updatedAt").getAll());
        const pinned = [];
        const rest = [];
        for (let i = rows.length - 1; i >= 0; i--) {
          const t = rows[i];
          if (!t.archived) (t.pinned ? pinned : rest).push(t);
        }
        return pinned.concat(rest).slice(0, args.limit);
      },
      check: (db, args, rows) => rows.map((t) => t.id),
    },
  },

  {
    name: "branch",
    unit: "switches",
    sizes: { full: 200, quick: 10 },
    data: (size, rng) => {
      const { thread, nodes } = makeTree(rng, 300, { tombstones: 0 });
      const kids = new Map();
      for (const n of nodes) kids.set(n.parentId, (kids.get(n.parentId) ?? 0) + 1);
      const branched = nodes.filter((n) => kids.get(n.parentId) > 1);
      const targets = Array.from({ length: size }, () => branched[Math.floor(rng() * branched.length)].id);
      return { seed: { threads: [thread], nodes }, args: { threadId: thread.id, targets } };
    },
    dexie: {
      run: async (db, args) => {
        const leaves = [];
        for (const nodeId of args.targets) {
          const leaf = await db.transaction("rw", db.threads, db.nodes, async () => {
            const thread = await db.threads.get(args.threadId);
            const node = await db.nodes.get(nodeId);
            if (!thread || !node || node.threadId !== args.threadId) throw new NotFound(nodeId);
            const sibs = await dexieChildren(db, args.threadId, node.parentId);
            const at = sibs.findIndex((s) => s.id === nodeId);
            let current = sibs[(at + 1) % sibs.length].id;
            for (;;) {
              const kids = await dexieChildren(db, args.threadId, current);
              if (kids.length === 0) break;
              current = kids[kids.length - 1].id;
            }
            await db.threads.put({ ...thread, leafId: current, updatedAt: Date.now() });
            return current;
          });
          leaves.push(leaf);
        }
        return leaves;
      },
      check: (db, args, leaves) => leaves,
    },
    raw: {
      run: async (db, args) => {
        const leaves = [];
        for (const nodeId of args.targets) {
          const tx = db.transaction(["threads", "nodes"], "readwrite");
          const done = txDone(tx);
          const threads = tx.objectStore("threads");
          const thread = await requestDone(threads.get(args.threadId));
          const node = await requestDone(tx.objectStore("nodes").get(nodeId));
          if (!thread || !node || node.threadId !== args.threadId) throw new NotFound(nodeId);
          const sibs = await rawChildren(tx, args.threadId, node.parentId);
          const at = sibs.findIndex((s) => s.id === nodeId);
          let current = sibs[(at + 1) % sibs.length].id;
          for (;;) {
            const kids = await rawChildren(tx, args.threadId, current);
            if (kids.length === 0) break;
            current = kids[kids.length - 1].id;
          }
          threads.put({ ...thread, leafId: current, updatedAt: Date.now() });
          await done;
          leaves.push(current);
        }
        return leaves;
      },
      check: (db, args, leaves) => leaves,
    },
  },

  {
    name: "receipt",
    unit: "commands (+ as many replays)",
    sizes: { full: 1_000, quick: 30 },
    data: (size, rng) => {
      const thread = makeThread(rng);
      return {
        seed: { threads: [thread] },
        args: {
          threadId: thread.id,
          titles: Array.from({ length: size }, (_, i) => `title ${i}`),
          submissionIds: Array.from({ length: size }, () => uuid(rng)),
        },
      };
    },
    dexie: {
      run: (db, args) =>
        runReceipts(
          (c) =>
            dexieCommand(db, ["threads"], c, () =>
              dexieThreadUpdate(db, c.payload.threadId, c.payload.patch),
            ),
          args,
        ),
      check: async (db, args, same) =>
        receiptCheck((await db.threads.get(args.threadId)).title, await db.commandReceipts.count(), same),
    },
    raw: {
      run: (db, args) =>
        runReceipts(
          (c) =>
            rawCommand(db, ["threads"], c, (tx) =>
              rawThreadUpdate(tx, c.payload.threadId, c.payload.patch),
            ),
          args,
        ),
      check: async (db, args, same) => {
        const tx = db.transaction("threads", "readonly");
        const thread = await requestDone(tx.objectStore("threads").get(args.threadId));
        return receiptCheck(thread.title, await rawCount(db, "commandReceipts"), same);
      },
    },
  },

  {
    name: "delete",
    unit: "nodes",
    sizes: { full: 5_000, quick: 200 },
    data: (size, rng) => {
      const { thread, nodes } = makeChain(rng, size);
      const other = makeChain(rng, 100);
      const tid = thread.id;
      const attachments = [];
      for (let i = 0; i < 5; i++) {
        attachments.push({ id: uuid(rng), threadId: tid, createdAt: 1_700_000_000_000 + i, mime: "image/png", size: 2048, name: `a${i}.png` });
      }
      attachments.push({ id: uuid(rng), threadId: other.thread.id, createdAt: 1, mime: "text/plain", size: 10, name: "keep.txt" });
      const runs = [
        { id: uuid(rng), threadId: tid, state: "completed", submissionId: uuid(rng), updatedAt: 1 },
        { id: uuid(rng), threadId: tid, state: "running", submissionId: uuid(rng), updatedAt: 2 },
      ];
      return {
        seed: { threads: [thread, other.thread], nodes: [...nodes, ...other.nodes], attachments, runs },
        args: { threadId: tid, submissionId: uuid(rng) },
      };
    },
    dexie: {
      run: async (db, args) => {
        const command = { type: "thread.delete", clientId: CLIENT, submissionId: args.submissionId, payload: { threadId: args.threadId } };
        const tid = args.threadId;
        const replay = await db.commandReceipts.get(JSON.stringify([CLIENT, args.submissionId]));
        if (replay) return replay.response;
        const now = Date.now();
        await db.transaction("rw", db.threads, db.runs, async () => {
          const thread = await db.threads.get(tid);
          if (!thread) throw new NotFound(tid);
          await db.threads.put({ ...thread, deleting: true });
          for (const state of ACTIVE_RUN_STATES) {
            await db.runs.where("[threadId+state]").equals([tid, state]).modify({ state: "cancelled", updatedAt: now });
          }
        });
        return dexieCommand(db, ["threads", "nodes", ...CASCADE], command, async () => {
          if (!(await db.threads.get(tid))) throw new NotFound(tid);
          const deleted = { nodes: await db.nodes.where("threadId").equals(tid).delete() };
          for (const table of CASCADE) deleted[table] = await db.table(table).where("threadId").equals(tid).delete();
          await db.threads.delete(tid);
          return { threadId: tid, deleted };
        }, "acknowledged");
      },
      check: async (db, args, response) => [
        response.deleted,
        await db.nodes.count(),
        await db.threads.count(),
        await db.attachments.count(),
        (await db.commandReceipts.toArray()).map((r) => r.status),
      ],
    },
    raw: {
      run: async (db, args) => {
        const command = { type: "thread.delete", clientId: CLIENT, submissionId: args.submissionId, payload: { threadId: args.threadId } };
        const tid = args.threadId;
        const replay = await requestDone(
          db.transaction("commandReceipts", "readonly").objectStore("commandReceipts").get(JSON.stringify([CLIENT, args.submissionId])),
        );
        if (replay) return replay.response;
        const now = Date.now();
        const mark = db.transaction(["threads", "runs"], "readwrite");
        const marked = txDone(mark);
        const thread = await requestDone(mark.objectStore("threads").get(tid));
        if (!thread) throw new NotFound(tid);
        mark.objectStore("threads").put({ ...thread, deleting: true });
        const runs = mark.objectStore("runs");
        for (const state of ACTIVE_RUN_STATES) {
          for (const run of await requestDone(runs.index("[threadId+state]").getAll([tid, state]))) {
            runs.put({ ...run, state: "cancelled", updatedAt: now });
          }
        }
        await marked;
        return rawCommand(db, ["threads", "nodes", ...CASCADE], command, async (tx) => {
          if (!(await requestDone(tx.objectStore("threads").get(tid)))) throw new NotFound(tid);
          const deleted = {};
          for (const table of ["nodes", ...CASCADE]) {
            const store = tx.objectStore(table);
            const keys = await requestDone(store.index("threadId").getAllKeys(tid));
            for (const key of keys) store.delete(key);
            deleted[table] = keys.length;
          }
          tx.objectStore("threads").delete(tid);
          return { threadId: tid, deleted };
        }, "acknowledged");
      },
      check: async (db, args, response) => [
        response.deleted,
        await rawCount(db, "nodes"),
        await rawCount(db, "threads"),
        await rawCount(db, "attachments"),
        (await rawGetAll(db, "commandReceipts")).map((r) => r.status),
      ],
    },
  },

  {
    name: "blob",
    unit: "× (1 MiB put + read)",
    sizes: { full: 50, quick: 3 },
    data: (size, rng) => {
      const thread = makeThread(rng);
      return {
        seed: { threads: [thread] },
        args: { threadId: thread.id, times: size, bytes: 1 << 20, seed: 7 },
      };
    },
    dexie: {
      setup: (db, args) => randomBytes(args.bytes),
      run: async (db, args, data) => {
        const sizes = [];
        for (let i = 0; i < args.times; i++) {
          const id = await db.transaction("rw", db.threads, db.attachments, async () => {
            if (!(await db.threads.get(args.threadId))) throw new NotFound(args.threadId);
            const bytes = new Blob([data], { type: BLOB_MIME });
            return db.attachments.add(blobRecord(args.threadId, bytes));
          });
          const record = await db.attachments.get(id);
          sizes.push((await record.bytes.arrayBuffer()).byteLength);
        }
        return sizes;
      },
      check: async (db, args, sizes) => blobCheck(sizes, await db.attachments.count()),
    },
    raw: {
      setup: (db, args) => randomBytes(args.bytes),
      run: async (db, args, data) => {
        const sizes = [];
        for (let i = 0; i < args.times; i++) {
          const tx = db.transaction(["threads", "attachments"], "readwrite");
          const done = txDone(tx);
          if (!(await requestDone(tx.objectStore("threads").get(args.threadId)))) {
            throw new NotFound(args.threadId);
          }
          const record = blobRecord(args.threadId, new Blob([data], { type: BLOB_MIME }));
          tx.objectStore("attachments").add(record);
          await done;
          const read = db.transaction("attachments", "readonly").objectStore("attachments");
          const stored = await requestDone(read.get(record.id));
          sizes.push((await stored.bytes.arrayBuffer()).byteLength);
        }
        return sizes;
      },
      check: async (db, args, sizes) => blobCheck(sizes, await rawCount(db, "attachments")),
    },
  },

  {
    // Budget eviction, both steps: plan by createdAt, mark the referencing nodes
    // `evicted` and the records `deleting` (without their Blob) in one transaction,
    // then delete the marked records. The records carry `size` and no Blob: eviction
    // never reads a Blob's contents, so none are needed to measure it.
    name: "evict",
    unit: "attachments",
    sizes: { full: 500, quick: 20 },
    data: (size, rng) => evictData(size, rng),
    dexie: {
      run: async (db) => {
        const rows = await db.attachments.orderBy("createdAt").toArray();
        const victims = planVictims(rows, 0);
        const ids = new Set(victims.map((r) => r.id));
        await db.transaction("rw", db.nodes, db.attachments, async () => {
          for (const threadId of new Set(victims.map((r) => r.threadId))) {
            const nodes = await db.nodes.where("threadId").equals(threadId).toArray();
            await db.nodes.bulkPut(nodes.filter((n) => markEvicted(n, ids)));
          }
          await db.attachments.bulkPut(victims.map((r) => ({ ...r, deleting: true, bytes: null })));
        });
        return db.transaction("rw", db.attachments, async () => {
          const marked = await db.attachments.filter((r) => r.deleting === true).primaryKeys();
          await db.attachments.bulkDelete(marked);
          return marked.length;
        });
      },
      check: async (db, args, evicted) =>
        evictCheck(evicted, await db.attachments.count(), await db.nodes.toArray()),
    },
    raw: {
      run: async (db) => {
        const read = db.transaction("attachments", "readonly").objectStore("attachments");
        const rows = await requestDone(read.index("createdAt").getAll());
        const victims = planVictims(rows, 0);
        const ids = new Set(victims.map((r) => r.id));
        const tx = db.transaction(["nodes", "attachments"], "readwrite");
        const done = txDone(tx);
        const nodes = tx.objectStore("nodes");
        for (const threadId of new Set(victims.map((r) => r.threadId))) {
          const list = await requestDone(nodes.index("threadId").getAll(threadId));
          for (const n of list) if (markEvicted(n, ids)) nodes.put(n);
        }
        const atts = tx.objectStore("attachments");
        for (const r of victims) atts.put({ ...r, deleting: true, bytes: null });
        await done;
        const tx2 = db.transaction("attachments", "readwrite");
        const done2 = txDone(tx2);
        const store = tx2.objectStore("attachments");
        const all = await requestDone(store.getAll());
        const marked = all.filter((r) => r.deleting === true).map((r) => r.id);
        for (const id of marked) store.delete(id);
        await done2;
        return marked.length;
      },
      check: async (db, args, evicted) => {
        const tx = db.transaction(["nodes", "attachments"], "readonly");
        const count = await requestDone(tx.objectStore("attachments").count());
        const nodes = await requestDone(tx.objectStore("nodes").getAll());
        return evictCheck(evicted, count, nodes);
      },
    },
  },

  // --- storage-layer micro workloads (panelot.idb against Dexie, no tree logic) ------------

  {
    name: "bulk_put",
    unit: "nodes",
    sizes: { full: 10_000, quick: 300 },
    data: (size, rng) => ({ seed: {}, args: { nodes: makeNodesFlat(rng, size) } }),
    dexie: {
      run: (db, args) => db.nodes.bulkPut(args.nodes),
      check: (db) => db.nodes.count(),
    },
    raw: {
      run: (db, args) => rawPutAll(db, args.nodes),
      check: (db) => rawCount(db),
    },
  },

  {
    name: "get_then_put",
    unit: "records",
    sizes: { full: 2_000, quick: 100 },
    data: (size, rng) => {
      const nodes = makeNodesFlat(rng, size);
      return { seed: { nodes }, args: { ids: nodes.map((n) => n.id) } };
    },
    dexie: {
      run: (db, args) =>
        db.transaction("rw", db.nodes, async () => {
          for (const id of args.ids) {
            const node = await db.nodes.get(id);
            node.ts += 1;
            await db.nodes.put(node);
          }
        }),
      check: async (db) => sumTs(await db.nodes.toArray()),
    },
    raw: {
      run: (db, args) => {
        const tx = db.transaction("nodes", "readwrite");
        const store = tx.objectStore("nodes");
        const ids = args.ids;
        let i = 0;
        const step = () => {
          if (i === ids.length) return;
          const get = store.get(ids[i++]);
          get.onsuccess = () => {
            const node = get.result;
            node.ts += 1;
            store.put(node).onsuccess = step;
          };
        };
        step();
        return txDone(tx, ids.length);
      },
      check: async (db) => sumTs(await rawGetAll(db)),
    },
  },

  {
    name: "read_by_index",
    unit: "nodes",
    sizes: { full: 10_000, quick: 300 },
    data: (size, rng) => {
      const nodes = makeNodesFlat(rng, size);
      // A second, smaller thread, so that the index has something to skip.
      const other = makeNodesFlat(rng, Math.ceil(size / 10));
      return { seed: { nodes: [...nodes, ...other] }, args: { threadId: nodes[0].threadId } };
    },
    dexie: {
      run: (db, args) => db.nodes.where("threadId").equals(args.threadId).toArray(),
      check: (db, args, rows) => lengthAndSeqSum(rows),
    },
    raw: {
      run: (db, args) =>
        requestDone(
          db
            .transaction("nodes", "readonly")
            .objectStore("nodes")
            .index("threadId")
            .getAll(args.threadId),
        ),
      check: (db, args, rows) => lengthAndSeqSum(rows),
    },
  },
  // --- change feed: the same Python workload with observe off / on / a live query open ---

  {
    name: "observe_append",
    unit: "appends",
    sizes: { full: 1_000, quick: 100 },
    variants: [...OBSERVE_VARIANTS, "interleaved"],
    data: withOtherThread(
      (size, rng) => {
        const thread = makeThread(rng);
        return { seed: { threads: [thread] }, args: { threadId: thread.id, messages: makeMessages(rng, size) } };
      },
      (args) => args.threadId,
    ),
  },

  {
    name: "observe_bulk_put",
    unit: "nodes",
    sizes: { full: 10_000, quick: 300 },
    variants: OBSERVE_VARIANTS,
    data: withOtherThread(
      (size, rng) => ({ seed: {}, args: { nodes: makeNodesFlat(rng, size) } }),
      (args) => args.nodes[0].threadId,
    ),
  },
  ...QUERY_WORKLOADS,

  // --- whole-database backup and restore (no raw IndexedDB twin: see BACKUP_IMPLS) --------

  {
    // Python: store.export_backup() (the backup.export query, settings section
    // included); Dexie: the addon's exportDB(db). Both read every table in one
    // transaction and build a Blob of JSON with each attachment as base64.
    name: "backup",
    unit: "nodes",
    label: backupLabel,
    sizes: { full: 10_000, quick: 200 },
    impls: BACKUP_IMPLS,
    memory: true,
    data: (size, rng) => {
      const { seed, expected } = backupDataset(rng, { nodes: size, ...backupShape(size) });
      return { seed, args: { expected } };
    },
    dexie: {
      run: (db) => exportDB(db),
      check: (db, args, file) => backupFileCheck(file, args.expected),
    },
  },

  {
    // The addon's file of the `backup` database, made before the clock starts, replaces
    // a database holding other data (a fifth as many nodes, other attachments, receipts).
    // Python: store.restore_backup(file) (read and check the whole file, then the
    // backup.restore command: clear every table and write the rows in one transaction,
    // with its receipt). Dexie: the addon's importInto(db, file, {clearTablesBeforeImport})
    // into the open database, which is what replacing everything means there; importDB
    // would create a database from the file's schema, a different operation and none of
    // the clearing. acceptNameDiff: the file comes from another database (Python accepts
    // that as well). The addon clears each table in a transaction of its own, then
    // writes in one; it checks no record.
    name: "restore",
    unit: "nodes",
    label: restoreLabel,
    sizes: { full: 10_000, quick: 200 },
    impls: BACKUP_IMPLS,
    memory: true,
    data: (size, rng) => {
      const { seed: source, expected } = backupDataset(rng, { nodes: size, ...backupShape(size) });
      return {
        seed: restoreTarget(rng, size),
        source,
        args: { expected, submissionId: uuid(rng) },
      };
    },
    input: ({ source }) => exportedFile(source),
    dexie: {
      setup: (db, args, file) => file,
      run: (db, args, file) =>
        importInto(db, file, { clearTablesBeforeImport: true, acceptNameDiff: true }),
      check: (db, args) => restoredDbCheck(db.name, args.expected),
    },
  },
];

// What strict durability costs: append (one transaction per message) and bulk (one
// transaction of 10,000 nodes) again, with every read-write transaction strict.
WORKLOADS.push(...["append", "bulk"].map((n) => strictly(WORKLOADS.find((w) => w.name === n))));
