// Settings → Sync: the user's CouchDB-compatible server (URL, database, user, password)
// with Save, Test connection, Sync now and Stop syncing, and a status line in plain
// words from `sync.status`. After a backup restore sync is paused: the status says so
// and two buttons answer its question (`sync.resume` merge or replace). Everything here renders as text (panel_dom's h): a server's
// strings (a refused document's id, an error's reason) stay inert.
import { h, replace } from "./panel_dom.mjs";
import { cmd, q } from "./panel_store.mjs";
import { confirmDialog, setStatus, statusError, toast } from "./panel_ui.mjs";
import { explainError } from "./panel_errors.mjs";
import { startSyncLoop } from "./panel_sync_loop.mjs";

const PASSWORD_STORED = "•••••••• stored (leave empty to keep)";
/** How many refused documents the status line names (the rest are counted). */
const SHOWN_REFUSED = 3;

// Finished actions of this page, on the status line as data-action-count: a test (or a
// user) can tell that its own press has landed even when the words did not change.
let actions = 0;
/** The last failure of an action here, kept for the status line until one succeeds. */
let lastError = null;

/** What a sync failure means, and what to do: `{text, detail}` as explainError gives. */
export function explainSyncError(error) {
  const base = explainError(error);
  if (error?.name === "NetworkError") {
    if (error.field === "password") {
      return { ...base, text: "Wrong user or password: check them, and that this user may write the database." };
    }
    if (error.field === "database") {
      return { ...base, text: "No such database on the server: create it there first, or check its name." };
    }
    return { ...base, text: "The server could not be reached or refused the request: check the URL and that it is running." };
  }
  if (error?.name === "SyncPausedError") {
    return { ...base, text: "Sync is paused since a backup was restored: choose below how to go on." };
  }
  if (error?.name === "NotFoundError" && /not configured/.test(error.message ?? "")) {
    return { ...base, text: "Sync is not set up: enter the server and database, then Save." };
  }
  return base;
}

/** A short local date and time for `ms`. */
function when(ms) {
  return ms ? new Date(ms).toLocaleString() : "";
}

/** The status line's words for `sync.status` (and the last failure here). */
function statusParts(status) {
  if (!status.configured) {
    return [{ text: "Not set up: enter your CouchDB server and database, then Save.", kind: "warn" }];
  }
  const who = status.user ? ` as ${status.user}` : "";
  const parts = [{ text: `Syncing with the database ${status.database} at ${status.server}${who}.`, kind: "saved" }];
  const push = status.lastPush;
  const pull = status.lastPull;
  const last = Math.max(push?.at ?? 0, pull?.at ?? 0);
  if (last) {
    parts.push({ text: `Last synced ${when(last)}.`, kind: "ok", id: "sync-last" });
  } else {
    parts.push({ text: "Not synced yet: Sync now sends this browser's conversations and brings the server's.", kind: "" });
  }
  if (status.paused === "restore") {
    parts.push({
      text:
        "Sync is paused: a backup was restored here. Keep the server's changes too (the restored data and the server's merge; " +
        "nothing is deleted on the server), or replace the server's data with the restored data (what the backup lacks is " +
        "deleted on the server and on your other browsers).",
      kind: "warn",
      id: "sync-paused-note",
    });
  }
  if (status.running && status.syncing) {
    parts.push({ text: "Syncing continuously while a panel is open.", kind: "ok", id: "sync-loop" });
  } else if (status.running) {
    parts.push({
      text: "Another panel (or the background sync) is syncing this browser; this panel takes over when it closes.",
      kind: "",
      id: "sync-loop",
    });
  }
  if (status.lastError) {
    const next = status.nextTry ? ` Next try at ${new Date(status.nextTry).toLocaleTimeString()}.` : "";
    parts.push({ text: `The last continuous sync failed: ${status.lastError}.${next}`, kind: "warn", id: "sync-loop-error" });
  }
  const refused = Array.isArray(pull?.refused) ? pull.refused : [];
  if (refused.length) {
    const named = refused
      .slice(0, SHOWN_REFUSED)
      .map((r) => (typeof r === "object" && r ? `${r.id} (${r.reason})` : String(r)))
      .join("; ");
    const more = refused.length > SHOWN_REFUSED ? ` and ${refused.length - SHOWN_REFUSED} more` : "";
    parts.push({
      text: `${refused.length} document(s) from the server were refused and not written: ${named}${more}.`,
      kind: "warn",
      id: "sync-refused",
    });
  }
  return parts;
}

