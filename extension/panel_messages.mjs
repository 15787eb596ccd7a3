// How the nodes of a conversation are drawn: messages with their actions and version
// selector, tool calls and results, notices, attachments. Drawing only: every action
// calls back into the conversation (`chat`), which talks to storage.
import { h, replace, bytes, download, fromBase64 } from "./panel_dom.mjs";
import { q, cmd } from "./panel_store.mjs";
import { syncConfigured } from "./sync_config.mjs";
import { renderMarkdown } from "./panel_markdown.mjs";
import { icon } from "./panel_icons.mjs";
import { toast, toastError } from "./panel_ui.mjs";
import { HOW_NOTES } from "./panel_sent.mjs";

/** Text of a node's content blocks. */
export function blocksText(blocks) {
  return (Array.isArray(blocks) ? blocks : [])
    .filter((b) => b?.type === "text")
    .map((b) => b.text)
    .join("\n\n");
}

/** The reference of tool-result details stored as an attachment, or null (inline details). */
function storedDetails(details) {
  return details?.storedAs === "attachment" && typeof details.attachmentId === "string" ? details : null;
}

export class MessageView {
  constructor(chat) {
    this.chat = chat;
    this.imageUrls = new Map();
    this.loadedDetails = new Map(); // tool-result node id -> node.details result
    this.asked = new Set(); // attachment ids whose Load from the sync server was pressed
    this.drawn = new Map(); // node id -> {key, el}: the elements of the last render
  }

  /**
   * What retention kept of a conversation's removed messages (thread.summary): the
   * sentence saying so, and the Markdown summary. One element per summary.
   */
  summary(summary) {
    if (this.summaryEl?.key !== summary.attachmentId) {
      const body = h("div", { class: "msg-body" });
      body.append(renderMarkdown(summary.markdown));
      const el = h(
        "section",
        { class: "retention-summary", dataset: { attachmentId: summary.attachmentId } },
        h("p", { class: "msg notice warn retention-notice" }, icon("info", { size: 12 }), ` ${summary.notice}`),
        body,
      );
      this.summaryEl = { key: summary.attachmentId, el };
    }
    return this.summaryEl.el;
  }

  /** Forget what was loaded and drawn for the previous conversation. */
  reset() {
    this.loadedDetails.clear();
    this.asked.clear();
    this.drawn.clear();
  }

  /**
   * The elements of the shown nodes, the last one marked. Keyed by node id: a node whose
   * drawing inputs (the node, its place, the edit/stream/provider state its buttons
   * depend on) are unchanged gets the same element as last time.
   */
  nodes(nodes) {
    const chat = this.chat;
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const drawn = new Map();
    const els = nodes.map((n, i) => {
      const last = i === nodes.length - 1;
      const key = JSON.stringify([n, last, chat.editing === n.id, byId.get(n.parentId)?.type ?? null, this.extras(n)]);
      let entry = this.drawn.get(n.id);
      if (!entry || entry.key !== key) entry = { key, el: this.node(n, byId, last) };
      drawn.set(n.id, entry);
      return entry.el;
    });
    this.drawn = drawn;
    this.regenerateState(els);
    return els;
  }

  /**
   * What a node shows besides itself: its files' summaries (`summary.list`) and its
   * items the next request sends cut down (`thread.sent`). Part of its drawing's key.
   */
  extras(n) {
    const chat = this.chat;
    const summaries = {};
    for (const b of n.payload?.content ?? []) {
      if (b?.type !== "file" || !b.attachmentId) continue;
      const s = chat.summaries?.of(b.attachmentId);
      if (s) summaries[b.attachmentId] = { state: s.state, summaryId: s.summaryId };
    }
    return { summaries, sent: chat.sent?.itemsOf(n.id) ?? {} };
  }

