// Settings → Export & import → Back up & restore: the whole database (and the settings,
// never an API key) as one file, and replacing everything with one
// (window.panelot.backup, web/backup.mjs). A restore asks first, saying what it
// replaces; the file is read and checked whole before anything is written, so a refused
// file changes nothing. The views follow the change feed, so they show the restored data
// by themselves.
import { h, download, fileSize, plural } from "./panel_dom.mjs";
import { CLIENT_ID, q } from "./panel_store.mjs";
import { explainError } from "./panel_errors.mjs";
import { openDialog, setStatus, statusError, toast } from "./panel_ui.mjs";

/** Tables shown by name; every other row is counted as "other records". */
const NAMED = { threads: "conversation", nodes: "message", attachments: "attachment" };
/** Rows that are the database's bookkeeping, not the user's data. */
const BOOKKEEPING = new Set(["commandReceipts"]);

/** The part's elements and state: one per page, kept across re-renders of Settings. */
let part = null;

/**
 * The backup part of the Export & import section. The same element is returned on every
 * render, so a backup or restore under way (its progress, its result) survives one.
 * `rerender` draws Settings again (after a restore changed the settings).
 */
export function backupPart(app, rerender) {
  part ??= build(app);
  part.rerender = rerender;
  return part.root;
}

/** Settings was left: drop a finished backup's file and the last result (unless busy). */
export function forgetBackup() {
  if (!part || part.busy) return;
  part.file = null;
  part.ready.hidden = true;
  part.progress.hidden = true;
  setStatus(part.status, "");
  part.keys.hidden = true;
  part.root.dataset.state = "idle";
}

function build(app) {
  const p = { app, busy: false, file: null, exportedAt: null, rerender: null, exports: 0, restores: 0 };
  p.exportButton = h("button", {
    type: "button",
    id: "backup-export",
    text: "Back up everything",
    on: { click: () => runExport(p) },
  });
  p.input = h("input", { id: "backup-file", type: "file", accept: ".json,application/json", hidden: true });
  p.input.addEventListener("change", () => {
    const file = p.input.files?.[0];
    p.input.value = "";
    if (file) runRestore(p, file);
  });
  p.restoreButton = h("button", {
    type: "button",
    id: "backup-restore",
    text: "Restore from backup…",
    on: { click: () => p.input.click() },
  });
  p.bar = h("progress", { id: "backup-progress", max: 1, value: 0 });
  p.barLabel = h("label", { id: "backup-progress-label", attrs: { for: "backup-progress" } });
  p.barText = h("p", { id: "backup-progress-text", class: "note" });
  p.progress = h("div", { id: "backup-progress-box", class: "backup-progress", hidden: true }, p.barLabel, p.bar, p.barText);
  p.summary = h("p", { id: "backup-summary", class: "status ok" });
  p.ready = h(
    "div",
    { id: "backup-ready", hidden: true },
    p.summary,
    h("div", { class: "row" }, h("button", { type: "button", id: "backup-download", class: "primary", text: "Download", on: { click: () => save(p) } })),
  );
  p.status = h("p", { id: "backup-status", class: "status", attrs: { role: "status" } });
  p.keys = h("p", { id: "backup-keys", class: "status warn", hidden: true });
  p.root = h(
    "div",
    { id: "settings-backup", class: "subsection", dataset: { state: "idle", exportCount: "0", restoreCount: "0" } },
    h("h3", { text: "Back up & restore" }),
    h("p", {
      class: "note",
      text: "A backup is one file with every conversation, message and attachment, and your settings. API keys are never in it.",
    }),
    h("div", { class: "row" }, p.exportButton, p.restoreButton, p.input),
    p.progress,
    p.ready,
    p.status,
    p.keys,
  );
  return p;
}

// ---- progress ---------------------------------------------------------------------------

function begin(p, state) {
  p.busy = true;
  p.root.dataset.state = state;
  p.root.setAttribute("aria-busy", "true");
  p.exportButton.disabled = true;
  p.restoreButton.disabled = true;
  p.bar.dataset.reports = "0";
  p.keys.hidden = true;
}

function end(p, state) {
  p.busy = false;
  p.root.dataset.state = state;
  p.root.removeAttribute("aria-busy");
  p.exportButton.disabled = false;
  p.restoreButton.disabled = false;
  p.progress.hidden = true;
}

