// The conversation view and the composer.
import { h, replace, ago, bytes, download, toBase64, fromBase64 } from "./panel_dom.mjs";
import { cmd, q, hasQuery, describeError } from "./panel_store.mjs";
import { renderMarkdown } from "./panel_markdown.mjs";
import { icon } from "./panel_icons.mjs";
import { streamChat, toOpenAi, toUsage } from "./panel_provider.mjs";
import { confirmDialog, toast } from "./panel_ui.mjs";
import { ACTIVE_THREAD_KEY } from "./runtime.mjs";

const $ = (id) => document.getElementById(id);

/** Record the open thread in chrome.storage.session: retention never archives it. */
function publishActive(threadId) {
  globalThis.chrome?.storage?.session
    ?.set({ [ACTIVE_THREAD_KEY]: threadId })
    .catch((error) => console.warn("could not record the active thread", error));
}
const MAX_ATTACHMENT = 20 * 1024 * 1024;

/** Text of a node's content blocks. */
function blocksText(blocks) {
  return (Array.isArray(blocks) ? blocks : [])
    .filter((b) => b?.type === "text")
    .map((b) => b.text)
    .join("\n\n");
}

/** The reference of tool-result details stored as an attachment, or null (inline details). */
function storedDetails(details) {
  return details?.storedAs === "attachment" && typeof details.attachmentId === "string" ? details : null;
}

/**
 * Read the decrypted API key of a credential reference. Credentials live encrypted in
 * chrome.storage.local and no query returns a secret, so this asks the Python
 * credentials service directly; the key is held only for the one request.
 */
