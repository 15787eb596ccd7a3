// A small Markdown renderer that builds DOM nodes directly. It never parses or injects
// HTML: every piece of text becomes a Text node, so `<script>`, `<img onerror>` or SVG
// in content shows up as literal characters. Links are kept only for http(s) and mailto
// URLs; anything else (javascript:, data:, vbscript:) renders as plain text.
import { h } from "./panel_dom.mjs";

const SAFE_URL = /^(https?:|mailto:)/i;

/** Whether `url` may become a link href. */
export function safeUrl(url) {
  try {
    const parsed = new URL(url);
    return SAFE_URL.test(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

/** Render inline Markdown (code, bold, italic, links, autolinks) into `parent`. */
function inline(parent, text) {
  const pattern =
    /(`+)([^`]|[^`][\s\S]*?[^`])\1|\*\*([^*]+?)\*\*|__([^_]+?)__|\*([^*\s][^*]*?)\*|_([^_\s][^_]*?)_|\[([^\]]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) parent.append(text.slice(last, m.index));
    if (m[1]) parent.append(h("code", { text: m[2] }));
    else if (m[3] !== undefined || m[4] !== undefined) {
      const strong = h("strong");
      inline(strong, m[3] ?? m[4]);
      parent.append(strong);
    } else if (m[5] !== undefined || m[6] !== undefined) {
      const em = h("em");
      inline(em, m[5] ?? m[6]);
      parent.append(em);
    } else if (m[7] !== undefined) {
      const href = safeUrl(m[8]);
      if (href) {
        const a = h("a", { href, target: "_blank", rel: "noopener noreferrer", title: href });
        inline(a, m[7]);
        parent.append(a);
      } else {
        parent.append(m[0]);
      }
    } else if (m[9]) {
      const href = safeUrl(m[9]);
      parent.append(href ? h("a", { href, text: m[9], target: "_blank", rel: "noopener noreferrer" }) : m[9]);
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) parent.append(text.slice(last));
}

/** Render Markdown text to a DocumentFragment. */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  const lines = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) {
      const p = h("p");
      para.forEach((line, n) => {
        if (n) p.append(h("br"));
        inline(p, line);
      });
      out.append(p);
      para = [];
    }
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      flush();
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) {
        body.push(lines[i]);
        i += 1;
      }
      i += 1;
      const code = h("code", { text: body.join("\n") });
      if (fence[2]) code.dataset.lang = fence[2];
      out.append(h("pre", {}, code));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      flush();
      const el = h(`h${Math.min(heading[1].length + 2, 6)}`);
      inline(el, heading[2]);
      out.append(el);
      i += 1;
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) {
        quoted.push(lines[i].replace(/^\s*>\s?/, ""));
        i += 1;
      }
      const bq = h("blockquote");
      bq.append(renderMarkdown(quoted.join("\n")));
      out.append(bq);
      continue;
    }
    const item = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1]);
      const list = h(ordered ? "ol" : "ul");
      while (i < lines.length) {
        const m = lines[i].match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        const li = h("li");
        inline(li, m[2]);
        list.append(li);
        i += 1;
      }
      out.append(list);
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      out.append(h("hr"));
      i += 1;
      continue;
    }
    if (line.trim() === "") flush();
    else para.push(line);
    i += 1;
  }
  flush();
  return out;
}
