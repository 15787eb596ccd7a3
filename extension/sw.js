// Module service worker: opens the side panel from the toolbar action, and runs the
// daily retention pass and, with no panel syncing, a sync every few minutes (chrome.alarms
// alarms) with Pyodide and the panelot wheel.
//
// import() is banned in a service worker, so Pyodide's module factory is imported
// statically and handed to loadPyodide (see loadRuntime in runtime.mjs). The worker
// loses its state when idle, so each alarm that finds retention on (or sync configured,
// and no panel holding the sync lock) starts Python again (from the memory snapshot when
// it restores); otherwise it returns before loading anything.
//
// runtime.mjs and presence.mjs are links to web/, and pyodide/ is built next to them
// (build.py: extension/ and web/ share the root of dist/extension).
import createPyodideModule from "./pyodide/pyodide.asm.mjs";
import { loadRuntime, prepareSnapshotCopy } from "./runtime.mjs";
import { sparedThreadIds } from "./presence.mjs";
import { syncConfigured } from "./sync_config.mjs";

const RETENTION_ALARM = "panelot.retention";
const DAY_MINUTES = 24 * 60;
// The retention setting as panelot.settings stores it: {version, value: {days}}. Read
// here only to decide whether to load Pyodide; Python reads it again and decides.
const RETENTION_SETTING_KEY = "settings.retention";
const DB_NAME = "panelot_v1";
const SYNC_ALARM = "panelot.sync";
// Every 5 minutes (chrome.alarms allows 0.5): a background sync costs starting Python,
// and an open panel syncs continuously anyway; see docs/sync.md, "The service worker".
const SYNC_MINUTES = 5;
// The Web Lock of the profile's sync (py_src/panelot/sync/live.py, LOCK_NAME): a panel's
// continuous loop holds it while it syncs.
const SYNC_LOCK = "panelot-sync";

chrome.sidePanel
  .setPanelBehavior({ openPanelOnActionClick: true })
  .catch((error) => console.error("setPanelBehavior failed:", error));

/** Create the daily alarm unless it exists with that period (re-creating would reset it). */
async function ensureRetentionAlarm() {
  const alarm = await chrome.alarms.get(RETENTION_ALARM);
  if (alarm?.periodInMinutes !== DAY_MINUTES) {
    await chrome.alarms.create(RETENTION_ALARM, { periodInMinutes: DAY_MINUTES });
  }
}

/** Create the sync alarm unless it exists with that period. */
async function ensureSyncAlarm() {
  const alarm = await chrome.alarms.get(SYNC_ALARM);
  if (alarm?.periodInMinutes !== SYNC_MINUTES) {
    await chrome.alarms.create(SYNC_ALARM, { periodInMinutes: SYNC_MINUTES });
  }
}

function ensureAlarms() {
  return Promise.all([ensureRetentionAlarm(), ensureSyncAlarm()]);
}

/**
 * Store the memory snapshot and Pyodide's wasm as local copies (web/local_copy.mjs) now,
 * so the first panel of this build reads them (both ~100–200 ms sooner than the
 * extension's files) instead of keeping them at the end of its own start. Resolves with
 * prepareSnapshotCopy's outcomes, `{snapshot, wasm}`.
 */
async function prepareCopy() {
  const outcomes = await prepareSnapshotCopy(new URL("./", import.meta.url).href);
  for (const [file, outcome] of Object.entries(outcomes)) {
    if (outcome !== "kept" && outcome !== "present") {
      console.warn(`panelot: the ${file}'s local copy was not stored at install (${outcome})`);
    }
  }
  return outcomes;
}

// Installed, updated (a new build: a new snapshot), or Chrome updated.
chrome.runtime.onInstalled.addListener(() => Promise.all([ensureAlarms(), prepareCopy()]));
chrome.runtime.onStartup.addListener(() => ensureAlarms());

let loading = null; // the runtime for this worker's lifetime

function runtime() {
  loading ??= loadRuntime({ base: new URL("./", import.meta.url).href, createPyodideModule }).catch(
    (error) => {
      loading = null;
      throw error;
    },
  );
  return loading;
}

async function retentionOn() {
  const stored = (await chrome.storage.local.get([RETENTION_SETTING_KEY]))[RETENTION_SETTING_KEY];
  const days = stored?.value?.days;
  return Number.isInteger(days) && days > 0;
}

/**
 * One retention pass: replace the messages of threads older than the setting's days with
 * their Markdown summary, sparing every thread an open page shows and the one a panel
 * will reopen (presence.mjs: Web Locks and chrome.storage.local; read at the pass, so a
 * panel closed since no longer counts). Resolves to `{ran: false}` when retention is
 * off, else `{ran: true, snapshot, spared: [threadId...], days, archived: [threadId...]}`,
 * `snapshot` saying how this worker started Python (loadRuntime's outcome: "restored",
 * or why it loaded normally).
 */
async function runRetention() {
  if (!(await retentionOn())) return { ran: false };
  const { rt, snapshot } = await runtime();
  await rt.start(DB_NAME, JSON.stringify(await sparedThreadIds()), false); // (the budget's)
  const spared = await sparedThreadIds(); // after the (slow) start: what is open now
  return { ran: true, snapshot, spared, ...JSON.parse(await rt.run_retention(JSON.stringify(spared))) };
}

/**
 * One background sync (`sync.now`: pull, then push) when sync is configured and no
 * panel holds the sync lock (its continuous loop syncs). Resolves to `{ran: false,
 * reason}` ("not configured", or "a panel is syncing" when the lock is held), else to
 * `{ran: true, snapshot, configured, ok, pull, push}` or `{ran: true, snapshot,
 * configured, ok: false, error}` (panelot.runtime.run_sync), holding the lock until done.
 */
async function runSync() {
  if (!(await syncConfigured())) return { ran: false, reason: "not configured" };
  return navigator.locks.request(SYNC_LOCK, { ifAvailable: true }, async (lock) => {
    if (!lock) return { ran: false, reason: "a panel is syncing" };
    const { rt, snapshot } = await runtime();
    await rt.start(DB_NAME, JSON.stringify(await sparedThreadIds()), false); // (the budget's)
    return { ran: true, snapshot, ...JSON.parse(await rt.run_sync()) };
  });
}

// Alarms and installs cannot be fired on demand, so tests (and the debugging console) call these.
self.panelotRunRetention = runRetention;
self.panelotRunSync = runSync;
self.panelotPrepareCopy = prepareCopy;

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === RETENTION_ALARM) {
    runRetention().catch((error) => console.error("retention pass failed:", error));
  } else if (alarm.name === SYNC_ALARM) {
    runSync().catch((error) => console.error("background sync failed:", error));
  }
});
