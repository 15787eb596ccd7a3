// The one JS helper of the storage path, registered into Pyodide as `panelot_js`.
// Converting values read from IndexedDB with Pyodide's to_py() needs a Python walk
// afterwards (JS null arrives as jsnull); a native JSON.stringify plus Python's
// json.loads is several times faster. encodeValue returns that JSON, or null when the
// value holds anything JSON cannot carry (Date, binary, Blob, non-finite numbers), in
// which case Python falls back to to_py(). No storage logic lives here.

import { marshalValue, unsafeIntegers } from "./marshal_writer.mjs";
import { sha256Hex } from "./local_copy.mjs";

export { unmarshalValues } from "./marshal_reader.mjs";
export { openChannel } from "./changes.mjs";

const { getPrototypeOf } = Object;
const OBJECT = Object.prototype;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * True when `value` holds only what JSON carries exactly (a tight walk, no replacer).
 * A number beyond ±(2**53 - 1) does not count: Python's JSON reader would make it an
 * int, which the store refuses to write back (JS would round such an int); Pyodide's
 * conversion (or the marshal writer) gives the float it is.
 */
function isPlain(value) {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    const type = typeof v;
    if (type === "string" || type === "boolean" || v === null) continue;
    if (type === "number") {
      if (v > MAX_SAFE || v < -MAX_SAFE || v !== v) return false; // also ±Infinity, NaN
      continue;
    }
    if (type !== "object") return false; // undefined, bigint, function, symbol
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
      continue;
    }
    const proto = getPrototypeOf(v);
    if (proto !== OBJECT && proto !== null) return false; // Date, Blob, typed arrays, Map...
    for (const key in v) stack.push(v[key]);
  }
  return true;
}

function plainJSON(value) {
  return isPlain(value) ? JSON.stringify(value) : null;
}

/** JSON of one value (a record, a key, an array of records), or null. */
export function encodeValue(value) {
  if (value === undefined) return "null";
  return plainJSON(value);
}

// ---------------------------------------------------------------------------------------
// Request wiring. Handing an IDBRequest to Python costs ~100 µs (a new JsProxy per
// request, measured), against ~3 µs for a plain call, and each argument of a call
// costs a conversion. So Python never receives the requests: it asks these functions to
// issue them, with as few arguments as possible. A connection's handlers are attached
// once (`connect`); a transaction carries its id (`begin`), and each request finds both
// through its source's transaction. Python is called back with (txId, pos, data[, kind])
// on success, where data is JSON text (kind omitted), marshal bytes (kind MARSHAL, for
// large results, see below), UTF-8 JSON bytes (kind BYTES, for large results too deep for
// the marshal writer: Pyodide copies a string into Python one character at a time) or the
// raw value (kind RAW, when JSON cannot carry it); and with (txId, pos, name, message)
// on error. The transaction logic, and the stepping of the transaction body, stay in
// Python. Synchronous failures (DataError, DataCloneError) are returned as JSON
// [[pos, name, message]]; success returns undefined (no string to convert).

const BYTES = 1;
const RAW = 2;
const MARSHAL = 3; // marshal bytes (marshal_writer.mjs), for large plain results
/** Results longer than this (in UTF-16 units) cross as UTF-8 bytes instead of a string. */
const LARGE_TEXT = 8192;
const utf8 = new TextEncoder();


/** Arrays at least this long are written as marshal data first (usually large). */
const MANY = 8;

/**
 * Send a read's result to Python through the connection's success handler.
 *
 * Marshal bytes are a view of the writer's reused buffer: the handler copies them
 * before it returns (browser_convert.decode_marshal), so the next result may reuse it.
 */
function report(tx, pos, value) {
  const h = tx.__panelot;
  const id = tx.__panelotTx;
  let text;
  if (Array.isArray(value) && value.length >= MANY) {
    const bytes = marshalValue(value);
    if (bytes === false) return h.ok(id, pos, value, RAW);
    if (bytes !== null && (bytes.length > LARGE_TEXT || unsafeIntegers > 0)) {
      return h.ok(id, pos, bytes, MARSHAL);
    }
    text = bytes === null ? encodeValue(value) : JSON.stringify(value); // small: text is cheaper
  } else {
    // One record, a few, a key or a count: JSON text, unless it turns out large.
    text = encodeValue(value);
    if (text !== null && text.length > LARGE_TEXT && typeof value === "object") {
      const bytes = marshalValue(value);
      if (bytes) return h.ok(id, pos, bytes, MARSHAL);
    }
  }
  if (text === null) h.ok(id, pos, value, RAW);
  else if (text.length > LARGE_TEXT) h.ok(id, pos, utf8.encode(text), BYTES);
  else h.ok(id, pos, text);
}

