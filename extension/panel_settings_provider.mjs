// Settings → Provider: the OpenAI-compatible connection (base URL, model, API key) with
// Save, Test connection and Remove. The status line says only what is known: a saved
// provider is "saved", and only a test that got an answer says it works.
import { h } from "./panel_dom.mjs";
import { StoreError, cmd, q } from "./panel_store.mjs";
import { confirmDialog, setStatus, statusError, toast } from "./panel_ui.mjs";
import { testConnection } from "./panel_provider.mjs";
import { providerApiKey } from "./panel_credentials.mjs";

const CONNECTION_ID = "default";
/** The smallest summary threshold the settings take (bytes). */
const MIN_SUMMARY_THRESHOLD = 1000;
const KEY_STORED = "•••••••• stored (leave empty to keep)";

// How many saves and connection tests have finished in this page, kept on the status
// line as data-save-count and data-test-count: whoever pressed the button can tell that
// its own press has landed, even when the line already showed the same words.
const counts = { save: 0, test: 0 };

function finished(state, action) {
  counts[action] += 1;
  state.dataset[`${action}Count`] = String(counts[action]);
}

// A connection's credential can be missing though its reference is saved: a restored
// backup never holds keys, and another window may have removed it.
const KEY_MISSING = "API key missing: enter it again and save";

function keyState(chat, provider) {
  if (provider.credentialRef) return "API key stored";
  return chat.sessionKey ? "API key kept for this session" : "no API key";
}

function savedText(chat, keyText = keyState(chat, chat.provider)) {
  const p = chat.provider;
  return `Saved: ${p.model} at ${p.baseUrl} (${keyText}). Not tested yet: Test connection checks that it answers.`;
}

/**
 * Check that the saved provider's credential is still stored (`credential.status`); when
 * it is not, the status line and the key field say so instead of "stored". Drawn first
 * as saved, the form is corrected once the answer comes, unless a save or test has
 * written the line since.
 */
async function checkStoredKey(app, form) {
  const provider = app.chat.provider;
  if (!provider?.credentialRef || !app.caps.credentials) return;
  const line = form.state.textContent;
  let exists = true;
  try {
    ({ exists } = await q("credential.status", { ref: provider.credentialRef }));
  } catch (error) {
    console.warn("credential.status failed", error);
  }
  if (exists || form.state.textContent !== line) return;
  setStatus(form.state, savedText(app.chat, KEY_MISSING), "warn");
  form.key.placeholder = "sk-…";
}

/**
 * Store the provider connection in the `providers` settings group (with a new key, if
 * typed). `budget`: the characters of history a request carries (null: all; undefined:
 * the runtime's default). `summaries`: `{on, threshold}` (threshold undefined: the
 * runtime's default).
 */
async function storeProvider(app, url, name, secret, budget, summaries) {
  let ref = app.chat.provider?.credentialRef ?? null;
  if (secret) {
    if (!app.caps.credentials) {
      throw new StoreError({ name: "UnknownCommandError", message: "credential.set: this build has no credential store" });
    }
    ref = (await cmd("credential.set", { secret, ...(ref ? { ref } : {}) })).ref;
  }
  const { value } = await q("settings.get", { group: "providers" });
  const others = (value.connections ?? []).filter((c) => c.id !== CONNECTION_ID);
  const existing = (value.connections ?? []).find((c) => c.id === CONNECTION_ID) ?? {};
  const connection = {
    ...existing,
    id: CONNECTION_ID,
    kind: "openai_compatible",
    baseUrl: url,
    models: [name],
    credentialRef: ref,
    label: "OpenAI-compatible",
    enabled: true,
  };
  if (budget === undefined) delete connection.contextBudget;
  else connection.contextBudget = budget;
  connection.summaries = summaries.on;
  if (summaries.threshold === undefined) delete connection.summaryThreshold;
  else connection.summaryThreshold = summaries.threshold;
  await cmd("settings.set", {
    group: "providers",
    value: { ...value, connections: [connection, ...others], defaultConnectionId: CONNECTION_ID },
    expect: value, // another window's change since the read is refused, not overwritten
  });
}

