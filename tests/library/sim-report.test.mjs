// `nanolet sim --report FILE.html` opened in a real headless Chromium: the page shows what the
// run did (evictions, pressure, crash-loop back-off, restarts), and its re-run with the
// component in the browser gives the very trace of the recorded run.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { simCommand } from "../../dist/cli/sim.js";
import { launchChromium } from "./chromium.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-report-"));
let browser;

/** Runs `nanolet sim SCENARIO --seed N --report FILE`; returns the page file and what sim printed. */
async function report(scenario, seed) {
  const file = path.join(dir, `${path.basename(scenario, ".yaml")}-${seed}.html`);
  let output = "";
  const code = await simCommand([path.join(root, scenario), "--seed", String(seed), "--report", file], (t) => (output += t));
  assert.equal(code, 0, output);
  return { file, output };
}

async function open(file) {
  const page = await browser.newPage({ viewport: { width: 1260, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`file://${file}`);
  return { page, errors };
}

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("report: memory pressure shows the three evictions, the pressure and the threshold", async () => {
  const { file, output } = await report("tests/sim/memory-pressure.yaml", 1);
  assert.match(output, /evictions=3/);
  assert.match(output, /report: .*memory-pressure-1\.html \(\d+ KiB\)/);
  const { page, errors } = await open(file);
  assert.equal(await page.title(), "nanolet sim: memory-pressure (seed 1)");
  assert.match(await page.textContent("#summary"), /110 pods · 0 restarts · 3 evictions/);
  // The evicted pods, flagged and listed first.
  const evicted = await page.$$eval("path.mark.Evicted", (marks) => marks.map((m) => m.dataset.pod).sort());
  assert.deepEqual(evicted, ["cache-0-sim", "cache-1-sim", "leaky-sim"]);
  const firstPods = await page.$$eval("svg text.label.pod", (labels) => labels.slice(0, 3).map((l) => l.textContent).sort());
  assert.deepEqual(firstPods, evicted);
  assert.equal(await page.$$eval("svg text.label.pod", (labels) => labels.length), 110);
  // leaky-sim ends Failed with reason Evicted; cache-2-sim, which also grew, keeps running.
  const last = (pod) => page.$$eval(`rect.span.phase[data-pod="${pod}"]`, (r) => r.map((x) => `${x.dataset.state}/${x.dataset.reason}`).at(-1));
  assert.equal(await last("leaky-sim"), "failed/Evicted");
  assert.equal(await last("cache-2-sim"), "running/");
  // Two stretches of MemoryPressure, none of the others; the signal and its hard threshold drawn.
  assert.equal(await page.$$eval('rect[data-condition="MemoryPressure"]', (r) => r.length), 2);
  assert.equal(await page.$$eval('rect[data-condition="DiskPressure"], rect[data-condition="PIDPressure"]', (r) => r.length), 0);
  assert.equal(await page.$$eval('path.signal[data-signal="memory.available"]', (p) => p.length), 1);
  assert.match(await page.textContent("line.threshold title"), /hard eviction threshold: 200 Mi/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("report: crash-loop back-off shows restarts and the back-off waits between them", async () => {
  const { file } = await report("tests/sim/crash-loop-backoff.yaml", 1);
  const { page, errors } = await open(file);
  const restarts = await page.$$eval('line.mark.restart[data-pod="flaky-sim"][data-container="app"]', (m) => m.length);
  assert.equal(restarts, 5);
  const backOffs = await page.$$eval('rect.span.container[data-reason="CrashLoopBackOff"]', (r) => r.map((x) => Number(x.getAttribute("width"))));
  assert.ok(backOffs.length >= 4, `back-off spans: ${backOffs.length}`);
  // The waits grow: 10 s, 20 s, 40 s, ... as drawn widths.
  assert.ok(backOffs.at(-2) > backOffs[0] * 2, `widths ${backOffs.join(", ")}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("report: the page re-runs the scenario with the component and gets the identical trace", async () => {
  const { file } = await report("tests/sim/crash-loop-backoff.yaml", 3);
  const { page, errors } = await open(file);
  const recorded = await page.textContent("#digest");
  // Mark the drawn timeline: the re-run must replace it with its own drawing.
  await page.$eval("svg.timeline", (svg) => svg.setAttribute("data-from", "file"));
  await page.click("#rerun");
  await page.waitForFunction(() => /Re-ran|failed/.test(document.getElementById("rerun-status").textContent), null, { timeout: 60_000 });
  const status = await page.textContent("#rerun-status");
  assert.match(status, /all invariants held\): the trace is identical to the recorded run/);
  assert.equal(await page.$eval("#rerun-status", (s) => s.dataset.digest), recorded);
  assert.equal(await page.$$eval('svg.timeline[data-from="file"]', (s) => s.length), 0);
  assert.equal(await page.$$eval('line.mark.restart[data-pod="flaky-sim"]', (m) => m.length), 5);
  assert.deepEqual(errors, []);
  await page.close();
});

test("report: one scenario and one seed only", async () => {
  await assert.rejects(simCommand(["--seeds", "1..2", "--report", path.join(dir, "x.html")], () => {}), /--report: give one scenario and one seed/);
});
