// Side panel: boots the runtime and shows stage-by-stage progress.
import { STAGES, bootRuntime } from "./runtime.mjs";

const LABELS = {
  runtime: "Loading Python runtime",
  package: "Installing packages",
  database: "Opening database",
  ready: "Ready",
};

const list = document.getElementById("stages");
const items = new Map(
  STAGES.map((stage) => {
    const item = document.createElement("li");
    item.textContent = LABELS[stage];
    list.append(item);
    return [stage, item];
  }),
);
let current = null;

/** Mark earlier stages done and `stage` active; on "error" mark the current stage failed. */
function show(stage) {
  if (stage === "error") {
    items.get(current)?.classList.replace("active", "failed");
    return;
  }
  current = stage;
  const index = STAGES.indexOf(stage);
  STAGES.forEach((name, position) => {
    const done = position < index || stage === "ready";
    items.get(name).className = done ? "done" : position === index ? "active" : "";
  });
}

document.getElementById("retry").addEventListener("click", () => location.reload());

const panelot = bootRuntime({ onProgress: show });
try {
  await panelot.ready;
  document.getElementById("timing").textContent = `Loaded in ${panelot.timings.total_ms} ms`;
} catch (error) {
  document.getElementById("error").textContent = String(error?.message ?? error);
  document.getElementById("failure").hidden = false;
}
