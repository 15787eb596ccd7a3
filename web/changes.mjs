// The change channel of panelot.idb's browser core: Dexie 4's cross-context protocol.
// Dexie announces each committed readwrite transaction as an ObservabilitySet
// ({"idb://db/table/part": RangeSet tree}) in two ways: a CustomEvent
// "x-storagemutated-1" on the global object (Dexie in the same realm) and a message on
// BroadcastChannel("x-storagemutated-1") (other pages and workers). This module does
// both for Python's sets, and hands every set it hears to Python as wire JSON. The sets
// are built and read in Python (py_src/panelot/idb/observe); here they are only parsed
// and stringified. On the wire, ±Infinity is {"$inf": ±1}, and a key JSON cannot carry
// (a Date, binary) becomes {"$wide": 1}, which Python reads as "every key".

const NAME = "x-storagemutated-1";

function revive(_key, value) {
  return value !== null && typeof value === "object" && "$inf" in value ? value.$inf * Infinity : value;
}

function replace(key, value) {
  const raw = this[key]; // before toJSON: a Date arrives here as a Date
  if (typeof raw === "number" && !Number.isFinite(raw)) {
    return Number.isNaN(raw) ? { $wide: 1 } : { $inf: raw > 0 ? 1 : -1 };
  }
  if (raw instanceof Date || ArrayBuffer.isView(raw) || raw instanceof ArrayBuffer) return { $wide: 1 };
  return value;
}

/** The wire JSON of a received set, or null when it is no object (Python counts it). */
function toWire(detail) {
  if (detail === null || typeof detail !== "object") return null;
  try {
    return JSON.stringify(detail, replace);
  } catch {
    return null; // a cycle, a BigInt: not a change set
  }
}

/**
 * Open the channel. `onMessage(text)` is called with the wire JSON of each set another
 * party announced (null for a message that is not an object). Returns
 * `{publish(text), close()}`; `publish` announces a set given as wire JSON.
 */
export function openChannel(onMessage) {
  const scope = globalThis;
  const bc = typeof BroadcastChannel === "function" ? new BroadcastChannel(NAME) : null;
  let publishing = false;
  let open = true;
  const hear = (detail) => {
    if (open) onMessage(toWire(detail));
  };
  const onEvent = (event) => {
    if (!publishing) hear(event.detail);
  };
  if (bc) bc.onmessage = (event) => hear(event.data);
  scope.addEventListener(NAME, onEvent);
  return {
    publish(text) {
      if (!open) return;
      const detail = JSON.parse(text, revive);
      publishing = true; // our own event is not news to us
      try {
        scope.dispatchEvent(new CustomEvent(NAME, { detail }));
      } finally {
        publishing = false;
      }
      if (bc) bc.postMessage(detail);
    },
    close() {
      if (!open) return;
      open = false;
      scope.removeEventListener(NAME, onEvent);
      if (bc) {
        bc.onmessage = null;
        bc.close();
      }
    },
  };
}