/**
 * The projection named by `pick`, or null: "a,b" keeps only those fields (top-level
 * names or dotted key paths such as "payload.deleted", kept nested as they were; absent
 * ones and paths that do not resolve through objects left out), "!a,b" keeps every
 * top-level field but those. panelot.idb.values.project is the same rule in Python.
 */
function projector(pick) {
  if (!pick) return null;
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const own = (v, k) => Object.prototype.hasOwnProperty.call(v, k);
  if (pick[0] === "!") {
    const drop = new Set(pick.slice(1).split(","));
    return (value) => {
      if (!isObject(value)) return value;
      const out = {};
      for (const f of Object.keys(value)) if (!drop.has(f)) out[f] = value[f];
      return out;
    };
  }
  const paths = pick.split(",").map((f) => f.split("."));
  return (value) => {
    if (!isObject(value)) return value;
    const out = {};
    for (const path of paths) {
      let source = value;
      for (let i = 0; i < path.length - 1 && isObject(source); i++) {
        source = own(source, path[i]) ? source[path[i]] : undefined;
      }
      const last = path[path.length - 1];
      if (!isObject(source) || !own(source, last)) continue;
      let target = out;
      for (let i = 0; i < path.length - 1; i++) target = own(target, path[i]) ? target[path[i]] : (target[path[i]] = {});
      target[last] = source[last];
    }
    return out;
  };
}

function onError(req, tx, pos) {
  req.onerror = (event) => {
    event.preventDefault(); // the Python body decides whether the transaction aborts
    event.stopPropagation();
    const e = req.error;
    tx.__panelot.fail(tx.__panelotTx, pos, e ? e.name : "UnknownError", e ? e.message : "");
  };
}

function wire(req, tx, pos, listen, pick) {
  onError(req, tx, pos);
  if (listen) {
    const project = projector(pick);
    req.onsuccess = () => {
      let value = req.result;
      if (project) value = Array.isArray(value) ? value.map(project) : project(value);
      report(tx, pos, value);
    };
  }
}

/**
 * Attaches a connection's Python handlers to its IDBDatabase, once: `ok` and `fail` for
 * requests, `complete(txId)` and `abort(txId, errorName, errorMessage)` for transactions.
 */
export function connect(db, ok, fail, complete, abort) {
  db.__panelot = { ok, fail, complete, abort };
}

/**
 * Starts a transaction over the comma-separated `tables`, tagged with `txId`: one call
 * from Python instead of five. `durability` is IndexedDB's option ("default", "strict"
 * or "relaxed"). The handlers are dropped when it ends.
 */
export function begin(db, tables, mode, txId, durability) {
  const h = db.__panelot;
  const tx = db.transaction(tables.split(","), mode, { durability });
  tx.__panelot = h;
  tx.__panelotTx = txId;
  tx.oncomplete = () => {
    tx.oncomplete = tx.onabort = null;
    h.complete(txId);
  };
  tx.onabort = () => {
    tx.oncomplete = tx.onabort = null;
    const e = tx.error;
    h.abort(txId, e ? e.name : undefined, e ? e.message : undefined);
  };
  return tx;
}

/**
 * Takes the Web Lock `name` (one queue for every page and the service worker of the
 * extension) and resolves, once it is granted, with the function that releases it. The
 * settings' read-check-write runs in Python in between (panelot.settings.chrome).
 */
export function holdLock(name) {
  return new Promise((granted, refused) => {
    navigator.locks.request(name, () => new Promise((release) => granted(release))).catch(refused);
  });
}

/** Commits `tx`; false when it was already committing or finished. */
export function commit(tx) {
  try {
    tx.commit();
    return true;
  } catch {
    return false;
  }
}