async function revealKey(ref) {
  const settings = window.panelot.py.pyimport("panelot.settings");
  const services = settings.services();
  const credentials = services.credentials;
  try {
    return String(await credentials.reveal(ref));
  } finally {
    credentials.destroy();
    services.destroy();
    settings.destroy();
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
    this.stream = null; // {controller, el, text}
    this.pending = []; // files chosen but not yet sent
    this.editing = null; // node id being edited
    this.imageUrls = new Map();
    this.loadedDetails = new Map(); // tool-result node id -> node.details result
    this.messages = $("messages");
    this.input = $("input");
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
          this.provider = {
            connectionId: conn.id,
            baseUrl: conn.baseUrl,
            model: conn.models[0],
            credentialRef: conn.credentialRef ?? null,
            label: conn.label ?? conn.id,
          };
        }
      } catch (error) {
        console.warn("settings.get providers failed", error);
      }
    } else if (this.memoryProvider) {
      this.provider = this.memoryProvider;
    }
    this.updateComposer();
  }

  async apiKey() {
    if (this.provider?.credentialRef && this.app.caps.credentials) {
      return revealKey(this.provider.credentialRef);
    }
    return this.sessionKey;
  }

  // ---- events ---------------------------------------------------------------------

  bind() {
    $("composer").addEventListener("submit", (event) => {
      event.preventDefault();
      this.send();
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.send();
      }
    });
    this.input.addEventListener("input", () => this.autosize());
    $("stop").addEventListener("click", () => this.stop());
    $("chat-retry").addEventListener("click", () => {
      const retry = this.retry;
      this.hideError();
      retry?.();
    });
    $("chat-error-close").addEventListener("click", () => this.hideError());
    $("attach").addEventListener("click", () => $("file-input").click());
    $("file-input").addEventListener("change", (event) => {
      this.addFiles([...event.target.files]);
      event.target.value = "";
    });
    const composer = $("composer");
    composer.addEventListener("dragover", (event) => {
      if (!this.app.caps.attachments) return;
      event.preventDefault();
      composer.classList.add("dragging");
    });
    composer.addEventListener("dragleave", () => composer.classList.remove("dragging"));
    composer.addEventListener("drop", (event) => {
      composer.classList.remove("dragging");
      if (!this.app.caps.attachments) return;
      event.preventDefault();
      this.addFiles([...(event.dataTransfer?.files ?? [])]);
    });
    this.input.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length && this.app.caps.attachments) {
        event.preventDefault();
        this.addFiles(files);
      }
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
  }

  autosize() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight + 2, window.innerHeight * 0.4)}px`;
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
      toast(`Export failed: ${error.message}`);
    }
  }

  // ---- loading & rendering --------------------------------------------------------

  async open(threadId) {
    if (this.stream) this.stop();
    this.threadId = threadId;
    publishActive(threadId);
    this.loadedDetails.clear();
    this.editing = null;
    this.pending = [];
    this.renderPending();
    this.hideError();
    await this.reload();
  }

  close() {
    if (this.stream) this.stop();
    this.threadId = null;
    publishActive(null);
    this.thread = null;
    this.snapshot = null;
    replace(this.messages);
  }

  async reload() {
    if (!this.threadId) return;
    try {
      const [thread, snapshot] = await Promise.all([
        q("thread.get", { threadId: this.threadId }),
        q("thread.snapshot", { threadId: this.threadId }),
      ]);
      this.thread = thread;
      this.snapshot = snapshot;
    } catch (error) {
      this.showError(`Could not load the conversation: ${error.message}`, () => this.reload());
      return;
    }
    this.render();
  }

  render() {
    const t = this.thread;
    $("chat-pin").hidden = !t.pinned;
    $("chat-archived").hidden = !t.archived;
    const shown = this.snapshot.nodes.length;
    $("chat-meta").textContent = `${shown} message${shown === 1 ? "" : "s"} · updated ${ago(t.updatedAt)}`;
    const menu = $("chat-menu");
    menu.querySelector('[data-action="pin"]').textContent = t.pinned ? "Unpin" : "Pin";
    menu.querySelector('[data-action="archive"]').textContent = t.archived ? "Unarchive" : "Archive";
    if (this.app.view === "chat") $("view-title").textContent = t.title || "Untitled";
    const nodes = this.snapshot.nodes;
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const els = nodes.map((n, i) => this.renderNode(n, byId, i === nodes.length - 1));
    if (!nodes.length) {
      els.push(
        h(
          "div",
          { class: "welcome" },
          h("strong", { text: "Start the conversation" }),
          this.provider
            ? `Replies come from ${this.provider.model} at ${this.provider.baseUrl}.`
            : "Type a message below. To get replies, configure a provider in Settings.",
        ),
      );
    }
    if (this.stream?.el) els.push(this.stream.el);
    replace(this.messages, els);
    this.scrollDown();
    this.updateComposer();
  }

  scrollDown() {
    this.messages.scrollTop = this.messages.scrollHeight;
  }

  renderNode(n, byId, last) {
    const p = n.payload ?? {};
    if (n.type === "user_message" || n.type === "assistant_message") {
      return this.renderMessage(n, byId, last);
    }
    if (n.type === "tool_call") {
      return h(
        "details",
        { class: "msg tool call", dataset: { nodeId: n.id, type: n.type } },
        h("summary", {}, icon("tool", { size: 13 }), " Tool call ", h("strong", { text: p.toolName ?? "?" }), ` · ${p.level ?? ""}`),
        h("pre", { text: JSON.stringify(p.params ?? {}, null, 2) }),
      );
    }
    if (n.type === "tool_result") {
      const stored = storedDetails(p.details);
      const text = blocksText(p.contentForLlm);
      return h(
        "details",
        { class: `msg tool result${p.ok ? "" : " failed"}`, dataset: { nodeId: n.id, type: n.type } },
        h("summary", {}, p.ok ? "↳ Tool result " : "↳ Tool error ", h("strong", { text: p.itemId ?? "" })),
        text || !stored ? h("pre", { text: text || JSON.stringify(p.details ?? {}, null, 2) }) : null,
        stored ? this.detailsEl(n.id, stored) : null,
      );
    }
    if (n.type === "system_notice") {
      return h("div", {
        class: `msg notice ${p.level ?? ""}`,
        dataset: { nodeId: n.id, type: n.type },
      }, icon("info", { size: 12 }), ` ${p.text ?? ""}`);
    }
    if (n.type === "approval_decision") {
      return h("div", {
        class: "msg notice",
        dataset: { nodeId: n.id, type: n.type },
        text: `Approval ${p.decision ?? ""}`,
      });
    }
    return h("div", { class: "msg notice", dataset: { nodeId: n.id, type: n.type }, text: n.type });
  }

  /**
   * "Details (N KB) — Load" for tool-result details stored as an attachment. Load runs
   * `node.details` and shows the JSON as text; the result is kept across re-renders.
   */
  detailsEl(nodeId, ref) {
    const out = h("pre", { class: "tool-details-body" });
    const box = h("div", { class: "tool-details", dataset: { attachmentId: ref.attachmentId } });
    const show = (result) => {
      if (result.evicted) {
        replace(box, h("span", { class: "evicted", text: `Details (${bytes(ref.size)}) — evicted` }));
        box.dataset.state = "evicted";
      } else {
        out.textContent = JSON.stringify(result.details, null, 2);
        replace(box, h("span", { class: "tool-details-head", text: `Details (${bytes(result.size ?? ref.size)})` }), out);
        box.dataset.state = "loaded";
      }
    };
    const load = async (button) => {
      button.disabled = true;
      try {
        const result = await q("node.details", { nodeId });
        this.loadedDetails.set(nodeId, result);
        show(result);
      } catch (error) {
        button.disabled = false;
        toast(`Could not load the details: ${error.message}`);
      }
    };
    const cached = this.loadedDetails.get(nodeId);
    if (cached) show(cached);
    else if (ref.evicted) show({ evicted: true });
    else {
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

  renderMessage(n, byId, last) {
    const p = n.payload ?? {};
    const user = n.type === "user_message";
    const el = h("div", {
      class: `msg ${user ? "user" : "assistant"}${last ? " last" : ""}`,
      dataset: { nodeId: n.id, type: n.type, seq: n.seq },
    });
    const text = blocksText(p.content);
    if (this.editing === n.id) {
      el.append(this.editBox(n, text));
      return el;
    }
    const body = h("div", { class: "msg-body" });
    if (user) body.textContent = text;
    else body.append(renderMarkdown(text));
    el.append(body);
    const files = (p.content ?? []).filter((b) => b?.type === "image" || b?.type === "file");
    if (files.length) el.append(h("div", { class: "attachments" }, files.map((b) => this.attachmentEl(b))));

    const actions = h("span", { class: "msg-actions" });
    const action = (label, name, fn, disabled = false, title = label) =>
      h("button", { type: "button", text: label, title, disabled, dataset: { action: name }, on: { click: fn } });
    if (user) {
      actions.append(action("Edit", "edit", () => this.startEdit(n.id)));
    } else {
      const parent = byId.get(n.parentId);
      if (parent?.type === "user_message") {
        actions.append(
          action(
            "Regenerate",
            "regenerate",
            () => this.generate(parent.id, "regenerate"),
            !this.provider || !!this.stream,
            this.provider ? "Regenerate this reply" : "Configure a provider in Settings to regenerate",
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
      action("Delete", "delete", () => this.deleteNode(n)),
    );
    const info = [];
    if (!user && p.model) info.push(p.model);
    if (!user && p.usage) info.push(`${p.usage.inputTokens}→${p.usage.outputTokens} tok`);
    const foot = h(
      "div",
      { class: "msg-foot" },
      n.siblingCount > 1 ? this.branchSelector(n) : null,
      info.length ? h("span", { class: "msg-info", text: info.join(" · ") }) : null,
      actions,
    );
    el.append(foot);
    return el;
  }

  branchSelector(n) {
    const go = (delta) => this.switchSibling(n, delta);
    return h(
      "span",
      { class: "branch", dataset: { branch: `${n.siblingIndex}/${n.siblingCount}` } },
      h("button", {
        type: "button",
        text: "‹",
        title: "Previous version",
        attrs: { "aria-label": "Previous version" },
        dataset: { action: "prev" },
        disabled: n.siblingIndex <= 1,
        on: { click: () => go(-1) },
      }),
      h("span", { class: "branch-pos", text: `${n.siblingIndex}/${n.siblingCount}` }),
      h("button", {
        type: "button",
        text: "›",
        title: "Next version",
        attrs: { "aria-label": "Next version" },
        dataset: { action: "next" },
        disabled: n.siblingIndex >= n.siblingCount,
        on: { click: () => go(1) },
      }),
    );
  }

  attachmentEl(b) {
    const label = b.name || (b.type === "image" ? "image" : "file");
    if (b.evicted || b.state === "evicted" || !b.attachmentId) {
      return h("span", { class: "evicted", text: `${label} (removed to save space)` });
    }
    if (b.type === "image") {
      const img = h("img", { alt: label, title: label, dataset: { attachmentId: b.attachmentId } });
      this.imageUrl(b.attachmentId).then(
        (url) => {
          img.src = url;
        },
        () => img.replaceWith(h("span", { class: "evicted", text: `${label} (unavailable)` })),
      );
      return img;
    }
    return h(
      "button",
      {
        type: "button",
        class: "file-chip",
        title: `Download ${label}`,
        dataset: { attachmentId: b.attachmentId },
        on: {
          click: async () => {
            try {
              const a = await q("attachment.get", { attachmentId: b.attachmentId });
              download(label, fromBase64(a.dataBase64, a.mime));
            } catch (error) {
              toast(`Download failed: ${error.message}`);
            }
          },
        },
      },
      icon("file", { size: 14 }),
      h("span", { text: label }),
      b.size ? ` · ${bytes(b.size)}` : "",
    );
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

  // ---- composer -------------------------------------------------------------------

  updateComposer() {
    const hint = $("composer-hint");
    const streaming = !!this.stream;
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

  renderPending() {
    replace(
      $("pending"),
      this.pending.map((f, i) =>
        h(
          "li",
          { dataset: { name: f.name } },
          f.preview ? h("img", { src: f.preview, alt: "" }) : icon("file", { size: 16 }),
          h("span", { text: f.name, title: `${f.name} · ${bytes(f.size)}` }),
          h("button", {
            type: "button",
            text: "✕",
            title: `Remove ${f.name}`,
            on: {
              click: () => {
                if (f.preview) URL.revokeObjectURL(f.preview);
                this.pending.splice(i, 1);
                this.renderPending();
              },
            },
          }),
        ),
      ),
    );
  }

  addFiles(files) {
    for (const file of files) {
      if (file.size > MAX_ATTACHMENT) {
        toast(`${file.name} is larger than ${bytes(MAX_ATTACHMENT)}`);
        continue;
      }
      const image = file.type.startsWith("image/");
      this.pending.push({
        file,
        name: file.name || (image ? "pasted-image.png" : "file"),
        size: file.size,
        mime: file.type || "application/octet-stream",
        image,
        preview: image ? URL.createObjectURL(file) : null,
      });
    }
    this.renderPending();
  }

  /** Store pending files as attachments; return their content blocks. A retry reuses the stored ones. */
  async storePending() {
    const blocks = [];
    for (const f of this.pending) {
      if (f.block) {
        blocks.push(f.block);
        continue;
      }
      const dataBase64 = toBase64(await f.file.arrayBuffer());
      const { attachmentId, size } = await cmd("attachment.put", {
        threadId: this.threadId,
        kind: f.image ? "image" : "file",
        mime: f.mime,
        dataBase64,
        provenance: "user",
        meta: { title: f.name },
      });
      f.block = f.image
        ? { type: "image", attachmentId, mime: f.mime, name: f.name }
        : { type: "file", attachmentId, name: f.name, mime: f.mime, size };
      blocks.push(f.block);
    }
    return blocks;
  }

  async send() {
    const text = this.input.value.trim();
    if ((!text && !this.pending.length) || this.stream || !this.threadId) return;
    if (!this.provider) {
      toast("Configure a provider in Settings first");
      return;
    }
    this.hideError();
    let nodeId;
    try {
      const files = await this.storePending();
      const content = [...(text ? [{ type: "text", text }] : []), ...files];
      ({ nodeId } = await cmd("message.append", {
        threadId: this.threadId,
        type: "user_message",
        payload: { content },
      }));
      for (const b of files) await cmd("attachment.attach", { attachmentId: b.attachmentId, nodeId });
    } catch (error) {
      this.showError(`Could not save your message. ${describeError(error)}`, () => this.send());
      return;
    }
    for (const f of this.pending) if (f.preview) URL.revokeObjectURL(f.preview);
    this.pending = [];
    this.renderPending();
    this.input.value = "";
    this.autosize();
    if ((this.thread?.title ?? "") === "New chat" && text) {
      const title = text.split("\n")[0].slice(0, 60);
      await cmd("thread.update", { threadId: this.threadId, patch: { title } }).catch(() => {});
    }
    await this.reload();
    await this.generate(nodeId, "append");
  }

  /**
   * Stream a reply to `userNodeId` and store it once complete: "append" adds it as the
   * user node's child, "regenerate" as a new sibling of the current reply.
   */
  async generate(userNodeId, mode) {
    if (this.stream || !this.provider) return;
    const threadId = this.threadId;
    const provider = this.provider;
    const el = h(
      "div",
      { class: "msg assistant streaming", dataset: { streaming: "1" } },
      h("div", { class: "msg-body" }, h("span", { class: "typing", text: "Thinking…" })),
    );
    const controller = new AbortController();
    this.stream = { controller, el, text: "" };
    if (mode === "regenerate") {
      // Show the stream in place of the reply being regenerated.
      const nodes = this.snapshot.nodes;
      const at = nodes.findIndex((n) => n.id === userNodeId);
      this.snapshot = { ...this.snapshot, nodes: nodes.slice(0, at + 1) };
    }
    this.render();
    let result;
    try {
      const { context, images } = await this.request(threadId, userNodeId);
      const apiKey = await this.apiKey();
      const body = el.querySelector(".msg-body");
      result = await streamChat({
        baseUrl: provider.baseUrl,
        apiKey,
        model: provider.model,
        messages: toOpenAi(context, images),
        signal: controller.signal,
        onDelta: (full) => {
          this.stream.text = full;
          replace(body, renderMarkdown(full));
          this.scrollDown();
        },
      });
    } catch (error) {
      this.stream = null;
      await this.reload();
      if (error?.name === "AbortError") {
        toast("Stopped. Nothing was saved.");
        this.showError("Reply stopped; nothing was saved.", () => this.generate(userNodeId, mode), "Retry");
      } else {
        this.showError(`Reply failed: ${error?.message ?? error}`, () => this.generate(userNodeId, mode));
      }
      return;
    }
    const payload = {
      content: [{ type: "text", text: result.text }],
      model: result.model || provider.model,
      connectionId: provider.connectionId,
    };
    const usage = toUsage(result.usage);
    if (usage) payload.usage = usage;
    try {
      if (mode === "regenerate") {
        await cmd("message.regenerate", { threadId, userNodeId, payload });
      } else {
        await cmd("message.append", { threadId, type: "assistant_message", payload, parentId: userNodeId });
      }
    } catch (error) {
      this.stream = null;
      await this.reload();
      this.showError(`Could not save the reply. ${describeError(error)}`, () => this.generate(userNodeId, mode));
      return;
    }
    this.stream = null;
    if (this.threadId === threadId) await this.reload();
    this.app.refreshThreads();
  }

  /**
   * The provider request for the path ending at `leafId`: `thread.request` (the context
   * slimmed: seen images as `[Figure N: …]` text, older unseen images over the budget as
   * thumbnails, stale attachments as stubs) and its images as data URLs by attachment id.
   * A runtime without `thread.request` falls back to `thread.context` + `attachment.resolve`.
   */
  async request(threadId, leafId) {
    const images = {};
    const add = (attachments) => {
      for (const [id, a] of Object.entries(attachments ?? {})) {
        if (a?.dataBase64) images[id] = `data:${a.mime};base64,${a.dataBase64}`;
      }
    };
    if (await hasQuery("thread.request")) {
      const context = await q("thread.request", { threadId, leafId });
      add(context.attachments);
      return { context, images };
    }
    const context = await q("thread.context", { threadId, leafId });
    if (this.app.caps.attachments && context.messages.some((m) => (m.content ?? []).some((b) => b.type === "image"))) {
      add((await q("attachment.resolve", { threadId, leafId })).attachments);
    }
    return { context, images };
  }

  stop() {
    this.stream?.controller.abort();
  }

  // ---- message actions ------------------------------------------------------------

  startEdit(nodeId) {
    this.editing = nodeId;
    this.render();
    const area = this.messages.querySelector(".edit-box textarea");
    area?.focus();
    area?.setSelectionRange(area.value.length, area.value.length);
  }

  editBox(n, text) {
    const area = h("textarea", { value: text, attrs: { "aria-label": "Edit message" } });
    const save = async () => {
      const newText = area.value.trim();
      if (!newText) return;
      const others = (n.payload.content ?? []).filter((b) => b?.type !== "text");
      let nodeId;
      try {
        ({ nodeId } = await cmd("message.edit", {
          threadId: this.threadId,
          nodeId: n.id,
          payload: { content: [{ type: "text", text: newText }, ...others] },
        }));
      } catch (error) {
        toast(`Edit failed: ${error.message}`);
        return;
      }
      this.editing = null;
      await this.reload();
      if (this.provider) await this.generate(nodeId, "append");
    };
    area.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        save();
      } else if (event.key === "Escape") {
        this.editing = null;
        this.render();
      }
    });
    return h(
      "div",
      { class: "edit-box" },
      area,
      h(
        "div",
        { class: "edit-actions" },
        h("button", {
          type: "button",
          class: "ghost",
          text: "Cancel",
          dataset: { action: "cancel-edit" },
          on: {
            click: () => {
              this.editing = null;
              this.render();
            },
          },
        }),
        h("button", {
          type: "button",
          class: "primary",
          text: this.provider ? "Save & send" : "Save",
          dataset: { action: "save-edit" },
          on: { click: save },
        }),
      ),
    );
  }

  async switchSibling(n, delta) {
    // thread.siblings also lists tombstones; the selector counts visible ones only, so
    // step on past any sibling that does not show up on the new visible path.
    try {
      const sibs = await q("thread.siblings", { nodeId: n.id });
      let at = sibs.findIndex((s) => s.id === n.id);
      for (;;) {
        at += delta;
        const target = sibs[at];
        if (!target) break;
        await cmd("branch.switch", { threadId: this.threadId, nodeId: target.id });
        const snap = await q("thread.snapshot", { threadId: this.threadId });
        if (snap.nodes.some((node) => node.id === target.id)) break;
      }
    } catch (error) {
      toast(`Could not switch branch: ${error.message}`);
      return;
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
      toast(`Delete failed: ${error.message}`);
      return;
    }
    await this.reload();
  }

  // ---- errors ---------------------------------------------------------------------

  showError(message, retry, label = "Retry") {
    $("chat-error-text").textContent = message;
    $("chat-retry").textContent = label;
    $("chat-retry").hidden = !retry;
    this.retry = retry;
    $("chat-error").hidden = false;
  }

  hideError() {
    $("chat-error").hidden = true;
    this.retry = null;
  }
}