/** The form's inputs and status line, filled from the saved provider. */
function providerForm(app) {
  const chat = app.chat;
  const current = chat.provider ?? chat.memoryProvider ?? {};
  const state = h("p", { class: "status", id: "provider-status" });
  state.dataset.saveCount = String(counts.save);
  state.dataset.testCount = String(counts.test);
  if (chat.provider) setStatus(state, savedText(chat), "saved");
  else setStatus(state, "Not configured: sending and regenerating are off until you save a provider.", "warn");
  return {
    state,
    baseUrl: h("input", {
      id: "provider-base-url",
      type: "url",
      placeholder: "an https URL ending in /v1",
      value: current.baseUrl ?? "",
    }),
    model: h("input", { id: "provider-model", type: "text", placeholder: "gpt-4o-mini", value: current.model ?? "" }),
    key: h("input", {
      id: "provider-key",
      type: "password",
      autocomplete: "off",
      placeholder: current.credentialRef || chat.sessionKey ? KEY_STORED : "sk-…",
    }),
    ...historyInputs(current.contextBudget),
    ...summaryInputs(current),
  };
}

/** The summaries' inputs: "Summarize large attachments" and the size it starts at (bytes). */
function summaryInputs(current) {
  const summaries = h("input", { id: "provider-summaries", type: "checkbox" });
  summaries.checked = current.summaries !== false;
  const threshold = h("input", {
    id: "provider-summary-threshold",
    type: "number",
    min: String(MIN_SUMMARY_THRESHOLD),
    step: "1000",
    placeholder: "the default",
    value: Number.isInteger(current.summaryThreshold) ? String(current.summaryThreshold) : "",
  });
  threshold.disabled = !summaries.checked;
  summaries.addEventListener("change", () => {
    threshold.disabled = !summaries.checked;
  });
  return { summaries, threshold };
}

/** The history budget's inputs: a number of characters, and "send the whole conversation". */
function historyInputs(budget) {
  const history = h("input", {
    id: "provider-history",
    type: "number",
    min: "0",
    step: "1000",
    placeholder: "the default",
    value: Number.isInteger(budget) ? String(budget) : "",
  });
  const historyAll = h("input", { id: "provider-history-all", type: "checkbox" });
  historyAll.checked = budget === null;
  history.disabled = historyAll.checked;
  historyAll.addEventListener("change", () => {
    history.disabled = historyAll.checked;
  });
  return { history, historyAll };
}

/**
 * What the form holds: `{url, name, budget}`, or null (and the status says why) when
 * incomplete. `budget`: null for the whole conversation, undefined for the default.
 */
function formValues(form) {
  const url = form.baseUrl.value.trim();
  const name = form.model.value.trim();
  if (!/^https?:\/\//.test(url) || !name) {
    setStatus(form.state, "Enter an http(s) base URL and a model.", "error");
    return null;
  }
  const typed = form.history.value.trim();
  let budget;
  if (form.historyAll.checked) budget = null;
  else if (/^\d+$/.test(typed)) budget = Number(typed);
  else if (typed) {
    setStatus(form.state, "History per request: enter a whole number of characters, or leave it empty for the default.", "error");
    return null;
  }
  const at = form.threshold.value.trim();
  let threshold;
  if (/^\d+$/.test(at) && Number(at) >= MIN_SUMMARY_THRESHOLD) threshold = Number(at);
  else if (at && form.summaries.checked) {
    setStatus(form.state, `Summarize attachments from: enter a whole number of bytes, at least ${MIN_SUMMARY_THRESHOLD}, or leave it empty for the default.`, "error");
    return null;
  }
  return { url, name, budget, summaries: { on: form.summaries.checked, threshold } };
}

/** Save: store the form's provider (and key), then reload it into the chat. */
function saveAction(app, form) {
  const chat = app.chat;
  return async () => {
    try {
      const values = formValues(form);
      if (!values) return;
      const { url, name, budget, summaries } = values;
      if (app.caps.settings) await storeProvider(app, url, name, form.key.value, budget, summaries);
      else {
        chat.memoryProvider = {
          connectionId: CONNECTION_ID,
          baseUrl: url,
          model: name,
          credentialRef: null,
          contextBudget: budget,
          summaries: summaries.on,
          summaryThreshold: summaries.threshold,
        };
        if (form.key.value) chat.sessionKey = form.key.value;
      }
      form.key.value = "";
      await chat.loadProvider();
      setStatus(form.state, `Saved: replies come from ${name} at ${url}. Test connection checks that it answers.`, "ok");
      form.key.placeholder = chat.provider?.credentialRef || chat.sessionKey ? KEY_STORED : "sk-…";
      if (chat.threadId) chat.render();
    } catch (error) {
      statusError(form.state, error, "Could not save:");
    } finally {
      finished(form.state, "save");
    }
  };
}

