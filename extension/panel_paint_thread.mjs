// The first paint of the conversation the panel reopens, before Python is ready: the
// last PAGE shown nodes of its visible branch, read from panelot_v1's `threads` and
// `nodes` tables directly, by the rules of the UI snapshot's window
// (py_src/panelot/tree/views.py `_read_window`, with tree/descent.py's versions and
// tree/context.py's `ui_entry`): from the leaf up by parentId, tombstones and hidden
// types not shown, each node's `n/m` place among its versions. Whatever that window
// would hand to the full load (no leaf, a leaf on a tombstone, a missing, foreign or
// malformed node, a cycle) paints nothing: the live view decides. Read-only, and nothing
// made up: tests/browser/test_first_paint.py compares it with `thread.snapshot`.
// paintedNodes draws it plainly (the stored text; the live view's Markdown, files,
// buttons and version arrows come with it), marked `data-painted`.
import { openExisting, result } from "./panel_firstpaint.mjs";
import { h } from "./panel_dom.mjs";

/** How many shown nodes are painted: the live view's first window (panel_chat.mjs PAGE). */
export const PAINT_PAGE = 50;
/** Node types the UI does not show (descent.py HIDDEN_TYPES). */
const HIDDEN_TYPES = ["turn_context", "interaction_response"];

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
const isTombstone = (node) => isObject(node?.payload) && Boolean(node.payload.deleted);
const isShown = (node) => !isTombstone(node) && !HIDDEN_TYPES.includes(node?.type);

/** Whether `raw` is a sound node record `nodeId` of the thread (integrity.py is_sound). */
function sound(raw, nodeId, threadId) {
  return (
    isObject(raw) &&
    raw.id === nodeId &&
    raw.threadId === threadId &&
    (raw.parentId === null || typeof raw.parentId === "string") &&
    typeof raw.seq === "number" &&
    Number.isFinite(raw.seq) &&
    typeof raw.type === "string" &&
    isObject(raw.payload)
  );
}