  /**
   * Regenerate is off while a reply streams in this thread, or with no provider: set on
   * the kept elements in place, so a reply starting or ending redraws no message.
   */
  regenerateState(els) {
    const chat = this.chat;
    const disabled = !chat.provider || !!chat.replies.get(chat.threadId);
    const title = chat.provider ? "Regenerate this reply" : "Configure a provider in Settings to regenerate";
    for (const el of els) {
      const button = el.querySelector?.('button[data-action="regenerate"]');
      if (!button) continue;
      button.disabled = disabled;
      button.title = title;
    }
  }

  node(n, byId, last) {
    const p = n.payload ?? {};
    const dataset = { nodeId: n.id, type: n.type };
    if (n.type === "user_message" || n.type === "assistant_message") return this.message(n, byId, last);
    if (n.type === "tool_call") {
      return h(
        "details",
        { class: "msg tool call", dataset },
        h("summary", {}, icon("tool", { size: 13 }), " Tool call ", h("strong", { text: p.toolName ?? "?" }), ` · ${p.level ?? ""}`),
        h("pre", { text: JSON.stringify(p.params ?? {}, null, 2) }),
      );
    }
    if (n.type === "tool_result") {
      const stored = storedDetails(p.details);
      const text = blocksText(p.contentForLlm);
      return h(
        "details",
        // Kept open when redrawn after a Load from the sync server (the node lost its mark).
        { class: `msg tool result${p.ok ? "" : " failed"}`, dataset, open: !!stored && this.asked.has(stored.attachmentId) },
        h("summary", {}, p.ok ? "↳ Tool result " : "↳ Tool error ", h("strong", { text: p.itemId ?? "" })),
        text || !stored ? h("pre", { text: text || JSON.stringify(p.details ?? {}, null, 2) }) : null,
        stored ? this.details(n.id, stored) : null,
      );
    }
    if (n.type === "system_notice") {
      return h("div", { class: `msg notice ${p.level ?? ""}`, dataset }, icon("info", { size: 12 }), ` ${p.text ?? ""}`);
    }
    if (n.type === "approval_decision") {
      return h("div", { class: "msg notice", dataset, text: `Approval ${p.decision ?? ""}` });
    }
    return h("div", { class: "msg notice", dataset, text: n.type });
  }

  /**
   * "Details (N KB) — Load" for tool-result details stored as an attachment. Load runs
   * `node.details` and shows the JSON as text; the result is kept across re-renders.
   */
  details(nodeId, ref) {
    const out = h("pre", { class: "tool-details-body" });
    const box = h("div", { class: "tool-details", dataset: { attachmentId: ref.attachmentId } });
    const show = (result) => {
      if (result.evicted) {
        const gone = h("span", { class: "evicted", text: `Details (${bytes(ref.size)}) — evicted` });
        replace(box, gone);
        box.dataset.state = "evicted";
        // Kept by the sync server: Load fetches it (sync.fetch), then shows the details.
        this.offerServerCopy(ref, `Details (${bytes(ref.size)})`, gone, async () => {
          const loaded = await q("node.details", { nodeId });
          this.loadedDetails.set(nodeId, loaded);
          show(loaded); // redraws the whole box
          return null;
        });
      } else {
        out.textContent = JSON.stringify(result.details, null, 2);
        replace(box, h("span", { class: "tool-details-head", text: `Details (${bytes(result.size ?? ref.size)})` }), out);
        box.dataset.state = "loaded";
      }
    };
    const load = async (button) => {
      if (button) button.disabled = true;
      try {
        const result = await q("node.details", { nodeId });
        this.loadedDetails.set(nodeId, result);
        show(result);
      } catch (error) {
        if (button) button.disabled = false;
        toastError(error, "Could not load the details:");
      }
    };
    const cached = this.loadedDetails.get(nodeId);
    if (cached) show(cached);
    else if (ref.evicted) show({ evicted: true });
    else if (this.asked.has(ref.attachmentId)) {
      // Fetched from the sync server at the user's Load: the node redrawn without its
      // evicted mark shows the details as that Load asked, not another Load button.
      box.append(h("span", { class: "tool-details-head", text: `Details (${bytes(ref.size)}) — loading…` }));
      load(null);
    } else {
      const button = h("button", {
        type: "button",
        text: "Load",
        title: "Load the full details",
        dataset: { action: "load-details" },
        on: { click: () => load(button) },
      });
      box.append(h("span", { class: "tool-details-head", text: `Details (${bytes(ref.size)}) — ` }), button);
    }
    return box;
  }