/** Aborts `tx`; false when it had already finished. */
export function abort(tx) {
  try {
    tx.abort();
    return true;
  } catch {
    return false;
  }
}

/** Parses key JSON, where {"$inf": ±1} stands for ±Infinity. */
function parseKeys(text) {
  if (!text.includes('"$inf"')) return JSON.parse(text);
  return JSON.parse(text, (_k, v) =>
    v !== null && typeof v === "object" && "$inf" in v ? v.$inf * Infinity : v,
  );
}

/** A key range from its JSON description [lower, upper, lowerOpen, upperOpen], or as given. */
function toRange(spec) {
  if (typeof spec !== "string") return spec === null ? undefined : spec;
  const [lower, upper, lowerOpen, upperOpen] = parseKeys(spec);
  if (lower === null) return IDBKeyRange.upperBound(upper, upperOpen);
  if (upper === null) return IDBKeyRange.lowerBound(lower, lowerOpen);
  return IDBKeyRange.bound(lower, upper, lowerOpen, upperOpen);
}

function failure(pos, e) {
  return [pos, e && e.name ? e.name : "UnknownError", e && e.message ? e.message : String(e)];
}

/** The object store `table` of `tx`, or its index `index`: one call instead of four. */
export function source(tx, table, index) {
  const store = tx.objectStore(table);
  return index ? store.index(index) : store;
}

function txOf(source) {
  return source.transaction || source.objectStore.transaction;
}

/** store.get(key), answered at `pos`; `keyJSON` when the key is JSON text (see parseKeys). */
export function get(store, key, pos, keyJSON) {
  let req;
  try {
    req = store.get(keyJSON ? parseKeys(key) : key);
  } catch (e) {
    return JSON.stringify([failure(pos, e)]);
  }
  const tx = store.transaction;
  onError(req, tx, pos);
  req.onsuccess = () => report(tx, pos, req.result);
  return undefined;
}

/**
 * store.get(key) for each key of the JSON array `keysJSON`, answered once at `pos` with
 * the array of records (null for a missing one): one call and one answer instead of
 * one of each per key. The first failure is the answer instead.
 */
export function getMany(store, keysJSON, pos) {
  const keys = parseKeys(keysJSON);
  const tx = store.transaction;
  const out = new Array(keys.length);
  let left = keys.length;
  let failed = false;
  for (let i = 0; i < keys.length; i++) {
    let req;
    try {
      req = store.get(keys[i]);
    } catch (e) {
      failed = true;
      return JSON.stringify([failure(pos, e)]);
    }
    req.onerror = (event) => {
      event.preventDefault();
      event.stopPropagation();
      if (failed) return;
      failed = true;
      const e = req.error;
      tx.__panelot.fail(tx.__panelotTx, pos, e ? e.name : "UnknownError", e ? e.message : "");
    };
    req.onsuccess = () => {
      out[i] = req.result === undefined ? null : req.result;
      if (--left === 0 && !failed) report(tx, pos, out);
    };
  }
  return undefined;
}

/**
 * One request: source[method](query[, count]) for get, getAll, getAllKeys, count, delete
 * and clear. `query` is a key, a key as JSON text (`mode` "keyJSON") or a range
 * description (`mode` "range", see toRange). Returns undefined, or the JSON of the
 * synchronous failure.
 */
export function read(source, method, query, mode, count, pos, pick) {
  let req;
  try {
    const q = mode === "range" ? toRange(query) : mode === "keyJSON" ? parseKeys(query) : query;
    req = count === undefined || count === null ? source[method](q) : source[method](q, count);
  } catch (e) {
    return JSON.stringify([failure(pos, e)]);
  }
  wire(req, txOf(source), pos, true, pick);
  return undefined;
}

// --- sort_by: V8's own sort with Dexie's cmp ------------------------------------------
//
// When a sort field holds values Dexie's cmp cannot order (null, booleans, objects,
// missing fields), the order is whatever V8's Array.prototype.sort makes of the NaN
// comparisons: Python asks V8 for it. Values arrive as JSON with tags for what JSON
// cannot carry: {"\u0000": "u"} undefined, {"\u0000": "n", "v": "NaN"} a number,
// {"\u0000": "d", "v": ms} a Date, {"\u0000": "b", "v": hex} binary, {"\u0000": "o"}
// any other object.

