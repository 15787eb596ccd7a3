// Benchmark data and shared JS helpers: seeded generators of realistic panelot_v1 records
// (node payloads in the wire form that panelot.tree.records validates), plain-IndexedDB
// promise helpers, the schema builder, the receipt fingerprint and session context.
// Used by workloads.mjs (all three implementations) and the startup pages.

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

/** IndexedDB version of Dexie's version(1). */
export const NATIVE_VERSION = 10;

/** Create the stores and indexes Dexie would make for STORES (names and key paths alike). */
export function createSchema(db) {
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

/** Open (creating if needed) a panelot_v1-shaped database with plain IndexedDB. */
export function openNative(name) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name, NATIVE_VERSION);
    req.onupgradeneeded = () => createSchema(req.result);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

export function deleteNative(name) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(name);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
    // "blocked" only means a closed connection still finishes a transaction: wait on.
  });
}

/** Resolve with a request's result. */
export const requestDone = (req) =>
  new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });

/** Resolve when a transaction commits. */
export const txDone = (tx, value) =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve(value);
    tx.onerror = tx.onabort = () => reject(tx.error ?? new Error("transaction aborted"));
  });

/** Write `{table: records}` in one transaction (the untimed seeding of every workload). */
export function seedNative(db, seed) {
  const tables = Object.keys(seed).filter((t) => seed[t].length > 0);
  if (tables.length === 0) return Promise.resolve();
  const tx = db.transaction(tables, "readwrite");
  for (const table of tables) {
    const store = tx.objectStore(table);
    for (const record of seed[table]) store.put(record);
  }
  return txDone(tx);
}

// --- seeded randomness ------------------------------------------------------------------

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

export const int = (rng, lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));
export const pick = (rng, items) => items[Math.floor(rng() * items.length)];

export function uuid(rng) {
  let s = "";
  for (let i = 0; i < 32; i++) {
    s += HEX[Math.floor(rng() * 16)];
    if (i === 7 || i === 11 || i === 15 || i === 19) s += "-";
  }
  return s;
}

export function text(rng, length = 300) {
  let s = "";
  while (s.length < length) s += WORDS[Math.floor(rng() * WORDS.length)] + " ";
  return s.slice(0, length);
}

// --- realistic records (wire form of py_src/panelot/records.py) ------------------------

const BASE_TS = 1_700_000_000_000;
const MODELS = ["claude-sonnet-4", "gpt-5-mini", "gemini-2.5-pro"];
const TOOLS = ["read_page", "search_tabs", "run_script", "fetch_url"];

/** A payload of `type`: text of a few hundred characters, some with content blocks. */
export function makePayload(rng, type) {
  switch (type) {
    case "user_message": {
      const content = [{ type: "text", text: text(rng, int(rng, 80, 600)) }];
      if (rng() < 0.1) {
        content.push({
          type: "image",
          attachmentId: uuid(rng),
          mime: "image/png",
          name: "screenshot.png",
          w: 1280,
          h: 800,
        });
      }
      const payload = { content };
      if (rng() < 0.2) {
        payload.attachedContext = [
          {
            type: "page",
            url: `https://example.com/${text(rng, 12).trim().replaceAll(" ", "-")}`,
            title: text(rng, 40),
            text: text(rng, 300),
          },
        ];
      }
      return payload;
    }
    case "assistant_message": {
      const content = [{ type: "text", text: text(rng, int(rng, 200, 900)) }];
      if (rng() < 0.15) content.push({ type: "text", text: text(rng, 200) });
      const payload = { content, model: pick(rng, MODELS), connectionId: "conn-main" };
      if (rng() < 0.2) payload.reasoning = text(rng, 300);
      if (rng() < 0.6) {
        payload.usage = {
          inputTokens: int(rng, 200, 20_000),
          outputTokens: int(rng, 50, 2_000),
          costUsd: int(rng, 1, 5_000) / 100_000,
        };
      }
      return payload;
    }
    case "tool_call":
      return {
        itemId: uuid(rng),
        toolName: pick(rng, TOOLS),
        params: { url: "https://example.com/docs", maxChars: 4000, query: text(rng, 40) },
        level: "L1",
      };
    case "tool_result":
      return {
        itemId: uuid(rng),
        ok: rng() < 0.9,
        contentForLlm: [{ type: "text", text: text(rng, int(rng, 200, 700)) }],
      };
    case "turn_context":
      return {
        turnId: uuid(rng),
        model: pick(rng, MODELS),
        permissionPolicy: { mode: "ask", allow: ["read_page"] },
        activeSkills: ["summarize", "translate"],
      };
    case "system_notice":
      return { text: text(rng, 120), level: "info", code: "bench" };
    default:
      throw new Error(`unknown node type ${type}`);
  }
}

