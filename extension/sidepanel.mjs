// Side panel: boot progress, then the app (thread list, conversation, settings).
// All storage goes through window.panelot.send / .query / .live (panel_store.mjs). The
// thread list and the open conversation are live queries: what another panel, the
// service worker or Dexie code commits shows here without a reload.
//
// runtime.mjs and presence.mjs are links to web/: build.py puts extension/ and web/ side
// by side at the root of dist/extension, so these paths hold in both trees.
import { STAGES, bootRuntime } from "./runtime.mjs";
import { h, replace, reconcile } from "./panel_dom.mjs";
import { rowKey, threadItem } from "./panel_rows.mjs";
import { icon, applyIcons } from "./panel_icons.mjs";
import { cmd, q, live, hasQuery, countShown } from "./panel_store.mjs";
import { openDialog, confirmDialog, toast, toastError } from "./panel_ui.mjs";
import { Chat } from "./panel_chat.mjs";
import { reopenThreadId, setReopen } from "./presence.mjs";
import { renderSettings, stopSettings } from "./panel_settings.mjs";
import { markdownReady } from "./panel_markdown.mjs";
import { setupSearch } from "./panel_search.mjs";
import { HELD_BACK, painted } from "./sidepanel_paint.mjs";
import { takeEarlySend } from "./panel_early_send.mjs";
import { startSyncLoop } from "./panel_sync_loop.mjs";

/** When this page's modules were loaded and evaluated (ms since navigation). */
const MODULES_AT = Math.round(performance.now() * 10) / 10;

const LABELS = {
  runtime: "Loading Python runtime",
  package: "Installing packages",
  database: "Opening database",
  ready: "Ready",
};

// ---- boot ---------------------------------------------------------------------------

applyIcons();
const stageList = document.getElementById("stages");
const items = new Map(
  STAGES.map((stage) => {
    const item = h("li", { text: LABELS[stage], dataset: { stage } });
    stageList.append(item);
    return [stage, item];
  }),
);
let currentStage = null;

/** Mark earlier stages done and `stage` active; on "error" mark the current stage failed. */
function show(stage) {
  (window.__bootStages ??= []).push(stage);
  if (stage === "error") {
    items.get(currentStage)?.classList.replace("active", "failed");
    return;
  }
  currentStage = stage;
  const index = STAGES.indexOf(stage);
  STAGES.forEach((name, position) => {
    const done = position < index || stage === "ready";
    items.get(name).className = done ? "done" : position === index ? "active" : "";
  });
  document.getElementById("progress-bar").className = `progress-bar p${index + 1}`;
}

document.getElementById("retry").addEventListener("click", () => location.reload());

// ---- app ----------------------------------------------------------------------------

export const app = {
  view: "threads",
  threads: [],
  allThreads: [],
  caps: {},
  filter: { search: "", archived: "active", folder: "", tag: "" },
  chat: null,
  show: null,
  refreshThreads: null,
  openThread: null,
  search: null,
};
window.panelotApp = app;

const viewTitle = document.getElementById("view-title");
const navBack = document.getElementById("nav-back");

/** Switch the visible view: "threads", "chat" or "settings". */
function showView(view) {
  if (app.view === "settings" && view !== "settings") stopSettings();
  app.view = view;
  for (const section of document.querySelectorAll(".view")) {
    section.hidden = section.dataset.view !== view;
  }
  document.body.dataset.view = view;
  navBack.replaceChildren(icon(view === "threads" ? "menu" : "back", { size: 18 }));
  navBack.title = view === "threads" ? "Conversations" : "Back";
  if (view === "threads") viewTitle.textContent = "Conversations";
  if (view === "settings") {
    viewTitle.textContent = "Settings";
    renderSettings(app, document.getElementById("view-settings"));
  }
  if (view === "chat") viewTitle.textContent = app.chat.thread?.title || "New chat";
}
app.show = showView;

