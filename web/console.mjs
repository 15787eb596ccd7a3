// The debugging console: a Python REPL on pyodide.console.PyodideConsole, with the
// Panelot helpers of panelot.console preloaded. Same origin as the side panel, so the
// same IndexedDB database. Output is added as text only (textContent), never HTML.
import { bootRuntime } from "./runtime.mjs";

const output = document.getElementById("output");
const input = document.getElementById("input");
const promptEl = document.getElementById("prompt");
const stateEl = document.getElementById("state");

const PS1 = ">>>";
const PS2 = "...";
const HISTORY_KEY = "panelot.console.history";
const history = JSON.parse(sessionStorage.getItem(HISTORY_KEY) ?? "[]");
let historyAt = history.length;
let draft = "";
let session = null;
let busy = false;

/** Append text to the output with a class (echo, result, stdout, stderr, error...). */
function print(text, kind = "result") {
  const last = output.lastElementChild;
  // Consecutive stream writes join into one block so partial lines stay together.
  if ((kind === "stdout" || kind === "stderr") && last?.dataset.kind === kind && last.dataset.open === "1") {
    last.textContent += text;
  } else {
    const line = document.createElement("div");
    line.className = `line ${kind}`;
    line.dataset.kind = kind;
    line.textContent = text;
    if (kind === "stdout" || kind === "stderr") line.dataset.open = "1";
    output.append(line);
  }
  output.scrollTop = output.scrollHeight;
}

function closeStreams() {
  for (const el of output.querySelectorAll('[data-open="1"]')) el.dataset.open = "0";
}

function autosize() {
  input.style.height = "auto";
  input.style.height = `${input.scrollHeight + 2}px`;
}

/** Push each line of `source` to the console, printing results as they complete. */
async function run(source) {
  busy = true;
  input.disabled = true;
  const lines = source.split("\n");
  for (const [i, line] of lines.entries()) {
    print(`${promptEl.textContent} ${line}`, "echo");
    const pushed = JSON.parse(session.push(line));
    if (pushed.status === "incomplete") {
      promptEl.textContent = PS2;
      continue;
    }
    promptEl.textContent = PS1;
    if (pushed.status === "syntax-error") {
      print(pushed.error.trimEnd(), "error");
      continue;
    }
    const outcome = JSON.parse(await session.result(pushed.id));
    closeStreams();
    if (outcome.error) print(outcome.error.trimEnd(), "error");
    else if (outcome.value !== null) print(outcome.value, "result");
    if (i === lines.length - 1) break;
  }
  window.__consoleRuns = (window.__consoleRuns ?? 0) + 1;
  busy = false;
  input.disabled = false;
  input.focus();
}

/** Whether Enter should run: complete input, or an empty line closing a block. */
function shouldRun() {
  const text = input.value;
  if (promptEl.textContent === PS2) return true; // continuation: every Enter pushes
  if (/:\s*$/.test(text) && !text.includes("\n")) return false; // start of a block
  if (text.includes("\n") && !/\n\s*$/.test(text) && /^\s/m.test(text.split("\n").at(-1))) return false;
  return true;
}

async function complete() {
  const before = input.value.slice(0, input.selectionStart);
  const after = input.value.slice(input.selectionEnd);
  const [options, start] = JSON.parse(session.complete(before));
  if (!options.length) return;
  const word = before.slice(start);
  let common = options[0];
  for (const o of options) {
    while (!o.startsWith(common)) common = common.slice(0, -1);
  }
  if (options.length === 1 || common.length > word.length) {
    const chosen = options.length === 1 ? options[0] : common;
    input.value = before.slice(0, start) + chosen + after;
    const at = start + chosen.length;
    input.setSelectionRange(at, at);
  } else {
    print(options.join("  "), "completions");
  }
}

input.addEventListener("keydown", async (event) => {
  if (!session || busy) return;
  if (event.key === "Enter" && !event.shiftKey && shouldRun()) {
    event.preventDefault();
    const source = input.value;
    if (source.trim()) {
      history.push(source);
      sessionStorage.setItem(HISTORY_KEY, JSON.stringify(history.slice(-200)));
    }
    historyAt = history.length;
    input.value = "";
    autosize();
    await run(source);
  } else if (event.key === "Tab" && !event.shiftKey) {
    const before = input.value.slice(0, input.selectionStart);
    if (before.trim() === "" || /\s$/.test(before)) return; // keep indenting
    event.preventDefault();
    await complete();
  } else if (event.key === "ArrowUp" && !input.value.slice(0, input.selectionStart).includes("\n")) {
    if (historyAt === 0) return;
    event.preventDefault();
    if (historyAt === history.length) draft = input.value;
    historyAt -= 1;
    input.value = history[historyAt];
    autosize();
  } else if (event.key === "ArrowDown" && !input.value.slice(input.selectionEnd).includes("\n")) {
    if (historyAt >= history.length) return;
    event.preventDefault();
    historyAt += 1;
    input.value = historyAt === history.length ? draft : history[historyAt];
    autosize();
  } else if (event.key === "l" && event.ctrlKey) {
    event.preventDefault();
    output.replaceChildren();
  } else if (event.key === "c" && event.ctrlKey && input.selectionStart === input.selectionEnd) {
    session.reset_buffer();
    print(`${promptEl.textContent} ${input.value}\nKeyboardInterrupt`, "error");
    input.value = "";
    promptEl.textContent = PS1;
  }
});
input.addEventListener("input", autosize);
document.getElementById("prompt-form").addEventListener("submit", (event) => event.preventDefault());
document.getElementById("clear").addEventListener("click", () => output.replaceChildren());

const panelot = bootRuntime({
  onProgress: (stage) => {
    stateEl.textContent = stage === "ready" ? "" : `${stage}…`;
  },
});
try {
  await panelot.ready;
  const mod = panelot.py.pyimport("panelot.console");
  session = mod.ConsoleSession(
    (text) => print(text, "stdout"),
    (text) => print(text, "stderr"),
  );
  mod.destroy();
  window.panelotConsole = {
    /** Run source as if typed; resolves when its output is printed (for tests). */
    run: (source) => run(source),
  };
  print(session.banner(), "banner");
  const start = panelot.snapshot === "restored" ? "from the memory snapshot" : "loaded normally";
  stateEl.textContent = `ready in ${panelot.timings.total_ms} ms (${start}) · database panelot_v1`;
  input.disabled = false;
  input.placeholder = "threads()   ·   tree(id)   ·   help_panelot()";
  input.focus();
  document.body.dataset.ready = "1";
} catch (error) {
  stateEl.textContent = "failed";
  print(String(error?.message ?? error), "error");
}