/** The node types of one conversational turn, in order. */
function turnTypes(rng) {
  const types = [];
  if (rng() < 0.15) types.push("turn_context");
  types.push("user_message");
  const tools = rng() < 0.3 ? int(rng, 1, 2) : 0;
  for (let i = 0; i < tools; i++) types.push("tool_call", "tool_result");
  types.push("assistant_message");
  if (rng() < 0.03) types.push("system_notice");
  return types;
}

/** `count` (type, payload) pairs of a conversation, turn after turn. */
export function makeMessages(rng, count) {
  const out = [];
  let callId = null;
  while (out.length < count) {
    for (const type of turnTypes(rng)) {
      if (out.length >= count) break;
      const payload = makePayload(rng, type);
      // A result answers the call before it, as a tool run records it.
      if (type === "tool_call") callId = payload.itemId;
      if (type === "tool_result") payload.itemId = callId;
      out.push({ type, payload });
    }
  }
  return out;
}

/** A ThreadMeta record in its stored (wire) form, as thread_to_wire writes it. */
export function makeThread(rng, { id = uuid(rng), updatedAt = BASE_TS, leafId = null } = {}) {
  return {
    id,
    title: text(rng, int(rng, 10, 60)).trim(),
    createdAt: BASE_TS,
    updatedAt,
    leafId,
    tags: [],
    pinned: false,
    archived: false,
    stats: { turns: 0, totalTokens: 0, costUsd: 0 },
    scopeOrigins: [],
  };
}

function node(threadId, parentId, seq, type, payload) {
  return { id: null, threadId, parentId, seq, ts: BASE_TS + seq * 1000, type, payload };
}

/** A linear thread of `count` realistic nodes (seq 1..count); returns {thread, nodes}. */
export function makeChain(rng, count, threadId = uuid(rng)) {
  const nodes = [];
  let parentId = null;
  makeMessages(rng, count).forEach(({ type, payload }, i) => {
    const n = node(threadId, parentId, i + 1, type, payload);
    n.id = uuid(rng);
    nodes.push(n);
    parentId = n.id;
  });
  const thread = makeThread(rng, { id: threadId, leafId: parentId });
  return { thread, nodes };
}

/**
 * A branched thread of `count` nodes: a conversation where the user now and then edits
 * an earlier message (a new sibling user message, the conversation goes on from it)
 * or regenerates an answer (a new sibling assistant message), leaving the old branch
 * behind; about 3% of the nodes are tombstones. The leaf is the newest node.
 */
export function makeTree(rng, count, { tombstones = 0.03 } = {}) {
  const threadId = uuid(rng);
  const nodes = [];
  const byId = new Map();
  let leaf = null;
  const add = (parentId, type) => {
    const n = node(threadId, parentId, nodes.length + 1, type, makePayload(rng, type));
    n.id = uuid(rng);
    nodes.push(n);
    byId.set(n.id, n);
    leaf = n.id;
    return n;
  };
  const path = () => {
    const out = [];
    for (let id = leaf; id !== null; id = byId.get(id).parentId) out.push(byId.get(id));
    return out; // leaf first
  };
  while (nodes.length < count) {
    const r = rng();
    if (nodes.length > 20 && r < 0.08) {
      // Edit: a sibling of one of the last few user messages on the current path.
      const users = path()
        .filter((n) => n.type === "user_message")
        .slice(0, 6);
      const target = pick(rng, users);
      leaf = target.parentId;
      add(leaf, "user_message");
      if (nodes.length < count) add(leaf, "assistant_message");
    } else if (nodes.length > 20 && r < 0.13) {
      // Regenerate: a sibling of the latest assistant message under its user message.
      const answer = path().find((n) => n.type === "assistant_message");
      const user = answer && byId.get(answer.parentId);
      if (user && user.type === "user_message") {
        leaf = user.id;
        add(leaf, "assistant_message");
      }
    } else {
      for (const type of turnTypes(rng)) if (nodes.length < count) add(leaf, type);
    }
  }
  for (const n of nodes) {
    if (n.id !== leaf && rng() < tombstones) n.payload.deleted = true;
  }
  const thread = makeThread(rng, { id: threadId, leafId: leaf });
  return { thread, nodes };
}