navBack.addEventListener("click", () => {
  if (app.view === "settings" && app.chat.threadId) showView("chat");
  else {
    app.chat.close();
    showView("threads");
    renderThreads(); // no row is the open one any more
  }
});
document.getElementById("nav-settings").addEventListener("click", () => showView("settings"));
document.getElementById("nav-new").addEventListener("click", () => {
  // Before the panel is live, the first paint's own (sidepanel_paint.mjs paintNewChat).
  if (document.body.dataset.live !== "0") newThread();
});

/** Open an empty conversation: the newest empty "New chat" when there is one, else a new one. */
async function newThread() {
  try {
    const { threadId } = await cmd("thread.create", { title: "New chat", reuseEmpty: true });
    await openThread(threadId);
    document.getElementById("input").focus();
  } catch (error) {
    toastError(error, "Could not create a conversation:");
  }
}

/** Open a conversation; `at`: a message to show and highlight (a search result's). */
async function openThread(threadId, { at = null } = {}) {
  showView("chat");
  await app.chat.open(threadId, { at });
  viewTitle.textContent = app.chat.thread?.title || "New chat";
}
app.openThread = openThread;

// ---- thread list --------------------------------------------------------------------

const list = document.getElementById("thread-list");
const empty = document.getElementById("thread-empty");
const search = document.getElementById("thread-search");
const fArchived = document.getElementById("filter-archived");
const fFolder = document.getElementById("filter-folder");
const fTag = document.getElementById("filter-tag");

search.addEventListener("input", () => {
  app.filter.search = search.value;
  renderThreads();
});
app.filter.search = search.value; // typed over the first paint, before this module ran
for (const [select, key] of [
  [fArchived, "archived"],
  [fFolder, "folder"],
  [fTag, "tag"],
]) {
  select.addEventListener("change", () => {
    app.filter[key] = select.value;
    watchThreads();
    app.search?.refresh();
  });
}

function fillSelect(select, label, values, current) {
  const key = JSON.stringify([values, current]);
  if (select.dataset.filled === key) return; // unchanged: an open drop-down stays open
  select.dataset.filled = key;
  replace(
    select,
    h("option", { value: "", text: label }),
    values.map((v) => h("option", { value: v, text: v, selected: v === current })),
  );
  select.value = values.includes(current) ? current : "";
}

/** The `thread.list` arguments of the filters. */
function listArgs() {
  const { archived, folder, tag } = app.filter;
  const args = { archived: archived === "all" ? null : archived === "archived" };
  if (folder) args.folderId = folder;
  if (tag) args.tag = tag;
  return args;
}

// Two live queries: the filtered list (the rows), and every thread (the folder and tag
// choices). Each delivery re-renders; rows whose thread did not change are kept.
const watch = { key: null, stopList: null, stopAll: null, ready: null };

/**
 * Follow the list live with the current filters (restarted only when they changed).
 * Resolves once the rows of these filters are shown.
 */
function watchThreads() {
  const args = listArgs();
  const key = JSON.stringify(args);
  if (!watch.stopAll) {
    watch.stopAll = live(
      "thread.list",
      { archived: null },
      (all) => {
        app.allThreads = all;
        fillFilters();
        if (!empty.hidden) renderThreads(); // the empty message counts the archived ones
      },
      (error) => toastError(error, "Could not list the conversations:"),
    );
  }
  if (watch.key === key && watch.stopList) return watch.ready;
  watch.stopList?.();
  watch.key = key;
  let shown;
  watch.ready = new Promise((resolve) => (shown = resolve));
  watch.stopList = live(
    "thread.list",
    args,
    (threads) => {
      if (watch.key !== key) return;
      app.threads = threads;
      renderThreads();
      shown();
    },
    (error) => {
      toastError(error, "Could not list the conversations:");
      shown();
    },
  );
  return watch.ready;
}

