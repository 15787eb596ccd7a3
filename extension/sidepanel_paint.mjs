// The side panel's first paint, a module script of its own (async, a small graph) so it
// does not wait for the runtime's modules: the stored conversation list, read from
// IndexedDB directly (panel_firstpaint.mjs) and drawn with the live list's rows
// (panel_rows.mjs), marked as not yet live. The rows and the buttons that act on them
// are held back (inert) until sidepanel.mjs's live list takes over; what is typed in the
// search box meanwhile is kept and applies once the list is live. The live list starts
// from the painted rows (`painted`): a thread unchanged since keeps its row's element.
// When the panel reopens a conversation (presence.mjs) whose record is stored, that
// conversation's view is painted instead: its stored title, the last messages of its
// visible branch (panel_paint_thread.mjs), and the composer, where typing works at once
// and a message sent waits for the store (panel_early_send.mjs).
// Nothing is painted with nothing stored, or once the store is ready.
import { listedThreads, storedThreads } from "./panel_firstpaint.mjs";
import { rowKey, threadItem } from "./panel_rows.mjs";
import { applyIcons } from "./panel_icons.mjs";
import { reopenThreadId } from "./presence.mjs";
import { holdSends } from "./panel_early_send.mjs";
import { paintedNodes, storedWindow } from "./panel_paint_thread.mjs";

/**
 * What acts on the painted list, held back until the live list takes over. ("New chat"
 * is not: on the painted list it opens a painted new conversation, see paintNewChat.)
 */
export const HELD_BACK = [
  "thread-list",
  "nav-settings",
  "nav-back",
  "filter-archived",
  "filter-folder",
  "filter-tag",
  "chat-menu",
  "attach",
];

/**
 * The painted rows, by thread id: `{key, el}` (panel_rows.mjs rowKey), which the live
 * list starts from, so a row whose thread is unchanged keeps its element; and `actions`,
 * what their buttons do once it has taken over (nothing before: the rows are inert);
 * `threadId`, the conversation painted open (the one the panel reopens), or null;
 * `newChat`, whether "New chat" was pressed on the painted list (a new conversation is
 * painted open, empty, and made once the store is ready).
 */
export const painted = { rows: new Map(), actions: null, threadId: null, newChat: false };

const LATER = Object.fromEntries(
  ["open", "patch", "edit", "remove"].map((name) => [name, (...args) => painted.actions?.[name](...args)]),
);

/**
 * The rows drawn before the first frame: more than a side panel shows at once. Building a
 * row costs ~0.1 ms while the page's code is still cold, so the rest of a long list (300
 * conversations: ~35 ms) is drawn right after that frame instead of delaying it.
 */
const FIRST_ROWS = 40;

/** Run `fn` once after the next frame (or after 100 ms, for a page that draws none). */
function afterFrame(fn) {
  let done = false;
  const once = () => {
    if (!done) {
      done = true;
      fn();
    }
  };
  requestAnimationFrame(() => setTimeout(once, 0));
  setTimeout(once, 100);
}

async function paint() {
  const reopening = reopenThreadId().catch(() => null);
  const [records, reopen, branch] = await Promise.all([
    storedThreads().catch(() => null),
    reopening,
    reopening.then((id) => (id ? storedWindow(id).catch(() => null) : null)),
  ]);
  const threads = records ? listedThreads(records) : [];
  const open = reopen ? (records ?? []).find((r) => r?.id === reopen && typeof r.title === "string") : null;
  const late = ["ready", "error"].includes(window.__panelotState);
  const decided = late ? "none" : open ? "thread" : threads.length && !reopen ? "stored" : "none";
  // Tests wait for this to know the first paint was decided (and, when it paints, done):
  // "stored", "thread" or "none".
  if (decided === "none") {
    document.body.dataset.firstPaint = "none";
    return;
  }
  document.body.dataset.live = "0";
  for (const id of HELD_BACK) document.getElementById(id).inert = true;
  const list = document.getElementById("thread-list");
  const rowOf = (t) => {
    const row = { key: rowKey(t, false), el: threadItem(t, false, LATER) };
    painted.rows.set(t.id, row);
    return row.el;
  };
  list.replaceChildren(...threads.slice(0, FIRST_ROWS).map(rowOf));
  afterFrame(() => {
    // The rest of the list, once the first screen is shown (unless the live list has
    // taken over meanwhile: it draws them itself).
    if (document.body.dataset.live === "0") list.append(...threads.slice(FIRST_ROWS).map(rowOf));
    document.body.dataset.firstPaint = decided;
  });
  if (open) paintThread(open, branch);
  else document.getElementById("nav-new").addEventListener("click", paintNewChat);
  applyIcons(document.getElementById("app"));
  document.getElementById("starting").hidden = false;
  document.getElementById("boot").hidden = true;
  document.getElementById("app").hidden = false;
  requestAnimationFrame(() => {
    window.__firstPaintAt = Math.round(performance.now() * 10) / 10;
  });
}

/**
 * The conversation `record` (a stored `threads` record) painted open, its composer usable;
 * `branch`: its visible branch's last messages (panel_paint_thread.mjs), or null.
 */
function paintThread(record, branch) {
  painted.threadId = record.id;
  showChat(record.title || "New chat", record);
  document.getElementById("starting").textContent =
    "Starting the local store… The conversation shows in a moment; you can type meanwhile.";
  if (branch) {
    const box = document.getElementById("messages");
    box.replaceChildren(...paintedNodes(branch));
    requestAnimationFrame(() => (box.scrollTop = box.scrollHeight));
  }
  holdSends(record.id);
}

/**
 * "New chat" pressed on the painted list, before the store is ready: an empty
 * conversation painted open, its composer usable. Nothing is written now; once the store
 * is ready the panel makes the conversation (as "New chat" does) and sends what was
 * pressed meanwhile into it (sidepanel.mjs). Ignored once the panel is live (the live
 * "New chat" is sidepanel.mjs's).
 */
function paintNewChat() {
  if (document.body.dataset.live !== "0" || painted.newChat) return;
  painted.newChat = true;
  document.getElementById("nav-new").inert = true; // one new conversation
  showChat("New chat", null);
  document.getElementById("messages").replaceChildren();
  document.getElementById("starting").textContent =
    "Starting the local store… You can type meanwhile; the conversation is made in a moment.";
  holdSends(null);
  document.getElementById("input").focus();
}

/** The chat view shown with `title`; `record`: the stored thread (its badges), or null. */
function showChat(title, record) {
  document.body.dataset.view = "chat";
  document.getElementById("view-threads").hidden = true;
  document.getElementById("view-chat").hidden = false;
  document.getElementById("view-title").textContent = title;
  document.getElementById("nav-back").dataset.icon = "back";
  document.getElementById("chat-pin").hidden = !record?.pinned;
  document.getElementById("chat-archived").hidden = !record?.archived;
}

paint();