/** Show a progress bar: `label`, `done` of `total` (no total: indeterminate), `text`. */
function showProgress(p, label, done, total, text) {
  p.progress.hidden = false;
  p.barLabel.textContent = label;
  if (total > 0) {
    p.bar.max = total;
    p.bar.value = Math.min(done, total);
  } else {
    p.bar.removeAttribute("value");
  }
  p.barText.textContent = text;
  p.bar.dataset.reports = String(Number(p.bar.dataset.reports ?? 0) + 1);
}

function exportProgress(p, g) {
  const rows = `${g.completedRows} of ${plural(g.totalRows, "record")}`;
  showProgress(p, "Backing up…", g.completedRows, g.totalRows, `${rows} · ${fileSize(g.bytes)} written`);
}

function restoreProgress(p, g) {
  if (g.stage === "writing") {
    showProgress(p, "Writing the backup…", g.completedRows, g.totalRows, `${g.completedRows} of ${plural(g.totalRows, "record")} written`);
  } else {
    const text = `${fileSize(g.bytes)} of ${fileSize(g.totalBytes)} read · ${g.completedRows} of ${plural(g.totalRows, "record")} checked`;
    showProgress(p, "Reading and checking the backup…", g.bytes, g.totalBytes, text);
  }
}

// ---- what a backup holds ------------------------------------------------------------------