/** Draw `sync.status` (and the last failure) into `line`. */
async function showStatus(line) {
  let status;
  try {
    status = await q("sync.status");
  } catch (error) {
    statusError(line, error, "Sync status is unavailable:", explainSyncError);
    return null;
  }
  const parts = statusParts(status).map((p) => h("span", { class: `status-part ${p.kind}`, id: p.id, text: p.text }));
  if (lastError) {
    const { text, detail } = explainSyncError(lastError.error);
    parts.push(
      h(
        "span",
        { class: "status-part error", id: "sync-error" },
        `${lastError.lead} ${text}${lastError.allow ?? ""}`,
        detail && detail !== text ? h("details", { class: "error-detail" }, h("summary", { text: "Details" }), h("pre", { text: detail })) : null,
      ),
    );
  }
  replace(line, parts);
  line.className = `status ${lastError ? "error" : status.configured ? "saved" : "warn"}`;
  return status;
}

/**
 * Ask Chrome for the host permission of `server`'s origin, for that origin only. Called
 * first thing in a click handler (the user gesture `permissions.request` needs). Gives
 * `{origin, answer}`: `answer` is "granted", "refused" or "asked" (Chrome's prompt is
 * still open), kept up to date when the prompt is answered; null for a URL that is none
 * or a page without `chrome.permissions` (sync.configure names a bad URL).
 *
 * The action does not wait for the prompt: a server that answers with CORS headers
 * (the tests' loopback server) works without the permission, and in Playwright the
 * prompt is never answered. When the action then fails to reach the server, the status
 * says to allow the origin and try again.
 */
function requestOrigin(server) {
  let origin;
  try {
    origin = new URL(server).origin;
  } catch {
    return null;
  }
  const permissions = globalThis.chrome?.permissions;
  if (!permissions?.request) return null;
  const asked = { origin, answer: "asked" };
  permissions.request({ origins: [`${origin}/*`] }).then(
    (granted) => (asked.answer = granted ? "granted" : "refused"),
    () => (asked.answer = "refused"),
  );
  return asked;
}

/** The form's inputs, filled from `sync.status` (never the password). */
function syncForm() {
  return {
    server: h("input", { id: "sync-server", type: "url", placeholder: "your CouchDB server's https URL" }),
    database: h("input", { id: "sync-database", type: "text", placeholder: "panelot" }),
    user: h("input", { id: "sync-user", type: "text", autocomplete: "off" }),
    password: h("input", { id: "sync-password", type: "password", autocomplete: "off", placeholder: "password" }),
    state: h("p", { class: "status", id: "sync-status", dataset: { actionCount: String(actions) } }),
  };
}

/** What follows the saved configuration whatever was typed: the password's placeholder, Stop. */
function follow(form, status) {
  form.password.placeholder = status?.user ? PASSWORD_STORED : "password";
  form.stop.disabled = !status?.configured;
  if (form.paused) form.paused.hidden = status?.paused !== "restore";
}

/** The form's values from `status` (after a success: what is saved is what shows). */
function fill(form, status) {
  follow(form, status);
  if (!status?.configured) return;
  form.server.value = status.server ?? "";
  form.database.value = status.database ?? "";
  form.user.value = status.user ?? "";
  form.password.value = "";
}

/**
 * Save the form when it differs from `status` (or a password was typed): `sync.configure`.
 * A user without a new password keeps the stored one only when nothing else changed.
 */
async function saveIfChanged(form, status) {
  const server = form.server.value.trim();
  const database = form.database.value.trim();
  const user = form.user.value.trim();
  const password = form.password.value;
  const same =
    status?.configured && status.server === server.replace(/\/+$/, "") && status.database === database && (status.user ?? "") === user;
  if (same && !password) return false;
  const args = { server, database };
  if (user || password) Object.assign(args, { user, password });
  await cmd("sync.configure", args);
  form.password.value = "";
  return true;
}

/**
 * One button's action: ask for the origin's permission first (the click's gesture), then
 * `run()`; the status line is drawn again afterwards, with the failure if it failed.
 */
function action(form, button, lead, run) {
  return () => {
    const asked = requestOrigin(form.server.value.trim()); // synchronously, in the gesture
    button.disabled = true;
    (async () => {
      try {
        const note = await run();
        lastError = null;
        const status = await showStatus(form.state);
        fill(form, status);
        if (note) form.state.prepend(h("span", { class: "status-part ok", id: "sync-note", text: note }));
      } catch (error) {
        const unreached = error?.name === "NetworkError" && !error.field;
        const allow =
          unreached && asked && asked.answer !== "granted"
            ? ` (If Chrome asked to allow ${asked.origin}, allow it and try again.)`
            : "";
        lastError = { error, lead, allow };
        follow(form, await showStatus(form.state)); // the typed values stay
      } finally {
        button.disabled = false;
        actions += 1;
        form.state.dataset.actionCount = String(actions);
      }
    })();
  };
}

