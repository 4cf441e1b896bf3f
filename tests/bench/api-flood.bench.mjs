// Agent memory under a flood of unauthenticated connections to the kubelet API (issue 36: 10,000
// sockets each sending 11 bytes of a TLS ClientHello took the agent from 173 to 681 MiB, and it
// never came back). nanolet runs with its API on a free port and one static pod on a real
// containerd; then ROUNDS rounds of FLOOD half-open connections arrive from 250 loopback
// addresses, 500 at a time, each held until the agent closes it. Prints the agent's RSS before,
// the peak during each round, after each round once it settles, and how many connections the
// agent refused at once or timed out (from its log-free counters: the sockets' fates).
//   npm run build && node tests/bench/api-flood.bench.mjs
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { rssMiB as processRssMiB, settledRssMiB } from "./process-rss.mjs";
import { Nanolet, podManifest, tempDir } from "../e2e/harness.mjs";

const FLOOD = Number(process.env.FLOOD ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BATCH = 500;
const work = tempDir("nanolet-api-flood-");
ensurePackages();
const containerd = new PrivateContainerd(path.join(work, "containerd"));
await containerd.start();
const manifestDir = path.join(work, "manifests");
fs.mkdirSync(manifestDir);
fs.writeFileSync(path.join(manifestDir, "good.yaml"), podManifest("good"));
const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs") })
  .start(["--v", "info", "--port", String(port), "--address", "127.0.0.1"]);

const rssMiB = () => processRssMiB(nanolet.proc.pid);
const settledRss = () => settledRssMiB(nanolet.proc.pid);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One half-open connection: resolves with how long the agent let it live (ms). */
function halfOpen(i) {
  return new Promise((resolve) => {
    const started = Date.now();
    const s = net.connect({ host: "127.0.0.1", port, localAddress: `127.0.3.${(i % 250) + 1}` }, () => {
      s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
    });
    s.on("error", () => {});
    s.on("close", () => resolve(Date.now() - started));
  });
}

for (let i = 0; i < 100 && !nanolet.lines.some((l) => /Kubelet API listening/.test(l)); i++) await sleep(200);
await sleep(5000);
const before = await settledRss();
console.log(`rss before: ${before.toFixed(1)} MiB`);
for (let round = 1; round <= ROUNDS; round++) {
  let peak = rssMiB();
  const watch = setInterval(() => (peak = Math.max(peak, rssMiB())), 100);
  const lifetimes = [];
  for (let i = 0; i < FLOOD; i += BATCH) lifetimes.push(...(await Promise.all(Array.from({ length: Math.min(BATCH, FLOOD - i) }, (_, j) => halfOpen(i + j)))));
  clearInterval(watch);
  const at = (q) => lifetimes.sort((a, b) => a - b)[Math.floor(q * (lifetimes.length - 1))];
  const settled = await settledRss();
  console.log(`round ${round}: ${FLOOD} connections; held by the agent median ${at(0.5)} ms, max ${at(1)} ms; rss peak ${peak.toFixed(1)} MiB, settled ${settled.toFixed(1)} MiB`);
}
console.log(`agent still running: ${nanolet.proc.exitCode === null}`);
await nanolet.stop();
await containerd.stop();
fs.rmSync(work, { recursive: true, force: true });