  message(n, byId, last) {
    const chat = this.chat;
    const p = n.payload ?? {};
    const user = n.type === "user_message";
    const el = h("div", {
      class: `msg ${user ? "user" : "assistant"}${last ? " last" : ""}`,
      dataset: { nodeId: n.id, type: n.type, seq: n.seq },
    });
    const text = blocksText(p.content);
    if (chat.editing === n.id) {
      el.append(chat.editBox(n, text));
      return el;
    }
    if (text || !user) {
      const body = h("div", { class: "msg-body" });
      if (user) body.textContent = text;
      else body.append(renderMarkdown(text));
      el.append(body);
    }
    const files = (p.content ?? []).filter((b) => b?.type === "image" || b?.type === "file");
    const extras = this.extras(n);
    if (files.length) {
      const shelf = h("div", { class: "attachments" });
      const opened = h("div", { class: "summary-open" });
      for (const b of files) shelf.append(this.attachment(b), ...this.fileExtras(b, extras, opened));
      el.append(shelf, opened);
    }
    const inline = Object.entries(extras.sent).filter(([key]) => key.startsWith(`${n.id}#`));
    if (inline.length) {
      const hows = [...new Set(inline.map(([, how]) => how))];
      el.append(h("p", { class: "sent-note", dataset: { how: hows.join(" ") }, text: hows.map((how) => HOW_NOTES[how] ?? how).join(" · ") }));
    }
    el.append(
      h(
        "div",
        { class: "msg-foot" },
        n.siblingCount > 1 ? this.selector(n) : null,
        user ? null : this.interrupted(p.interrupted),
        this.info(n, user),
        this.actions(n, byId, user, text),
      ),
    );
    return el;
  }

  /**
   * The mark of a reply that ended early (payload `interrupted`): "Stopped" by the user
   * (neutral) or "Cut off" when the stream broke (a warning; its Regenerate says Retry).
   */
  interrupted(how) {
    if (how !== "stopped" && how !== "cut_off") return null;
    const stopped = how === "stopped";
    return h("span", {
      class: `msg-interrupted ${stopped ? "stopped" : "cut-off"}`,
      dataset: { interrupted: how },
      text: stopped ? "Stopped" : "Cut off",
      title: stopped
        ? "You stopped this reply: it holds the text that had arrived."
        : "The connection broke before the reply was complete: this is the text that arrived.",
    });
  }

  info(n, user) {
    const p = n.payload ?? {};
    const info = [];
    if (!user && p.model) info.push(p.model);
    if (!user && p.usage) info.push(`${p.usage.inputTokens}→${p.usage.outputTokens} tok`);
    return info.length ? h("span", { class: "msg-info", text: info.join(" · ") }) : null;
  }

  actions(n, byId, user, text) {
    const chat = this.chat;
    const actions = h("span", { class: "msg-actions" });
    const action = (label, name, fn, disabled = false, title = label) =>
      h("button", { type: "button", text: label, title, disabled, dataset: { action: name }, on: { click: fn } });
    if (user) {
      actions.append(action("Edit", "edit", () => chat.startEdit(n.id)));
    } else {
      const parent = byId.get(n.parentId);
      if (parent?.type === "user_message") {
        // A cut-off reply offers Retry: the same new version as Regenerate.
        const cut = n.payload?.interrupted === "cut_off";
        actions.append(
          action(
            cut ? "Retry" : "Regenerate",
            "regenerate",
            () => chat.regenerate(parent.id),
            !chat.provider || !!chat.replies.get(chat.threadId),
            chat.provider ? "Regenerate this reply" : "Configure a provider in Settings to regenerate",
          ),
        );
      }
    }
    actions.append(
      action("Copy", "copy", async () => {
        await navigator.clipboard.writeText(text).then(
          () => toast("Copied"),
          () => toast("Copy is not allowed here"),
        );
      }),
      action("Delete", "delete", () => chat.deleteNode(n)),
    );
    return actions;
  }

