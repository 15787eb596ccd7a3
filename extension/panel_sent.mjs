// What the next request of the open thread leaves out, as Python says (`thread.sent`,
// asked again whenever the open thread's live results change; no bytes read): where the
// part sent begins (a divider before `firstNodeId` when `droppedNodes > 0`, with
// "History per request" one click away) and which items go cut down ("Sent as a summary" / "Cut for this model" / "Sent as a short note").
import { h } from "./panel_dom.mjs";
import { coalesced } from "./panel_coalesce.mjs";
import { hasQuery, q } from "./panel_store.mjs";

/** The divider's words. */
export const DIVIDER_TEXT = "Earlier messages are not sent to the model";
/** A note per way an item is sent cut down (`thread.sent` items' `how`). */
export const HOW_NOTES = {
  summary: "Sent as a summary",
  cut: "Cut for this model",
  stub: "Sent as a short note",
};

export class SentView {
  /** `chat`: the conversation view (its provider, `render()`, and `app.show`). */
  constructor(chat) {
    this.chat = chat;
    this.sent = null; // the open thread's thread.sent result
    this.refreshing = coalesced(() => this.read());
    this.dividerEl = null;
  }

  /**
   * Ask again what the open thread's next request leaves out (after its nodes, its record
   * or the provider changed: the conversation's own live results call this). Calls made
   * while one runs make one more run after it; the result is drawn only when it changed.
   */
  refresh() {
    return this.refreshing();
  }

  async read() {
    const threadId = this.chat.threadId;
    if (!threadId || !(await hasQuery("thread.sent"))) return;
    const provider = this.chat.provider;
    const args = { threadId };
    if (provider) {
      args.model = provider.model;
      if (provider.contextBudget !== undefined) args.contextBudget = provider.contextBudget;
    }
    let sent;
    try {
      sent = { ...(await q("thread.sent", args)), threadId };
    } catch (error) {
      if (error?.name !== "NotFoundError") console.warn("thread.sent failed", error);
      return;
    }
    if (this.chat.threadId !== threadId || JSON.stringify(sent) === JSON.stringify(this.sent)) return;
    this.sent = sent;
    this.chat.render();
  }

  /** Forget the result (another conversation is opened). */
  reset() {
    this.sent = null;
  }

  /** The open thread's result, or null. */
  current() {
    return this.sent?.threadId === this.chat.threadId ? this.sent : null;
  }

  /** `{attachmentId|key: how}` of the items of node `nodeId` sent cut down. */
  itemsOf(nodeId) {
    const out = {};
    for (const item of this.current()?.items ?? []) {
      if (item.nodeId === nodeId) out[item.attachmentId ?? item.key] = item.how;
    }
    return out;
  }

  /** Insert the divider into `els` (the elements of `nodes`) before the first node sent. */
  place(nodes, els) {
    const sent = this.current();
    if (!sent || !(sent.droppedNodes > 0) || !sent.firstNodeId) return;
    const at = nodes.findIndex((n) => n.id === sent.firstNodeId);
    if (at < 0) return; // the first node sent is not in the window shown
    const offset = els.length - nodes.length; // elements drawn above the nodes
    els.splice(offset + at, 0, this.divider(sent));
  }

  /** The divider (one element, its count updated in place). */
  divider(sent) {
    if (!this.dividerEl) {
      const button = h("button", {
        type: "button",
        text: "History per request",
        title: "Settings → Provider: how much of the conversation a request carries",
        dataset: { action: "history-setting" },
        on: { click: () => this.openSetting() },
      });
      this.dividerText = h("span", { class: "sent-divider-text" });
      this.dividerEl = h("div", { class: "sent-divider", attrs: { role: "separator" } }, this.dividerText, button);
      this.dividerEl.dataset.testid = "sent-divider";
    }
    const n = sent.droppedNodes;
    this.dividerText.textContent = `${DIVIDER_TEXT} (${n} earlier message${n === 1 ? "" : "s"}).`;
    this.dividerEl.dataset.droppedNodes = String(n);
    this.dividerEl.dataset.firstNodeId = sent.firstNodeId;
    return this.dividerEl;
  }

  /** Settings → Provider, the "History per request" field focused. */
  openSetting() {
    this.chat.app.show("settings");
    const field = document.getElementById("provider-history");
    field?.scrollIntoView({ block: "center" });
    field?.focus();
  }
}
