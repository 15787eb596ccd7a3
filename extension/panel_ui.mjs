// Shared UI bits: the modal dialog, the toast, status lines and errors shown to the user.
import { h, replace } from "./panel_dom.mjs";
import { explainError } from "./panel_errors.mjs";

const dialog = document.getElementById("dialog");
// OK is the form's only submit button, so Enter in any field submits with "ok"; Cancel
// closes the dialog itself, as Escape does (the dialog's own cancel).
document.getElementById("dialog-cancel")?.addEventListener("click", () => dialog.close("cancel"));

/**
 * Show the modal dialog. `fields`: [{name, label, value, type, placeholder, maxLength}];
 * `body`: elements shown under the text (built with panel_dom's `h`, never HTML);
 * `kind`: the dialog's `data-kind` while open (what it asks, for tests and styles).
 * Resolves with {field: value} on OK (the button, or Enter in a field), or null on
 * Cancel or Escape.
 */
export function openDialog({ title, text = "", fields = [], body = [], ok = "OK", danger = false, kind = "" }) {
  document.getElementById("dialog-title").textContent = title;
  dialog.dataset.kind = kind;
  const p = document.getElementById("dialog-text");
  p.textContent = text;
  p.hidden = !text;
  const inputs = fields.map((f) =>
    h("input", {
      name: f.name,
      type: f.type ?? "text",
      value: f.value ?? "",
      placeholder: f.placeholder ?? "",
      autocomplete: "off",
      maxLength: f.maxLength,
    }),
  );
  replace(
    document.getElementById("dialog-fields"),
    body,
    fields.map((f, i) => h("label", {}, f.label, inputs[i])),
  );
  const okButton = document.getElementById("dialog-ok");
  okButton.textContent = ok;
  okButton.classList.toggle("danger", danger);
  dialog.returnValue = "";
  dialog.showModal();
  (inputs[0] ?? okButton).focus();
  inputs[0]?.select?.();
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        if (dialog.returnValue !== "ok") return resolve(null);
        resolve(Object.fromEntries(fields.map((f, i) => [f.name, inputs[i].value])));
      },
      { once: true },
    );
  });
}

/** A yes/no confirmation; resolves true for OK. */
export async function confirmDialog(title, text, ok = "Delete") {
  return (await openDialog({ title, text, ok, danger: true })) !== null;
}

let toastTimer = null;
/**
 * A short message at the bottom (a string, or an element such as errorView's). It hides
 * after `ms`, but not while the pointer is on it or a Details disclosure in it is open.
 */
export function toast(message, ms = 2600) {
  const el = document.getElementById("toast");
  el.replaceChildren(message);
  el.hidden = false;
  clearTimeout(toastTimer);
  const hide = () => {
    if (el.matches(":hover") || el.querySelector("details[open]")) toastTimer = setTimeout(hide, 1000);
    else el.hidden = true;
  };
  toastTimer = setTimeout(hide, ms);
}

/**
 * An error as the user sees it: `lead` (what failed, e.g. "Could not save:") and the
 * plain sentence of explainError (or of `explain`, a function giving `{text, detail}`
 * the same way), with the technical detail one click away in a "Details" disclosure.
 * Fits a status line, a toast or the chat's error banner.
 */
export function errorView(error, lead = "", explain = explainError) {
  const { text, detail } = explain(error);
  return h(
    "span",
    { class: "error-view" },
    h("span", { class: "error-text", text: lead ? `${lead} ${text}` : text }),
    detail && detail !== text
      ? h("details", { class: "error-detail" }, h("summary", { text: "Details" }), h("pre", { text: detail }))
      : null,
  );
}

/** Set a status line's text and kind ("ok", "warn", "error", "busy" or ""). */
export function setStatus(el, text, kind = "") {
  el.textContent = text;
  el.className = `status ${kind}`.trim();
}

/** Show a failure in a status line: `lead`, the plain sentence, and its Details. */
export function statusError(el, error, lead = "", explain = explainError) {
  replace(el, errorView(error, lead, explain));
  el.className = "status error";
}

/** A toast for a failure, shown longer than a plain toast so there is time to open Details. */
export function toastError(error, lead = "", ms = 8000) {
  toast(errorView(error, lead), ms);
}