// A reviver returning undefined would delete the array item: undefined is this object.
const UNDEFINED = Object.freeze({});

function untag(_k, v) {
  if (v === null || typeof v !== "object" || Array.isArray(v) || !("\u0000" in v)) return v;
  switch (v["\u0000"]) {
    case "u": return UNDEFINED;
    case "n": return Number(v.v);
    case "d": return new Date(v.v);
    case "b": return new Uint8Array((v.v.match(/../g) || []).map((h) => parseInt(h, 16)));
    default: return {};
  }
}

function typeTag(x) {
  if (x === UNDEFINED) return "undefined";
  const t = typeof x;
  if (t !== "object") return t;
  if (ArrayBuffer.isView(x)) return "binary";
  return Object.prototype.toString.call(x).slice(8, -1);
}

/** Dexie 4's cmp, written here: keys in IndexedDB order, NaN for what is no key. */
function dexieCmp(a, b) {
  const ta = typeTag(a);
  const tb = typeTag(b);
  if (ta !== tb) {
    for (const tag of ["Array", "binary", "string", "Date"]) {
      if (ta === tag) return 1;
      if (tb === tag) return -1;
    }
    return NaN;
  }
  switch (ta) {
    case "number": case "Date": case "string":
      return a > b ? 1 : a < b ? -1 : 0;
    case "binary": {
      const l = Math.min(a.length, b.length);
      for (let i = 0; i < l; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
      return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
    }
    case "Array": {
      const l = Math.min(a.length, b.length);
      for (let i = 0; i < l; i++) {
        const res = dexieCmp(a[i], b[i]);
        if (res !== 0) return res;
      }
      return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
    }
  }
  return NaN;
}

/** The order V8 sorts the tagged values in (JSON of indexes), as Dexie's sortBy does. */
export function sortOrder(valuesJSON, reverse) {
  const values = JSON.parse(valuesJSON, untag);
  const order = reverse ? -1 : 1;
  const items = values.map((v, i) => [v, i]);
  items.sort((x, y) => dexieCmp(x[0], y[0]) * order);
  return JSON.stringify(items.map((x) => x[1]));
}

/**
 * getAllKeys(query) of an object store, answered as [key, key] entries (its index keys
 * are its primary keys), reversed when `reverse`: a walk over the primary key without
 * reading values. (getAllRecords would read every value too.)
 */
export function readKeyEntries(store, query, mode, reverse, pos) {
  let req;
  try {
    const q = mode === "range" ? toRange(query) : mode === "keyJSON" ? parseKeys(query) : query;
    req = store.getAllKeys(q);
  } catch (e) {
    return JSON.stringify([failure(pos, e)]);
  }
  const tx = store.transaction;
  onError(req, tx, pos);
  req.onsuccess = () => {
    const keys = req.result;
    const rows = new Array(keys.length);
    for (let i = 0; i < keys.length; i++) rows[i] = [keys[i], keys[i]];
    if (reverse) rows.reverse();
    report(tx, pos, rows);
  };
  return undefined;
}

/**
 * getAllRecords({query, direction, count}), answered as rows: values, primary keys,
 * [key, primaryKey, value] triples or [key, primaryKey] pairs (`want`).
 */
export function readRecords(source, query, direction, count, want, pos, pick) {
  let req;
  try {
    const options = { query: toRange(query), direction };
    if (count !== undefined && count !== null) options.count = count;
    req = source.getAllRecords(options);
  } catch (e) {
    return JSON.stringify([failure(pos, e)]);
  }
  const tx = txOf(source);
  onError(req, tx, pos);
  const project = projector(pick);
  req.onsuccess = () => {
    const records = project
      ? req.result.map((r) => ({ key: r.key, primaryKey: r.primaryKey, value: project(r.value) }))
      : req.result;
    const rows = new Array(records.length);
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      rows[i] =
        want === "values" ? r.value
        : want === "primaryKeys" ? r.primaryKey
        : want === "entries" ? [r.key, r.primaryKey]
        : [r.key, r.primaryKey, r.value];
    }
    report(tx, pos, rows);
  };
  return undefined;
}

