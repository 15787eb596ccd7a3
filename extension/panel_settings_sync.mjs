// Settings → Sync: the user's CouchDB-compatible server (URL, database, user, password)
// with Save, Test connection, Sync now and Stop syncing, and a status line in plain
// words from `sync.status`. After a backup restore sync is paused: the status says so
// and two buttons answer its question (`sync.resume` merge or replace). Everything here renders as text (panel_dom's h): a server's
// strings (a refused document's id, an error's reason) stay inert. The status line also says the changes waiting to
// be sent, the progress of a sync in flight and the last failure of any context's loop or background sync; while the
// section is shown it is read again every REFRESH_MS (see showStatus).
import { h, replace } from "./panel_dom.mjs";
import { cmd, q } from "./panel_store.mjs";
import { confirmDialog, setStatus, statusError, toast } from "./panel_ui.mjs";
import { explainError } from "./panel_errors.mjs";
import { startSyncLoop } from "./panel_sync_loop.mjs";

const PASSWORD_STORED = "•••••••• stored (leave empty to keep)";
/** How many refused documents the status line names (the rest are counted). */
const SHOWN_REFUSED = 3;
/**
 * How often the shown status line is read again. A timer, not the change feed: what it shows is written by other
 * contexts into panelot_sync_v1 (the outbox, a sync's progress, a loop's or the worker's failure), which the panel's
 * live queries over panelot_v1 do not hear, and it changes with time alone (a stale progress row stops counting, a
 * next try passes). One read-only `sync.status` a second while Settings → Sync is on screen; none otherwise.
 */
const REFRESH_MS = 1000;
/** What a sync in flight is doing, by `sync.status`'s progress phase. */
const PHASE_WORDS = { comparing: "Comparing", receiving: "Receiving", sending: "Sending", writing: "Writing" };

// Finished actions of this page, on the status line as data-action-count: a test (or a
// user) can tell that its own press has landed even when the words did not change.
let actions = 0;
/** The last failure of an action here, kept for the status line until one succeeds. */
let lastError = null;
/** The last success note of an action here, kept for the status line until the next action. */
let lastNote = null;
/** Draws of the status line started (a draw that finishes after a later one is dropped), and the latest drawn. */
let draws = 0;
let drawn = 0;
/** The words each status line shows now (a redraw with the same words changes nothing). */
const drawnWords = new WeakMap();

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

/** A count of documents in the user's locale ("10,090"). */
function count(n) {
  return Number(n ?? 0).toLocaleString();
}

/** The changes waiting to be sent (the outbox of `sync.status`), or null before any sync. */
function waitingPart(status) {
  if (status.wide) {
    return { text: "Changes waiting to be compared with the server.", kind: "", id: "sync-waiting" };
  }
  const n = status.waiting ?? 0;
  if (n > 0) {
    return { text: `${count(n)} ${n === 1 ? "change" : "changes"} waiting to be sent.`, kind: "", id: "sync-waiting" };
  }
  return status.lastPush ? { text: "All changes sent.", kind: "ok", id: "sync-waiting" } : null;
}

/** A sync in flight, in any context: "Receiving 1,200 of 10,090 documents…". */
function progressPart(progress) {
  const verb = PHASE_WORDS[progress.phase] ?? "Syncing";
  const where = progress.source === "background" ? " (background sync)" : "";
  if (typeof progress.total !== "number") {
    return { text: `${verb === "Comparing" ? "Comparing with the server" : verb}…${where}`, kind: "", id: "sync-progress" };
  }
  const what = `${count(progress.done)} of ${count(progress.total)} documents`;
  const tail = progress.phase === "comparing" ? " with the server" : "";
  return { text: `${verb} ${what}${tail}…${where}`, kind: "", id: "sync-progress" };
}

/**
 * The last failure of a loop or background sync in any context (`sync.status`'s failure; this panel's own loop's
 * lastError when there is none), in the words the buttons' failures use, with what to do.
 */