/** `count` ThreadMeta records: distinct updatedAt, ~5% pinned, ~10% archived, folders, tags. */
export function makeThreads(rng, count) {
  const threads = [];
  const stamps = new Set();
  for (let i = 0; i < count; i++) {
    let updatedAt;
    do updatedAt = BASE_TS + int(rng, 0, 90 * 24 * 3600) * 1000;
    while (stamps.has(updatedAt));
    stamps.add(updatedAt);
    const t = makeThread(rng, { updatedAt, leafId: uuid(rng) });
    t.pinned = rng() < 0.05;
    t.archived = rng() < 0.1;
    if (rng() < 0.3) t.folderId = `folder-${int(rng, 1, 8)}`;
    if (rng() < 0.4) t.tags = [pick(rng, ["work", "research", "code", "travel"])];
    t.stats = { turns: int(rng, 1, 80), totalTokens: int(rng, 100, 900_000), costUsd: 0.25 };
    threads.push(t);
  }
  return threads;
}

// --- shared behaviour of the JS implementations ---------------------------------------

/** Apply the thread stats change of an appended node (as panelot.tree.nodes.append_node). */
export function applyStats(thread, type, payload) {
  if (type !== "assistant_message") return;
  const stats = thread.stats;
  stats.turns += 1;
  const usage = payload.usage;
  if (usage) {
    stats.totalTokens += usage.inputTokens + usage.outputTokens;
    stats.costUsd = Math.round((stats.costUsd + (usage.costUsd ?? 0)) * 1e10) / 1e10;
  }
}

/** Canonical JSON (sorted keys, as RFC 8785 for strings, integers and plain floats). */
export function canonical(value) {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
}

const HEX_BYTES = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** SHA-256 of the canonical command without type, clientId, submissionId (panelot.bus.receipts). */
export async function fingerprint(command) {
  const { type, clientId, submissionId, ...rest } = command;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical(rest)));
  let hex = "";
  for (const byte of new Uint8Array(digest)) hex += HEX_BYTES[byte];
  return hex;
}

export const RECEIPT_TTL_MS = 30 * 24 * 3600 * 1000;

export function receiptRecord(command, fp, response, now, status = "completed") {
  return {
    id: JSON.stringify([command.clientId, command.submissionId]),
    clientId: command.clientId,
    submissionId: command.submissionId,
    commandType: command.type,
    status,
    response,
    requestFingerprint: fp,
    createdAt: now,
    expiresAt: now + RECEIPT_TTL_MS,
  };
}

const NOT_FOR_MODEL = new Set([
  "system_notice",
  "turn_context",
  "approval_decision",
  "interaction_response",
]);

const contentOf = (payload, key = "content") =>
  Array.isArray(payload[key]) ? [...payload[key]] : [];

const NOT_COMPLETED = "no result: the call was not completed";

/**
 * The pairing of tool calls and results, as panelot.tree.tool_steps.ToolSteps: a call
 * rides on the assistant message before it, a result answers an open call of the current
 * step or is left out, a closed step gives each unanswered call a fixed result, and the
 * calls still open at the end of the path are pending (not sent).
 */
class ToolSteps {
  constructor(messages) {
    this.messages = messages;
    this.open = new Map();
    this.carrier = null;
    this.answered = false;
    this.used = new Set();
  }

  message(msg) {
    this.close();
    this.messages.push(msg);
  }

  call(call) {
    const item = call.itemId;
    if (typeof item !== "string" || this.used.has(item)) return;
    this.used.add(item);
    if (this.carrier === null || this.answered) {
      this.close();
      let last = this.messages[this.messages.length - 1];
      if (!last || last.role !== "assistant") {
        last = { role: "assistant", content: [] };
        this.messages.push(last);
      }
      this.carrier = last;
    }
    (this.carrier.toolCalls ??= []).push(call);
    this.open.set(item, call);
  }