/** "2 conversations, 14 messages and 1 attachment" (and other records) of `{table: rows}`. */
function contents(tables) {
  const parts = Object.entries(NAMED).map(([table, noun]) => plural(tables?.[table] ?? 0, noun));
  const others = Object.entries(tables ?? {})
    .filter(([table]) => !NAMED[table] && !BOOKKEEPING.has(table))
    .reduce((sum, [, rows]) => sum + rows, 0);
  if (others) parts.push(plural(others, "other record"));
  return `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}

function when(ms) {
  return ms ? new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "an unknown date";
}

/** The local date of `ms` as YYYY-MM-DD, for the file name. */
function day(ms) {
  const d = new Date(ms ?? Date.now());
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

// ---- back up --------------------------------------------------------------------------

async function runExport(p) {
  if (p.busy) return;
  begin(p, "exporting");
  p.file = null;
  p.ready.hidden = true;
  setStatus(p.status, "");
  showProgress(p, "Backing up…", 0, 0, "Starting…");
  let state = "failed";
  try {
    const out = await window.panelot.backup.export({ settings: true, onProgress: (g) => exportProgress(p, g) });
    p.file = out.file;
    p.exportedAt = out.exportedAt;
    const size = out.file?.size ?? out.size;
    p.summary.textContent = `Backup ready: ${fileSize(size)}, with ${contents(out.tables)}, and your settings (no API keys).`;
    p.summary.dataset.bytes = String(size);
    p.ready.hidden = false;
    state = "ready";
  } catch (error) {
    statusError(p.status, error, "Backing up failed:");
  } finally {
    p.exports += 1;
    p.root.dataset.exportCount = String(p.exports);
    end(p, state);
  }
}

function save(p) {
  if (!p.file) return;
  download(`panelot-backup-${day(p.exportedAt)}.json`, p.file);
}

// ---- restore --------------------------------------------------------------------------

/**
 * `{text, detail}` of a refused or failed restore, which wrote nothing: a problem with the
 * file named as one (explainError would name the field), anything else as explainError
 * says it; either way ending with "Nothing was changed."
 */
function explainBackupError(error) {
  const { text, detail } = explainError(error);
  const fileProblem = ["ValidationError", "DataError", "ImportError"].includes(error?.name);
  const said = fileProblem ? "This file is not a Panelot backup, or it is damaged." : text;
  return { text: `${said} Nothing was changed.`, detail };
}

/** What is stored now, as list items (counts from `db.counts`; unknown if it fails). */
async function storedNow(app) {
  const [counts, usage] = await Promise.all([
    q("db.counts").catch(() => null),
    app.caps.attachments ? q("attachment.usage").catch(() => null) : null,
  ]);
  return [
    counts ? contents(counts) : "every conversation, message and attachment",
    usage ? `attachments taking ${fileSize(usage.total)}` : null,
    "every run, skill, memory and plugin",
  ].filter(Boolean);
}

/** The confirmation: what is stored now, what the backup holds; resolves true for OK. */
async function confirmRestore(app, peek, file) {
  const now = await storedNow(app);
  const list = (id, items) => h("ul", { id, class: "dialog-list" }, items.map((text) => h("li", { text })));
  const body = [
    h("p", { text: "Everything now stored will be deleted:" }),
    list("restore-now", now),
    h("p", { text: `and replaced by the backup of ${when(peek.exportedAt)} (${fileSize(peek.size ?? file.size)}):` }),
    list("restore-backup", [contents(peek.tables)]),
    h("p", {
      id: "restore-settings",
      text: peek.settings
        ? "Your settings (Provider and Retention) will be replaced by the backup's too."
        : "The backup has no settings: yours stay as they are.",
    }),
    h("p", {
      id: "restore-keys-note",
      text: "API keys are never in a backup: a connection whose key this browser does not have must have its key entered again in Settings → Provider.",
    }),
  ];
  const answer = await openDialog({
    title: "Replace everything with this backup?",
    text: "This cannot be undone. To keep what is here now, back it up first.",
    body,
    ok: "Replace everything",
    danger: true,
    kind: "restore",
  });
  return answer !== null;
}

/** The connections (labels) whose API key is among `refs`, for the notice. */
async function connectionsNeeding(refs) {
  try {
    const { value } = await q("settings.get", { group: "providers" });
    const names = (value.connections ?? [])
      .filter((c) => refs.includes(c.credentialRef))
      .map((c) => (c.baseUrl ? `${c.label ?? c.id} (${c.baseUrl})` : (c.label ?? c.id)));
    return names.length ? names : refs;
  } catch {
    return refs;
  }
}

async function runRestore(p, file) {
  if (p.busy) return;
  const app = p.app;
  begin(p, "checking");
  setStatus(p.status, "");
  let outcome = "refused";
  let openId = null;
  try {
    let peek;
    try {
      peek = await window.panelot.backup.peek(file);
    } catch (error) {
      statusError(p.status, error, "Cannot restore:", explainBackupError);
      return;
    }
    if (!(await confirmRestore(app, peek, file))) {
      outcome = "cancelled";
      setStatus(p.status, "Restore cancelled: nothing was changed.");
      return;
    }
    // Replies streaming now would land in conversations the backup replaces.
    for (const threadId of [...app.chat.replies.streams.keys()]) app.chat.replies.stop(threadId, { discard: true });
    // The open conversation may not be in the backup: its end is this restore, not news.
    openId = app.chat.threadId;
    if (openId) app.chat.deleting.add(openId);
    p.root.dataset.state = "restoring";
    showProgress(p, "Reading and checking the backup…", 0, file.size, "Starting…");
    const out = await window.panelot.backup.restore(file, {
      clientId: CLIENT_ID,
      submissionId: crypto.randomUUID(),
      settings: true,
      onProgress: (g) => restoreProgress(p, g),
    });
    if (out.status !== "completed") {
      outcome = "failed";
      statusError(p.status, out.error, "Restore failed:", explainBackupError);
      return;
    }
    outcome = "completed";
    await restored(p, out, peek, openId).catch((error) => console.warn("after the restore", error));
  } catch (error) {
    // Before the restore ran (the dialog, a query) or from panelot.backup itself: no write.
    outcome = "failed";
    statusError(p.status, error, "Restore failed:", explainBackupError);
  } finally {
    if (openId) app.chat.deleting.delete(openId);
    p.restores += 1;
    p.root.dataset.restoreCount = String(p.restores);
    p.root.dataset.outcome = outcome;
    end(p, outcome);
  }
}

/** After a completed restore: the result notice, the provider, the open conversation. */
async function restored(p, out, peek, openId) {
  const app = p.app;
  const { restored: rows } = out.response;
  const settings = out.settingsApplied
    ? " Settings restored."
    : peek.settings
      ? ""
      : " Your settings were kept (the backup has none).";
  const text = `Restored ${contents(rows)} from the backup of ${when(peek.exportedAt)}.${settings}`;
  setStatus(p.status, text, "ok");
  const missing = out.missingCredentials ?? [];
  if (missing.length) {
    const names = await connectionsNeeding(missing);
    p.keys.textContent = `API keys are not in backups: enter the key again in Settings → Provider for ${names.join(", ")}.`;
    p.keys.hidden = false;
  }
  if (openId) {
    const kept = await q("thread.get", { threadId: openId }).then(
      () => true,
      (error) => error?.name !== "NotFoundError",
    );
    app.chat.deleting.delete(openId);
    if (!kept) app.chat.gone(openId, { quiet: true }); // same task: no live result between
  }
  if (out.settingsApplied) {
    await app.chat.loadProvider();
    if (app.view === "settings") await p.rerender?.();
  }
  if (!p.root.isConnected) toast(text, 6000);
}
