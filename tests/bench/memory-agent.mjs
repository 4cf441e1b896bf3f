// The agent's RSS with PODS (50) pods running, for each way of running it in VARIANTS: the
// source tree or the bundled artifact (`npm run artifact`), under Node.js flag sets. One private
// containerd and one set of pods; the variants take turns adopting the running pods (an agent
// restart leaves them running), ROUNDS (3) times in rotating order. Each variant settles
// SETTLE_S (20) s after it sees every pod, then RSS (and its anonymous part: file-backed pages
// are the Node.js binary's, shared and reclaimable) is read. Printed per variant: median
// (min-max) and the ratio to the first variant. A benchmark, not a test: CI does not run it.
//   npm run build && npm run artifact && node tests/bench/memory-agent.mjs
//   VARIANTS=8 COMPARE_BIN=../other/bin/nanolet node tests/bench/memory-agent.mjs   (this tree against another)
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { Nanolet, nanoletBin, podManifest, repo, tempDir, waitFor } from "../e2e/harness.mjs";

const PODS = Number(process.env.PODS ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SETTLE_S = Number(process.env.SETTLE_S ?? 20);
const version = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")).version;
const artifactEntry = path.join(repo, `build/out/artifact/nanolet-${version}-linux-${process.arch}/lib/nanolet.mjs`);

/** [name, entry script, Node.js flags, environment]; the first is the baseline of the ratios.
 * VARIANTS=a,b,... picks some by their position (0 is always run). */
const ALL_VARIANTS = [
  ["source tree, bin/nanolet's flags", nanoletBin, ["--max-semi-space-size=1"]],
  ["artifact, its launcher's flags", artifactEntry, ["--max-semi-space-size=1"]],
  ["artifact + --no-opt", artifactEntry, ["--max-semi-space-size=1", "--no-opt"]],
  ["artifact + --single-threaded", artifactEntry, ["--max-semi-space-size=1", "--single-threaded"]],
  ["artifact + --max-old-space-size=32", artifactEntry, ["--max-semi-space-size=1", "--max-old-space-size=32"]],
  ["source + MALLOC_ARENA_MAX=1", nanoletBin, ["--max-semi-space-size=1"], { MALLOC_ARENA_MAX: "1" }],
  ["source + --optimize-for-size", nanoletBin, ["--max-semi-space-size=1", "--optimize-for-size"]],
  ["source + --v8-pool-size=1", nanoletBin, ["--max-semi-space-size=1", "--v8-pool-size=1"]],
];
// COMPARE_BIN=<another checkout's bin/nanolet>: that build too, with the first variant's flags.
if (process.env.COMPARE_BIN) ALL_VARIANTS.push([`COMPARE_BIN (${process.env.COMPARE_BIN})`, process.env.COMPARE_BIN, ["--max-semi-space-size=1"]]);
const picked = process.env.VARIANTS?.split(",").map(Number);
const VARIANTS = ALL_VARIANTS.filter(([, entry], i) => fs.existsSync(entry) && (!picked || i === 0 || picked.includes(i)));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** The agent's own view of its heap (the control socket's /debug/memory). */
const debugMemory = (socketPath) => new Promise((resolve, reject) => {
  http.get({ socketPath, path: "/debug/memory" }, (res) => {
    let body = "";
    res.on("data", (d) => (body += d));
    res.on("end", () => resolve(JSON.parse(body)));
  }).on("error", reject);
});
const status = (pid) => fs.readFileSync(`/proc/${pid}/status`, "utf8");
const kib = (text, field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)[1]);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

ensurePackages();
const work = tempDir("nanolet-memory-agent-");
const containerd = new PrivateContainerd(path.join(work, "containerd"));
await containerd.start();
const manifests = path.join(work, "manifests");
fs.mkdirSync(manifests);
for (let i = 0; i < PODS; i++) fs.writeFileSync(path.join(manifests, `m${i}.yaml`), podManifest(`m${i}`, { script: "exec sleep 3600" }));

/** SMAPS=1: the process's largest anonymous mappings by resident size, to see which part grew. */
function largestAnonymous(pid) {
  const maps = [];
  let current;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) maps.push((current = { name: header[3] || "[anon]", size: (parseInt(header[2], 16) - parseInt(header[1], 16)) / 1024, anon: 0 }));
    else if (current && line.startsWith("Anonymous:")) current.anon = Number(/(\d+)/.exec(line)[1]);
  }
  return maps.sort((a, b) => b.anon - a.anon).slice(0, 8).map((m) => `${m.name} ${m.anon}/${m.size}`);
}

const samples = VARIANTS.map(() => ({ rss: [], anon: [] }));
let agent;
process.once("SIGINT", async () => {
  await agent?.stop();
  await containerd.stop();
  process.exit(130);
});
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < VARIANTS.length; k++) {
      const v = (k + round) % VARIANTS.length;
      const [name, entry, flags, env] = VARIANTS[v];
      agent = new Nanolet({ endpoint: containerd.endpoint, manifestDir: manifests, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs"), node: "memory", bin: entry, nodeArgs: flags, env })
        .start(["--v", "info", "--max-pods", String(PODS + 10)]);
      await waitFor(`${PODS} pods running under ${name}`, async () => {
        const pods = await agent.pods().catch(() => []);
        return pods.filter((p) => p.containers.length > 0 && p.containers.every((c) => c.state === "running")).length === PODS;
      }, 600_000, 500);
      await sleep(SETTLE_S * 1000);
      const s = status(agent.proc.pid);
      const v8 = await debugMemory(path.join(work, "root", "nanolet.sock"));
      if (round === 0) {
        const spaces = v8.heapSpaces.filter((x) => x.space_used_size > 100_000).map((x) => `${x.space_name} ${(x.space_used_size / 1048576).toFixed(1)}`).join(", ");
        console.error(`  ${name}: V8 heap ${(v8.process.heapTotal / 1048576).toFixed(1)} MiB (${spaces}), external ${(v8.process.external / 1048576).toFixed(1)} MiB`);
      }
      if (process.env.SMAPS) console.error(`  ${name}: largest anonymous mappings (KiB): ${largestAnonymous(agent.proc.pid).join(", ")}`);
      samples[v].rss.push(kib(s, "VmRSS") / 1024);
      samples[v].anon.push(kib(s, "RssAnon") / 1024);
      console.error(`round ${round + 1} ${name}: RSS ${(kib(s, "VmRSS") / 1024).toFixed(1)} MiB (anonymous ${(kib(s, "RssAnon") / 1024).toFixed(1)})`);
      await agent.stop();
      agent = undefined;
    }
  }
} finally {
  await agent?.stop();
  await containerd.stop();
}
const base = median(samples[0].rss);
console.log(`agent RSS with ${PODS} pods, idle (${ROUNDS} rounds; median (min-max) MiB; anonymous part; ratio to the first)`);
for (let v = 0; v < VARIANTS.length; v++) {
  const { rss, anon } = samples[v];
  console.log(`  ${VARIANTS[v][0].padEnd(38)} ${median(rss).toFixed(1)} (${Math.min(...rss).toFixed(1)}-${Math.max(...rss).toFixed(1)})  anon ${median(anon).toFixed(1)}  ${(median(rss) / base).toFixed(2)}`);
}
