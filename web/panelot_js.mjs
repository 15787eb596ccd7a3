// The one JS helper of the storage path, registered into Pyodide as `panelot_js`.
// Converting values read from IndexedDB with Pyodide's to_py() needs a Python walk
// afterwards (JS null arrives as jsnull); a native JSON.stringify plus Python's
// json.loads is several times faster. These functions return that JSON, or null when
// the value holds anything JSON cannot carry (Date, binary, Blob, non-finite numbers),
// in which case Python falls back to to_py(). No storage logic lives here.

const { getPrototypeOf } = Object;
const OBJECT = Object.prototype;

/** True when `value` holds only what JSON carries exactly (a tight walk, no replacer). */
function isPlain(value) {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    const type = typeof v;
    if (type === "string" || type === "boolean" || v === null) continue;
    if (type === "number") {
      if (!Number.isFinite(v)) return false;
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

/** JSON of IDBRecords from getAllRecords(), as [[key, primaryKey, value], ...] or a projection. */
export function encodeRecords(records, want) {
  const rows = new Array(records.length);
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    rows[i] = want === "values" ? r.value : want === "primaryKeys" ? r.primaryKey : [r.key, r.primaryKey, r.value];
  }
  return plainJSON(rows);
}

// ---------------------------------------------------------------------------------------
// Request wiring. Handing an IDBRequest to Python costs ~100 µs (a new JsProxy per
// request, measured), against ~3 µs for a plain call. So Python never receives the
// requests: it asks these functions to issue them, and gets called back with
// (txId, pos, json, raw) on success or (txId, pos, name, message) on error. The
// transaction logic, and the stepping of the transaction body, stay in Python.
// Synchronous failures (DataError, DataCloneError) are returned as [[pos, name, message]].

/** `value` with only the fields named in the comma-separated `pick` (absent ones left out). */
function project(value, fields) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const out = {};
  for (const f of fields) if (Object.prototype.hasOwnProperty.call(value, f)) out[f] = value[f];
  return out;
}

function wire(req, txId, pos, listen, ok, fail, pick) {
  req.onerror = (event) => {
    event.preventDefault(); // the Python body decides whether the transaction aborts
    event.stopPropagation();
    const e = req.error;
    fail(txId, pos, e ? e.name : "UnknownError", e ? e.message : "");
  };
  if (listen) {
    const fields = pick ? pick.split(",") : null;
    req.onsuccess = () => {
      let value = req.result;
      if (fields) value = Array.isArray(value) ? value.map((v) => project(v, fields)) : project(value, fields);
      const text = encodeValue(value);
      ok(txId, pos, text, text === null ? value : undefined);
    };
  }
}

/**
 * Starts a transaction over the comma-separated `tables`, tagged with `txId` for the
 * complete/abort handlers: one call from Python instead of five.
 */
export function begin(db, tables, mode, txId, complete, abort) {
  const tx = db.transaction(tables.split(","), mode);
  tx.__panelotTx = txId;
  tx.oncomplete = complete;
  tx.onabort = abort;
  return tx;
}

/** Parses key JSON, where {"$inf": ±1} stands for ±Infinity. */
function parseKeys(text) {
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

function attempt(failures, pos, issue) {
  try {
    return issue();
  } catch (e) {
    failures.push([pos, e && e.name ? e.name : "UnknownError", e && e.message ? e.message : String(e)]);
    return null;
  }
}

/**
 * One request: source[method](query[, count]) for get, getAll, getAllKeys, count, delete
 * and clear. `query` is a key, a range description (see toRange) or null. Returns "" or
 * the JSON of the synchronous failures.
 */
export function read(source, method, query, mode, count, txId, pos, ok, fail, pick) {
  const failures = [];
  // mode: "key" (a key as given), "keyJSON" (a key as JSON text), "range" (see toRange)
  const q = mode === "range" ? toRange(query) : mode === "keyJSON" ? parseKeys(query) : query;
  const req = attempt(failures, pos, () =>
    count === undefined || count === null ? source[method](q) : source[method](q, count),
  );
  if (req) wire(req, txId, pos, true, ok, fail, pick);
  return failures.length ? JSON.stringify(failures) : "";
}

/** getAllRecords({query, direction, count}), answered as JSON rows (see encodeRecords). */
export function readRecords(source, query, direction, count, want, txId, pos, ok, fail, pick) {
  const failures = [];
  const options = { query: toRange(query), direction };
  if (count !== undefined && count !== null) options.count = count;
  const req = attempt(failures, pos, () => source.getAllRecords(options));
  if (req) {
    req.onerror = (event) => {
      event.preventDefault();
      event.stopPropagation();
      const e = req.error;
      fail(txId, pos, e ? e.name : "UnknownError", e ? e.message : "");
    };
    const fields = pick ? pick.split(",") : null;
    req.onsuccess = () => {
      const records = fields
        ? req.result.map((r) => ({ key: r.key, primaryKey: r.primaryKey, value: project(r.value, fields) }))
        : req.result;
      const text = encodeRecords(records, want);
      ok(txId, pos, text, text === null ? records : undefined);
    };
  }
  return failures.length ? JSON.stringify(failures) : "";
}

/**
 * Writes or deletes many records at once. `values` is JSON text of an array (or an array
 * already built), `keys` an array of explicit keys (null entries: none), its JSON text,
 * or null. Item i is reported at position `base + i`. Errors are wired on every
 * request; success on the last only, unless `listenAll` (generated keys wanted), as
 * Dexie's bulk operations do. Returns JSON [failures, last position or -1, sent].
 */
export function writeMany(store, method, values, keys, txId, listenAll, ok, fail, base) {
  const failures = [];
  const items = typeof values === "string" ? JSON.parse(values) : values;
  if (typeof keys === "string") keys = parseKeys(keys);
  const count = items ? items.length : keys.length;
  const offset = base || 0;
  let last = null;
  let sent = 0;
  for (let i = 0; i < count; i++) {
    const key = keys ? keys[i] : null;
    const pos = offset + i;
    const req = attempt(failures, pos, () => {
      if (method === "delete") return store.delete(key);
      return key === null || key === undefined ? store[method](items[i]) : store[method](items[i], key);
    });
    if (req) {
      wire(req, txId, pos, listenAll, ok, fail);
      last = [req, pos];
      sent += 1;
    }
  }
  if (last && !listenAll) wire(last[0], txId, last[1], true, ok, fail);
  return JSON.stringify([failures, last ? last[1] : -1, sent]);
}

// ---------------------------------------------------------------------------------------
// Blobs (plumbing for panelot.blobs). Attachment bytes are stored as Blobs; Python
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

/** True for a Blob (or File). */
export function isBlob(value) {
  return value instanceof Blob;
}
