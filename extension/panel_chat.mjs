// The open conversation: what it shows, its actions, its error banner. Drawing the
// nodes is panel_messages.mjs, the composer panel_composer.mjs, replies being streamed
// panel_replies.mjs. Every write names what the user saw (the node, the version), so a
// view that is out of date never writes on the basis of it. What is shown is live
// (thread.get and thread.snapshot through panelot.live): a change committed anywhere,
// this panel's own writes included, re-renders it, keeping unchanged messages' elements.
// Only a window of the path is asked for and drawn (the last PAGE shown messages, a
// PAGE more each time the view is scrolled to its top), so a turn's cost does not grow
// with the thread's length.
import { h, replace, reconcile, ago, download } from "./panel_dom.mjs";
import { cmd, q, live } from "./panel_store.mjs";
import { confirmDialog, errorView, toast, toastError } from "./panel_ui.mjs";
import { keyMissing, providerApiKey } from "./panel_credentials.mjs";
import { setReopen, showThread } from "./presence.mjs";
import { Composer } from "./panel_composer.mjs";
import { MessageView } from "./panel_messages.mjs";
import { Replies } from "./panel_replies.mjs";
import { Summaries } from "./panel_summaries.mjs";
import { SentView } from "./panel_sent.mjs";

const $ = (id) => document.getElementById(id);
/** How many messages the open thread shows at first, and how many more each scroll up. */
export const PAGE = 50;
/** How close to the top (px) a scroll loads the earlier messages. */
const NEAR_TOP = 120;
/** How long an open thread stays unchanged, with no reply streaming, before its background reads run. */
const QUIET_MS = 250;
/**
 * Record the open thread (presence.mjs): this page's open-thread lock, and the thread to
 * reopen after a reload or restart. Retention spares both.
 */
function publishActive(threadId) {
  showThread(threadId);
  setReopen(threadId).catch((error) => console.warn("could not record the thread to reopen", error));
}

export class Chat {
  constructor(app) {
    this.app = app;
    this.threadId = null;
    this.thread = null;
    this.snapshot = null;
    this.target = null; // {threadId, nodeId, done}: the message a search result opened
    this.provider = null;
    this.sessionKey = null; // only when the credentials module is missing
    this.editing = null; // node id being edited
    this.errors = new Map(); // threadId -> {text, error, retry, label}: a banner per thread
    this.watching = null; // the open thread's live queries: {threadId, ready, stop}
    this.landed = new Map(); // threadId -> a stored reply's element, until the snapshot has it
    this.deleting = new Set(); // thread ids this panel is deleting (their end is no news)
    this.scrollPending = false; // the next render goes to the bottom
    this.limit = PAGE; // how many of the open thread's last messages are asked for
    this.keepBottom = null; // after loading earlier messages: the distance kept from the bottom
    this.shownLimit = null; // the limit of the snapshot shown
    this.summary = null; // the open thread's retention summary (thread.summary), if any
    this.messages = $("messages");
    this.view = new MessageView(this);
    this.replies = new Replies(app, {
      changed: (threadId, stored) => this.replyChanged(threadId, stored),
      delta: (threadId) => {
        if (threadId === this.threadId) this.scrollDown();
      },
      failed: (threadId, text, error, retry, label) => this.showError(threadId, text, error, retry, label),
      noted: (threadId, text, retry, label) => this.showNote(threadId, text, retry, label),
      restore: (threadId, draft, userNodeId) => this.composer.restore(threadId, draft, userNodeId),
    });
    this.summaries = new Summaries(this); // attachment summaries: made in the background, shown as chips
    this.summarizeDue = new Set(); // threads owed a summary pass once quiet (see whenQuiet)
    this.quietTimer = null;
    this.sent = new SentView(this); // what the next request leaves out: the divider and notes
    this.composer = new Composer(this);
    this.bind();
  }

  // ---- provider -------------------------------------------------------------------

