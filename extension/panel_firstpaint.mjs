// The first paint, before Python is ready: the stored conversation list, read from
// panelot_v1's `threads` table directly (plain records, the light index) and chosen and
// ordered by thread.list's own rules (py_src/panelot/tree/listing.py, with its default
// filters: active threads, pinned first, then newest). The panel draws it marked as not
// yet live and hands over to the live query the moment the store is ready. It writes
// nothing (a database that does not exist yet is not created here) and shows nothing
// made up: each row is a stored record. tests/browser/test_first_paint.py compares it
// with thread.list on the same records, malformed ones included.

/** Open `name` if it exists, else null; never creates it, never blocks another open. */
export function openExisting(name) {
  return new Promise((resolve) => {
    let request;
    try {
      request = indexedDB.open(name);
    } catch {
      resolve(null);
      return;
    }
    // Only a database that does not exist yet asks for an upgrade here: leave creating it
    // to the store (the abort fails this open, and nothing is created).
    request.onupgradeneeded = () => request.transaction.abort();
    request.onsuccess = () => {
      const db = request.result;
      db.onversionchange = () => db.close(); // the store upgrades it: step aside
      resolve(db);
    };
    request.onerror = () => resolve(null);
    request.onblocked = () => resolve(null);
  });
}

/** The result of an IDBRequest. */
export function result(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/**
 * The `threads` records of `dbName` in the order of its `updatedAt` index (as
 * thread.list reads them), or null when there is no such database or table.
 */
export async function storedThreads(dbName = "panelot_v1") {
  const db = await openExisting(dbName);
  if (!db) return null;
  try {
    if (!db.objectStoreNames.contains("threads")) return null;
    const store = db.transaction("threads", "readonly").objectStore("threads");
    if (!store.indexNames.contains("updatedAt")) return null;
    return await result(store.index("updatedAt").getAll());
  } catch {
    return null;
  } finally {
    db.close();
  }
}

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
const absent = (value) => value === null || value === undefined;
const isNumber = (value) => typeof value === "number";

/** Whether a record has the shape of the fields a list shows (listing.py's `_listable`). */
function listable(row) {
  const tags = row.tags;
  return (
    typeof row.id === "string" &&
    typeof row.title === "string" &&
    isNumber(row.updatedAt) &&
    (absent(row.folderId) || typeof row.folderId === "string") &&
    (absent(tags) || (Array.isArray(tags) && tags.every((t) => typeof t === "string"))) &&
    ["pinned", "archived"].every((k) => absent(row[k]) || typeof row[k] === "boolean") &&
    (absent(row.stats) || isObject(row.stats))
  );
}

/** Whether the record's `shown` counts hold (shown.py's `shown_of`). */
function shownHolds(row) {
  const memo = row.shown;
  if (!isObject(memo) || !("leafId" in memo)) return false;
  if ((memo.leafId ?? null) !== (row.leafId ?? null)) return false;
  return [memo.turns, memo.messages].every((v) => Number.isInteger(v) && v >= 0);
}

/**
 * What `thread.list {}` answers for these records (`records` in `updatedAt` index order):
 * active threads, pinned first, each group newest first; malformed records left out; a
 * `shown` that does not hold left off its row.
 */
export function listedThreads(records) {
  const pinned = [];
  const rest = [];
  for (let i = records.length - 1; i >= 0; i -= 1) {
    const row = records[i];
    if (!isObject(row) || row.archived) continue;
    (row.pinned ? pinned : rest).push(row);
  }
  return [...pinned, ...rest].filter(listable).map((row) => {
    if (!("shown" in row) || shownHolds(row)) return row;
    const { shown: _dropped, ...kept } = row;
    return kept;
  });
}
