// Markdown for replies: `marked` (GFM: tables, nested lists, task lists, autolinks)
// turns the text into HTML with raw HTML switched off (an HTML block or tag in the text is
// escaped and shows as literal characters), and DOMPurify turns that HTML into DOM nodes
// keeping only the tags and attributes Markdown produces. Links are kept only for
// absolute http(s) and mailto URLs (anything else, javascript:, data:, relative, shows as
// its literal Markdown source) and always open in a new tab without an opener or a
// referrer; images are never loaded, they become links to their URL. Code blocks get a
// language label, a copy button and highlighting (panel_code.mjs).
//
// Both libraries are vendored ES modules (dist/extension/vendor/, copied from
// node_modules by build.py), imported when this module is first evaluated, alongside the
// runtime's boot, which takes far longer; `markdownReady()` settles once they are in.
// Until then (or if they failed to load) text renders as plain text, upgraded in place
// when they arrive.
import { h } from "./panel_dom.mjs";
import { codeBlock } from "./panel_code.mjs";

const SAFE_URL = /^(https?:|mailto:)/i;

/** Whether `url` may become a link href: its absolute form, or null. */
export function safeUrl(url) {
  try {
    const parsed = new URL(url);
    return SAFE_URL.test(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** `text` as HTML text (or an attribute value): every markup character escaped. */
function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Whether a fenced code block's source (`raw`) has its closing fence yet. */
function fenceClosed(raw) {
  const lines = raw.replace(/\n+$/, "").split("\n");
  const open = lines[0].match(/^ {0,3}(`{3,}|~{3,})/);
  if (!open) return true; // an indented block: complete as far as the text goes
  if (lines.length < 2) return false;
  const close = lines.at(-1).match(/^ {0,3}(`{3,}|~{3,})[ \t]*$/);
  return Boolean(close) && close[1][0] === open[1][0] && close[1].length >= open[1].length;
}

/** The tags and attributes Markdown renders to; everything else is dropped. */
const PURIFY_CONFIG = {
  ALLOWED_TAGS: [
    "p", "br", "strong", "em", "del", "code", "pre", "a", "ul", "ol", "li", "blockquote",
    "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td",
  ],
  ALLOWED_ATTR: ["href", "title", "align", "start", "data-lang", "data-closed"],
  ALLOW_DATA_ATTR: false,
  // Every other attribute's value must match ALLOWED_URI_REGEXP, as href's does.
  ADD_URI_SAFE_ATTR: ["align", "start", "data-lang", "data-closed"],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  RETURN_DOM_FRAGMENT: true,
};

/** Overrides of marked's HTML renderer (`this` is the renderer, `this.parser` its parser). */
const RENDERER = {
  html({ text }) {
    return escapeHtml(text);
  },
  heading({ tokens, depth }) {
    const level = Math.min(depth + 2, 6); // h1 and h2 belong to the panel itself
    return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
  },
  link({ href, title, tokens, raw }) {
    const url = safeUrl(href);
    if (!url) return escapeHtml(raw);
    return `<a href="${escapeHtml(url)}" title="${escapeHtml(title || url)}">${this.parser.parseInline(tokens)}</a>`;
  },
  image({ href, title, text, raw }) {
    const url = safeUrl(href);
    if (!url) return escapeHtml(raw);
    return `<a href="${escapeHtml(url)}" title="${escapeHtml(title || url)}">${escapeHtml(text || url)}</a>`;
  },
  checkbox({ checked }) {
    return checked ? "☑ " : "☐ ";
  },
  code({ text, lang, raw }) {
    const language = (lang ?? "").match(/^[\w#+.-]{1,40}/)?.[0] ?? "";
    const closed = fenceClosed(raw) ? "1" : "0";
    return `<pre><code data-lang="${escapeHtml(language)}" data-closed="${closed}">${escapeHtml(text)}</code></pre>\n`;
  },
};

/** Whether lexed `tokens` define link references (`[id]: url`). */
function hasLinks(tokens) {
  return Object.keys(tokens.links ?? {}).length > 0;
}

/** How many rendered blocks are kept for reuse (least recently used out first). */
const BLOCK_CACHE_SIZE = 256;

/**
 * Build the renderer from the loaded modules: text -> sanitized DocumentFragment.
 *
 * A streaming reply is rendered whole on every chunk, and sanitizing is the costly part,
 * so each top-level block (a paragraph, a list, a table, a code block) is rendered and
 * sanitized on its own and kept by its source, and text that extends the text rendered
 * last is lexed from its last block on: a chunk re-renders only the block being written.
 * Text that defines link references is lexed whole and not cached (a definition changes
 * how the blocks before it render). The last block is never kept: it may still grow.
 */
function makeRenderer(Marked, DOMPurify) {
  const purify = DOMPurify(window); // an instance of our own, so its hook is ours alone
  purify.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName === "A") {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
  const marked = new Marked({ gfm: true, breaks: true, renderer: RENDERER });
  const blocks = new Map(); // block source -> sanitized DocumentFragment
  const block = (token, keep) => {
    let html = blocks.get(token.raw);
    if (html) blocks.delete(token.raw);
    else html = purify.sanitize(marked.parser([token]), PURIFY_CONFIG);
    if (keep) {
      blocks.set(token.raw, html);
      if (blocks.size > BLOCK_CACHE_SIZE) blocks.delete(blocks.keys().next().value);
    }
    return html.cloneNode(true);
  };
  let last = { text: "", tokens: [] };
  const lex = (text) => {
    let tokens = null;
    if (text.startsWith(last.text) && !hasLinks(last.tokens)) {
      // Appending text changes the last block at most: keep those before it, lex the rest.
      let end = last.tokens.length - 1;
      while (end > 0 && last.tokens[end].type === "space") end -= 1;
      const kept = last.tokens.slice(0, Math.max(end, 0));
      const tail = marked.lexer(text.slice(kept.reduce((n, t) => n + t.raw.length, 0)));
      if (!hasLinks(tail)) tokens = Object.assign([...kept, ...tail], { links: tail.links });
    }
    tokens ??= marked.lexer(text);
    last = { text, tokens };
    return tokens;
  };
  return (text) => {
    const tokens = lex(text);
    const cacheable = !hasLinks(tokens);
    const out = document.createDocumentFragment();
    tokens.forEach((token, i) => out.append(block(token, cacheable && i < tokens.length - 1)));
    for (const pre of out.querySelectorAll("pre")) {
      const code = pre.querySelector("code");
      if (code) pre.replaceWith(codeBlock(code, purify));
    }
    return out;
  };
}

let render = null;
let failed = false;
/** Plain-text placeholders rendered before the libraries arrived, with their text. */
const waiting = new Map();

const loaded = Promise.all([import("./vendor/marked.esm.js"), import("./vendor/purify.es.mjs")]).then(
  ([markedModule, purifyModule]) => {
    render = makeRenderer(markedModule.Marked, purifyModule.default);
    for (const [el, text] of waiting) if (el.isConnected) el.replaceWith(render(text));
    waiting.clear();
  },
  (error) => {
    failed = true;
    waiting.clear();
    console.warn("The Markdown libraries did not load: replies show as plain text.", error);
  },
);

/** Settles once the Markdown libraries are loaded (or failed to: then text stays plain). */
export function markdownReady() {
  return loaded;
}

/** Render Markdown text to a DocumentFragment (plain text until the libraries are in). */
export function renderMarkdown(text) {
  const source = String(text ?? "").replace(/\r\n?/g, "\n");
  if (render) return render(source);
  const plain = h("div", { class: "md-plain", text: source });
  if (!failed) waiting.set(plain, source);
  const out = document.createDocumentFragment();
  out.append(plain);
  return out;
}