function failurePart(status) {
  const failure = status.failure ?? (status.lastError ? { source: "loop", message: status.lastError, nextTry: status.nextTry } : null);
  if (!failure) return null;
  const { text, detail } = explainSyncError({ name: failure.name, message: failure.message, field: failure.field });
  const lead =
    failure.source === "background"
      ? `The last background sync${failure.at ? ` (${when(failure.at)})` : ""} failed:`
      : "The last continuous sync failed:";
  let next = "";
  if (failure.nextTry && failure.nextTry > Date.now()) next = ` Next try at ${new Date(failure.nextTry).toLocaleTimeString()}.`;
  else if (failure.source === "background") next = " It tries again every 5 minutes while no panel is open.";
  return { text: `${lead} ${text}${next}`, kind: "warn", id: "sync-loop-error", detail: detail && detail !== text ? detail : null };
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
  if (status.progress) parts.push(progressPart(status.progress));
  const waiting = waitingPart(status);
  if (waiting) parts.push(waiting);
  const failed = failurePart(status);
  if (failed) parts.push(failed);
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

/** One part of the status line: its words, and the technical detail behind "Details". */
function partView(p) {
  if (!p.detail) return h("span", { class: `status-part ${p.kind}`, id: p.id, text: p.text });
  return h(
    "span",
    { class: `status-part ${p.kind}`, id: p.id },
    p.text,
    h("details", { class: "error-detail" }, h("summary", { text: "Details" }), h("pre", { text: p.detail })),
  );
}

/**
 * Draw `sync.status` (with the last action's note or failure) into `line`. Draws may overlap (an action's, the
 * refresh timer's): one that finishes after a later-started one has drawn is dropped, so the line never goes back
 * to an older status. Gives the status (null when unavailable, or undefined when dropped).
 */
async function showStatus(line) {
  const mine = ++draws;
  let status;
  try {
    status = await q("sync.status");
  } catch (error) {
    if (mine < drawn) return undefined;
    drawn = mine;
    statusError(line, error, "Sync status is unavailable:", explainSyncError);
    return null;
  }
  if (mine < drawn) return undefined;
  drawn = mine;
  const words = statusParts(status);
  // The same words as drawn: nothing is redrawn (an open "Details" stays open, no churn each second).
  const key = JSON.stringify([words, lastNote, lastError && [lastError.lead, lastError.allow, lastError.error?.message]]);
  if (line.isConnected && drawnWords.get(line) === key) return status;
  drawnWords.set(line, key);
  const parts = words.map(partView);
  if (lastNote) parts.unshift(h("span", { class: "status-part ok", id: "sync-note", text: lastNote }));
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
        lastNote = note || null;
        const status = await showStatus(form.state);
        if (status !== undefined) fill(form, status);
      } catch (error) {
        const unreached = error?.name === "NetworkError" && !error.field;
        const allow =
          unreached && asked && asked.answer !== "granted"
            ? ` (If Chrome asked to allow ${asked.origin}, allow it and try again.)`
            : "";
        lastError = { error, lead, allow };
        lastNote = null;
        const status = await showStatus(form.state);
        if (status !== undefined) follow(form, status); // the typed values stay
      } finally {
        button.disabled = false;
        actions += 1;
        form.state.dataset.actionCount = String(actions);
      }
    })();
  };
}

/**
 * Read the status line again every REFRESH_MS while it is on screen (waiting changes, progress and failures written
 * by any context; a Sync now's progress too, while it runs). Stops for good once the line left the page or its view
 * is hidden (leaving Settings; the next visit draws a new section). Writes nothing.
 */
function keepFresh(form) {
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
    const line = form.state;
    if (!line.isConnected || line.closest("[hidden]")) {
      if (ticks > 1 || !line.isConnected) clearInterval(timer);
      return;
    }
    showStatus(line)
      .then((status) => status && follow(form, status))
      .catch((error) => console.warn("sync.status", error));
  }, REFRESH_MS);
}

/** The sync section; `rerender()` draws the whole settings view again. */
export function syncSection(app, rerender) {
  lastNote = null; // a note answers a press in the view it was made in
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
    const status = await showStatus(form.state);
    if (status === undefined) return; // a later draw filled it
    current = status;
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
      lastNote = null;
      actions += 1; // before the redraw, whose status line starts from it
      toast("Sync stopped");
      rerender();
    } catch (error) {
      lastError = { error, lead: "Could not stop syncing:" };
      lastNote = null;
      await showStatus(form.state);
      actions += 1;
      form.state.dataset.actionCount = String(actions);
    }
  });
  refresh().catch((error) => console.warn("sync.status", error));
  keepFresh(form);
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
