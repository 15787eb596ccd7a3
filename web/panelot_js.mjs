// The one JS helper of the storage path, registered into Pyodide as `panelot_js`.
// Converting values read from IndexedDB with Pyodide's to_py() needs a Python walk
// afterwards (JS null arrives as jsnull); a native JSON.stringify plus Python's
// json.loads is several times faster. These functions return that JSON, or null when
// the value holds anything JSON cannot carry (Date, binary, Blob, non-finite numbers),
// in which case Python falls back to to_py(). No storage logic lives here.

const { getPrototypeOf } = Object;
const OBJECT = Object.prototype;

function plainJSON(value) {
  let plain = true;
  const text = JSON.stringify(value, function check(key, v) {
    const raw = this[key];
    if (typeof raw === "number") {
      if (!Number.isFinite(raw)) plain = false;
    } else if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
      if (getPrototypeOf(raw) !== OBJECT && getPrototypeOf(raw) !== null) plain = false;
    } else if (typeof raw === "bigint" || typeof raw === "function" || typeof raw === "symbol") {
      plain = false;
    }
    return v;
  });
  return plain ? text : null;
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
