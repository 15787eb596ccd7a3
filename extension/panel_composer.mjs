// The composer: the text box, the files chosen for the next message, and sending.
// A message and its files go to storage as one `message.send` command, with the
// parent the user saw, so nothing is stored half and nothing lands on another branch.
import { h, replace, bytes, toBase64 } from "./panel_dom.mjs";
import { cmd, q, hasQuery } from "./panel_store.mjs";
import { icon } from "./panel_icons.mjs";
import { toast } from "./panel_ui.mjs";
import { painting } from "./panel_early_send.mjs";

const $ = (id) => document.getElementById(id);
/** The chip's note on a file the model gets only the name of. */
export const NAME_ONLY = "The model will only see this file's name";
/** Titles a thread has before its first message; the first line of it replaces them. */
export const PLACEHOLDER_TITLES = ["", "New chat"];

export class Composer {
  /** `chat`: the conversation view (its open thread, what it shows, its errors). */
  constructor(chat) {
    this.chat = chat;
    this.app = chat.app;
    this.pending = []; // files chosen but not yet sent
    // A message given back after the model refused it as too long: `{threadId, nodeId,
    // parentId}`. Sent again while that message is still the leaf, the text goes as a new
    // version of it (under its parent), so the refused one and its files leave the request.
    this.resend = null;
    // The largest file a message may carry, as the runtime says (`file.readable`'s
    // `maxUploadBytes`; message.send refuses a larger one); null while it cannot say.
    this.maxUpload = null;
    this.maxUploadKnown = q("file.readable", { name: "file" }).then(
      (r) => (this.maxUpload = r.maxUploadBytes ?? null),
      () => null,
    );
    this.input = $("input");
    this.bind();
  }

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
  }

  autosize() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight + 2, window.innerHeight * 0.4)}px`;
  }

  /**
   * Give back `text`, typed for the message `nodeId` of `threadId` that the model could
   * not take: put in the box (when that thread is open and the box is empty), and sent
   * again as a new version of that message. True when the box holds it.
   */
  restore(threadId, text, nodeId) {
    if (this.chat.threadId !== threadId || this.input.value.trim()) return false;
    const node = this.chat.snapshot?.nodes?.find((n) => n.id === nodeId);
    this.input.value = text;
    this.autosize();
    this.resend = node ? { threadId, nodeId, parentId: node.parentId ?? null } : null;
    return true;
  }

  /** Drop the chosen files (another conversation was opened). */
  clear() {
    this.resend = null;
    for (const f of this.pending) if (f.preview) URL.revokeObjectURL(f.preview);
    this.pending = [];
    this.renderPending();
  }

  renderPending() {
    replace(
      $("pending"),
      this.pending.map((f, i) =>
        h(
          "li",
          { dataset: { name: f.name, sees: f.sees } },
          f.preview ? h("img", { src: f.preview, alt: "" }) : icon("file", { size: 16 }),
          h("span", { text: f.name, title: `${f.name} · ${bytes(f.size)}` }),
          f.sees === "name"
            ? h("span", {
                class: "note",
                text: NAME_ONLY,
                title: "Only text files (UTF-8) and images reach the model; other files are sent as their name.",
              })
            : null,
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

  /**
   * Add chosen files to the next message. Each chip then says what the model will get:
   * a file it cannot read (not text, or not UTF-8) is noted as reaching it by name only.
   * A file over the runtime's limit is refused at once (and by message.send anyway).
   */
  async addFiles(files) {
    const max = this.maxUpload ?? (await this.maxUploadKnown); // known: no wait
    const added = [];
    for (const file of files) {
      if (max !== null && file.size > max) {
        toast(`${file.name} was not attached: a file sent with a message can be at most ${bytes(max)}.`, 6000);
        continue;
      }
      const image = file.type.startsWith("image/");
      const f = {
        file,
        name: file.name || (image ? "pasted-image.png" : "file"),
        size: file.size,
        mime: file.type || "application/octet-stream",
        image,
        preview: image ? URL.createObjectURL(file) : null,
        sees: image ? "image" : "checking", // then "text", "name", or "unknown"
      };
      this.pending.push(f);
      if (!image) added.push(f);
    }
    this.renderPending();
    for (const f of added) {
      this.sees(f).then((sees) => {
        f.sees = sees;
        if (this.pending.includes(f)) this.renderPending();
      });
    }
  }

  /**
   * What a request will carry of the file `f`: "text" when the runtime's rule
   * (`file.readable`, by type or name) calls it text and its bytes are UTF-8, else
   * "name"; "unknown" when the runtime cannot say.
   */
  async sees(f) {
    try {
      if (!(await hasQuery("file.readable"))) return "unknown";
      const { readable } = await q("file.readable", { name: f.name, mime: f.mime });
      if (!readable) return "name";
    } catch (error) {
      console.warn("file.readable failed", error);
      return "unknown";
    }
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(await f.file.arrayBuffer());
      return "text";
    } catch {
      return "name"; // not UTF-8 (or unreadable): the request names it
    }
  }

  /** The `message.send` payload for the typed text and the chosen files. */
  async payload(threadId, text) {
    const files = this.pending;
    const uploads = [];
    for (const f of files) {
      uploads.push({ mime: f.mime, name: f.name, dataBase64: toBase64(await f.file.arrayBuffer()) });
    }
    const content = [
      ...(text ? [{ type: "text", text }] : []),
      ...files.map((f, i) => ({ type: f.image ? "image" : "file", upload: i })),
    ];
    const leafId = this.chat.snapshot?.leafId ?? null;
    const again = this.resend?.threadId === threadId && this.resend.nodeId === leafId;
    const payload = { threadId, parentId: again ? this.resend.parentId : leafId, content, uploads };
    if (text) payload.autoTitle = { title: text.split("\n")[0].slice(0, 60), when: PLACEHOLDER_TITLES };
    return payload;
  }

  /** Whether `threadId` no longer exists (a failed send's NotFoundError was about it). */
  async threadGone(threadId) {
    try {
      await q("thread.get", { threadId });
      return false;
    } catch (error) {
      return error?.name === "NotFoundError";
    }
  }

  /**
   * Store the message with its files, then ask for the reply. The draft stays on failure.
   * `early`: a message pressed before the store was ready (panel_early_send.mjs),
   * `{threadId, text, submissionId}`, sent with the submission id fixed at the press;
   * while the panel is not live yet, a press is that module's, so nothing else sends.
   */
  async send({ early = null } = {}) {
    const chat = this.chat;
    const threadId = chat.threadId;
    const text = early?.text ?? this.input.value.trim();
    if (!early && painting()) return;
    if ((!text && !this.pending.length) || !threadId || chat.replies.get(threadId)) return;
    if (!chat.provider) {
      toast("Configure a provider in Settings first");
      return;
    }
    chat.hideError(threadId);
    if (await chat.keyGone(threadId)) return; // nothing stored, nothing asked: the draft stays
    let sent;
    try {
      sent = await cmd("message.send", await this.payload(threadId, text), early?.submissionId);
    } catch (error) {
      if (error?.name === "NotFoundError" && (await this.threadGone(threadId))) {
        // Deleted in another window: nothing was stored, and the draft stays in the box.
        toast("This conversation was deleted in another window, so your message was not sent. It is still in the message box.", 6000);
        chat.gone(threadId, { quiet: true });
        return;
      }
      chat.showError(threadId, "Could not save your message. It is still in the box.", error, () => this.send());
      return;
    }
    const filed = (sent.attachments ?? []).length > 0;
    if (chat.threadId === threadId) {
      this.clear();
      this.input.value = "";
      this.autosize();
      chat.scrollPending = true;
    }
    // The list and the conversation are live: they show the stored message themselves.
    const reply = chat.replies.generate(threadId, sent.nodeId, "append", chat.provider, { draft: text || null });
    // Files were stored: their summaries are made in the background once the reply is in.
    if (filed) chat.whenQuiet(threadId, { summarize: true });
    await reply;
  }
}