  result(msg) {
    const item = msg.itemId;
    if (typeof item !== "string" || !this.open.delete(item)) return;
    this.answered = true;
    this.messages.push(msg);
  }

  close() {
    for (const item of this.open.keys()) {
      this.messages.push({
        role: "tool",
        itemId: item,
        ok: false,
        content: [{ type: "text", text: NOT_COMPLETED }],
        notCompleted: true,
      });
    }
    this.open = new Map();
    this.carrier = null;
    this.answered = false;
  }

  pending() {
    const calls = [...this.open.values()];
    const carrier = this.carrier;
    if (calls.length && carrier !== null) {
      const kept = carrier.toolCalls.filter((c) => !this.open.has(c.itemId));
      if (kept.length) carrier.toolCalls = kept;
      else {
        delete carrier.toolCalls;
        if (!carrier.content.length && carrier === this.messages[this.messages.length - 1]) {
          this.messages.pop();
        }
      }
    }
    this.open = new Map();
    this.carrier = null;
    this.answered = false;
    return calls;
  }
}

/**
 * build_session_context over loaded records, as panelot.tree.context.session_context: walk
 * leaf→root through a Map, skip tombstones, map messages, pair tool calls and results.
 */
export function sessionContext(thread, nodes) {
  const byId = new Map();
  for (const n of nodes) byId.set(n.id, n);
  const path = [];
  const limit = nodes.length + 1;
  for (let id = thread.leafId; id !== null && id !== undefined; ) {
    const n = byId.get(id);
    if (!n || path.length >= limit) throw new Error(`broken leaf path at ${id}`);
    path.push(n);
    id = n.parentId;
  }
  path.reverse();
  const visible = path.filter((n) => !n.payload.deleted);
  const messages = [];
  const steps = new ToolSteps(messages);
  let turnContext = null;
  for (const { type, payload } of visible) {
    if (type === "turn_context") {
      const { deleted, ...rest } = payload;
      turnContext = rest;
    }
    if (NOT_FOR_MODEL.has(type)) continue;
    if (type === "user_message") {
      const msg = { role: "user", content: contentOf(payload) };
      if (payload.attachedContext) msg.attachedContext = payload.attachedContext;
      steps.message(msg);
    } else if (type === "assistant_message") {
      const msg = { role: "assistant", content: contentOf(payload), model: payload.model ?? null };
      if (payload.reasoning != null) msg.reasoning = payload.reasoning;
      if (payload.providerState != null) msg.providerState = payload.providerState;
      steps.message(msg);
    } else if (type === "tool_call") {
      steps.call({
        itemId: payload.itemId ?? null,
        toolName: payload.toolName ?? null,
        params: payload.params ?? null,
      });
    } else if (type === "tool_result") {
      steps.result({
        role: "tool",
        itemId: payload.itemId ?? null,
        ok: payload.ok ?? null,
        content: contentOf(payload, "contentForLlm"),
      });
    }
  }
  const pendingCalls = steps.pending();
  return { messages, turnContext, path: visible.map((n) => n.id), pendingCalls };
}

/** What every implementation's context check reports. */
export function contextCheck(ctx) {
  const calls = ctx.messages.reduce((s, m) => s + (m.toolCalls ? m.toolCalls.length : 0), 0);
  const roles = {};
  for (const m of ctx.messages) roles[m.role] = (roles[m.role] ?? 0) + 1;
  return [
    ctx.messages.length,
    ctx.path.length,
    ctx.path[ctx.path.length - 1] ?? null,
    calls,
    ctx.turnContext ? ctx.turnContext.turnId : null,
    roles,
    ctx.pendingCalls.length,
  ];
}

/** `count` uniform nodes of one thread, each the child of the previous (storage micro workloads). */
export function makeNodesFlat(rng, count, threadId = uuid(rng)) {
  const nodes = [];
  let parentId = null;
  for (let seq = 0; seq < count; seq++) {
    const id = uuid(rng);
    nodes.push({
      id,
      threadId,
      parentId,
      seq,
      ts: BASE_TS + seq * 1000,
      type: "user_message",
      payload: { content: [{ type: "text", text: text(rng) }] },
    });
    parentId = id;
  }
  return nodes;
}