/**
 * Show the list afresh: restart its live queries and resolve once their first result is
 * shown. Live results keep it current afterwards, so the panel's own writes need no call.
 */
async function refreshThreads() {
  watch.stopList?.();
  watch.stopAll?.();
  Object.assign(watch, { key: null, stopList: null, stopAll: null });
  await watchThreads();
}
app.refreshThreads = refreshThreads;

function fillFilters() {
  const folders = [...new Set(app.allThreads.map((t) => t.folderId).filter(Boolean))].sort();
  const tags = [...new Set(app.allThreads.flatMap((t) => t.tags ?? []))].sort();
  fillSelect(fFolder, "All folders", folders, app.filter.folder);
  fillSelect(fTag, "All tags", tags, app.filter.tag);
}

/**
 * The rows drawn, by thread id: `{key, el}` (key: what the row shows, rowKey). It starts
 * with the first paint's rows (sidepanel_paint.mjs), so the live list taking over keeps
 * the element of every thread unchanged since, and redraws only those that changed.
 */
const rows = painted.rows;

/** Draw the list, keyed by thread id: a row whose thread is unchanged keeps its element. */
function renderThreads() {
  // With text search on (panel_search.mjs), its message results show under the titles,
  // and it says "No results" when neither finds anything.
  const texts = app.search?.active() ?? false;
  const needle = app.filter.search.trim().toLowerCase();
  const shown = app.threads.filter((t) => !needle || (t.title || "").toLowerCase().includes(needle));
  const current = app.chat?.threadId ?? null;
  const els = shown.map((t) => {
    const key = rowKey(t, current === t.id);
    let row = rows.get(t.id);
    if (!row || row.key !== key) {
      row = { key, el: threadItem(t, current === t.id, rowActions) };
      rows.set(t.id, row);
    }
    return row.el;
  });
  const ids = new Set(shown.map((t) => t.id));
  for (const id of rows.keys()) if (!ids.has(id)) rows.delete(id);
  reconcile(list, els);
  empty.hidden = texts || shown.length > 0;
  if (!shown.length) replace(empty, emptyMessage(needle));
  app.search?.layout();
}

/** What an empty list says; with every conversation archived, the way to them. */
function emptyMessage(needle) {
  if (needle) return "No conversation title matches your search.";
  if (app.filter.archived === "archived") return "No archived conversations.";
  const filtered = app.filter.folder || app.filter.tag;
  const archived = (app.allThreads ?? []).filter((t) => t.archived).length;
  if (app.filter.archived !== "active" || filtered || !archived) return "No conversations yet. Press + to start one.";
  const show = () => {
    fArchived.value = app.filter.archived = "archived";
    watchThreads();
  };
  return [
    archived === 1 ? "Your only conversation is archived. " : `All ${archived} conversations are archived. `,
    h("button", { id: "show-archived", class: "link", type: "button", text: "Show archived", on: { click: show } }),
  ];
}
app.renderThreads = renderThreads;

/** What a row's buttons do (panel_rows.mjs). */
const rowActions = {
  open: (t) => openThread(t.id),
  patch: (t, patch) => patchThread(t, patch),
  edit: (t) => editThread(t),
  remove: (t) => deleteThread(t),
};
painted.actions = rowActions; // the first paint's rows, kept by the live list, act too


/**
 * thread.update with a patch, naming the values the user saw (`expect`): if another
 * window changed them meanwhile, nothing is written and both views show the current state.
 * The list and the open conversation are live: they show the result without a re-read.
 */
export async function patchThread(t, patch) {
  const expect = Object.fromEntries(Object.keys(patch).map((k) => [k, t[k] ?? null]));
  try {
    await cmd("thread.update", { threadId: t.id, patch, expect });
  } catch (error) {
    if (error?.name === "ConflictError") {
      toast("This conversation was changed in another window, so nothing was saved. It now shows the current state.", 5000);
    } else {
      toastError(error, "Update failed:");
    }
    return;
  }
  if (patch.archived !== undefined) toast(patch.archived ? "Archived" : "Restored from archive");
  if (patch.pinned !== undefined) toast(patch.pinned ? "Pinned" : "Unpinned");
}
app.patchThread = patchThread;