/** integrity.py seq_order: numeric seqs in order, then by id; anything malformed last. */
function seqOrder(a, b) {
  const key = (raw) => {
    if (!isObject(raw)) return [2, 0, ""];
    const seq = typeof raw.seq === "number" && Number.isFinite(raw.seq) ? raw.seq : null;
    return [seq !== null ? 0 : 1, seq ?? 0, typeof raw.id === "string" ? raw.id : ""];
  };
  const [x, y] = [key(a), key(b)];
  for (let i = 0; i < 3; i += 1) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/** The children of `parentId` (null: the roots) in the thread, by seq (descent.py children). */
async function children(nodes, threadId, parentId) {
  const kids =
    parentId === null
      ? (await result(nodes.index("threadId").getAll(threadId))).filter((r) => (r?.parentId ?? null) === null)
      : (await result(nodes.index("parentId").getAll(parentId))).filter((r) => r?.threadId === threadId);
  return kids.length > 1 ? kids.sort(seqOrder) : kids;
}

/** The versions below `parentId`: the shown nodes whose nearest shown ancestor it is (descent.py _below). */
async function versions(nodes, threadId, parentId) {
  const found = [];
  const expanded = new Set([parentId]);
  const pending = [parentId];
  while (pending.length) {
    for (const kid of await children(nodes, threadId, pending.pop())) {
      if (!isObject(kid) || typeof kid.id !== "string") continue; // a corrupt record links nothing
      if (isShown(kid)) found.push(kid);
      else if (!expanded.has(kid.id)) {
        expanded.add(kid.id);
        pending.push(kid.id);
      }
    }
  }
  return found.length > 1 ? found.sort(seqOrder) : found;
}

/** The payload with each evicted block tagged `state: "evicted"` (context.py _for_ui). */
function forUi(payload) {
  const keys = ["content", "contentForLlm"];
  const blocks = (key) => (Array.isArray(payload[key]) ? payload[key] : []);
  const evicted = (b) => isObject(b) && Boolean(b.evicted);
  if (!keys.some((key) => blocks(key).some(evicted))) return payload;
  const out = { ...payload };
  for (const key of keys) {
    if (key in out) out[key] = blocks(key).map((b) => (evicted(b) ? { ...b, state: "evicted" } : b));
  }
  return out;
}

/** A shown node as the UI snapshot lists it (context.py ui_entry). */
function uiEntry(node, ids) {
  const entry = {
    id: node.id,
    type: node.type,
    payload: forUi(node.payload),
    seq: node.seq,
    parentId: node.parentId,
    siblingIndex: ids.includes(node.id) ? ids.indexOf(node.id) + 1 : 1,
    siblingCount: Math.max(ids.length, 1),
  };
  if (ids.length > 1) entry.siblings = ids;
  return entry;
}

/**
 * What `thread.snapshot {threadId, limit}` answers for the stored thread, read directly,
 * or null when its window's rules hand it to the full load (or there is no database).
 */
export async function storedWindow(threadId, limit = PAINT_PAGE, dbName = "panelot_v1") {
  const db = await openExisting(dbName);
  if (!db) return null;
  try {
    if (!["threads", "nodes"].every((name) => db.objectStoreNames.contains(name))) return null;
    const tx = db.transaction(["threads", "nodes"], "readonly");
    const nodes = tx.objectStore("nodes");
    const thread = await result(tx.objectStore("threads").get(threadId));
    if (!isObject(thread) || typeof thread.leafId !== "string") return null;
    const picked = []; // the window's shown nodes, leaf first
    let above = null; // the nearest shown node above the window
    const seen = new Set();
    let current = thread.leafId;
    while (current !== null) {
      const raw = await result(nodes.get(current));
      if (!sound(raw, current, threadId) || seen.has(current)) return null;
      if (!seen.size && isTombstone(raw)) return null; // the leaf on a tombstone: the store may move it
      seen.add(current);
      if (isShown(raw)) {
        if (picked.length >= limit) {
          above = current;
          break;
        }
        picked.push(raw);
      }
      current = raw.parentId;
    }
    const parents = picked.map((_, i) => (i + 1 < picked.length ? picked[i + 1].id : above));
    const places = await Promise.all(parents.map((parent) => versions(nodes, threadId, parent)));
    const out = picked.map((node, i) => uiEntry(node, places[i].map((v) => v.id)));
    out.reverse();
    return { threadId: thread.id, leafId: thread.leafId, nodes: out, hasMore: above !== null };
  } catch {
    return null;
  } finally {
    db.close();
  }
}

/** Text of a node's content blocks (panel_messages.mjs blocksText). */
function blocksText(blocks) {
  return (Array.isArray(blocks) ? blocks : [])
    .filter((b) => b?.type === "text")
    .map((b) => b.text)
    .join("\n\n");
}

/** The element of a painted node `n` (a `storedWindow` entry); `last`: the branch's end. */
function paintedNode(n, last) {
  const p = n.payload ?? {};
  const dataset = { nodeId: n.id, type: n.type, painted: "1" };
  if (n.type === "user_message" || n.type === "assistant_message") {
    const user = n.type === "user_message";
    const text = blocksText(p.content);
    return h(
      "div",
      { class: `msg ${user ? "user" : "assistant"}${last ? " last" : ""}`, dataset: { ...dataset, seq: n.seq } },
      text || !user ? h("div", { class: "msg-body", text }) : null,
      n.siblingCount > 1
        ? h("div", { class: "msg-foot" }, h("span", { class: "branch-pos", text: `${n.siblingIndex}/${n.siblingCount}` }))
        : null,
    );
  }
  if (n.type === "system_notice") return h("div", { class: `msg notice ${p.level ?? ""}`, dataset, text: p.text ?? "" });
  if (n.type === "tool_call") return h("div", { class: "msg tool call", dataset, text: `Tool call ${p.toolName ?? "?"}` });
  if (n.type === "tool_result") {
    return h("div", { class: `msg tool result${p.ok ? "" : " failed"}`, dataset, text: `Tool ${p.ok ? "result" : "error"} ${p.itemId ?? ""}` });
  }
  if (n.type === "approval_decision") return h("div", { class: "msg notice", dataset, text: `Approval ${p.decision ?? ""}` });
  return h("div", { class: "msg notice", dataset, text: n.type });
}

/** The elements of a `storedWindow`'s nodes, as they are painted before the live view. */
export function paintedNodes(snapshot) {
  return snapshot.nodes.map((n, i) => paintedNode(n, i === snapshot.nodes.length - 1));
}
