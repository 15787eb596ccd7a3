// Inline SVG icons built with createElementNS (no markup strings, no icon fonts).
const PATHS = {
  menu: "M4 6h16M4 12h16M4 18h16",
  back: "M15 18l-6-6 6-6",
  plus: "M12 5v14M5 12h14",
  settings:
    "M4 21v-7M4 10V3M12 21v-9M12 8V3M20 21v-5M20 12V3M1 14h6M9 8h6M17 16h6",
  clip: "M21.44 11.05l-9.19 9.19a6 6 0 0 1-8.49-8.49l9.19-9.19a4 4 0 0 1 5.66 5.66l-9.2 9.19a2 2 0 0 1-2.83-2.83l8.49-8.48",
  more: "M5 12h.01M12 12h.01M19 12h.01",
  star: "M12 2l3.09 6.26L22 9.27l-5 4.87 1.18 6.88L12 17.77l-6.18 3.25L7 14.14 2 9.27l6.91-1.01L12 2z",
  edit: "M12 20h9M16.5 3.5a2.121 2.121 0 0 1 3 3L7 19l-4 1 1-4L16.5 3.5z",
  archive: "M21 8v13H3V8M1 3h22v5H1zM10 12h4",
  unarchive: "M21 8v13H3V8M1 3h22v5H1zM12 18v-6M9 15l3-3 3 3",
  trash: "M3 6h18M19 6l-1 14a2 2 0 0 1-2 2H8a2 2 0 0 1-2-2L5 6M10 11v6M14 11v6M9 6V4a1 1 0 0 1 1-1h4a1 1 0 0 1 1 1v2",
  file: "M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8zM14 2v6h6",
  tool: "M14.7 6.3a1 1 0 0 0 0 1.4l1.6 1.6a1 1 0 0 0 1.4 0l3.77-3.77a6 6 0 0 1-7.94 7.94l-6.91 6.91a2.12 2.12 0 0 1-3-3l6.91-6.91a6 6 0 0 1 7.94-7.94l-3.76 3.76z",
  folder: "M22 19a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h5l2 3h9a2 2 0 0 1 2 2z",
  info: "M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20zM12 16v-4M12 8h.01",
  chat: "M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z",
};
// The SVG namespace, taken from an <svg> the HTML parser created (sidepanel.html).
const NS = document.getElementById("svg-ns").namespaceURI;

/** Built icons by name, fill and size: each new one is a deep clone of its first. */
const BUILT = new Map();

/** An icon element; `filled` fills the shape (e.g. a pinned star). */
export function icon(name, { filled = false, size = 16 } = {}) {
  const key = `${name} ${filled} ${size}`;
  let model = BUILT.get(key);
  if (model === undefined) {
    model = build(name, filled, size);
    BUILT.set(key, model);
  }
  // A clone costs one call where building costs a dozen (the first paint draws ~1,200).
  return model.cloneNode(true);
}

/** A new icon element (see icon). */
function build(name, filled, size) {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", String(size));
  svg.setAttribute("height", String(size));
  svg.setAttribute("fill", filled ? "currentColor" : "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", name === "more" ? "3" : "2");
  svg.setAttribute("stroke-linecap", "round");
  svg.setAttribute("stroke-linejoin", "round");
  svg.setAttribute("aria-hidden", "true");
  svg.classList.add("ico");
  const path = document.createElementNS(NS, "path");
  path.setAttribute("d", PATHS[name] ?? PATHS.info);
  svg.append(path);
  return svg;
}

/** Give every `[data-icon]` element in `root` its icon (replacing its text). */
export function applyIcons(root = document) {
  for (const el of root.querySelectorAll("[data-icon]")) {
    el.replaceChildren(icon(el.dataset.icon, { size: Number(el.dataset.iconSize ?? 18) }));
  }
}
