// The settings view: provider connection, sync (panel_settings_sync.mjs), storage, data (backup and restore, in
// panel_backup.mjs; export/import), retention.
import { h, replace, bytes, plural } from "./panel_dom.mjs";
import { cmd, q, live } from "./panel_store.mjs";
import { errorView, openDialog, setStatus as status, statusError, toast, toastError } from "./panel_ui.mjs";
import { sparedThreadIds } from "./presence.mjs";
import { providerSection } from "./panel_settings_provider.mjs";
import { syncSection } from "./panel_settings_sync.mjs";
import { backupPart, forgetBackup } from "./panel_backup.mjs";

/** The live queries of the open settings view (stopped by stopLive). */
let stops = [];

function stopLive() {
  for (const stop of stops) stop();
  stops = [];
}

/** The settings view was left: stop its live queries, forget a finished backup. */
export function stopSettings() {
  stopLive();
  forgetBackup();
}

/**
 * Render the settings view into `root` (re-reads everything each time). The storage
 * figures are live until stopSettings.
 */
export async function renderSettings(app, root) {
  stopLive();
  root.classList.add("settings");
  const rerender = () => renderSettings(app, root);
  const provider = providerSection(app, rerender);
  const storage = h("section", { id: "settings-storage" }, h("h2", { text: "Storage" }), h("p", { class: "note", text: "Reading…" }));
  const data = dataSection(app, rerender);
  const retention = retentionSection(app);
  const sync = syncSection(app, rerender);
  replace(root, provider, sync, storage, data, retention, aboutSection());
  fillStorage(app, storage);
}

/** A status paragraph showing a failure (errorView: plain sentence, Details). */
function errorLine(error, lead) {
  const line = h("p");
  statusError(line, error, lead);
  return line;
}

// ---- storage --------------------------------------------------------------------------

/**
 * The storage section, live: `attachment.usage` as a live query, and the storage
 * estimate read again whenever it or any thread changes (the estimate reads no table,
 * so a live query of it alone would never run again).
 */
function fillStorage(app, section) {
  const estimatePart = h("div", { class: "storage-estimate" });
  const attachmentPart = h("div", { class: "storage-attachments" });
  replace(section, h("h2", { text: "Storage" }), estimatePart, attachmentPart);
  if (app.caps.estimate) {
    let asked = 0;
    const refresh = async () => {
      const mine = ++asked;
      let parts;
      try {
        parts = estimateParts(await q("storage.estimate"));
      } catch (error) {
        parts = [errorLine(error, "Storage use is unavailable:")];
      }
      if (mine === asked) replace(estimatePart, parts); // a later read's answer wins
    };
    // Each live query's first result reads it the first time.
    stops.push(live("thread.list", { archived: null }, () => refresh(), () => {}));
    if (app.caps.attachments) stops.push(live("attachment.usage", {}, () => refresh(), () => {}));
  }
  if (!app.caps.attachments) {
    replace(attachmentPart, h("p", { class: "note", text: "Attachments are not available in this build." }));
    return;
  }
  const usage = h("p", { id: "attachment-usage", class: "status" });
  const freed = h("p", { id: "storage-freed", class: "status", hidden: true });
  const filled = [
    usage,
    h("p", {
      class: "note",
      text: "Over budget, the oldest attachments outside the open conversation are removed first; their messages keep a placeholder.",
    }),
    h("div", { class: "row" }, cleanupButton(app, freed)),
    freed,
  ];
  stops.push(
    live(
      "attachment.usage",
      {},
      (use) => {
        usage.textContent = `Attachments: ${plural(use.count, "file")}, ${bytes(use.total)} of a ${bytes(use.budget)} budget`;
        if (!attachmentPart.contains(usage)) replace(attachmentPart, filled);
      },
      (error) => replace(attachmentPart, errorLine(error, "Attachment use is unavailable:")),
    ),
  );
}

/**
 * The usage line, meter and warning of a storage estimate. `usage` is already less what
 * a clean-up freed and the browser still counts (`lagging`, said in the line's title).
 */
function estimateParts(est) {
  const pct = est.percent ?? 0;
  const bar = h("div");
  bar.style.width = `${Math.min(100, Math.max(pct, 0.5))}%`;
  return [
    h("p", {
      id: "storage-usage",
      class: `status ${est.warn ? "warn" : ""}`,
      text: `${bytes(est.usage)} used of ${est.quota ? bytes(est.quota) : "unknown"}${est.percent !== null ? ` (${est.percent}%)` : ""}`,
      title: est.lagging ? `The browser still reports ${bytes(est.reported)}: it has not yet counted ${bytes(est.lagging)} freed.` : "",
    }),
    h("div", { class: `meter${est.warn ? " warn" : ""}` }, bar),
    est.warn
      ? h("p", {
          class: "status warn",
          id: "storage-warning",
          text: "Storage is over 80% full. Clean up attachments or delete old conversations.",
        })
      : null,
  ];
}

