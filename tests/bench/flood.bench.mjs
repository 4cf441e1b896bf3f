// Agent memory under a flood of refused manifests, on a real containerd: nanolet runs 3 good
// static pods; then 10,000 bad manifests arrive in rounds of 100 (wrong fields, unimplemented
// fields, invalid YAML, alias bombs, deep nesting, files near the size limit, too many documents),
// each round is refused and removed. Prints the agent's RSS before and after (target: within 5 MiB),
// the peak, and checks the good pods kept their containers.
//   npm run build && node tests/bench/flood.bench.mjs
import fs from "node:fs";
import path from "node:path";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { rssMiB as processRssMiB, settledRssMiB } from "./process-rss.mjs";
import { Nanolet, podManifest, tempDir, waitFor } from "../e2e/harness.mjs";

const TOTAL = Number(process.env.FLOOD ?? 10_000);
const ROUND = 100;
/** RSS is also taken after this many, to tell a one-time cost from growth. */
const WARM_UP = 500;
const work = tempDir("nanolet-flood-");
ensurePackages();
const containerd = new PrivateContainerd(path.join(work, "containerd"));
await containerd.start();
const manifestDir = path.join(work, "manifests");
fs.mkdirSync(manifestDir);
for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(manifestDir, `good-${i}.yaml`), podManifest(`good-${i}`));
const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs") }).start(["--v", "info"]);

const rssMiB = () => processRssMiB(nanolet.proc.pid);
const settledRss = () => settledRssMiB(nanolet.proc.pid);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const bigEnv = (n) => `apiVersion: v1\nkind: Pod\nmetadata: {name: env}\nspec:\n  containers:\n  - name: a\n    image: busybox\n    env:\n${Array.from({ length: n }, (_, i) => `    - {name: V${i}, value: x}`).join("\n")}\n    - {name: "A=B", value: x}\n`;
const kinds = [
  (i) => podManifest(`bad-${i}`).replace("restartPolicy: Always", "restartPolicy: Sometimes"),
  (i) => podManifest(`bad-${i}`).replace("hostNetwork: true", "hostNetwork: true\n  hostPID: true\n  nodeSelector: {a: b}"),
  (i) => `kind: [unclosed ${i}`,
  () => ["a: &a [x,x,x,x,x,x,x,x,x,x]", ...Array.from({ length: 8 }, (_, k) => `b${k}: &b${k} [${Array(10).fill(k === 0 ? "*a" : `*b${k - 1}`).join(",")}]`)].join("\n"),
  () => "[".repeat(50_000) + "]".repeat(50_000),
  () => bigEnv(7000), // about 200 KiB: just under the size limit, refused for its last env name
  () => Array(200).fill(podManifest("many")).join("---\n"),
  (i) => podManifest(`bad-${i}`).replace("name: main", "name: Main_Bad").replace("image: busybox", "image: \" busybox\""),
];

try {
  await waitFor("3 good pods running", async () => (await nanolet.pods()).filter((p) => p.phase === "Running").length === 3, 120_000, 500);
  const ids = async () => (await nanolet.pods()).map((p) => `${p.name}:${p.containers.map((c) => c.containerId).join(",")}`).sort().join(" ");
  const goodBefore = await ids();
  const before = await settledRss();
  let peak = before;
  let afterWarmUp;
  for (let n = 0; n < TOTAL; n += ROUND) {
    if (n === WARM_UP) afterWarmUp = await settledRss();
    const names = [];
    for (let k = 0; k < ROUND; k++) {
      const i = n + k;
      const name = `flood-${i}.yaml`;
      fs.writeFileSync(path.join(manifestDir, name), kinds[i % kinds.length](i));
      names.push(name);
    }
    await waitFor("the round refused", async () => {
      const snap = (await nanolet.pods()).length;
      return snap === 3 && nanolet.logLines(new RegExp(`flood-${n + ROUND - 1}\\.yaml`)).length > 0;
    }, 60_000, 100);
    peak = Math.max(peak, rssMiB());
    for (const name of names) fs.rmSync(path.join(manifestDir, name));
    nanolet.lines.length = 0; // the bench's own copy of the log, not the agent's memory
  }
  await waitFor("problems gone", async () => (await nanolet.pods()).length === 3, 60_000);
  const after = await settledRss();
  const goodAfter = await ids();
  console.log(`${TOTAL.toLocaleString("en")} refused manifests in rounds of ${ROUND}: agent RSS ${before.toFixed(1)} MiB before, ${after.toFixed(1)} MiB after (${(after - before >= 0 ? "+" : "")}${(after - before).toFixed(1)} MiB; target within 5 MiB: ${Math.abs(after - before) <= 5 ? "met" : "NOT met"}), peak ${peak.toFixed(1)} MiB`);
  if (afterWarmUp !== undefined) {
    console.log(`after the first ${WARM_UP} (warm-up: code compiled for the refusal paths, the young generation at its cap, the core sized for the largest pod): ${afterWarmUp.toFixed(1)} MiB; from there to the end ${(after - afterWarmUp >= 0 ? "+" : "")}${(after - afterWarmUp).toFixed(1)} MiB over ${(TOTAL - WARM_UP).toLocaleString("en")} more`);
  }
  console.log(`good pods kept their containers: ${goodBefore === goodAfter ? "yes" : `NO (${goodBefore} -> ${goodAfter})`}`);
  if (goodBefore !== goodAfter) process.exitCode = 1;
} finally {
  for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
  await waitFor("pods removed", async () => (await nanolet.pods()).length === 0, 120_000).catch(() => {});
  await nanolet.stop();
  await containerd.stop();
}
