// The open conversation: what it shows, its actions, its error banner. Drawing the
// nodes is panel_messages.mjs, the composer panel_composer.mjs, replies being streamed
// panel_replies.mjs. Every write names what the user saw (the node, the version), so a
// view that is out of date never writes on the basis of it.
import { h, replace, ago, download } from "./panel_dom.mjs";
import { cmd, q } from "./panel_store.mjs";
import { confirmDialog, errorView, toast, toastError } from "./panel_ui.mjs";
import { providerApiKey } from "./panel_credentials.mjs";
import { ACTIVE_THREAD_KEY } from "./runtime.mjs";
import { Composer } from "./panel_composer.mjs";
import { MessageView } from "./panel_messages.mjs";
import { Replies } from "./panel_replies.mjs";

const $ = (id) => document.getElementById(id);
/** Where the panel remembers the open conversation, to reopen it after a reload. */
export const LAST_THREAD_KEY = "panelot.lastThread";

/** Record the open thread in chrome.storage.session: retention never archives it. */
function publishActive(threadId) {
  globalThis.chrome?.storage?.session
    ?.set({ [ACTIVE_THREAD_KEY]: threadId })
    .catch((error) => console.warn("could not record the active thread", error));
  try {
    if (threadId) localStorage.setItem(LAST_THREAD_KEY, threadId);
    else localStorage.removeItem(LAST_THREAD_KEY);
  } catch {
    /* storage refused: the panel just opens on the list next time */
  }
}

export class Chat {
  constructor(app) {
    this.app = app;
    this.threadId = null;
    this.thread = null;
    this.snapshot = null;
    this.provider = null;
    this.sessionKey = null; // only when the credentials module is missing
    this.editing = null; // node id being edited
    this.errors = new Map(); // threadId -> {text, error, retry, label}: a banner per thread
    this.messages = $("messages");
    this.view = new MessageView(this);
    this.replies = new Replies(app, {
      changed: (threadId) => this.replyChanged(threadId),
      delta: (threadId) => {
        if (threadId === this.threadId) this.scrollDown();
      },
      failed: (threadId, text, error, retry, label) => this.showError(threadId, text, error, retry, label),
    });
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
  }

  apiKey(credentialRef) {
    return providerApiKey({ credentialRef }, { credentials: this.app.caps.credentials, sessionKey: this.sessionKey });
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
    $("chat-menu").addEventListener("click", (event) => {
      const action = event.target.closest("button")?.dataset.action;
      if (!action) return;
      $("chat-menu").open = false;
      this.menu(action);
    });
    document.addEventListener("click", (event) => {
      if (!event.target.closest("#chat-menu")) $("chat-menu").open = false;
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

  /** Show a conversation. A reply streaming in the one left keeps streaming. */
  async open(threadId) {
    if (threadId !== this.threadId) {
      this.view.reset();
      this.editing = null;
      this.composer.clear();
    }
    this.threadId = threadId;
    publishActive(threadId);
    this.renderError();
    await this.reload();
  }

  /** Leave the conversation (back to the list, or it was deleted). */
  close() {
    this.threadId = null;
    publishActive(null);
    this.thread = null;
    this.snapshot = null;
    this.renderError();
    replace(this.messages);
  }

  async reload() {
    const threadId = this.threadId;
    if (!threadId) return;
    let thread;
    let snapshot;
    try {
      [thread, snapshot] = await Promise.all([
        q("thread.get", { threadId }),
        q("thread.snapshot", { threadId }),
      ]);
    } catch (error) {
      if (this.threadId === threadId) {
        this.showError(threadId, "The conversation could not be loaded.", error, () => this.reload());
      }
      return;
    }
    if (this.threadId !== threadId) return; // another one was opened meanwhile
    this.thread = thread;
    this.snapshot = snapshot;
    this.render();
  }

  /** A reply in `threadId` started, ended or was stored. */
  async replyChanged(threadId) {
    if (threadId === this.threadId) await this.reload();
    this.updateComposer();
    if (!this.replies.get(threadId)) this.app.refreshThreads();
  }

  render() {
    const t = this.thread;
    if (!t || !this.snapshot) return;
    $("chat-pin").hidden = !t.pinned;
    $("chat-archived").hidden = !t.archived;
    let nodes = this.snapshot.nodes;
    const stream = this.replies.get(this.threadId);
    if (stream?.mode === "regenerate") {
      // Show the stream in place of the reply being regenerated.
      const at = nodes.findIndex((n) => n.id === stream.userNodeId);
      if (at >= 0) nodes = nodes.slice(0, at + 1);
    }
    $("chat-meta").textContent = `${nodes.length} message${nodes.length === 1 ? "" : "s"} · updated ${ago(t.updatedAt)}`;
    const menu = $("chat-menu");
    menu.querySelector('[data-action="pin"]').textContent = t.pinned ? "Unpin" : "Pin";
    menu.querySelector('[data-action="archive"]').textContent = t.archived ? "Unarchive" : "Archive";
    if (this.app.view === "chat") $("view-title").textContent = t.title || "Untitled";
    const els = this.view.nodes(nodes);
    if (!nodes.length && !stream) els.push(this.welcome());
    if (stream?.el) els.push(stream.el);
    replace(this.messages, els);
    this.scrollDown();
    this.updateComposer();
  }

  welcome() {
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

  regenerate(userNodeId) {
    const threadId = this.threadId;
    this.hideError(threadId);
    return this.replies.generate(threadId, userNodeId, "regenerate", this.provider);
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
    await this.reload();
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
    await this.reload();
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
      return;
    }
    await this.reload();
  }

  // ---- errors: a banner per thread --------------------------------------------------

  /** Record an error of `threadId` (with its Retry); it shows while that thread is open. */
  showError(threadId, text, error, retry, label = "Retry") {
    this.errors.set(threadId, { text, error, retry, label });
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
    if (shown.error) replace($("chat-error-text"), errorView(shown.error, shown.text));
    else $("chat-error-text").textContent = shown.text;
    $("chat-retry").textContent = shown.label;
    $("chat-retry").hidden = !shown.retry;
  }
}
