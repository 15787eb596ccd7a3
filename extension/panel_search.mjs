// The thread list's search box over message text (issue 38, docs/panel.md "Search").
//
// When the runtime answers `search.messages` (hasQuery), the box searches titles and
// message text: a live query, debounced, that follows the filters (folder, tag, Active /
// Archived / All). The list still narrows to the titles that hold the text (as without
// it), and the message results show under it ("Messages"); "No results" when neither
// finds anything. Each result
// shows the thread's title, a snippet with the matched words in <mark> (DOM nodes only,
// never HTML), and the message's date; a click, or Enter on the active result (arrow keys
// move it), opens the thread AT that message, switching to its branch first when the hit
// is not on the visible one, and the chat highlights it. Without `search.messages` the
// box keeps filtering the list by title (sidepanel.mjs), as before.
import { h, replace, ago } from "./panel_dom.mjs";
import { hasQuery, cmd, live } from "./panel_store.mjs";
import { toastError } from "./panel_ui.mjs";

export const SEARCH_QUERY = "search.messages";
const DEBOUNCE_MS = 150;
const LIMIT = 30;

/**
 * The snippet as DOM nodes: text, with each `[start, end]` of `highlights` (offsets in
 * `snippet`) in a <mark>. Overlapping or out-of-range ranges are clipped, never trusted.
 */
export function snippetNodes(snippet, highlights) {
  const text = String(snippet ?? "");
  const ranges = (Array.isArray(highlights) ? highlights : [])
    .filter((r) => Array.isArray(r) && Number.isInteger(r[0]) && Number.isInteger(r[1]))
    .map(([s, e]) => [Math.max(0, s), Math.min(text.length, e)])
    .filter(([s, e]) => s < e)
    .sort((a, b) => a[0] - b[0]);
  const out = [];
  let at = 0;
  for (const [s, e] of ranges) {
    if (e <= at) continue;
    const start = Math.max(s, at);
    if (start > at) out.push(document.createTextNode(text.slice(at, start)));
    out.push(h("mark", { text: text.slice(start, e) }));
    at = e;
  }
  if (at < text.length) out.push(document.createTextNode(text.slice(at)));
  return out;
}

/** The `filters` of `search.messages` for the list's filters (`archived: null`: all). */
export function searchFilters({ archived, folder, tag }) {
  const filters = { archived: archived === "all" ? null : archived === "archived" };
  if (folder) filters.folder = folder;
  if (tag) filters.tag = tag;
  return filters;
}

/**
 * Wire the search box. `app` is the side panel's app (filters, chat, openThread);
 * `els`: `{input, list, empty, results, none}` (the thread list and its empty message,
 * the results list, the "No results" line).
 * Returns `{active(), refresh(), layout()}`: whether text search is on and the box holds
 * text; a restart after the filters changed; a re-layout after the list was drawn.
 */
