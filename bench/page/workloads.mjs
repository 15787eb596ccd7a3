// Benchmark workloads: one entry per workload, each with three implementations.
//
// To add a workload, append an object to WORKLOADS:
//
//   name    key in bench/results/*.json
//   sizes   {full, quick}: the size handed to data() (quick is the smoke-test size)
//   data    (size, rng) => plain JSON data, identical for all three implementations
//           (Python receives it through JSON; generating it is not timed)
//   python  Python source defining `async def run(db, data, ctx)` (timed) and optionally
//           `async def setup(db, data)` (returns ctx) and `async def check(db, data, result)`;
//           `db` is an open panelot.idb Database
//   dexie   {setup?, run, check?} with the same signatures; `db` is an open Dexie instance
//   raw     {setup?, run, check?}; `db` is an open IDBDatabase
//
// Only run() is timed, from the call until its promise (or coroutine) resolves. check()
// returns a JSON value that must be equal for all three implementations of a run.

/** The panelot_v1 schema, verbatim from py_src/panelot/schema.py (checked at startup). */
export const STORES = {
  threads: "id, updatedAt, folderId, archived, pinned",
  nodes: "id, threadId, [threadId+seq], parentId",
  attachments: "id, threadId, createdAt",
  skills: "id, name, enabled, sourceRef",
  memories: "id, key, updatedAt",
  runs: "id, threadId, [threadId+state], submissionId, updatedAt",
  commandReceipts: "id, [clientId+submissionId], status, createdAt, expiresAt",
  approvals: "id, threadId, runId, [threadId+status], requestedAt",
  interactions: "id, threadId, runId, [threadId+status], requestedAt",
  plugins: "id, name, enabled, updatedAt",
  pluginAssets: "id, pluginId, [pluginId+path], kind, createdAt",
};

/** Seeded PRNG (mulberry32): returns floats in [0, 1). */
export function makeRng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEX = "0123456789abcdef";
const WORDS = (
  "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " +
  "incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud " +
  "exercitation ullamco laboris nisi aliquip ex ea commodo consequat"
).split(" ");

function uuid(rng) {
  let s = "";
  for (let i = 0; i < 32; i++) {
    s += HEX[Math.floor(rng() * 16)];
    if (i === 7 || i === 11 || i === 15 || i === 19) s += "-";
  }
  return s;
}

function text(rng, length = 300) {
  let s = "";
  while (s.length < length) s += WORDS[Math.floor(rng() * WORDS.length)] + " ";
  return s.slice(0, length);
}

/** `count` seed-shaped nodes of one thread, each the child of the previous one. */
export function makeNodes(rng, count, threadId = uuid(rng)) {
  const nodes = [];
  let parentId = null;
  for (let seq = 0; seq < count; seq++) {
    const id = uuid(rng);
    nodes.push({
      id,
      threadId,
      parentId,
      seq,
      ts: 1_700_000_000_000 + seq * 1000,
      type: "user_message",
      payload: { content: [{ type: "text", text: text(rng) }] },
    });
    parentId = id;
  }
  return nodes;
}

// --- plain IndexedDB helpers ------------------------------------------------------------

/** Resolve with a request's result. */
const requestDone = (req) =>
  new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });

/** Resolve when a transaction commits. */
const txDone = (tx, value) =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve(value);
    tx.onerror = tx.onabort = () => reject(tx.error ?? new Error("transaction aborted"));
  });

function rawPutAll(db, records) {
  const tx = db.transaction("nodes", "readwrite");
  const store = tx.objectStore("nodes");
  for (const r of records) store.put(r);
  return txDone(tx, records.length);
}

const rawGetAll = (db) =>
  requestDone(db.transaction("nodes", "readonly").objectStore("nodes").getAll());

const rawCount = (db) =>
  requestDone(db.transaction("nodes", "readonly").objectStore("nodes").count());

const sumTs = (rows) => rows.reduce((s, n) => s + n.ts, 0);
const lengthAndSeqSum = (rows) => [rows.length, rows.reduce((s, n) => s + n.seq, 0)];

// --- workloads --------------------------------------------------------------------------

export const WORKLOADS = [
  {
    name: "bulk_put",
    sizes: { full: 10_000, quick: 500 },
    data: (size, rng) => ({ nodes: makeNodes(rng, size) }),
    python: String.raw`
async def run(db, data, ctx):
    await db.table("nodes").bulk_put(data["nodes"])

async def check(db, data, result):
    return await db.table("nodes").count()
`,
    dexie: {
      run: (db, data) => db.nodes.bulkPut(data.nodes),
      check: (db) => db.nodes.count(),
    },
    raw: {
      run: (db, data) => rawPutAll(db, data.nodes),
      check: (db) => rawCount(db),
    },
  },

  {
    name: "get_then_put",
    sizes: { full: 2_000, quick: 100 },
    data: (size, rng) => ({ nodes: makeNodes(rng, size) }),
    python: String.raw`
async def setup(db, data):
    await db.table("nodes").bulk_put(data["nodes"])
    return [n["id"] for n in data["nodes"]]

async def run(db, data, ids):
    async def body(tx):
        nodes = tx.table("nodes")
        for node_id in ids:
            node = await nodes.get(node_id)
            node["ts"] += 1
            await nodes.put(node)

    await db.transaction("rw", ["nodes"], body)

async def check(db, data, result):
    return sum(n["ts"] for n in await db.table("nodes").to_list())
`,
    dexie: {
      setup: async (db, data) => {
        await db.nodes.bulkPut(data.nodes);
        return data.nodes.map((n) => n.id);
      },
      run: (db, data, ids) =>
        db.transaction("rw", db.nodes, async () => {
          for (const id of ids) {
            const node = await db.nodes.get(id);
            node.ts += 1;
            await db.nodes.put(node);
          }
        }),
      check: async (db) => sumTs(await db.nodes.toArray()),
    },
    raw: {
      setup: async (db, data) => {
        await rawPutAll(db, data.nodes);
        return data.nodes.map((n) => n.id);
      },
      run: (db, data, ids) => {
        const tx = db.transaction("nodes", "readwrite");
        const store = tx.objectStore("nodes");
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
    sizes: { full: 10_000, quick: 500 },
    data: (size, rng) => {
      const nodes = makeNodes(rng, size);
      // A second, smaller thread, so that the index has something to skip.
      const other = makeNodes(rng, Math.ceil(size / 10));
      return { threadId: nodes[0].threadId, nodes: [...nodes, ...other] };
    },
    python: String.raw`
async def setup(db, data):
    await db.table("nodes").bulk_put(data["nodes"])

async def run(db, data, ctx):
    return await db.table("nodes").where("threadId").equals(data["threadId"]).to_list()

async def check(db, data, rows):
    return [len(rows), sum(r["seq"] for r in rows)]
`,
    dexie: {
      setup: (db, data) => db.nodes.bulkPut(data.nodes),
      run: (db, data) => db.nodes.where("threadId").equals(data.threadId).toArray(),
      check: (db, data, rows) => lengthAndSeqSum(rows),
    },
    raw: {
      setup: (db, data) => rawPutAll(db, data.nodes),
      run: (db, data) =>
        requestDone(
          db
            .transaction("nodes", "readonly")
            .objectStore("nodes")
            .index("threadId")
            .getAll(data.threadId),
        ),
      check: (db, data, rows) => lengthAndSeqSum(rows),
    },
  },
];
