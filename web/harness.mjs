// Plain-page harness: boots the runtime and prints the store's schema.
import { bootRuntime } from "./runtime.mjs";

const stage = document.getElementById("stage");
const timing = document.getElementById("timing");
const output = document.getElementById("output");

const panelot = bootRuntime({
  onProgress: (name) => {
    stage.textContent = name;
  },
});

try {
  await panelot.ready;
  timing.textContent = `(loaded in ${panelot.timings.total_ms} ms)`;
  output.textContent = JSON.stringify(await panelot.query("db.describe"), null, 2);
} catch (error) {
  output.textContent = String(error?.stack ?? error?.message ?? error);
}