  /** Read the default provider connection from settings (or the in-memory fallback). */
  async loadProvider() {
    this.provider = null;
    if (this.app.caps.settings) {
      try {
        const { value } = await q("settings.get", { group: "providers" });
        const conns = (value.connections ?? []).filter((c) => c.enabled !== false);
        const conn = conns.find((c) => c.id === value.defaultConnectionId) ?? conns[0];
        if (conn?.baseUrl && conn.models?.[0]) {
          const credentialRef = conn.credentialRef ?? null;
          this.provider = {
            connectionId: conn.id,
            baseUrl: conn.baseUrl,
            model: conn.models[0],
            credentialRef,
            label: conn.label ?? conn.id,
            // Characters of history a request carries (null: all); absent: the runtime's default.
            contextBudget: conn.contextBudget,
            // Attachment summaries (on unless turned off) and their size threshold (absent: the runtime's).
            summaries: conn.summaries !== false,
            summaryThreshold: conn.summaryThreshold,
            apiKey: () => this.apiKey(credentialRef),
          };
        }
      } catch (error) {
        console.warn("settings.get providers failed", error);
      }
    } else if (this.memoryProvider) {
      this.provider = { ...this.memoryProvider, apiKey: async () => this.sessionKey };
    }
    this.updateComposer();
    // What a request leaves out, and which summaries are made, depend on the provider.
    if (this.watching?.threadId) this.whenQuiet(this.watching.threadId, { summarize: true });
  }

