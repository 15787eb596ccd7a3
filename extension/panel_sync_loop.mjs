// Continuous sync while a panel is open (docs/sync.md, "Continuous"): once the store is
// ready, and after Settings → Sync saves a configuration, the panel starts the loop of
// `sync.start` when sync is configured. Several panels may each start one: the loop
// waits for the profile's Web Lock `panelot-sync`, so one syncs and the others queue
// (`sync.status`: running, not syncing) until it closes. Closing the panel ends its loop
// and releases the lock. "Stop syncing" (`sync.forget`) stops the loop in Python.
import { cmd } from "./panel_store.mjs";
import { syncConfigured } from "./sync_config.mjs";

/**
 * Start the loop when sync is configured: resolves to `sync.start`'s status, or null
 * (not configured, or the start failed: logged, the next panel or Save tries again).
 */
export async function startSyncLoop() {
  if (!(await syncConfigured())) return null;
  try {
    return await cmd("sync.start", {});
  } catch (error) {
    console.warn("sync.start", error);
    return null;
  }
}
