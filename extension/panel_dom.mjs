// Tiny DOM helpers. Nothing here ever assigns HTML: text goes through textContent and
// attributes through setAttribute/properties, so content can never become markup.

/**
 * Create an element. `props`: class, text, title, attrs (object), on (event -> handler),
 * dataset (object), and any other key is set as a property (e.g. type, value, disabled).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "attrs") for (const [a, v] of Object.entries(value)) el.setAttribute(a, v);
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el[key] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace every child of `el`. */
export function replace(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

/** A short relative time ("now", "5m", "3h", "2d", or a date). */
export function ago(ms) {
  if (!ms) return "";
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 45) return "now";
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86400) return `${Math.round(s / 3600)}h`;
  if (s < 7 * 86400) return `${Math.round(s / 86400)}d`;
  return new Date(ms).toLocaleDateString();
}

/** `n` bytes in its largest unit under 1024 of it: `[value, unit index]`. */
function scaled(n) {
  const units = BYTE_UNITS;
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return [v, i];
}

// Powers of 1024, so labelled as such (KiB, MiB: a "MB" would be 10^6 bytes).
const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** Human bytes. */
export function bytes(n) {
  if (n === null || n === undefined) return "?";
  const [v, i] = scaled(n);
  return `${v < 10 && i > 0 ? v.toFixed(1) : Math.round(v)} ${BYTE_UNITS[i]}`;
}

/** Human bytes with one decimal from KiB up ("52.3 MiB", "812.0 KiB", "7 B"): a file's size. */
export function fileSize(n) {
  if (n === null || n === undefined) return "?";
  const [v, i] = scaled(n);
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${BYTE_UNITS[i]}`;
}

/** Offer `blob` as a download named `name`. */
export function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** "1 file", "2 files": a count with its noun (plural by adding `s`, or `many`). */
export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** base64 of an ArrayBuffer (chunked, so large files don't blow the stack). */
export function toBase64(buffer) {
  const bytesArr = new Uint8Array(buffer);
  let binary = "";
  for (let i = 0; i < bytesArr.length; i += 0x8000) {
    binary += String.fromCharCode(...bytesArr.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** Blob from base64. */
export function fromBase64(data, mime) {
  const binary = atob(data);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) out[i] = binary.charCodeAt(i);
  return new Blob([out], { type: mime || "application/octet-stream" });
}

/**
 * Make `el`'s children exactly `children` (in order), moving or inserting only what
 * differs: a child already in place is left alone (not even moved), so its DOM
 * identity, focus and state survive (a keyed re-render).
 */
export function reconcile(el, children) {
  const wanted = children.filter((c) => c !== null && c !== undefined && c !== false);
  // What goes is removed first, so the children that stay in order are never moved.
  const keep = new Set(wanted);
  for (const child of [...el.childNodes]) if (!keep.has(child)) child.remove();
  let at = el.firstChild;
  for (const child of wanted) {
    if (child === at) at = at.nextSibling;
    else el.insertBefore(child, at);
  }
  while (at) {
    const next = at.nextSibling;
    at.remove();
    at = next;
  }
}