export function setupSearch(app, els) {
  const state = { enabled: false, text: "", key: null, stop: null, timer: null, hits: [], index: -1 };

  // The box's own value: sidepanel.mjs's input handler asks before this one has run.
  const showing = () => state.enabled && els.input.value.trim() !== "";

  function layout() {
    const on = showing();
    const titles = els.list.childElementCount > 0;
    els.results.hidden = !on || state.hits.length === 0;
    els.none.hidden = !on || state.key === null || state.pending || titles || state.hits.length > 0;
    if (on) els.empty.hidden = true;
    els.input.setAttribute("aria-expanded", String(on && state.hits.length > 0));
  }

  function stop() {
    state.stop?.();
    state.stop = null;
    clearTimeout(state.timer);
  }

  /** Start (or restart) the live query for the box's text and the filters. */
  function run() {
    stop();
    state.text = els.input.value;
    const text = state.text.trim();
    if (!showing()) {
      state.key = null;
      state.hits = [];
      state.index = -1;
      replace(els.results);
      layout();
      return;
    }
    const args = { text, limit: LIMIT, filters: searchFilters(app.filter) };
    const key = JSON.stringify(args);
    state.pending = true;
    state.timer = setTimeout(() => {
      state.stop = live(
        SEARCH_QUERY,
        args,
        (result) => {
          if (state.key !== key) return;
          state.pending = false;
          render(result.hits ?? []);
        },
        (error) => {
          if (state.key !== key) return;
          state.pending = false;
          if (error?.name === "ValidationError") render([]);
          else toastError(error, "Search failed:");
        },
      );
    }, DEBOUNCE_MS);
    state.key = key;
    layout();
  }

  function render(hits) {
    const activeId = state.hits[state.index]?.nodeId;
    state.hits = hits;
    const at = hits.findIndex((hit) => hit.nodeId === activeId);
    state.index = at;
    replace(
      els.results,
      hits.map((hit, i) => resultItem(hit, i)),
    );
    replace(els.none, `No results for “${state.text.trim()}”.`);
    els.results.setAttribute("aria-label", `Messages matching “${state.text.trim()}”`);
    mark();
    layout();
  }

  function resultItem(hit, i) {
    return h(
      "li",
      {
        class: "search-result",
        id: `search-result-${i}`,
        attrs: { role: "option", "aria-selected": "false" },
        dataset: { threadId: hit.threadId, nodeId: hit.nodeId ?? "", index: String(i) },
        on: {
          click: () => openHit(hit),
          mousedown: (event) => event.preventDefault(), // the box keeps the focus
        },
      },
      h("span", { class: "search-title", text: hit.title || "Untitled" }),
      hit.ts ? h("span", { class: "search-date", text: ago(hit.ts), title: new Date(hit.ts).toLocaleString() }) : null,
      h("span", { class: "search-snippet" }, snippetNodes(hit.snippet, hit.highlights)),
      hit.onVisibleBranch === false ? h("span", { class: "search-branch", text: "on another version" }) : null,
    );
  }

  /** Show the active result (aria-selected, in view). */
  function mark() {
    for (const el of els.results.children) {
      const on = Number(el.dataset.index) === state.index;
      el.classList.toggle("active", on);
      el.setAttribute("aria-selected", String(on));
      if (on) el.scrollIntoView({ block: "nearest" });
    }
    if (state.index >= 0) els.input.setAttribute("aria-activedescendant", `search-result-${state.index}`);
    else els.input.removeAttribute("aria-activedescendant");
  }

  /** Open the thread at the hit's message (its branch first, when not the visible one). */
  async function openHit(hit) {
    try {
      if (hit.nodeId && hit.onVisibleBranch === false) {
        await cmd("branch.switch", { threadId: hit.threadId, nodeId: hit.nodeId });
      }
      await app.openThread(hit.threadId, { at: hit.nodeId ?? null });
    } catch (error) {
      toastError(error, "Could not open that result:");
    }
  }

  els.input.addEventListener("keydown", (event) => {
    if (!showing() || state.hits.length === 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      const n = state.hits.length;
      state.index = state.index < 0 ? (step > 0 ? 0 : n - 1) : (state.index + step + n) % n;
      mark();
    } else if (event.key === "Enter") {
      event.preventDefault();
      openHit(state.hits[Math.max(0, state.index)]);
    }
  });

  els.input.addEventListener("input", () => {
    state.text = els.input.value;
    if (state.enabled) run();
  });

  hasQuery(SEARCH_QUERY).then((yes) => {
    state.enabled = yes;
    if (!yes) return;
    els.input.placeholder = "Search conversations";
    els.input.setAttribute("aria-label", "Search conversations");
    els.input.setAttribute("role", "combobox");
    els.input.setAttribute("aria-autocomplete", "list");
    els.input.setAttribute("aria-controls", els.results.id);
    state.text = els.input.value;
    run();
  });

  return {
    active: showing,
    refresh: () => {
      if (showing()) run();
    },
    layout,
  };
}
