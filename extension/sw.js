// Module service worker: opens the side panel from the toolbar action, and runs the
// daily retention pass (a chrome.alarms alarm) with Pyodide and the panelot wheel.
//
// import() is banned in a service worker, so Pyodide's module factory is imported
// statically and handed to loadPyodide (see loadRuntime in runtime.mjs). The worker
// loses its state when idle, so each alarm that finds retention on starts Python again
// (from the memory snapshot when it restores); when the setting is off it returns
// before loading anything.
//
// runtime.mjs and presence.mjs are links to web/, and pyodide/ is built next to them
// (build.py: extension/ and web/ share the root of dist/extension).
import createPyodideModule from "./pyodide/pyodide.asm.mjs";
import { loadRuntime } from "./runtime.mjs";
import { sparedThreadIds } from "./presence.mjs";

const RETENTION_ALARM = "panelot.retention";
const DAY_MINUTES = 24 * 60;
// The retention setting as panelot.settings stores it: {version, value: {days}}. Read
// here only to decide whether to load Pyodide; Python reads it again and decides.
const RETENTION_SETTING_KEY = "settings.retention";
const DB_NAME = "panelot_v1";

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

chrome.runtime.onInstalled.addListener(() => ensureRetentionAlarm());
chrome.runtime.onStartup.addListener(() => ensureRetentionAlarm());

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

// Alarms cannot be fired on demand, so tests (and the debugging console) call this.
self.panelotRunRetention = runRetention;

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name !== RETENTION_ALARM) return;
  runRetention().catch((error) => console.error("retention pass failed:", error));
});
