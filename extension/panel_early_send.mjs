// A message sent before the store is ready (the first paint's conversation: see
// sidepanel_paint.mjs). Typing works from the first paint; Send (the button or Enter)
// only records the press: the text, the conversation, and the command's submission id,
// fixed now, so the send made once the store is ready is answered from its receipt if it
// is ever made again. The box shows it as waiting and keeps its text; nothing is written.
// Once the panel is live (sidepanel.mjs), takeEarlySend() hands the press over, once, and
// the composer (panel_composer.mjs) sends it. A press while the panel is live is the
// composer's, never this module's, so a message is never sent by both.
// Plain DOM, no imports: part of the first paint's small module graph.

/** What the box says while a message waits for the store. */
export const SENDS_WHEN_READY = "Sends when ready: the local store is starting.";

let press = null; // {threadId, text, submissionId}: Send was pressed before ready
let bound = false;

/** Whether the panel is live yet (sidepanel.mjs clears `data-live` once it is). */
export function painting() {
  return document.body.dataset.live === "0";
}

/**
 * Let the composer take a message for `threadId` while the store starts (`null`: a new
 * conversation, made once the store is ready, the message sent into it).
 */
export function holdSends(threadId) {
  if (bound) return;
  bound = true;
  const input = document.getElementById("input");
  const pressed = (event) => {
    if (!painting()) return; // live: the composer's own
    event.preventDefault();
    const text = input.value.trim();
    if (press || !text) return; // pressed already: it is sent once
    press = { threadId, text, submissionId: crypto.randomUUID() };
    input.readOnly = true; // what is sent is what the box shows
    const hint = document.getElementById("composer-hint");
    hint.textContent = SENDS_WHEN_READY;
    hint.hidden = false;
    document.body.dataset.sendWaiting = "1";
  };
  document.getElementById("composer").addEventListener("submit", pressed);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) pressed(event);
  });
}

/**
 * The message pressed before ready, `{threadId, text, submissionId}`, handed over once
 * (null after, or when there is none); the box is editable again and says no more.
 */
export function takeEarlySend() {
  const taken = press;
  press = null;
  if (!taken) return null;
  document.getElementById("input").readOnly = false;
  const hint = document.getElementById("composer-hint");
  if (hint.textContent === SENDS_WHEN_READY) hint.hidden = true; // else the live composer's own
  delete document.body.dataset.sendWaiting;
  return taken;
}