  /** ‹ n/m ›: the versions at this place (`n.siblings`), each a target of branch.switch. */
  selector(n) {
    const go = (delta) => this.chat.switchTo(n.siblings?.[n.siblingIndex - 1 + delta]);
    const arrow = (text, title, name, delta, disabled) =>
      h("button", {
        type: "button",
        text,
        title,
        attrs: { "aria-label": title },
        dataset: { action: name },
        disabled,
        on: { click: () => go(delta) },
      });
    return h(
      "span",
      { class: "branch", dataset: { branch: `${n.siblingIndex}/${n.siblingCount}` } },
      arrow("‹", "Previous version", "prev", -1, n.siblingIndex <= 1),
      h("span", { class: "branch-pos", text: `${n.siblingIndex}/${n.siblingCount}` }),
      arrow("›", "Next version", "next", 1, n.siblingIndex >= n.siblingCount),
    );
  }

  attachment(b) {
    const label = b.name || (b.type === "image" ? "image" : "file");
    if (!b.attachmentId) {
      // Never stored: the legacy import writes an image whose bytes its data did not hold
      // with an empty attachmentId (eviction keeps the id of what it removed).
      return h("span", { class: "evicted", dataset: { missing: "1" }, text: `${label} (not available: it was not in the imported data)` });
    }
    if (b.evicted || b.state === "evicted") {
      const gone = h("span", { class: "evicted", dataset: { attachmentId: b.attachmentId }, text: `${label} (removed to save space)` });
      this.offerServerCopy(b, label, gone);
      return gone;
    }
    if (b.type === "image") {
      const img = h("img", { alt: label, title: label, dataset: { attachmentId: b.attachmentId } });
      this.imageUrl(b.attachmentId).then(
        (url) => {
          img.src = url;
        },
        () => {
          this.imageUrls.delete(b.attachmentId); // not here: a Load may bring it
          const gone = h("span", { class: "evicted", dataset: { attachmentId: b.attachmentId }, text: `${label} (unavailable)` });
          img.replaceWith(gone);
          this.offerServerCopy(b, label, gone);
        },
      );
      return img;
    }
    const fetchIt = async () => {
      try {
        const a = await q("attachment.get", { attachmentId: b.attachmentId });
        download(label, fromBase64(a.dataBase64, a.mime));
      } catch (error) {
        toastError(error, "Download failed:");
      }
    };
    const chip = h(
      "button",
      { type: "button", class: "file-chip", title: `Download ${label}`, dataset: { attachmentId: b.attachmentId }, on: { click: fetchIt } },
      icon("file", { size: 14 }),
      h("span", { text: label }),
      b.size ? ` · ${bytes(b.size)}` : "",
    );
    this.offerServerCopy(b, label, chip); // a file pulled without its bytes looks held
    return chip;
  }

