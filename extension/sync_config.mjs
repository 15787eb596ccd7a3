// Whether sync is configured, read from the sync state database without Python: the
// service worker's alarm and the side panel decide with it whether to start sync at all.
//
// py_src/panelot/sync/state.py keeps the configuration in `panelot_sync_v1`, table `meta`,
// row `{key: "config", value: {server, database, user?, ref?}}`; `sync.forget` deletes the
// row. A profile that never configured sync has no such database, and this check does not
// create one (an open that would create it is aborted in its upgrade). Python reads the
// configuration again when it syncs: this only saves loading (or asking) it for nothing.

export const SYNC_STATE_DB = "panelot_sync_v1";

/** Resolves to whether `panelot_sync_v1` holds a sync configuration (never rejects). */
export function syncConfigured(name = SYNC_STATE_DB) {
  return new Promise((resolve) => {
    let request;
    try {
      request = indexedDB.open(name);
    } catch {
      resolve(false);
      return;
    }
    // No such database yet: do not create it (the store makes it, with its schema).
    request.onupgradeneeded = () => request.transaction.abort();
    request.onerror = () => resolve(false);
    request.onblocked = () => resolve(false);
    request.onsuccess = () => {
      const db = request.result;
      const done = (answer) => {
        db.close();
        resolve(answer);
      };
      if (!db.objectStoreNames.contains("meta")) return done(false);
      try {
        const read = db.transaction("meta", "readonly").objectStore("meta").get("config");
        read.onsuccess = () => {
          const value = read.result?.value;
          done(typeof value?.server === "string" && typeof value?.database === "string");
        };
        read.onerror = () => done(false);
      } catch {
        done(false);
      }
    };
  });
}