/** The sync section; `rerender()` draws the whole settings view again. */
export function syncSection(app, rerender) {
  const form = syncForm();
  const save = h("button", { id: "sync-save", type: "button", class: "primary", text: "Save" });
  const test = h("button", { id: "sync-test", type: "button", text: "Test connection" });
  const now = h("button", { id: "sync-now", type: "button", text: "Sync now" });
  const stop = h("button", { id: "sync-stop", type: "button", class: "danger", text: "Stop syncing", disabled: true });
  form.stop = stop;
  const merge = h("button", { id: "sync-resume-merge", type: "button", class: "primary", text: "Keep the server's changes too" });
  const replaceData = h("button", { id: "sync-resume-replace", type: "button", class: "danger", text: "Replace the server's data" });
  form.paused = h("div", { class: "row", id: "sync-paused", hidden: true }, merge, replaceData);
  const resume = (mode) => async () => {
    const r = await cmd("sync.resume", { mode });
    await startSyncLoop(); // the loop's start was refused while paused
    if (!r.resumed) return "Sync was not paused (already answered).";
    if (mode === "merge") return "Resumed: the restored data and the server's merge.";
    return `Resumed: the server now has the restored data (${r.deleted ?? 0} documents deleted there).`;
  };
  merge.addEventListener("click", action(form, merge, "Could not resume:", resume("merge")));
  replaceData.addEventListener("click", async () => {
    const text =
      "The server takes the restored data: every conversation and library record the backup lacks is deleted on the server, " +
      "and on your other browsers when they sync.";
    if (!(await confirmDialog("Replace the server's data?", text, "Replace"))) return;
    action(form, replaceData, "Could not resume:", resume("replace"))();
  });
  let current = null;
  const refresh = async () => {
    current = await showStatus(form.state);
    fill(form, current);
  };
  save.addEventListener(
    "click",
    action(form, save, "Could not save:", async () => {
      current = await q("sync.status");
      await saveIfChanged(form, current);
      await startSyncLoop(); // continuous sync from now on (panel_sync_loop.mjs)
      return "Saved. Test connection checks it.";
    }),
  );
  test.addEventListener(
    "click",
    action(form, test, "Connection failed:", async () => {
      current = await q("sync.status");
      await saveIfChanged(form, current);
      const answer = await q("sync.test");
      const docs = answer.documents === null ? "" : ` (${answer.documents} documents on the server)`;
      return `Connection works: the database ${answer.database} answered${docs}.`;
    }),
  );
  now.addEventListener(
    "click",
    action(form, now, "Sync failed:", async () => {
      current = await q("sync.status");
      await saveIfChanged(form, current);
      const r = await cmd("sync.now", {});
      return `Synced: ${r.push?.pushed ?? 0} sent, ${r.pull?.written ?? 0} received.`;
    }),
  );
  stop.addEventListener("click", async () => {
    const text = "This browser stops syncing and forgets the server and the stored password. Nothing is deleted here or on the server.";
    if (!(await confirmDialog("Stop syncing?", text, "Stop syncing"))) return;
    try {
      await cmd("sync.forget", {});
      lastError = null;
      actions += 1; // before the redraw, whose status line starts from it
      toast("Sync stopped");
      rerender();
    } catch (error) {
      lastError = { error, lead: "Could not stop syncing:" };
      await showStatus(form.state);
      actions += 1;
      form.state.dataset.actionCount = String(actions);
    }
  });
  refresh().catch((error) => console.warn("sync.status", error));
  return h(
    "section",
    { id: "settings-sync" },
    h("h2", { text: "Sync (CouchDB)" }),
    h("label", {}, "Server URL", form.server),
    h("label", {}, "Database", form.database),
    h("label", {}, "User", form.user),
    h("label", {}, "Password", form.password),
    h("p", {
      class: "note",
      text:
        "Your own CouchDB-compatible server (https, or http on this computer only). The password is encrypted in the " +
        "credential store and never shown again; Chrome asks once to allow the server's address.",
    }),
    h("div", { class: "row" }, save, test, now, stop),
    form.state,
    form.paused,
  );
}
