// Shared UI bits: dialogs, toast, view switching.
import { h, replace } from "./panel_dom.mjs";

const dialog = document.getElementById("dialog");

/**
 * Show the modal dialog. `fields`: [{name, label, value, type, placeholder}].
 * Resolves with {field: value} on OK, or null on cancel.
 */
export function openDialog({ title, text = "", fields = [], ok = "OK", danger = false }) {
  document.getElementById("dialog-title").textContent = title;
  const p = document.getElementById("dialog-text");
  p.textContent = text;
  p.hidden = !text;
  const inputs = fields.map((f) =>
    h("input", {
      name: f.name,
      type: f.type ?? "text",
      value: f.value ?? "",
      placeholder: f.placeholder ?? "",
      maxLength: f.maxLength,
      autocomplete: "off",
    }),
  );
  replace(
    document.getElementById("dialog-fields"),
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
/** A short status message at the bottom. */
export function toast(message, ms = 2600) {
  const el = document.getElementById("toast");
  el.textContent = message;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, ms);
}
