// Runs every case of cases.mjs on the jco-transpiled component in the browser and shows the
// results; tests/library/chromium.test.mjs reads them from `window.nanoletResults`.
import { instantiate } from "../../build/out/core-js/nanolet-core.js";
import { CASES, canonical, runCase } from "./cases.mjs";

const diagnostics = {
  reportTrap(message, file, line, column) {
    console.error(`core trapped: ${message} (${file}:${line}:${column})`);
  },
};
// Without a getCoreModule, the bindings fetch and compile their .wasm files next to themselves.
const core = await instantiate(undefined, { "nanolet:core/diagnostics": diagnostics, "nanolet:core/diagnostics@0.1.0": diagnostics });

const results = CASES.map((c) => {
  try {
    return { id: c.id, got: canonical(runCase(core, c)) };
  } catch (e) {
    return { id: c.id, got: `threw ${e}` };
  }
});
const rows = document.getElementById("rows");
for (const r of results) {
  const tr = rows.insertRow();
  tr.insertCell().textContent = r.id;
  tr.insertCell().textContent = r.got;
}
document.getElementById("summary").textContent = `${results.length} cases run on ${navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? navigator.userAgent}`;
window.nanoletResults = results;
