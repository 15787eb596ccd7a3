// Code blocks of rendered Markdown (panel_markdown.mjs): a head with the block's language
// and a Copy button (the block's text, exactly), and syntax highlighting by highlight.js
// (vendor/highlight.min.js: its common languages, in one ES module). highlight.js is
// imported only when the first block with a language shows. A block is highlighted once
// its closing fence is in: a streaming reply re-renders on every chunk, so a block still
// being written stays plain, and each highlighted block is kept (by language and text)
// so that re-rendering reuses it instead of highlighting it again.
import { h } from "./panel_dom.mjs";

/** highlight.js's HTML holds only spans with classes; anything else is dropped. */
const HIGHLIGHT_CONFIG = { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"], RETURN_DOM_FRAGMENT: true };
/** Longer blocks are shown plain: highlighting them would stall the panel. */
const MAX_HIGHLIGHT_CHARS = 100_000;
const CACHE_SIZE = 64;
const COPY_RESET_MS = 1500;

let hljs = null;
let loading = null;
let failed = false;
/** Complete blocks shown before highlight.js arrived, highlighted when it does. */
const pending = new Set();
/** `${language}\0${text}` -> highlighted DocumentFragment (cloned for each use), LRU. */
const cache = new Map();

function loadHighlighter(purify) {
  loading ??= import("./vendor/highlight.min.js").then(
    (module) => {
      hljs = module.default;
      for (const code of pending) if (code.isConnected) highlight(code, purify);
      pending.clear();
    },
    (error) => {
      failed = true;
      pending.clear();
      console.warn("highlight.js did not load: code shows without highlighting.", error);
    },
  );
}

/** Replace `code`'s text by its highlighted spans (a language highlight.js knows only). */
function highlight(code, purify) {
  const language = code.dataset.lang;
  const text = code.textContent;
  if (!hljs.getLanguage(language) || text.length > MAX_HIGHLIGHT_CHARS) return;
  const key = `${language}\0${text}`;
  let spans = cache.get(key);
  if (spans) cache.delete(key);
  else spans = purify.sanitize(hljs.highlight(text, { language, ignoreIllegals: true }).value, HIGHLIGHT_CONFIG);
  cache.set(key, spans);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value);
  code.replaceChildren(spans.cloneNode(true));
  code.classList.add("hljs");
}

async function copyCode(button, code) {
  let label = "Copied";
  try {
    await navigator.clipboard.writeText(code.textContent);
  } catch {
    label = "Copy is not allowed here";
  }
  button.textContent = label;
  setTimeout(() => (button.textContent = "Copy"), COPY_RESET_MS);
}

/**
 * The block for a sanitized `<code data-lang data-closed>`: its head (language, Copy)
 * above the code, highlighted now or when highlight.js arrives if its fence is closed.
 */
export function codeBlock(code, purify) {
  const language = code.dataset.lang ?? "";
  const copy = h("button", {
    type: "button",
    class: "code-copy",
    text: "Copy",
    title: "Copy the code",
    on: { click: () => copyCode(copy, code) },
  });
  const head = h("div", { class: "code-head" }, h("span", { class: "code-lang", text: language || "text" }), copy);
  if (language) {
    const complete = code.dataset.closed === "1";
    if (hljs) {
      if (complete) highlight(code, purify);
    } else if (!failed) {
      loadHighlighter(purify);
      if (complete) pending.add(code);
    }
  }
  return h("div", { class: "code-block" }, head, h("pre", {}, code));
}