  /**
   * When sync is configured and only the sync server holds the attachment `b` (pulled
   * without its bytes, or evicted here: `sync.attachment`), put "label — on the sync
   * server, Load" in place of `el`. Load runs `sync.fetch`, then puts `loaded()`'s
   * element there (by default the attachment drawn as held; null: it drew itself). A button, not a fetch on sight: the bytes cost a download and may evict older
   * attachments to fit the budget, so the user asks for them. All text: a server's
   * name or type stays inert.
   */
  async offerServerCopy(b, label, el, loaded = async () => this.attachment({ ...b, evicted: false, state: undefined })) {
    try {
      if (!(await syncConfigured())) return;
      const where = await q("sync.attachment", { attachmentId: b.attachmentId });
      if (where.held || !where.onServer || !el.isConnected) return;
      const size = Number.isFinite(where.size) ? ` (${bytes(where.size)})` : "";
      const box = h("span", {
        class: "on-server",
        dataset: { attachmentId: b.attachmentId, state: "on-server" },
      });
      const button = h("button", {
        type: "button",
        text: "Load",
        title: "Fetch it from the sync server",
        dataset: { action: "fetch-attachment", attachmentId: b.attachmentId },
        on: {
          click: async () => {
            button.disabled = true;
            box.dataset.state = "loading";
            this.asked.add(b.attachmentId);
            try {
              await cmd("sync.fetch", { attachmentId: b.attachmentId });
              this.imageUrls.delete(b.attachmentId);
              const next = await loaded(); // null: it drew itself
              if (next) box.replaceWith(next);
            } catch (error) {
              this.asked.delete(b.attachmentId);
              button.disabled = false;
              box.dataset.state = "failed";
              toastError(error, "Could not load it from the sync server:");
            }
          },
        },
      });
      box.append(h("span", { text: `${label}${size} — on the sync server, ` }), button);
      el.replaceWith(box);
    } catch (error) {
      console.warn("sync.attachment", error);
    }
  }

  /**
   * Beside a file's chip: its summary ("Summary" opens its text into `opened`; the chip
   * itself still downloads the original), "Summarizing…", or a failed one's "Summarize
   * again"; and the note of how the next request sends it, when cut down.
   */
  fileExtras(b, extras, opened) {
    const out = [];
    const s = b.attachmentId ? extras.summaries[b.attachmentId] : null;
    if (s?.state === "done") {
      const chip = h("button", {
        type: "button",
        class: "summary-chip",
        text: "Summary",
        title: `Show the summary of ${b.name || "this file"} (the file itself stays as it was)`,
        dataset: { action: "open-summary", attachmentId: b.attachmentId, summaryId: s.summaryId },
        on: { click: () => this.openSummary(s.summaryId, b, opened) },
      });
      out.push(chip);
    } else if (s?.state === "pending") {
      out.push(h("span", { class: "summary-chip pending", dataset: { attachmentId: b.attachmentId }, text: "Summarizing…" }));
    } else if (s?.state === "failed") {
      const button = h("button", {
        type: "button",
        class: "summary-chip failed",
        text: "Summarize again",
        title: "The summary could not be made; the file is sent as it is",
        dataset: { action: "summarize-again", attachmentId: b.attachmentId },
        on: {
          click: async () => {
            button.disabled = true;
            const how = await this.chat.summaries.again(b.attachmentId).catch((error) => toastError(error, "Summary failed:"));
            if (how === "failed") toast("The summary could not be made; the file is sent as it is.");
            button.disabled = false;
          },
        },
      });
      out.push(button);
    }
    const how = b.attachmentId ? extras.sent[b.attachmentId] : null;
    if (how) out.push(h("span", { class: "sent-note", dataset: { how, attachmentId: b.attachmentId }, text: HOW_NOTES[how] ?? how }));
    return out;
  }

  /** Show (or hide) the text of summary `summaryId` of the file `b` in `box`. */
  async openSummary(summaryId, b, box) {
    if (box.dataset.summaryId === summaryId) {
      replace(box);
      delete box.dataset.summaryId;
      return;
    }
    try {
      const a = await q("attachment.get", { attachmentId: summaryId });
      const text = await fromBase64(a.dataBase64, a.mime).text();
      replace(box, h("p", { class: "summary-head", text: `Summary of ${b.name || "the file"}` }), h("pre", { class: "summary-text", text }));
      box.dataset.summaryId = summaryId;
    } catch (error) {
      toastError(error, "Could not open the summary:");
    }
  }

  async imageUrl(id) {
    if (!this.imageUrls.has(id)) {
      this.imageUrls.set(
        id,
        q("attachment.get", { attachmentId: id }).then((a) => URL.createObjectURL(fromBase64(a.dataBase64, a.mime))),
      );
    }
    return this.imageUrls.get(id);
  }
}