/**
 * Writes or deletes many records at once. `values` is JSON text of an array (or an array
 * already built), `keys` an array of explicit keys (null entries: none), its JSON text,
 * or null. Item i is reported at position `base + i`. Errors are wired on every
 * request; success on the last only, unless `listenAll` (generated keys wanted), as
 * Dexie's bulk operations do. Returns the last position sent (-1: none) when nothing
 * failed synchronously, else JSON [failures, last position or -1].
 */
export function writeMany(store, method, values, keys, listenAll, base) {
  const failures = [];
  const items = typeof values === "string" ? JSON.parse(values) : values;
  if (typeof keys === "string") keys = parseKeys(keys);
  const count = items ? items.length : keys.length;
  const offset = base || 0;
  const tx = store.transaction;
  let last = null;
  for (let i = 0; i < count; i++) {
    const key = keys ? keys[i] : null;
    const pos = offset + i;
    let req = null;
    try {
      if (method === "delete") req = store.delete(key);
      else req = key === null || key === undefined ? store[method](items[i]) : store[method](items[i], key);
    } catch (e) {
      failures.push(failure(pos, e));
    }
    if (req) {
      wire(req, tx, pos, listenAll);
      last = [req, pos];
    }
  }
  if (last && !listenAll) wire(last[0], tx, last[1], true);
  const lastPos = last ? last[1] : -1;
  return failures.length ? JSON.stringify([failures, lastPos]) : lastPos;
}

// ---------------------------------------------------------------------------------------
// Blobs (plumbing for panelot.attachments.blobs). Attachment bytes are stored as Blobs; Python
// passes its bytes object, which arrives here as a PyProxy with the buffer protocol:
// the Blob is built from a view of Python's memory, so the bytes are copied once.

/** A Blob of the bytes behind a Python buffer (a PyProxy of bytes), with a MIME type. */
export function blobFromBytes(pyBytes, type) {
  const buffer = pyBytes.getBuffer("u8");
  try {
    return new Blob([buffer.data], { type: type || "" });
  } finally {
    buffer.release();
  }
}

/**
 * One Blob of `parts` (Blobs), an export file built piece by piece. `parts` may be a
 * Python list (a PyProxy, converted one level deep) or an array.
 */
export function blobFromParts(parts, type) {
  const list = typeof parts.toJs === "function" ? parts.toJs({ depth: 1 }) : parts;
  return new Blob(list, { type: type || "" });
}

/**
 * For each Blob of `blobs` (a Python list or an array), a Blob of the base64 of its
 * contents, read natively (never through Python): one call for a whole export. Four are
 * read at a time, so no more than four contents are held as text at once.
 */
export async function base64Blobs(blobs) {
  const list = typeof blobs.toJs === "function" ? blobs.toJs({ depth: 1 }) : blobs;
  const out = new Array(list.length);
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const i = next++;
      out[i] = await base64Blob(list[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, list.length) }, worker));
  return out;
}

/**
 * The SHA-256 of a Blob's contents as lowercase hex, computed by WebCrypto while Python
 * parses the same file: a promise that resolves to null if the Blob could not be read
 * (it never rejects), or null at once where this context has no WebCrypto.
 */
export function sha256Blob(blob) {
  return globalThis.crypto?.subtle ? hexDigest(blob) : null;
}

async function hexDigest(blob) {
  try {
    return await sha256Hex(await blob.arrayBuffer());
  } catch {
    return null;
  }
}

async function base64Blob(blob) {
  if (blob.size === 0) return new Blob([]); // Chromium reads an empty Blob as "data:"
  const url = await new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
  return new Blob([url.slice(url.indexOf(",") + 1)]);
}

/** True for a Blob (or File). */
export function isBlob(value) {
  return value instanceof Blob;
}

/**
 * The array of records in JSON `text`, with JS handles (Blobs) put back in: `places` is
 * JSON [[index, field], ...], one entry per handle, in order. One call instead of one
 * per field of each record holding a Blob.
 */
export function parseWithHandles(text, places, ...handles) {
  const items = JSON.parse(text);
  const at = JSON.parse(places);
  for (let j = 0; j < at.length; j++) items[at[j][0]][at[j][1]] = handles[j];
  return items;
}
