// What the kubelet API costs, on a real containerd with 110 running pods (PODS to change):
// - a /stats/summary and a /metrics (and /metrics/resource) scrape: the agent's CPU per scrape
//   (its utime+stime over 20 scrapes, less what it used idle over the same time) and the bytes;
// - container logs through the API (/containerLogs over HTTPS) against reading and parsing the
//   same file in the bench's process, and against reading it raw, side by side: MB/s and ratios;
// - the agent's RSS with 10 pods and the API on, beside the same agent with it off (--port 0).
//   npm run build && node tests/bench/kubelet-api.bench.mjs
import fs from "node:fs";
import https from "node:https";
import path from "node:path";
import assert from "node:assert/strict";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { parseLogText } from "../../dist/server/cri-log.js";
import { freePort } from "../e2e/control-plane.mjs";
import { Nanolet, podManifest, tempDir, waitFor } from "../e2e/harness.mjs";

const PODS = Number(process.env.PODS ?? 110);
const SCRAPES = 20;
const work = tempDir("nanolet-api-bench-");
ensurePackages();
const containerd = new PrivateContainerd(path.join(work, "containerd"));
await containerd.start();
const manifestDir = path.join(work, "manifests");
fs.mkdirSync(manifestDir);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuMs = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, USER_HZ 100
};
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;
async function settledRss(pid) {
  const samples = [];
  for (let i = 0; i < 60; i++) {
    await sleep(1000);
    samples.push(rssMiB(pid));
    const last = samples.slice(-5);
    if (last.length === 5 && Math.max(...last) - Math.min(...last) <= 0.5) break;
  }
  return Math.min(...samples.slice(-5));
}
function get(port, p) {
  return new Promise((resolve, reject) => {
    https.get({ host: "127.0.0.1", port, path: p, rejectUnauthorized: false }, (res) => {
      let bytes = 0;
      res.on("data", (c) => (bytes += c.length));
      res.on("end", () => resolve(bytes));
    }).on("error", reject);
  });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function startAgent(name, extra) {
  return new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, `root-${name}`), logsDir: path.join(work, "logs"), node: "bench-node" }).start(["--v", "info", ...extra]);
}

try {
  // Memory: 10 pods, the API off, then on (the same pods adopted).
  for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(manifestDir, `p${i}.yaml`), podManifest(`p${i}`));
  let agent = startAgent("off", ["--port", "0", "--max-pods", String(PODS + 10), "--container-log-max-size", "100Mi"]);
  await waitFor("10 pods running", async () => (await agent.pods()).filter((p) => p.phase === "Running").length === 10, 180_000, 500);
  const rssOff = await settledRss(agent.proc.pid);
  await agent.stop();
  const port = await freePort();
  agent = startAgent("on", ["--port", String(port), "--anonymous-auth", "--authorization-mode", "AlwaysAllow", "--max-pods", String(PODS + 10), "--container-log-max-size", "100Mi"]);
  await waitFor("10 pods running again", async () => (await agent.pods()).filter((p) => p.phase === "Running").length === 10, 180_000, 500);
  await get(port, "/healthz");
  const rssOn = await settledRss(agent.proc.pid);
  console.log(`agent RSS, 10 pods: API off ${rssOff.toFixed(1)} MiB, on ${rssOn.toFixed(1)} MiB (${(rssOn - rssOff >= 0 ? "+" : "")}${(rssOn - rssOff).toFixed(1)} MiB; target at most +5 MiB: ${rssOn - rssOff <= 5 ? "met" : "NOT met"})`);

  // Scrapes at PODS pods.
  for (let i = 10; i < PODS; i++) fs.writeFileSync(path.join(manifestDir, `p${i}.yaml`), podManifest(`p${i}`));
  await waitFor(`${PODS} pods running`, async () => (await agent.pods()).filter((p) => p.phase === "Running").length === PODS, 600_000, 1000);
  await sleep(5000);
  const pid = agent.proc.pid;
  const idleStart = cpuMs(pid);
  const idleT0 = Date.now();
  await sleep(5000);
  const idleRate = (cpuMs(pid) - idleStart) / (Date.now() - idleT0);
  for (const p of ["/stats/summary", "/metrics", "/metrics/resource"]) {
    await get(port, p); // warm
    const c0 = cpuMs(pid);
    const t0 = Date.now();
    let bytes = 0;
    const wall = [];
    for (let i = 0; i < SCRAPES; i++) {
      const s = performance.now();
      bytes = await get(port, p);
      wall.push(performance.now() - s);
    }
    const cpu = (cpuMs(pid) - c0 - idleRate * (Date.now() - t0)) / SCRAPES;
    console.log(`${p} at ${PODS} pods: ${Math.max(0, cpu).toFixed(1)} ms of agent CPU per scrape, ${(bytes / 1024).toFixed(1)} KiB, ${median(wall).toFixed(1)} ms median wall`);
  }

  // Logs: a container that wrote ~20 MB, read through the API and directly.
  fs.writeFileSync(path.join(manifestDir, "writer.yaml"), podManifest("writer", { script: "i=0; while [ $i -lt 200000 ]; do echo \"line $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"; i=$((i+1)); done; sleep 3600" }));
  const dir = await waitFor("writer's log", () => fs.readdirSync(path.join(work, "logs")).find((d) => d.startsWith("default_writer-")), 60_000);
  const file = path.join(work, "logs", dir, "main", "0.log");
  await waitFor("20 MB written", () => fs.existsSync(file) && fs.statSync(file).size > 18 * 1024 * 1024 && fs.readFileSync(file, "utf8").includes("line 199999 "), 300_000, 1000);
  const rounds = [];
  for (let r = 0; r < 3; r++) {
    let s = performance.now();
    const raw = fs.readFileSync(file);
    const rawMs = performance.now() - s;
    s = performance.now();
    const parsed = parseLogText(fs.readFileSync(file, "utf8")).records.reduce((n, rec) => n + Buffer.byteLength(rec.text), 0);
    const parsedMs = performance.now() - s;
    s = performance.now();
    const viaApi = await get(port, `/containerLogs/default/writer-bench-node/main`);
    const apiMs = performance.now() - s;
    assert.equal(viaApi, parsed, "the API gives exactly the log's lines");
    rounds.push({ rawMBs: raw.length / 1e6 / (rawMs / 1000), parsedMBs: raw.length / 1e6 / (parsedMs / 1000), apiMBs: raw.length / 1e6 / (apiMs / 1000) });
  }
  const raw = median(rounds.map((x) => x.rawMBs));
  const parsed = median(rounds.map((x) => x.parsedMBs));
  const a = median(rounds.map((x) => x.apiMBs));
  console.log(`container log of ${(fs.statSync(file).size / 1e6).toFixed(1)} MB (MB of the file per second, median of 3): through the API over HTTPS ${a.toFixed(0)}; read and parsed in this process ${parsed.toFixed(0)} (API / that ${(a / parsed).toFixed(2)}); read raw ${raw.toFixed(0)} (API / that ${(a / raw).toFixed(2)})`);
  await agent.stop();
} finally {
  for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
  await containerd.stop();
}