/**
 * "Clean up attachments now": attachment.evict, down to the budget and, with storage over
 * 80% full, down to 70% (Python decides on the stored sizes and the estimate less what
 * earlier clean-ups freed, so a second click does not evict again on a lagging figure).
 * `freed` shows what it freed; the live figures show the rest.
 */
function cleanupButton(app, freed) {
  return h("button", {
    id: "attachment-cleanup",
    type: "button",
    text: "Clean up attachments now",
    on: {
      click: async () => {
        try {
          const args = { sparedThreadIds: await sparedThreadIds() };
          if (app.chat.threadId) args.activeThreadId = app.chat.threadId;
          if (app.caps.estimate) args.storagePercent = 70;
          const r = await cmd("attachment.evict", args);
          const removed = plural(r.evicted?.length ?? r.evicted ?? 0, "attachment");
          freed.textContent = `Freed ${bytes(r.freed ?? 0)} (${removed} removed)`;
          freed.hidden = false;
          toast(`Removed ${removed}, freed ${bytes(r.freed ?? 0)}`);
        } catch (error) {
          toastError(error, "Clean-up failed:");
        }
      },
    },
  });
}

// ---- data: export / import --------------------------------------------------------------

/** What the legacy import could not bring over of its images, in plain words ("" if all). */
function legacyImageNotes(r) {
  const missing = r.imagesWithoutBytes ?? 0;
  const links = r.externalImages ?? 0;
  let out = "";
  if (missing) {
    out += ` ${plural(missing, "image")} could not be imported: the old data did not hold ${missing === 1 ? "it" : "them"}.`;
  }
  if (links) out += ` ${plural(links, "web image")} ${links === 1 ? "is" : "are"} kept as a link.`;
  return out;
}

function dataSection(app, rerender) {
  const state = h("p", { class: "status", id: "data-status" });
  const fileInput = h("input", { id: "import-file", type: "file", accept: ".json,application/json", hidden: true });
  fileInput.addEventListener("change", async () => {
    const file = fileInput.files?.[0];
    fileInput.value = "";
    if (!file) return;
    try {
      let data;
      try {
        data = JSON.parse(await file.text());
      } catch {
        status(state, "This file is not a JSON export, so nothing was imported.", "error");
        return;
      }
      // One command for the whole file: a bundle imports all of its threads or none.
      const out = await cmd("thread.import", { data });
      const count = out.threads ?? 1;
      const last = out.threadId ?? null;
      status(state, `Imported ${count} conversation${count === 1 ? "" : "s"}.`, "ok");
      if (count === 1 && last) toast("Imported; open it from the list");
    } catch (error) {
      statusError(state, error, "Import failed:");
    }
  });
  const current = app.chat.thread;
  const legacy = async () => {
    try {
      const r = await cmd("legacy.import", {});
      const skipped = r.skippedThreads ? ` (${plural(r.skippedThreads, "conversation")} already here, skipped)` : "";
      status(
        state,
        `Legacy import: ${plural(r.threads, "conversation")}, ${plural(r.messages, "message")}, ${plural(r.images, "image")}${skipped}.` +
          legacyImageNotes(r),
        "ok",
      );
    } catch (error) {
      statusError(state, error, "Legacy import failed:");
    }
  };
  return h(
    "section",
    { id: "settings-data" },
    h("h2", { text: "Export & import" }),
    backupPart(app, rerender),
    h("h3", { text: "Conversations" }),
    current
      ? h(
          "div",
          { class: "row" },
          h("button", { type: "button", id: "export-current-json", text: "This chat as JSON", on: { click: () => app.chat.exportThread(false) } }),
          h("button", { type: "button", id: "export-current-md", text: "as Markdown", on: { click: () => app.chat.exportThread(true) } }),
        )
      : null,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", id: "import-button", text: "Import JSON…", on: { click: () => fileInput.click() } }),
      h("button", { type: "button", id: "legacy-import", text: "Import from the previous extension", on: { click: legacy } }),
      fileInput,
    ),
    h("p", { class: "note", text: "Imports always add new conversations; nothing existing is overwritten." }),
    state,
  );
}

// ---- retention ------------------------------------------------------------------------

/**
 * "Summarize and remove old messages…": retention's destructive pass, once, now. It asks
 * first, saying how many conversations and messages it would remove (retention.preview),
 * and spares every thread an open page shows and the one a panel will reopen. Not to be
 * confused with a thread's "Archive" (a flag only; nothing is removed).
 */