export async function editThread(t) {
  const values = await openDialog({
    title: "Rename conversation",
    fields: [
      // maxLength: the domain's limits (MAX_TITLE_CHARS, MAX_FOLDER_CHARS; 50 tags of 64)
      { name: "title", label: "Title", value: t.title ?? "", maxLength: 300 },
      { name: "folder", label: "Folder", value: t.folderId ?? "", placeholder: "none", maxLength: 120 },
      { name: "tags", label: "Tags (comma separated)", value: (t.tags ?? []).join(", "), maxLength: 3300 },
    ],
    ok: "Save",
  });
  if (!values) return;
  const tags = [...new Set(values.tags.split(",").map((s) => s.trim()).filter(Boolean))];
  await patchThread(t, { title: values.title.trim(), folderId: values.folder.trim() || null, tags });
}
app.editThread = editThread;

export async function deleteThread(t) {
  const ok = await confirmDialog(
    "Delete conversation?",
    `“${t.title || "Untitled"}” and all its messages, branches and attachments will be deleted. This cannot be undone.`,
  );
  if (!ok) return;
  app.chat.replies.stop(t.id, { discard: true });
  app.chat.deleting.add(t.id); // its live view going away is not news from elsewhere
  try {
    const result = await cmd("thread.delete", { threadId: t.id });
    toast(`Deleted (${result.deleted?.nodes ?? 0} messages)`);
  } catch (error) {
    toastError(error, "Delete failed:");
    return;
  } finally {
    app.chat.deleting.delete(t.id);
  }
  if (app.chat.threadId === t.id) {
    app.chat.close();
    showView("threads");
  }
}
app.deleteThread = deleteThread;

// ---- the database's version ------------------------------------------------------------

/**
 * What to say about a database that differs from Panelot's declaration, or null.
 * `diff` is db.describe's `schemaDiff`: another app (a Dexie app's `version(2)`) upgraded
 * it, and Panelot runs on it with the tables it knows.
 */
export function schemaNotice(described) {
  const diff = described?.schemaDiff;
  if (!diff?.newer) return null;
  const extra = [...diff.extraTables, ...diff.extraIndexes];
  return (
    `Running on a newer database: another app upgraded it to version ${described.version / 10} ` +
    `(Panelot's is ${diff.declaredVersion / 10}). Panelot works with the tables it knows` +
    (extra.length ? `; it leaves ${extra.join(", ")} to that app.` : ".")
  );
}

// Live: db.describe runs again when the database is reopened after another context's
// upgrade (a versionchange), so the notice appears without a reload.
function watchSchema() {
  const notice = document.getElementById("db-notice");
  live(
    "db.describe",
    {},
    (described) => {
      const text = schemaNotice(described);
      notice.textContent = text ?? "";
      notice.hidden = !text;
      notice.dataset.version = String(described?.version ?? "");
    },
    (error) => console.warn("db.describe", error),
  );
}

// ---- start --------------------------------------------------------------------------

/**
 * Reopen the conversation that was open when the panel was last closed or reloaded (kept
 * in chrome.storage.local, so retention can spare it: presence.mjs).
 */
async function reopenLast() {
  const threadId = await reopenThreadId().catch(() => null);
  // The first paint showed a conversation (sidepanel_paint.mjs): it stays until the live
  // one is drawn over it, or the list replaces it.
  const toList = () => {
    if (!painted.threadId) return;
    replace(document.getElementById("messages")); // its painted messages go with it
    showView("threads");
  };
  if (!threadId) return toList();
  try {
    await q("thread.get", { threadId });
  } catch {
    await setReopen(null).catch(() => {}); // deleted meanwhile: the list it is
    return toList();
  }
  if (painted.threadId === threadId) await app.chat.open(threadId); // its title known: no "New chat"
  await openThread(threadId);
}