  /**
   * Run the background work of thread `threadId` (what the next request leaves out,
   * the summaries' chips and, with `summarize`, a summary pass) once it is quiet: open,
   * no reply streaming in it and no change for QUIET_MS. A turn never shares the
   * runtime with them, and a burst of changes asks once.
   */
  whenQuiet(threadId, { summarize = false } = {}) {
    if (summarize) this.summarizeDue.add(threadId);
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => {
      if (this.threadId !== threadId) return;
      if (this.replies.get(threadId)) return this.whenQuiet(threadId); // after the reply
      this.sent.refresh();
      this.summaries.refresh();
      if (this.summarizeDue.delete(threadId)) this.summaries.schedule(threadId);
    }, QUIET_MS);
  }

  apiKey(credentialRef) {
    return providerApiKey({ credentialRef }, { credentials: this.app.caps.credentials, sessionKey: this.sessionKey });
  }

  /**
   * Before a request is asked for: whether the provider's stored key is gone (a restored
   * backup holds none; another window may remove one). If so, `threadId`'s banner says
   * which connection needs its key, with a button to Settings, and the caller stores
   * nothing and asks for nothing, so what the user typed stays where it was.
   */
  async keyGone(threadId) {
    const provider = this.provider;
    if (!(await keyMissing(provider, this.app.caps))) return false;
    const name = provider.baseUrl ? `${provider.label} (${provider.baseUrl})` : provider.label;
    this.showError(
      threadId,
      `The API key for ${name} is missing: enter it again in Settings.`,
      null,
      () => this.app.show("settings"),
      "Open Settings",
    );
    return true;
  }

  // ---- events ---------------------------------------------------------------------

  bind() {
    $("stop").addEventListener("click", () => this.replies.stop(this.threadId));
    $("chat-retry").addEventListener("click", () => {
      const retry = this.errors.get(this.threadId)?.retry;
      this.hideError(this.threadId);
      retry?.();
    });
    $("chat-error-close").addEventListener("click", () => this.hideError(this.threadId));
    this.messages.addEventListener("scroll", () => {
      if (this.messages.scrollTop < NEAR_TOP) this.loadEarlier();
    });
    $("chat-menu").addEventListener("click", (event) => {
      const action = event.target.closest("button")?.dataset.action;
      if (!action) return;
      $("chat-menu").open = false;
      this.menu(action);
    });
    document.addEventListener("click", (event) => {
      if (!event.target.closest("#chat-menu")) $("chat-menu").open = false;
    });
    // Escape closes the open menu and gives the focus back to its button.
    document.addEventListener("keydown", (event) => {
      const menu = $("chat-menu");
      if (event.key !== "Escape" || !menu.open) return;
      menu.open = false;
      menu.querySelector("summary").focus();
    });
  }

  async menu(action) {
    const t = this.thread;
    if (!t) return;
    if (action === "rename") await this.app.editThread(t);
    else if (action === "pin") await this.app.patchThread(t, { pinned: !t.pinned });
    else if (action === "archive") await this.app.patchThread(t, { archived: !t.archived });
    else if (action === "delete") await this.app.deleteThread(t);
    else if (action === "export-json" || action === "export-md") await this.exportThread(action === "export-md");
  }

  async exportThread(markdown) {
    const t = this.thread;
    try {
      const out = await q("thread.export", { threadId: t.id, format: markdown ? "markdown" : "json" });
      const base = (t.title || "thread").replace(/[^\w.-]+/g, "_").slice(0, 60) || "thread";
      if (markdown) download(`${base}.md`, new Blob([out.markdown], { type: "text/markdown" }));
      else download(`${base}.json`, new Blob([JSON.stringify(out.data, null, 2)], { type: "application/json" }));
      toast("Exported");
    } catch (error) {
      toastError(error, "Export failed:");
    }
  }

  // ---- loading & rendering --------------------------------------------------------

  /**
   * Show a conversation, live. A reply streaming in the one left keeps streaming; the
   * one left stops being watched. Resolves once it is shown (or failed to load).
   */
  async open(threadId, { at = null } = {}) {
    // `at`: a message to show and highlight (a search result's): render() widens the
    // window until it holds it, scrolls to it and marks it (class "search-hit").
    this.target = at ? { threadId, nodeId: at, done: false } : this.target?.threadId === threadId ? this.target : null;
    if (threadId !== this.threadId) {
      this.view.reset();
      this.editing = null;
      this.composer.clear();
      this.unwatch();
      this.thread = null;
      this.snapshot = null;
      this.summary = null;
      this.scrollPending = true;
      this.limit = PAGE;
      this.keepBottom = null;
    }
    this.threadId = threadId;
    publishActive(threadId);
    this.renderError();
    await (this.watching?.threadId === threadId ? this.watching.ready : this.watch(threadId));
    if (at) this.render(); // the thread was already open: go to the message now
  }

  /** Leave the conversation (back to the list, or it was deleted). */
  close() {
    this.target = null;
    this.unwatch();
    if (this.threadId) this.landed.delete(this.threadId);
    this.threadId = null;
    publishActive(null);
    this.thread = null;
    this.snapshot = null;
    this.summary = null;
    this.editing = null;
    this.renderError();
    replace(this.messages);
  }

  /** Watch the open thread afresh (its live queries restarted); resolves once shown. */
  async reload() {
    if (this.threadId) await this.watch(this.threadId);
  }

  /**
   * Follow `threadId` live: its meta (thread.get) and what it shows (thread.snapshot,
   * the `n/m` selectors' versions included). Returns a promise settled at the first
   * result of both, or the first failure.
   */
  watch(threadId) {
    this.unwatch();
    let settle;
    const state = { threadId, ready: new Promise((resolve) => (settle = resolve)), stop: null, got: new Set() };
    const mine = () => this.watching === state && this.threadId === threadId;
    const got = (which) => {
      state.got.add(which);
      if (this.errors.get(threadId)?.load) this.hideError(threadId);
      this.render();
      // Its nodes or record changed: what the next request leaves out and the summaries may too.
      this.whenQuiet(threadId);
      if (state.got.size === 2) settle();
    };
    const failed = (error) => {
      if (!mine()) return;
      if (error?.name === "NotFoundError") this.gone(threadId);
      else this.showError(threadId, "The conversation could not be loaded.", error, () => this.reload(), "Retry", true);
      settle();
    };
    const stops = [
      live("thread.get", { threadId }, (thread) => {
        if (!mine()) return;
        this.thread = thread;
        got("thread");
      }, failed),
      // What retention kept of removed messages: shown above the thread, not awaited.
      live("thread.summary", { threadId }, (summary) => {
        if (!mine()) return;
        this.summary = summary ? { ...summary, threadId } : null;
        this.render();
      }, failed),
    ];
    const follow = (limit) => {
      state.limit = limit;
      state.stopSnapshot?.();
      state.stopSnapshot = live("thread.snapshot", { threadId, limit }, (snapshot) => {
        if (!mine() || state.limit !== limit) return;
        this.snapshot = snapshot;
        this.shownLimit = limit;
        got("snapshot");
      }, failed);
    };
    follow(this.limit);
    state.follow = follow;
    this.sent.reset();
    this.summaries.opened(threadId);
    this.whenQuiet(threadId, { summarize: true });
    state.stop = () => {
      stops.forEach((stop) => stop());
      state.stopSnapshot?.();
    };
    this.watching = state;
    return state.ready;
  }

  /**
   * Show PAGE more of the open thread's earlier messages (the live window grows), the
   * messages in view staying where they are on the screen.
   */
  loadEarlier() {
    const state = this.watching;
    if (!state || state.threadId !== this.threadId || !this.snapshot?.hasMore) return;
    if (this.shownLimit !== this.limit) return; // already loading
    const box = this.messages;
    this.limit += PAGE;
    this.keepBottom = box.scrollHeight - box.scrollTop;
    state.follow(this.limit);
  }

  /** The element at the top of a window with more above: scrolling to it loads them. */
  earlier() {
    if (!this.earlierEl) {
      this.earlierEl = h("button", { class: "earlier", type: "button", text: "Earlier messages" });
      this.earlierEl.dataset.testid = "earlier";
      this.earlierEl.addEventListener("click", () => this.loadEarlier());
    }
    return this.earlierEl;
  }

  /** Stop following the open thread. */
  unwatch() {
    this.watching?.stop();
    this.watching = null;
  }

  /** The open thread was deleted in another context: close it, with a notice (unless `quiet`). */
  gone(threadId, { quiet = false } = {}) {
    if (this.threadId !== threadId || this.deleting.has(threadId)) return;
    this.replies.stop(threadId, { discard: true });
    this.errors.delete(threadId);
    this.close();
    if (this.app.view === "chat") this.app.show("threads");
    this.app.renderThreads?.();
    if (quiet) return;
    const draft = this.composer.input.value.trim() || this.composer.pending.length;
    toast(
      `This conversation was deleted in another window.${draft ? " What you typed is still in the message box." : ""}`,
      5000,
    );
  }

  /**
   * A reply in `threadId` started, ended or was stored (`stored`: `{nodeId, el, mode,
   * userNodeId}`, the element shown until the live snapshot has the stored node).
   */
  replyChanged(threadId, stored = null) {
    if (stored?.el) {
      this.landed.set(threadId, stored);
      setTimeout(() => {
        // never seen (deleted meanwhile?): stop showing it
        if (this.landed.get(threadId) !== stored) return;
        this.landed.delete(threadId);
        if (threadId === this.threadId) this.render();
      }, 10_000);
    }
    if (threadId === this.threadId) {
      if (this.replies.get(threadId)) this.scrollPending = true;
      this.render();
    }
    this.updateComposer();
  }

  /**
   * Draw the open thread, keyed by node id: an unchanged message keeps its element (and
   * an edit box its text). The scroll position stays unless it was at the bottom.
   */
  render() {
    const t = this.thread;
    if (!t || !this.snapshot || t.id !== this.threadId || this.snapshot.threadId !== this.threadId) return;
    $("chat-pin").hidden = !t.pinned;
    $("chat-archived").hidden = !t.archived;
    let nodes = this.snapshot.nodes;
    let landed = this.landed.get(this.threadId);
    if (landed && nodes.some((n) => n.id === landed.nodeId)) {
      this.landed.delete(this.threadId);
      landed = null;
    }
    const stream = this.replies.get(this.threadId) ?? landed;
    if (stream?.mode === "regenerate") {
      // Show the stream in place of the reply being regenerated.
      const at = nodes.findIndex((n) => n.id === stream.userNodeId);
      if (at >= 0) nodes = nodes.slice(0, at + 1);
    }
    const more = !!this.snapshot.hasMore;
    // How many messages the branch shows: Python's count of the whole visible path
    // (thread `shown`), else what is loaded ("+" while more is above it).
    const total = t.shown?.messages;
    const n = total ?? nodes.length;
    const count = `${n}${total == null && more ? "+" : ""} message${n === 1 && (total != null || !more) ? "" : "s"}`;
    const summary = this.summary?.threadId === this.threadId ? this.summary : null;
    const removed = summary && !nodes.length ? "Messages removed by retention, summary kept" : count;
    $("chat-meta").textContent = `${removed} · updated ${ago(t.updatedAt)}`;
    const menu = $("chat-menu");
    menu.querySelector('[data-action="pin"]').textContent = t.pinned ? "Unpin" : "Pin";
    menu.querySelector('[data-action="archive"]').textContent = t.archived ? "Unarchive" : "Archive";
    if (this.app.view === "chat") $("view-title").textContent = t.title || "Untitled";
    const els = this.view.nodes(nodes);
    this.sent.place(nodes, els);
    if (summary && !more) els.unshift(this.view.summary(summary));
    if (more) els.unshift(this.earlier());
    if (!nodes.length && !stream && !summary) els.push(this.welcome());
    if (stream?.el) els.push(stream.el);
    const box = this.messages;
    const bottom = box.scrollHeight - box.scrollTop - box.clientHeight < 24;
    const top = box.scrollTop;
    reconcile(box, els);
    const keep = this.shownLimit === this.limit ? this.keepBottom : null;
    if (keep !== null && this.snapshot.nodes.length) {
      box.scrollTop = box.scrollHeight - keep; // earlier messages came in above
      this.keepBottom = null;
    } else if (bottom || this.scrollPending) this.scrollDown();
    else box.scrollTop = top;
    this.scrollPending = false;
    this.showTarget(nodes, more);
    this.updateComposer();
  }

  /**
   * The message a search result opened: once in the window, scrolled to (the first time)
   * and marked; while not, the window grows (PAGE more, as scrolling up would) until it
   * holds it or nothing is left above. `data-search-hit` on the messages box names it.
   */
  showTarget(nodes, more) {
    const target = this.target;
    const box = this.messages;
    for (const el of box.querySelectorAll(".msg.search-hit")) {
      if (el.dataset.nodeId !== target?.nodeId) el.classList.remove("search-hit");
    }
    if (!target || target.threadId !== this.threadId) {
      delete box.dataset.searchHit;
      return;
    }
    if (!nodes.some((n) => n.id === target.nodeId)) {
      if (more && this.shownLimit === this.limit) {
        this.limit += PAGE;
        this.watching?.follow(this.limit);
      }
      return;
    }
    const el = [...box.querySelectorAll(".msg")].find((e) => e.dataset.nodeId === target.nodeId);
    if (!el) return;
    el.classList.add("search-hit");
    box.dataset.searchHit = target.nodeId;
    if (!target.done) {
      target.done = true;
      el.scrollIntoView({ block: "center" });
    }
  }

  /** The empty thread's greeting (one element per provider, so a re-render keeps it). */
  welcome() {
    const key = this.provider ? `${this.provider.model} ${this.provider.baseUrl}` : "";
    if (this.welcomeEl?.key !== key) this.welcomeEl = { key, el: this.makeWelcome() };
    return this.welcomeEl.el;
  }

  makeWelcome() {
    return h(
      "div",
      { class: "welcome" },
      h("strong", { text: "Start the conversation" }),
      this.provider
        ? `Replies come from ${this.provider.model} at ${this.provider.baseUrl}.`
        : "Type a message below. To get replies, configure a provider in Settings.",
    );
  }

  scrollDown() {
    this.messages.scrollTop = this.messages.scrollHeight;
  }

  updateComposer() {
    const hint = $("composer-hint");
    const streaming = !!this.replies.get(this.threadId);
    $("send").hidden = streaming;
    $("stop").hidden = !streaming;
    $("attach").hidden = !this.app.caps.attachments;
    if (!this.provider) {
      replace(
        hint,
        this.app.caps.settings
          ? "No provider configured: set a base URL, model and API key in Settings → Provider to get replies."
          : "Provider settings are not available in this build: set a base URL and model in Settings (kept for this session only).",
        h("button", { type: "button", text: "Open Settings", on: { click: () => this.app.show("settings") } }),
      );
      hint.hidden = false;
    } else {
      hint.hidden = true;
    }
    $("send").disabled = !this.provider;
    $("send").title = this.provider ? "Send (Enter)" : "Configure a provider first";
  }

  // ---- message actions ------------------------------------------------------------

  async regenerate(userNodeId) {
    const threadId = this.threadId;
    this.hideError(threadId);
    if (await this.keyGone(threadId)) return;
    await this.replies.generate(threadId, userNodeId, "regenerate", this.provider);
  }

  startEdit(nodeId) {
    this.editing = nodeId;
    this.render();
    const area = this.messages.querySelector(".edit-box textarea");
    area?.focus();
    area?.setSelectionRange(area.value.length, area.value.length);
  }

  stopEdit() {
    this.editing = null;
    this.render();
  }

  editBox(n, text) {
    const area = h("textarea", { value: text, attrs: { "aria-label": "Edit message" } });
    const save = () => this.saveEdit(n, area.value.trim());
    area.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        save();
      } else if (event.key === "Escape") {
        this.stopEdit();
      }
    });
    const button = (cls, label, action, fn) =>
      h("button", { type: "button", class: cls, text: label, dataset: { action }, on: { click: fn } });
    return h(
      "div",
      { class: "edit-box" },
      area,
      h(
        "div",
        { class: "edit-actions" },
        button("ghost", "Cancel", "cancel-edit", () => this.stopEdit()),
        button("primary", this.provider ? "Save & send" : "Save", "save-edit", save),
      ),
    );
  }

  async saveEdit(n, newText) {
    if (!newText) return;
    const threadId = this.threadId;
    if (this.provider && (await this.keyGone(threadId))) return; // the edit box stays open
    const others = (n.payload.content ?? []).filter((b) => b?.type !== "text");
    let nodeId;
    try {
      ({ nodeId } = await cmd("message.edit", {
        threadId,
        nodeId: n.id,
        payload: { content: [{ type: "text", text: newText }, ...others] },
      }));
    } catch (error) {
      toastError(error, "Edit failed:");
      return;
    }
    this.editing = null;
    this.render();
    if (this.provider) await this.replies.generate(threadId, nodeId, "append", this.provider);
  }

  /** Show the version `nodeId` (one the selector offered). */
  async switchTo(nodeId) {
    if (!nodeId) return;
    try {
      await cmd("branch.switch", { threadId: this.threadId, nodeId });
    } catch (error) {
      toastError(error, "Could not switch to that version:");
    }
  }

  async deleteNode(n) {
    const ok = await confirmDialog(
      "Delete message?",
      "The message is hidden (kept as a tombstone); later messages stay and reconnect to the one before it.",
    );
    if (!ok) return;
    try {
      await cmd("message.delete", { threadId: this.threadId, nodeId: n.id });
    } catch (error) {
      toastError(error, "Delete failed:");
    }
  }

  // ---- errors: a banner per thread --------------------------------------------------

  /** Record an error of `threadId` (with its Retry); it shows while that thread is open. */
  showError(threadId, text, error, retry, label = "Retry", load = false) {
    this.errors.set(threadId, { text, error, retry, label, load });
    this.renderError();
  }

  /** A neutral note in the same banner (not in the error style), e.g. after a Stop. */
  showNote(threadId, text, retry, label = "Retry") {
    this.errors.set(threadId, { text, error: null, retry, label, load: false, note: true });
    this.renderError();
  }

  hideError(threadId) {
    this.errors.delete(threadId);
    this.renderError();
  }

  renderError() {
    const shown = this.threadId ? this.errors.get(this.threadId) : null;
    $("chat-error").hidden = !shown;
    if (!shown) return;
    $("chat-error").classList.toggle("error", !shown.note);
    $("chat-error").classList.toggle("info", !!shown.note);
    if (shown.error) replace($("chat-error-text"), errorView(shown.error, shown.text));
    else $("chat-error-text").textContent = shown.text;
    $("chat-retry").textContent = shown.label;
    $("chat-retry").hidden = !shown.retry;
  }
}
