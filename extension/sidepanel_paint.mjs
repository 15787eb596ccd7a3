// The side panel's first paint, a module script of its own (async, a small graph) so it
// does not wait for the runtime's modules: the stored conversation list, read from
// IndexedDB directly (panel_firstpaint.mjs) and drawn with the live list's rows
// (panel_rows.mjs), marked as not yet live. The rows and the buttons that act on them
// are held back (inert) until sidepanel.mjs's live list takes over; what is typed in the
// search box meanwhile is kept and applies once the list is live. Nothing is painted with
// nothing stored, once the store is ready, or when the panel reopens a conversation
// (which needs the store to show).
import { listedThreads, storedThreads } from "./panel_firstpaint.mjs";
import { threadItem } from "./panel_rows.mjs";
import { applyIcons } from "./panel_icons.mjs";
import { reopenThreadId } from "./presence.mjs";

/** What acts on the painted list, held back until the live list takes over. */
export const HELD_BACK = [
  "thread-list",
  "nav-new",
  "nav-settings",
  "nav-back",
  "filter-archived",
  "filter-folder",
  "filter-tag",
];

const NO_ACTIONS = { open() {}, patch() {}, edit() {}, remove() {} };

async function paint() {
  const [records, reopen] = await Promise.all([
    storedThreads().catch(() => null),
    reopenThreadId().catch(() => null),
  ]);
  const threads = records ? listedThreads(records) : [];
  const late = ["ready", "error"].includes(window.__panelotState);
  // Tests wait for this to know the first paint was decided: "stored" or "none".
  document.body.dataset.firstPaint = !threads.length || reopen || late ? "none" : "stored";
  if (document.body.dataset.firstPaint === "none") return;
  document.body.dataset.live = "0";
  for (const id of HELD_BACK) document.getElementById(id).inert = true;
  applyIcons(document.querySelector(".topbar"));
  document.getElementById("thread-list").replaceChildren(
    ...threads.map((t) => threadItem(t, false, NO_ACTIONS)),
  );
  document.getElementById("starting").hidden = false;
  document.getElementById("boot").hidden = true;
  document.getElementById("app").hidden = false;
  requestAnimationFrame(() => {
    window.__firstPaintAt = Math.round(performance.now() * 10) / 10;
  });
}

paint();