/**
 * Test connection: a real request with the form's URL and model, and the typed key or
 * else the saved one, read as a send reads it (providerApiKey). Nothing is saved.
 */
function testAction(app, form, button) {
  const chat = app.chat;
  return async () => {
    button.disabled = true;
    try {
      const values = formValues(form);
      if (!values) return;
      setStatus(form.state, `Testing ${values.name} at ${values.url}…`, "busy");
      const saved = chat.provider ?? chat.memoryProvider;
      const apiKey =
        form.key.value || (await providerApiKey(saved, { credentials: app.caps.credentials, sessionKey: chat.sessionKey }));
      const answer = await testConnection({ baseUrl: values.url, apiKey, model: values.name });
      setStatus(form.state, `Connection works: ${answer.model} at ${values.url} answered.`, "ok");
    } catch (error) {
      statusError(form.state, error, "Connection failed:");
    } finally {
      button.disabled = false;
      finished(form.state, "test");
    }
  };
}

/** Remove: delete the stored key and reset the providers group, after a confirmation. */
function removeAction(app, form, rerender) {
  const chat = app.chat;
  return async () => {
    if (!(await confirmDialog("Remove provider?", "The connection and its stored key will be removed.", "Remove"))) return;
    try {
      if (app.caps.settings) {
        const ref = chat.provider?.credentialRef;
        if (ref) await cmd("credential.delete", { ref }).catch(() => {});
        await cmd("settings.reset", { group: "providers" });
      } else {
        chat.memoryProvider = null;
        chat.sessionKey = null;
      }
      await chat.loadProvider();
      rerender();
      toast("Provider removed");
    } catch (error) {
      statusError(form.state, error, "Could not remove:");
    }
  };
}

/** The provider section; `rerender()` draws the whole settings view again. */
export function providerSection(app, rerender) {
  const form = providerForm(app);
  checkStoredKey(app, form);
  const test = h("button", { id: "provider-test", type: "button", text: "Test connection" });
  test.addEventListener("click", testAction(app, form, test));
  const save = h("button", { id: "provider-save", type: "button", class: "primary", text: "Save provider" });
  save.addEventListener("click", saveAction(app, form));
  const remove = app.chat.provider
    ? h("button", { id: "provider-clear", type: "button", class: "danger", text: "Remove" })
    : null;
  remove?.addEventListener("click", removeAction(app, form, rerender));
  const keyNote = app.caps.credentials
    ? "The key is encrypted (AES-GCM, non-extractable key) and stored as a credential reference; it is never shown again."
    : "This build has no credential store: the key is kept in memory for this session only, never written to disk.";
  return h(
    "section",
    { id: "settings-provider" },
    h("h2", { text: "Provider (OpenAI-compatible)" }),
    h("label", {}, "Base URL", form.baseUrl),
    h("label", {}, "Model", form.model),
    h("label", {}, "API key", form.key),
    h("p", { class: "note", text: keyNote }),
    h("label", {}, "History per request (characters)", form.history),
    h("label", { class: "check" }, form.historyAll, "Send the whole conversation"),
    h("p", {
      class: "note",
      text:
        "A request carries the newest whole turns within this many characters of text (about 4 a token); " +
        "empty: the default, 128,000 (about 32k tokens). Older turns stay in the thread but are not sent.",
    }),
    h("label", { class: "check" }, form.summaries, "Summarize large attachments"),
    h("label", {}, "Summarize attachments from (bytes)", form.threshold),
    h("p", {
      class: "note",
      text:
        "A text attachment at least this large (empty: the default, 8,000 bytes) gets one summary by the model, " +
        "made in the background; once the conversation has moved on, requests send the summary instead of the whole text. " +
        "Images are never summarized, and the file itself is kept as it was.",
    }),
    h("div", { class: "row" }, save, test, remove),
    h("p", {
      class: "note",
      text: "Test connection sends a one-word request with the model above and stops at the first word of the answer.",
    }),
    form.state,
  );
}
