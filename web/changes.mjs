// The change channel of panelot.idb's browser core: Dexie 4's cross-context protocol.
// Dexie announces each committed readwrite transaction as an ObservabilitySet
// ({"idb://db/table/part": RangeSet tree}) in two ways: a CustomEvent
// "x-storagemutated-1" on the global object (Dexie in the same realm) and a message on
// BroadcastChannel("x-storagemutated-1") (other pages and workers). This module does
// both for Python's sets, and hands every set it hears to Python as wire JSON. The sets
// are built and read in Python (py_src/panelot/idb/observe); here they are only parsed
// and stringified. On the wire, ±Infinity is {"$inf": ±1}, the top of an open range is
// {"$top": 1} (Dexie gets its maxKey, [[]]), and a key JSON cannot carry (a Date,
// binary) becomes {"$wide": 1}, which Python reads as "every key".

const NAME = "x-storagemutated-1";

const MAX_KEY = [[]]; // Dexie's maxKey: what Dexie takes for "the top"

function revive(_key, value) {
  if (value === null || typeof value !== "object") return value;
  if ("$inf" in value) return value.$inf * Infinity;
  if ("$top" in value) return MAX_KEY;
  return value;
}

function replace(key, value) {
  const raw = this[key]; // before toJSON: a Date arrives here as a Date
  if (typeof raw === "number" && !Number.isFinite(raw)) {
    return Number.isNaN(raw) ? { $wide: 1 } : { $inf: raw > 0 ? 1 : -1 };
  }
  if (raw instanceof Date || ArrayBuffer.isView(raw) || raw instanceof ArrayBuffer) return { $wide: 1 };
  return value;
}

const MAX_DEPTH = 100; // as MAX_DEPTH in changes.py: deeper is no change set

/** True when `value` nests objects deeper than MAX_DEPTH (an iterative walk). */
function tooDeep(value) {
  const stack = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (depth > MAX_DEPTH) return true;
    for (const key in v) stack.push([v[key], depth + 1]);
  }
  return false;
}

/** The wire JSON of a received set, or null when it is no object (Python counts it). */
function toWire(detail) {
  if (detail === null || typeof detail !== "object" || tooDeep(detail)) return null;
  try {
    return JSON.stringify(detail, replace);
  } catch {
    return null; // a cycle, a BigInt: not a change set
  }
}

// One BroadcastChannel per realm, shared by every connection in it: a channel never
// hears its own posts, so other realms get each set once, and the connections of this
// realm hear one another through the CustomEvent alone.
const hearers = new Set();
let shared = null;
// Python hands its sets to the other Python connections of this realm itself: while
// one of them dispatches, the event is for Dexie and other listeners, not for us.
let publishing = false;

function broadcast() {
  if (shared === null && typeof BroadcastChannel === "function") {
    shared = new BroadcastChannel(NAME);
    shared.onmessage = (event) => {
      for (const hear of hearers) hear(event.data);
    };
  }
  return shared;
}

/**
 * Open the channel. `onMessage(text)` is called with the wire JSON of each set another
 * party announced (null for a message that is not a change set). Returns
 * `{publish(text), later(ms, token), close()}`; `publish` announces a set given as wire
 * JSON, and `later` calls `onTimer(token)` after `ms` milliseconds, unless the channel
 * has closed by then.
 */
export function openChannel(onMessage, onTimer) {
  const scope = globalThis;
  const bc = broadcast();
  let open = true;
  const hear = (detail) => {
    if (open) onMessage(toWire(detail));
  };
  const onEvent = (event) => {
    if (!publishing) hear(event.detail);
  };
  hearers.add(hear);
  scope.addEventListener(NAME, onEvent);
  return {
    publish(text) {
      if (!open) return;
      const plain = !text.includes('"$inf"') && !text.includes('"$top"');
      const detail = plain ? JSON.parse(text) : JSON.parse(text, revive);
      publishing = true;
      try {
        scope.dispatchEvent(new CustomEvent(NAME, { detail }));
      } finally {
        publishing = false;
      }
      if (bc) bc.postMessage(detail);
    },
    later(ms, token) {
      if (!open) return;
      setTimeout(() => {
        if (open) onTimer(token);
      }, ms);
    },
    close() {
      if (!open) return;
      open = false;
      hearers.delete(hear);
      scope.removeEventListener(NAME, onEvent);
    },
  };
}