function retentionSection(app) {
  const days = h("input", { id: "retention-days", type: "number", min: 1, value: 90 });
  const state = h("p", { class: "status" });
  const run = async () => {
    const n = Number(days.value);
    if (!Number.isInteger(n) || n < 1) {
      status(state, "Enter a whole number of days.", "error");
      return;
    }
    try {
      const spare = { days: n, sparedThreadIds: await sparedThreadIds() };
      if (app.chat.threadId) spare.activeThreadId = app.chat.threadId;
      const plan = await q("retention.preview", spare);
      if (!plan.threads) {
        status(state, `No conversation untouched for more than ${plural(n, "day")} has messages to remove.`, "ok");
        return;
      }
      const ok = await openDialog({
        title: "Summarize and remove old messages?",
        text:
          `${plural(plan.threads, "conversation")} untouched for more than ${plural(n, "day")}: ` +
          `${plural(plan.messages, "message")} will be deleted, and each conversation keeps a ` +
          "Markdown summary of its messages in their place. Pinned conversations and the open ones are kept. " +
          "This cannot be undone.",
        ok: `Remove ${plural(plan.messages, "message")}`,
        danger: true,
        kind: "retention-confirm",
      });
      if (!ok) {
        status(state, "Nothing was removed.");
        return;
      }
      const r = await cmd("thread.archive_old", { ...spare, sparedThreadIds: await sparedThreadIds() });
      const count = r.archived.length;
      status(
        state,
        count
          ? `Summarized ${plural(count, "conversation")} and removed ${count === 1 ? "its" : "their"} messages.`
          : "Nothing was removed (the conversations changed meanwhile).",
        "ok",
      );
    } catch (error) {
      statusError(state, error, "Could not remove old messages:");
    }
  };
  return h(
    "section",
    { id: "settings-retention" },
    h("h2", { text: "Retention" }),
    h("p", {
      class: "note",
      text:
        "Retention deletes the messages of old conversations and keeps a Markdown summary of each, shown in the " +
        "conversation and included in its export. A conversation's own “Archive” only hides it from the list.",
    }),
    autoRetention(app),
    h("label", {}, "Summarize conversations untouched for more than (days)", days),
    h("div", { class: "row" }, h("button", { type: "button", id: "retention-run", text: "Summarize and remove old messages…", on: { click: run } })),
    state,
  );
}

const MAX_RETENTION_DAYS = 36_500;

/** Describe the `retention` setting (`{days}`; null is off). */
function retentionText(days) {
  return days === null || days === undefined
    ? "Off: old messages are removed only when you press the button below."
    : `On: once a day, conversations untouched for more than ${days} day${days === 1 ? "" : "s"} are summarized and their messages removed (pinned ones, the open ones and the one the panel reopens are kept).`;
}

/**
 * The `retention` setting group: "Summarize automatically (daily)" and its number of days,
 * saved with `settings.set {group: "retention", value: {days: n | null}}`.
 */
function autoRetention(app) {
  const box = h("div", { id: "retention-auto-box", class: "subsection" });
  if (!app.caps.settings) {
    box.append(h("p", { class: "note", text: "Automatic retention needs the settings store, which this build does not have." }));
    return box;
  }
  const enabled = h("input", { id: "retention-auto", type: "checkbox" });
  const days = h("input", {
    id: "retention-auto-days",
    type: "number",
    min: 1,
    max: MAX_RETENTION_DAYS,
    step: 1,
    value: 90,
    disabled: true,
    attrs: { "aria-label": "Days untouched before old messages are summarized and removed" },
  });
  const state = h("p", { class: "status", id: "retention-auto-status", text: "Reading…" });
  enabled.addEventListener("change", () => {
    days.disabled = !enabled.checked;
  });
  const save = async () => {
    let value = null;
    if (enabled.checked) {
      const text = days.value.trim();
      const n = Number(text);
      if (!/^\d+$/.test(text) || n < 1 || n > MAX_RETENTION_DAYS) {
        status(state, `Enter a whole number of days from 1 to ${MAX_RETENTION_DAYS}.`, "error");
        days.focus();
        return;
      }
      value = n;
    }
    try {
      await cmd("settings.set", { group: "retention", value: { days: value } });
      status(state, `Saved. ${retentionText(value)}`, "ok");
    } catch (error) {
      statusError(state, error, "Could not save:");
    }
  };
  (async () => {
    try {
      const { value, problems } = await q("settings.get", { group: "retention" });
      const current = value?.days ?? null;
      enabled.checked = current !== null;
      days.disabled = current === null;
      if (current !== null) days.value = String(current);
      if (problems?.length) {
        const problem = { name: "ValidationError", ...problems[0] };
        replace(state, errorView(problem, "The stored setting could not be used, so it reads as off:"));
        state.className = "status warn";
      } else {
        status(state, retentionText(current));
      }
    } catch (error) {
      statusError(state, error, "Could not read the setting:");
    }
    box.dataset.state = "loaded";
  })();
  box.append(
    h("label", { class: "check" }, enabled, "Summarize and remove old messages automatically (daily)"),
    h("label", {}, "after this many days untouched", days),
    h("div", { class: "row" }, h("button", { type: "button", id: "retention-auto-save", text: "Save", on: { click: save } })),
    state,
  );
  return box;
}

function aboutSection() {
  return h(
    "section",
    {},
    h("h2", { text: "Debugging" }),
    h("p", { class: "note", text: "A Python console on the same database (store, threads(), tree(id), …)." }),
    h("a", { href: "console.html", target: "_blank", id: "open-console", text: "Open the debugging console ↗" }),
  );
}