/**
 * Send the message pressed before the store was ready (panel_early_send.mjs), once, with
 * the submission id fixed at the press. Its conversation must be the one open; else it
 * stays in the box, unsent.
 */
async function sendEarly() {
  const early = takeEarlySend();
  if (!early) return;
  // Pressed in the painted new conversation (threadId null): the one made at ready.
  const threadId = early.threadId ?? (painted.newChat ? app.chat.threadId : null);
  if (!threadId || app.chat.threadId !== threadId) {
    toast("Your message was not sent: its conversation is no longer there. It is still in the message box.", 6000);
    return;
  }
  await app.chat.composer.send({ early });
}

/** The app shown, the boot screen hidden (or the other way round). */
function showApp(shown) {
  document.getElementById("boot").hidden = shown;
  document.getElementById("app").hidden = !shown;
}

/** The live list is shown: what the first paint (sidepanel_paint.mjs) held back is live now. */
function goneLive() {
  if (document.body.dataset.live !== "0") return;
  delete document.body.dataset.live;
  for (const id of HELD_BACK) document.getElementById(id).inert = false;
  document.getElementById("nav-new").inert = false; // held once a painted new chat opened
  document.getElementById("starting").hidden = true;
}

/**
 * The store did not start: the first paint's list (or conversation) is taken away, not
 * left looking usable behind the failure, so the boot screen's error is all there is.
 */
function dropPainted() {
  if (document.body.dataset.live !== "0") return;
  document.body.dataset.live = "failed";
  painted.rows.clear();
  list.replaceChildren();
  if (painted.threadId) replace(document.getElementById("messages"));
  document.getElementById("starting").hidden = true;
}

const panelot = bootRuntime({ onProgress: show });
panelot.marks.modules = MODULES_AT;

try {
  // The Markdown libraries load alongside the runtime (far quicker): in before any reply shows.
  await Promise.all([panelot.ready, markdownReady()]);
  document.getElementById("timing").textContent = `Loaded in ${panelot.timings.total_ms} ms`;
  // What this runtime answers, asked together (each is a round trip through Python).
  const probed = ["attachment.get", "settings.get", "credential.status", "storage.estimate"];
  const [attachments, settings, credentials, estimate] = await Promise.all(probed.map(hasQuery));
  app.caps = { attachments, settings, credentials, estimate };
  app.chat = new Chat(app);
  app.search = setupSearch(app, {
    input: search,
    list,
    empty,
    results: document.getElementById("search-results"),
    none: document.getElementById("search-none"),
  });
  // The live list's first result is read while the provider's settings are.
  const listed = refreshThreads();
  await app.chat.loadProvider();
  showApp(true);
  // Else the painted conversation stays (reopenLast), or the painted new one (newThread).
  if (!painted.threadId && !painted.newChat) showView("threads");
  watchSchema();
  await listed;
  if (!painted.threadId && !painted.newChat) goneLive(); // else once the conversation is, below
  if (window.__firstPaintAt !== undefined) panelot.marks.first_paint = window.__firstPaintAt;
  requestAnimationFrame(() => panelot.mark("live"));
  if (painted.newChat) await newThread(); // "New chat" pressed on the painted list
  else await reopenLast();
  goneLive();
  document.body.dataset.ready = "1";
  sendEarly(); // not awaited: it waits for the reply
  countShown(); // not awaited: counts missing from older records, after the list shows
  startSyncLoop(); // not awaited: continuous sync when configured (panel_sync_loop.mjs)
} catch (error) {
  dropPainted();
  showApp(false); // the failure and its Retry are on the boot screen
  document.getElementById("error").textContent = String(error?.message ?? error);
  document.getElementById("failure").hidden = false;
}
